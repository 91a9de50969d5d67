# Hard links from the workspace to files outside it fail (EXDEV: the workspace is its own tmpfs).
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# check: r["artifacts"] == []
import errno, os
for src in ("/etc/passwd", "/usr/bin/su", "/run/airlock/main.py", "/etc/ld.so.cache", "/tmp/x"):
    if src == "/tmp/x":
        open(src, "w").close()
    try:
        os.link(src, "/workspace/" + os.path.basename(src))
        print("LEAK linked", src)
    except OSError as e:
        print(("BLOCKED %s" if e.errno in (errno.EXDEV, errno.EPERM, errno.ENOENT) else "LEAK %s") % src, e)
