# Only lo exists; no raw/packet sockets.
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

ifs = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
print(ifs)
if ifs != ["lo"]:
    print("LEAK interfaces", ifs)
for fam, typ, proto in ((socket.AF_PACKET, socket.SOCK_RAW, 0x0300), (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)):
    try:
        socket.socket(fam, typ, proto)
        verdict("raw socket %d" % fam, 0, 0, ())
    except OSError as e:
        # AF_PACKET is outside the seccomp allow-list (EAFNOSUPPORT); a raw
        # AF_INET socket needs CAP_NET_RAW (EPERM).
        verdict("raw socket %d" % fam, -1, e.errno, (errno.EPERM, errno.EAFNOSUPPORT))
sys.exit(0)
