# clone(CLONE_NEWUSER) by raw syscall is EPERM; clone3 is ENOSYS (flags unseen).
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

verdict("clone NEWUSER", *sc(56, 0x10000000 | 17, 0, 0, 0, 0))
verdict("clone NEWNS|NEWPID", *sc(56, 0x00020000 | 0x20000000 | 17, 0, 0, 0, 0))
args = (ctypes.c_uint64 * 11)(0x10000000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
verdict("clone3 NEWUSER", *sc(435, ctypes.addressof(args), 88), (errno.ENOSYS,))
sys.exit(0)
