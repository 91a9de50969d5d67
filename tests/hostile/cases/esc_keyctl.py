# Kernel keyrings are not namespaced: add_key, request_key, keyctl refused.
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

verdict("add_key", *sc(248, ctypes.c_char_p(b"user"), ctypes.c_char_p(b"x"), ctypes.c_char_p(b"v"), 1, -3))
verdict("request_key", *sc(249, ctypes.c_char_p(b"user"), ctypes.c_char_p(b"x"), 0, -3))
verdict("keyctl get_keyring_id", *sc(250, 0, -3, 0))
verdict("keyctl join_session", *sc(250, 1, 0))
sys.exit(0)
