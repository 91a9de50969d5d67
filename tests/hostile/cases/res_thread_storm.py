# Threads until refused: bounded by processes (64); the run ends cleanly.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# expect-cgroup2: outcome=process_limit stdout!~=LEAK
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

import threading, time
ev = threading.Event()
n = 0
try:
    while n < 10000:
        t = threading.Thread(target=ev.wait, daemon=True)
        t.start()
        n += 1
except RuntimeError as e:
    verdict("thread #%d" % n, -1, errno.EAGAIN, (errno.EAGAIN,))
if n > 64:
    print("LEAK started", n, "threads")
sys.stdout.flush()
os._exit(0)
sys.exit(0)
