# sethostname/setdomainname: at most the run's own UTS namespace (the runner checks the host's name).
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

r, e = sc(170, ctypes.c_char_p(b"pwned-by-sandbox"), 16)
print("BLOCKED sethostname: host checked by the runner (r=%d errno=%d)" % (r, e))
r, e = sc(171, ctypes.c_char_p(b"pwned"), 5)
print("setdomainname r=%d errno=%d" % (r, e))
sys.exit(0)
