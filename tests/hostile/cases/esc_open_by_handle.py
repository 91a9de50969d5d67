# open_by_handle_at ("shocker") and name_to_handle_at: EPERM.
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

h = ctypes.create_string_buffer(8 + 128)
ctypes.memmove(h, (ctypes.c_uint32 * 2)(128, 1), 8)
mnt = ctypes.c_int(0)
verdict("name_to_handle_at", *sc(303, -100, ctypes.c_char_p(b"/usr"), h, ctypes.byref(mnt), 0))
ctypes.memmove(h, (ctypes.c_uint32 * 4)(8, 1, 2, 0), 16)  # a guessed handle: inode 2 (the fs root)
fd = os.open("/usr", os.O_RDONLY)
verdict("open_by_handle_at", *sc(304, fd, h, 0))
sys.exit(0)
