"""What the python test runners share (tests/hostile, load, faults, bench,
python, mcp): each puts tests/lib on sys.path and imports from here."""
import ctypes
import os
import signal

# Every airlockd a runner starts dies with it (issue 13, finding 8: daemons
# outlived killed test runs). PR_SET_PDEATHSIG is set between fork and exec
# and fires when the thread that forked ends: runners start daemons from their
# main thread. A runner gone before the prctl is caught by getppid(). libc is
# loaded here, at import, not in the child. SIGKILL reaches the spawner
# (airlockd's main process); its frontend and sandboxes die with it by their
# own.
_LIBC = ctypes.CDLL(None, use_errno=True)
_RUNNER_PID = os.getpid()


def die_with_runner():
    """preexec_fn for subprocess.Popen of a daemon the runner starts."""
    pr_set_pdeathsig = 1
    if _LIBC.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0) != 0:
        os._exit(126)
    if os.getppid() != _RUNNER_PID:
        os._exit(126)
