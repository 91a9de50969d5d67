# No route out: TCP to 1.1.1.1:80 / 8.8.8.8:53 and UDP to 8.8.8.8:53 fail at once.
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

for host, port in (("1.1.1.1", 80), ("8.8.8.8", 53), ("10.0.2.2", 22), ("169.254.169.254", 80)):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, port))
        verdict("connect %s" % host, 0, 0, ())
    except OSError as e:
        verdict("connect %s" % host, -1, e.errno, (errno.ENETUNREACH, errno.EHOSTUNREACH))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"x", ("8.8.8.8", 53))
    verdict("udp 8.8.8.8", 0, 0, ())
except OSError as e:
    verdict("udp 8.8.8.8", -1, e.errno, (errno.ENETUNREACH,))
sys.exit(0)
