# UDP datagrams to the runner's 127.0.0.1 port arrive nowhere on the host (the runner counts).
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

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20):
    try:
        s.sendto(b"pwned %d" % i, ("127.0.0.1", @UDP_PORT@))
    except OSError as e:
        print("send", e)
print("BLOCKED (the runner checks its UDP socket got nothing)")
sys.exit(0)
