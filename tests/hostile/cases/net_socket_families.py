# Socket families outside the allow-list (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
# with NETLINK_ROUTE) fail with EAFNOSUPPORT: vsock (VM-wide, not isolated by the
# network namespace), packet, bluetooth, alg, xdp, rds, tipc, can, key; other
# netlink protocols with EPROTONOSUPPORT. The allowed ones still work. The case
# only creates sockets: it never binds or connects a vsock (that would act on
# the whole VM if the filter were missing).
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK stdout~=ALLOWED\snetlink-route
import errno, socket, sys
leaks = 0


def verdict(what, r, e, ok_errnos):
    global leaks
    if r == -1 and e in ok_errnos:
        print("BLOCKED %s %s" % (what, errno.errorcode.get(e, e)))
    else:
        leaks += 1
        print("LEAK %s r=%s errno=%s" % (what, r, e))


def try_socket(what, fam, typ, proto=0, ok=(errno.EAFNOSUPPORT,)):
    try:
        s = socket.socket(fam, typ, proto)
        s.close()
        verdict(what, 0, 0, ok)
    except OSError as e:
        verdict(what, -1, e.errno, ok)


AF_VSOCK, AF_PACKET, AF_BLUETOOTH, AF_ALG, AF_XDP = 40, 17, 31, 38, 44
AF_RDS, AF_TIPC, AF_CAN, AF_KEY, AF_APPLETALK = 21, 30, 29, 15, 5
try_socket("vsock stream", AF_VSOCK, socket.SOCK_STREAM)
try_socket("vsock dgram", AF_VSOCK, socket.SOCK_DGRAM)
try_socket("vsock seqpacket", AF_VSOCK, socket.SOCK_SEQPACKET)
try_socket("packet", AF_PACKET, socket.SOCK_DGRAM)
try_socket("packet raw", AF_PACKET, socket.SOCK_RAW, 0x0300)
try_socket("bluetooth", AF_BLUETOOTH, socket.SOCK_RAW, 1)
try_socket("alg", AF_ALG, socket.SOCK_SEQPACKET)
try_socket("xdp", AF_XDP, socket.SOCK_RAW)
try_socket("rds", AF_RDS, socket.SOCK_SEQPACKET)
try_socket("tipc", AF_TIPC, socket.SOCK_RDM)
try_socket("can", AF_CAN, socket.SOCK_RAW, 1)
try_socket("key", AF_KEY, socket.SOCK_RAW, 2)
try_socket("appletalk", AF_APPLETALK, socket.SOCK_DGRAM)
try_socket("unspec", 0, socket.SOCK_STREAM)
for name, proto in (("uevent", 15), ("audit", 9), ("generic", 16), ("sock_diag", 4), ("netfilter", 12)):
    try_socket("netlink " + name, socket.AF_NETLINK, socket.SOCK_RAW, proto, ok=(errno.EPROTONOSUPPORT,))
try:
    a, b = socket.socketpair(AF_VSOCK, socket.SOCK_STREAM)
    verdict("socketpair vsock", 0, 0, ())
except OSError as e:
    verdict("socketpair vsock", -1, e.errno, (errno.EAFNOSUPPORT,))

# What runtimes need keeps working.
for name, fam, typ, proto in (("unix", socket.AF_UNIX, socket.SOCK_STREAM, 0),
                              ("inet", socket.AF_INET, socket.SOCK_STREAM, 0),
                              ("inet6", socket.AF_INET6, socket.SOCK_DGRAM, 0),
                              ("netlink-route", socket.AF_NETLINK, socket.SOCK_RAW, 0)):
    try:
        socket.socket(fam, typ, proto).close()
        print("ALLOWED", name)
    except OSError as e:
        leaks += 1
        print("LEAK (broken) %s errno=%s" % (name, e.errno))
a, b = socket.socketpair()
print("ALLOWED socketpair unix", [i[1] for i in socket.if_nameindex()])
sys.exit(0)
