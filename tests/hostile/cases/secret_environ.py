# Neither the daemon's nor the client's environment (both hold AIRLOCK_HOSTILE_SECRET) reaches the run.
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

print(dict(os.environ))
if "@SECRET_VAR@" in os.environ:
    print("LEAK the client environment")
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for f in ("environ", "cmdline"):
            try:
                with open("/proc/%s/%s" % (pid, f), "rb") as fh:
                    d = fh.read()
                print(pid, f, d[:300])
                if b"@SECRET_VAR@" in d:
                    print("LEAK", pid, f)
            except OSError as e:
                pass
try_open("/proc/1/environ", ok=(errno.EACCES, errno.EPERM))
sys.exit(0)
