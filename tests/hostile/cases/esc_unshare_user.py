# Unshare a user namespace (full caps inside it): seccomp EPERM.
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

for name, flag in (("CLONE_NEWUSER", 0x10000000), ("CLONE_NEWNS", 0x00020000),
                   ("CLONE_NEWNET", 0x40000000), ("CLONE_NEWPID", 0x20000000)):
    verdict("unshare " + name, *sc(272, flag))
sys.exit(0)
