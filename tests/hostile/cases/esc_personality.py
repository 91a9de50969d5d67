# personality(ADDR_NO_RANDOMIZE) and READ_IMPLIES_EXEC are refused; the query is allowed (but under systemd 252's LockPersonality).
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


def current():
    """The personality: the query, or, where the service manager's filter
    refuses it (systemd 252's LockPersonality, docs/install.md), the
    kernel's /proc/self/personality."""
    q = libc.personality(ctypes.c_ulong(0xffffffff))
    print("query", q)
    if q == -1:
        with open("/proc/self/personality") as f:
            q = int(f.read(), 16)
        print("query refused, /proc/self/personality", hex(q))
    return q


current()
verdict("ADDR_NO_RANDOMIZE", *sc(135, 0x0040000))
verdict("READ_IMPLIES_EXEC", *sc(135, 0x0400000))
verdict("PER_LINUX32", *sc(135, 0x0008))
verdict("upper bits", *sc(135, (1 << 32) | 0x0040000))
if current() & 0x0040000:
    print("LEAK randomisation is off")
sys.exit(0)
