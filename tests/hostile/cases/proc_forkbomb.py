# A fork bomb: every process forks forever; processes=64 stops it; wall ends it; nothing is left.
# args: --wall 4
# within: 8
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

import time
if os.fork() == 0:
    while True:
        try:
            os.fork()
        except OSError:
            time.sleep(0.01)
peak = 0
for i in range(20):
    time.sleep(0.05)
    peak = max(peak, sum(1 for p in os.listdir("/proc") if p.isdigit()))
print("peak processes", peak)
# 64 of the code's uid (processes=64) + the supervisor (another uid)
verdict("fork bomb peak %d" % peak, -1 if peak <= 65 else 0, errno.EAGAIN, (errno.EAGAIN,))
sys.stdout.flush()
os._exit(0)
