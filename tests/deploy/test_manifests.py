#!/usr/bin/env python3
"""The Kubernetes manifests of deploy/kubernetes (issue 34): every object
against its API type with kubernetes-models (validate_manifests.mjs; the
package is installed by scripts/deps.sh into NODE_MODULES), and what the
issue asks of them, against the image's config (deploy/airlockd.conf):
probes by `airlock ping`, one hostPath socket directory shared by the
DaemonSet and the agent pod, a termination grace longer than the daemon's
stop_grace_ms, rolling updates without surge, the agents' group admitted.

The validator must refuse broken copies (so it cannot pass by accepting
anything) and must fail, not pass, without the package.
"""
import configparser
import copy
import glob
import json
import os
import subprocess
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DEPLOY = os.path.join(HERE, "..", "..", "deploy")
VALIDATOR = os.path.join(HERE, "validate_manifests.mjs")
NODE = os.environ.get("NODE", "node")
NODE_MODULES = os.environ.get("NODE_MODULES", "")


def load_all():
    objs = []
    for path in sorted(glob.glob(os.path.join(DEPLOY, "kubernetes", "*.yaml"))):
        with open(path) as f:
            objs += [o for o in yaml.safe_load_all(f) if o is not None]
    return objs


def validate(objs, modules=None):
    env = dict(os.environ, NODE_MODULES=NODE_MODULES if modules is None else modules)
    p = subprocess.run([NODE, VALIDATOR], input=json.dumps(objs).encode(), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    return p.returncode, p.stdout.decode()


def find(objs, kind):
    found = [o for o in objs if o["kind"] == kind]
    assert len(found) == 1, "expected one %s, found %d" % (kind, len(found))
    return found[0]


def daemon_conf():
    c = configparser.ConfigParser(inline_comment_prefixes=None)
    c.read(os.path.join(DEPLOY, "airlockd.conf"))
    return c


class Manifests(unittest.TestCase):
    def setUp(self):
        self.objs = load_all()
        self.ds = find(self.objs, "DaemonSet")
        self.pod = find(self.objs, "Pod")
        self.conf = daemon_conf()

    def test_all_valid(self):
        rc, out = validate(self.objs)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.count("ok "), len(self.objs), out)
        self.assertGreaterEqual(len(self.objs), 4, out)

    def test_broken_copies_refused(self):
        def no_selector(ds):
            del ds["spec"]["selector"]

        def nameless_container(ds):
            del ds["spec"]["template"]["spec"]["containers"][0]["name"]

        def probe_period_text(ds):
            ds["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["periodSeconds"] = "five"

        def grace_text(ds):
            ds["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "long"

        for breaker in (no_selector, nameless_container, probe_period_text, grace_text):
            bad = copy.deepcopy(self.ds)
            breaker(bad)
            rc, out = validate([bad])
            self.assertEqual(rc, 1, "%s: %s" % (breaker.__name__, out))
            self.assertIn("invalid DaemonSet", out, breaker.__name__)

    def test_fails_without_package(self):
        rc, out = validate(self.objs, modules="/nonexistent/node_modules")
        self.assertEqual(rc, 2, out)
        self.assertIn("kubernetes-models is missing", out)

    def test_probes_ping_the_shared_socket(self):
        sock = self.conf["daemon"]["socket"]
        c = self.ds["spec"]["template"]["spec"]["containers"][0]
        for probe in ("readinessProbe", "livenessProbe"):
            self.assertEqual(c[probe]["exec"]["command"], ["airlock", "--socket", sock, "ping"])
        sockdir = os.path.dirname(sock)
        ds_vols = {v["name"]: v for v in self.ds["spec"]["template"]["spec"]["volumes"]}
        pod_vols = {v["name"]: v for v in self.pod["spec"]["volumes"]}
        ds_mount = [m for m in c["volumeMounts"] if m["mountPath"] == sockdir]
        self.assertEqual(len(ds_mount), 1)
        host = ds_vols[ds_mount[0]["name"]]["hostPath"]["path"]
        agent = self.pod["spec"]["containers"][0]
        pod_mount = [m for m in agent["volumeMounts"] if m["mountPath"] == sockdir]
        self.assertEqual(len(pod_mount), 1)
        self.assertEqual(pod_vols[pod_mount[0]["name"]]["hostPath"]["path"], host)
        env = {e["name"]: e["value"] for e in agent["env"]}
        self.assertEqual(env["AIRLOCK_SOCKET"], sock)

    def test_grace_lets_running_code_finish(self):
        stop_grace_s = int(self.conf["daemon"]["stop_grace_ms"]) / 1000
        grace = self.ds["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        self.assertGreater(grace, stop_grace_s + 5)

    def test_rolling_update_without_surge(self):
        u = self.ds["spec"]["updateStrategy"]
        self.assertEqual(u["type"], "RollingUpdate")
        self.assertEqual(u["rollingUpdate"]["maxSurge"], 0)

    def test_agent_group_admitted(self):
        allowed = {g.strip() for g in self.conf["access"]["allow_groups"].split(",")}
        groups = {str(g) for g in self.pod["spec"]["securityContext"]["supplementalGroups"]}
        self.assertTrue(allowed & groups, (allowed, groups))


if __name__ == "__main__":
    unittest.main(verbosity=2)
