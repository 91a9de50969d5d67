# The host abstract unix socket the runner listens on is invisible (abstract sockets follow the net ns).
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# check: "@ABSTRACT@" not in out.split("BLOCKED")[-1] and "airlock.sock" not in out
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

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0@ABSTRACT@")
    verdict("connect abstract @ABSTRACT@", 0, 0, ())
except OSError as e:
    verdict("connect abstract", -1, e.errno, (errno.ECONNREFUSED, errno.ENOENT))
try:
    print(open("/proc/net/unix").read())
except OSError as e:
    print(e)
sys.exit(0)
