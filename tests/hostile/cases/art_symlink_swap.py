# A background process keeps swapping a file for a symlink to /etc/passwd while the run ends: no artifact may carry /etc/passwd's content.
# expect: outcome=exited exit_code=0
# check: all(a["name"] != "swap" or a["size"] < 100 for a in r["artifacts"])
# args: --artifacts @ART@/swap
# after: "root:" not in (open(ctx.dir + "/art/swap/swap").read() if os.path.exists(ctx.dir + "/art/swap/swap") else "")
import os
if os.fork() == 0:
    os.setsid()
    while True:
        try:
            os.symlink("/etc/passwd", "/workspace/swap.tmp")
            os.rename("/workspace/swap.tmp", "/workspace/swap")
            with open("/workspace/swap.tmp", "w") as f:
                f.write("x")
            os.rename("/workspace/swap.tmp", "/workspace/swap")
        except OSError:
            pass
import time
time.sleep(0.3)
