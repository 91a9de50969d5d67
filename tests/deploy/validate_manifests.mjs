// validate_manifests.mjs: every Kubernetes object on stdin (a JSON array,
// from test_manifests.py) against its API type with kubernetes-models
// (pinned by scripts/deps.sh). Prints "ok KIND NAME" or "invalid KIND NAME:
// why" per object; exits 0 only if all are valid, 2 if kubernetes-models is
// missing (never a pass without it), 3 for a kind it has no model of.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.NODE_MODULES;
if (!modules) {
  console.error("NODE_MODULES is not set");
  process.exit(2);
}
const pkg = join(modules, "kubernetes-models");
try {
  readFileSync(join(pkg, "package.json"));
} catch (e) {
  console.error(`kubernetes-models is missing from ${modules} (scripts/deps.sh installs it): ${e.message}`);
  process.exit(2);
}

// apiVersion "apps/v1" -> apps/v1/KIND.js; "v1" -> v1/KIND.js
async function model(apiVersion, kind) {
  const file = join(pkg, ...apiVersion.split("/"), `${kind}.js`);
  const mod = await import(pathToFileURL(file).href);
  return mod[kind];
}

const objects = JSON.parse(readFileSync(0, "utf8"));
let bad = 0;
for (const o of objects) {
  const name = `${o.kind} ${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? "?"}`;
  let Model;
  try {
    Model = await model(o.apiVersion, o.kind);
  } catch (e) {
    console.log(`unknown ${name}: no model of ${o.apiVersion} ${o.kind}: ${e.message}`);
    process.exit(3);
  }
  try {
    new Model(o).validate();
    console.log(`ok ${name}`);
  } catch (e) {
    console.log(`invalid ${name}: ${e.message.replace(/\s+/g, " ")}`);
    bad++;
  }
}
process.exit(bad ? 1 : 0);
