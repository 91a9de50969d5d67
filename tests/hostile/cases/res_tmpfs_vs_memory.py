# Write 200 MB to /workspace under a 64 MiB memory limit: tmpfs pages are charged to the run's cgroup; the run ends (memory_limit or a write error), the daemon is unharmed, nothing left.
# check: r["outcome"] in ("memory_limit", "exited")
# args: --memory 64M --limit workspace_bytes=256M --limit file_size_bytes=256M --wall 10
# within: 12
import os
with open("/workspace/big", "wb") as f:
    for i in range(200):
        f.write(b"x" * (1 << 20))
print("wrote 200 MB")
