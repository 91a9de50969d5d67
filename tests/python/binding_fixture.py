"""What the Python binding's tests share (test_airlock.py, test_cells.py,
test_cells_control.py): one airlockd per test file, started as root on a
private socket with the profiles the tests use, and the waits that look at
what the daemon lists (deadlines for events, never fixed times)."""

import asyncio
import ctypes
import os
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, uid_range  # noqa: E402


# A cell that marks its start in the workspace, then waits for ever.
LOOP_CELL = "import time\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.01)\n"


def start(reserve_uids: int = 0) -> Daemon:
    """A started daemon for this test file; the last reserve_uids of the
    file's uid range are left for a second daemon of its own."""
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    binary = os.environ.get("AIRLOCKD") or shutil.which("airlockd")
    if not binary:
        raise unittest.SkipTest("no airlockd (set AIRLOCKD)")
    # Room for the sessions (and interpreter sessions: a host of one CPU
    # allows 2 by default) of a failing test that were not closed.
    # "advised": the advisory import check (issue 17, step 8).
    # "background": interpreter sessions may keep processes (issue 30).
    daemon = Daemon(
        binary,
        "[sessions]\nmax_per_uid = 16\nmax_interpreters = 16\nmax_interpreters_per_uid = 16\n[profile advised]\nblocked_imports = subprocess, os.path\nhidden_paths = /usr/share/doc\n"
        "[profile background]\nbackground_processes = true\nmemory_bytes = 256M\nprocesses = 32\nwall_ms = 60000\n",
        prefix="airlock-py-",
        debug=True,
        uids=(uid_range()[0], uid_range()[1] - reserve_uids),
    )
    daemon.start()
    return daemon


def stop(daemon) -> None:
    """The daemon stopped; its directory kept with AIRLOCK_TEST_KEEP."""
    if daemon is None:
        return
    if os.environ.get("AIRLOCK_TEST_KEEP"):
        daemon.stop()
    else:
        daemon.remove()


def wait_until(probe, done, seconds: float, every: float = 0.02):
    """probe() polled every `every` s until done(its value) or seconds have passed: its
    last value, for the caller's assertion (a deadline for an event, not a fixed wait)."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if done(value) or time.monotonic() >= deadline:
            return value
        time.sleep(every)


def runs_listed(sandbox, until, seconds: float = 10.0) -> int:
    """How many runs the daemon lists (airlock_ps) once until(count) holds,
    asked on a connection of its own until a deadline of seconds; past the
    deadline the last count, for the caller's assertion to fail on."""
    lib = sandbox._lib
    lib.airlock_ps.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.airlock_ps_count.argtypes = [ctypes.c_void_p]
    lib.airlock_ps_count.restype = ctypes.c_size_t
    lib.airlock_ps_free.argtypes = [ctypes.c_void_p]
    deadline = time.monotonic() + seconds
    conn = sandbox._connect()
    try:
        while True:
            ps = ctypes.c_void_p()
            assert lib.airlock_ps(conn.ptr, ctypes.byref(ps)) == 0
            n = lib.airlock_ps_count(ps)
            lib.airlock_ps_free(ps)
            if until(n) or time.monotonic() >= deadline:
                return n
            time.sleep(0.01)
    finally:
        conn.close()


def runs_in_daemon(sandbox) -> int:
    """Runs the daemon lists (airlock_ps), after they had up to 10 s to end."""
    return runs_listed(sandbox, lambda n: n == 0)


async def run_reached_daemon(sandbox) -> int:
    """Wait (without blocking the loop) until the daemon lists a run of ours:
    what a caller must know before it cancels or closes under that run."""
    return await asyncio.get_running_loop().run_in_executor(None, runs_listed, sandbox, lambda n: n >= 1)


def session_state(sandbox, sid: str):
    """The state the daemon lists session sid in ("idle", "running"), None when not listed."""
    return {i.id: i.state for i in sandbox.list_sessions()}.get(sid)


def session_running(sandbox, sid: str, seconds: float = 30.0) -> bool:
    """Whether the daemon lists session sid as "running" (a run, or a cell
    sent or waiting) within seconds."""
    return wait_until(lambda: session_state(sandbox, sid), lambda st: st == "running", seconds, 0.05) == "running"


def session_gone(sandbox, sid: str, seconds: float = 10.0) -> bool:
    """Whether the daemon stops listing session sid (it lists no ended session) within seconds."""
    return wait_until(lambda: session_state(sandbox, sid), lambda st: st is None, seconds, 0.05) is None
