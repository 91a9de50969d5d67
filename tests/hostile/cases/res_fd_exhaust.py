# Open until EMFILE: stopped by open_files (256).
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

n = 0
try:
    while True:
        os.open("/dev/null", os.O_RDONLY)
        n += 1
except OSError as e:
    verdict("open #%d" % n, -1, e.errno, (errno.EMFILE,))
if n > 256:
    print("LEAK opened", n)
sys.exit(0)
