# Signals to guessed host pids (the daemon, the frontend, the runner, 2..4096) reach nothing outside.
# after: ctx.daemon.poll() is None and os.path.exists("/proc/%d" % ctx.frontend_pid)
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

import signal
me, parent = os.getpid(), os.getppid()
hit = []
for pid in sorted(set([@DAEMON_PID@, @FRONTEND_PID@, @RUNNER_PID@] + list(range(1, 4097)))):
    if pid in (me, 0):
        continue
    r, e = sc(62, pid, 9)
    if r == 0:
        hit.append(pid)
print("signalled", hit)
if hit:
    print("LEAK signalled pids", hit)
print("BLOCKED every guessed pid")
sys.exit(0)
