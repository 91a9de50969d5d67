# execve with a huge argv and env: E2BIG, the run goes on.
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

try:
    os.execv("/bin/true", ["true"] + ["A" * 4000] * 1000)
except OSError as e:
    verdict("execve 4 MB argv", -1, e.errno, (errno.E2BIG,))
try:
    os.execve("/bin/true", ["true"], {"X%d" % i: "v" * 1000 for i in range(5000)})
except OSError as e:
    verdict("execve 5 MB env", -1, e.errno, (errno.E2BIG,))
try:
    os.execv("/bin/true", ["true", "B" * (256 << 10)])
except OSError as e:
    verdict("execve one 256 KiB argument", -1, e.errno, (errno.E2BIG,))
sys.exit(0)
