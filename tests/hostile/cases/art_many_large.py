# 60 artifacts of 2 MiB, long names, plus both streams over the inline size: 62 fds in one result packet.
# expect: outcome=exited exit_code=0 stdout_bytes=100000 stderr_bytes=100000
# check: len(r["artifacts"]) == 60 and all(a["size"] == 2 << 20 and not a["truncated"] for a in r["artifacts"])
# args: --limit artifacts=60 --limit artifact_bytes=4M --limit workspace_bytes=256M --memory 1G
# within: 15
import os
for i in range(60):
    with open("/workspace/%02d" % i + "n" * 250, "wb") as f:
        f.write(os.urandom(2 << 20))
os.write(1, b"o" * 100000)
os.write(2, b"e" * 100000)
