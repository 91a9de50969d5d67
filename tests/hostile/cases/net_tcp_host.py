# TCP to the runner's 127.0.0.1 listener: the run's lo is its own, nothing there.
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

for host in ("127.0.0.1", "::1", "0.0.0.0"):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.settimeout(2)
    try:
        s.connect((host, @TCP_PORT@))
        verdict("connect %s:@TCP_PORT@" % host, 0, 0, ())
    except OSError as e:
        verdict("connect %s" % host, -1, e.errno, (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EADDRNOTAVAIL))
    s.close()
sys.exit(0)
