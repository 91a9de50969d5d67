# kill(-1, SIGKILL) and kill(1): only the run's own processes can die; pid 1 (other uid) refuses.
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

import signal, time
verdict("kill(1, SIGKILL)", *sc(62, 1, 9))
signal.signal(signal.SIGTERM, signal.SIG_IGN)
r, e = sc(62, -1, 9)
print("kill(-1) r=%d errno=%d (own processes only)" % (r, e))
time.sleep(0.2)
print("BLOCKED still alive: kill(-1) did not reach the supervisor")
sys.exit(0)
