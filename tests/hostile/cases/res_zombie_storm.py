# Fork children that exit and are never reaped, until EAGAIN; the run still ends and nothing is left.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# expect-cgroup2: outcome=process_limit stdout!~=LEAK
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
    while n < 10000:
        if os.fork() == 0:
            os._exit(0)
        n += 1
except OSError as e:
    verdict("fork #%d" % n, -1, e.errno, (errno.EAGAIN,))
sys.stdout.flush()
os._exit(0)
sys.exit(0)
