# /sys is not there; it cannot be made or mounted (read-only root).
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

try:
    os.listdir("/sys")
    verdict("list /sys", 0, 0, ())
except OSError as e:
    verdict("list /sys", -1, e.errno, (errno.ENOENT,))
try:
    os.mkdir("/sys")
    verdict("mkdir /sys", 0, 0, ())
except OSError as e:
    verdict("mkdir /sys", -1, e.errno, (errno.EROFS, errno.EACCES, errno.EPERM))
try_open("/sys/kernel/uevent_helper", os.O_WRONLY)
try_open("/sys/fs/cgroup/memory/release_agent", os.O_WRONLY)
sys.exit(0)
