# Fill /workspace, /tmp and /dev/shm: ENOSPC at their size limits (8 MiB), not the host's disk.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# args: --limit workspace_bytes=8M --limit tmp_bytes=8M --memory 256M
import errno, os
for d in ("/workspace", "/tmp", "/dev/shm"):
    n = 0
    try:
        with open(d + "/fill", "wb") as f:
            while n < (64 << 20):
                f.write(b"x" * 65536)
                n += 65536
                f.flush()
        print("LEAK wrote", n, "to", d)
    except OSError as e:
        print(("BLOCKED %s after %d" if e.errno == errno.ENOSPC and n <= (8 << 20) else "LEAK %s after %d") % (d, n), e)
    os.unlink(d + "/fill")
