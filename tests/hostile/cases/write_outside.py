# Writes outside /workspace and /tmp fail: /, /etc, /usr, /run/airlock (the code file), /dev, /proc/sys.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
import ctypes, errno, os, socket, sys
leaks = 0


def verdict(what, r, e, ok_errnos):
    global leaks
    if r == -1 and e in ok_errnos:
        print("BLOCKED %s %s" % (what, errno.errorcode.get(e, e)))
    else:
        leaks += 1
        print("LEAK %s r=%s errno=%s" % (what, r, e))


def try_open(path, flags=os.O_RDONLY, ok=(errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS)):
    try:
        fd = os.open(path, flags, 0o644)
        data = os.read(fd, 200) if not flags & (os.O_WRONLY | os.O_RDWR) else b""
        verdict("open %s %r" % (path, data[:60]), fd, 0, ok)
    except OSError as e:
        verdict("open " + path, -1, e.errno, ok)

for p in ("/pwned", "/etc/pwned", "/etc/passwd", "/usr/pwned", "/usr/bin/python3", "/bin/sh", "/run/airlock/pwned", "/dev/pwned", "/etc/ld.so.cache", "/etc/ssl/pwned"):
    try_open(p, os.O_WRONLY | os.O_CREAT)
import glob
for p in glob.glob("/run/airlock/*"):
    try_open(p, os.O_WRONLY | os.O_TRUNC)
for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger", "/proc/1/oom_score_adj"):
    try_open(p, os.O_WRONLY)
for p in ("/workspace/ok", "/tmp/ok"):
    with open(p, "w") as f:
        f.write("fine")
print("workspace and tmp writable")
sys.exit(0)
