# Hostile artifact names: newlines, "..", leading dashes, dots, spaces, 255-byte names, deep dirs. The CLI writes only beneath --artifacts.
# expect: outcome=exited exit_code=0
# check: all(not a["name"].startswith("/") and ".." not in a["name"].split("/") for a in r["artifacts"])
# args: --artifacts @ART@/names
# after: not os.path.exists(ctx.dir + "/art/pwned") and not os.path.exists(ctx.dir + "/pwned") and os.path.isdir(ctx.dir + "/art/names")
import os
os.chdir("/workspace")
for n in ("a\nb", "..x", "x..", "...", "-rf", " sp ", "\\", "\x1b[31mred", "n" * 255):
    with open(n, "w") as f:
        f.write(n)
os.makedirs("d/../d2/e", exist_ok=True)
open("d2/e/..f", "w").close()
os.makedirs("deep/" + "/".join(["x"] * 40), exist_ok=True)
open("deep/" + "/".join(["x"] * 40) + "/bottom", "w").close()
