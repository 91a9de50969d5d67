# The host clock belongs to the host: clock_settime, settimeofday, adjtimex refused.
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

ts = (ctypes.c_long * 2)(946684800, 0)  # 2000-01-01
verdict("clock_settime REALTIME", *sc(227, 0, ts))
verdict("settimeofday", *sc(164, ts, 0))
tx = ctypes.create_string_buffer(256)
ctypes.memmove(tx, (ctypes.c_uint32 * 1)(0x0001), 4)  # ADJ_OFFSET
verdict("adjtimex", *sc(159, tx))
verdict("clock_adjtime", *sc(305, 0, tx))
sys.exit(0)
