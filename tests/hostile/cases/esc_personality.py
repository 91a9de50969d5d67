# personality(ADDR_NO_RANDOMIZE) and READ_IMPLIES_EXEC are refused; the query is allowed.
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

q = libc.personality(ctypes.c_ulong(0xffffffff))
print("query", q)
verdict("ADDR_NO_RANDOMIZE", *sc(135, 0x0040000))
verdict("READ_IMPLIES_EXEC", *sc(135, 0x0400000))
verdict("PER_LINUX32", *sc(135, 0x0008))
verdict("upper bits", *sc(135, (1 << 32) | 0x0040000))
if libc.personality(ctypes.c_ulong(0xffffffff)) & 0x0040000:
    print("LEAK randomisation is off")
sys.exit(0)
