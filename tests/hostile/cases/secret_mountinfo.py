# The run's mount table names no host path: not /work, not the runner's tmp dir, not the daemon socket.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# check: ctx.dir not in out and not re.search(r"\s/work(/|\s)", out) and "airlock.sock" not in out
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

for f in ("/proc/self/mountinfo", "/proc/1/mountinfo", "/proc/self/mounts"):
    try:
        print(open(f).read())
    except OSError as e:
        print(f, e)
print("BLOCKED (the runner checks the text)")
sys.exit(0)
