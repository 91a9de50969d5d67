# mount, umount2, pivot_root, the new mount API: all refused.
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

verdict("mount tmpfs /tmp", *sc(165, ctypes.c_char_p(b"none"), ctypes.c_char_p(b"/tmp"), ctypes.c_char_p(b"tmpfs"), 0, 0))
verdict("remount / rw", *sc(165, 0, ctypes.c_char_p(b"/"), 0, 32 | 4096, 0))
verdict("umount2 /usr", *sc(166, ctypes.c_char_p(b"/usr"), 2))
verdict("pivot_root", *sc(155, ctypes.c_char_p(b"/tmp"), ctypes.c_char_p(b"/tmp")))
verdict("fsopen", *sc(430, ctypes.c_char_p(b"tmpfs"), 0))
verdict("open_tree", *sc(428, -100, ctypes.c_char_p(b"/"), 1))
sys.exit(0)
