# 100k tiny files in the workspace: the inode cap stops creation, the run completes quickly, artifacts are capped (32 by default) and the rest are counted, not dropped silently.
# expect: outcome=exited exit_code=0
# check: len(r["artifacts"]) == 32 and r["artifacts_omitted"] + 32 == int(r["stdout"].split()[2]) and r["artifacts_omitted_bytes"] == r["artifacts_omitted"]
# within: 20
import os
n = 0
try:
    while n < 100000:
        with open("/workspace/f%06d" % n, "w") as f:
            f.write("x")
        n += 1
except OSError as e:
    print("stopped at", n, e)
