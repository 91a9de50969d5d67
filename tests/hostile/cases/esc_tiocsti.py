# TIOCSTI/TIOCLINUX (typing into a terminal) are refused even with upper bits set.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
leaks = 0


def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return r, ctypes.get_errno()


def verdict(what, r, e, ok_errnos=(errno.EPERM,)):
    """An attempt whose call failed with one of ok_errnos is BLOCKED."""
    global leaks
    if r == -1 and e in ok_errnos:
        print("BLOCKED %s %s" % (what, errno.errorcode.get(e, e)))
    else:
        leaks += 1
        print("LEAK %s r=%s errno=%s" % (what, r, e))

c = ctypes.c_char(b"x")
for fd in (0, 1, 2):
    verdict("TIOCSTI fd %d" % fd, *sc(16, fd, 0x5412, ctypes.byref(c)))
    verdict("TIOCSTI|1<<32 fd %d" % fd, *sc(16, fd, (1 << 32) | 0x5412, ctypes.byref(c)))
    verdict("TIOCLINUX fd %d" % fd, *sc(16, fd, 0x541C, ctypes.byref(c)))
try:
    fd = os.open("/dev/tty", os.O_RDWR)
    verdict("open /dev/tty", fd, 0)
except OSError as e:
    verdict("open /dev/tty", -1, e.errno, (errno.ENOENT, errno.ENXIO))
sys.exit(0)
