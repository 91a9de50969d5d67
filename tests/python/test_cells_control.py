"""Tests of the Python binding's cell interrupts and background processes
against a real airlockd (binding_fixture.py starts the daemon)."""

import asyncio
import contextlib
import ctypes
import hashlib
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest
import unittest.mock
from typing import Any, List

import airlock
from airlock import (
    AirlockSandbox,
    FileInfo,
    SandboxError,
    SandboxLimits,
    SandboxMemoryError,
    SandboxNotFoundError,
    SandboxPathError,
    SandboxRequestTimeoutError,
    SandboxResult,
    SandboxSessionClosedError,
    SandboxTimeoutError,
    SandboxUnavailableError,
    sandbox_tool,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import binding_fixture as fx  # noqa: E402
from binding_fixture import (  # noqa: E402
    LOOP_CELL,
    run_reached_daemon,
    runs_in_daemon,
    runs_listed,
    session_gone,
    session_running,
    session_state,
    wait_until,
)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, uid_range, wait_for  # noqa: E402

_daemon = None
SOCKET = None


def setUpModule() -> None:
    global _daemon, SOCKET
    _daemon = fx.start()
    SOCKET = _daemon.sock


def tearDownModule() -> None:
    global _daemon
    fx.stop(_daemon)
    _daemon = None


class CellCancelTest(unittest.TestCase):
    """Issue 30, point 1: cancelling a cell (the run_cell task, or
    AirlockSession.interrupt()) interrupts it as its wall limit does: the
    interpreter's state is kept, and the cells behind it run."""

    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)

    async def started(self, s) -> None:
        """Wait (30 s at most) for the running cell's 'started' file."""
        deadline = time.monotonic() + 30
        while True:
            try:
                await s.read_file("started")
                break
            except airlock.SandboxNotFoundError:
                self.assertLess(time.monotonic(), deadline, "the cell did not start")
                await asyncio.sleep(0.005)
        await s.delete_file("started")

    def test_task_cancel_keeps_state(self) -> None:
        async def main():
            async with self.sandbox.session(interpreter="python") as s:
                await s.run_cell("x = 7")
                task = asyncio.create_task(s.run_cell(LOOP_CELL))
                await self.started(s)
                t = time.monotonic()
                task.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await task
                after = await s.run_cell("x")
                return after, time.monotonic() - t

        after, took = asyncio.run(main())
        # Before issue 30 the daemon answered the cancel not_found and the
        # cell ran on to its wall limit (60 s), the next cell behind it.
        self.assertEqual((after.value, after.state), ("7", "kept"))
        self.assertLess(took, 2)

    def test_interrupt(self) -> None:
        async def main():
            async with self.sandbox.session(interpreter="python") as s:
                await s.run_cell("x = 7")
                loop = asyncio.create_task(s.run_cell(LOOP_CELL))
                await self.started(s)
                behind = asyncio.create_task(s.run_cell("x + 1"))
                await s.interrupt()
                with self.assertRaises(airlock.SandboxError) as cm:
                    await loop
                after = await behind
                nothing = None
                try:
                    await s.interrupt()
                except airlock.SandboxError as e:
                    nothing = e
                return cm.exception, after, nothing

        err, behind, nothing = asyncio.run(main())
        r = err.result
        self.assertEqual((r.outcome, r.state), ("cancelled", "kept"))
        self.assertIn("KeyboardInterrupt", r.stderr)
        self.assertIn("state is kept", str(err))
        self.assertEqual((behind.value, behind.state), ("8", "kept"))
        # Nothing to interrupt: a clear error.
        self.assertIsNotNone(nothing)
        self.assertIn("no cell", str(nothing))


    def test_interrupt_sync(self) -> None:
        import threading

        with self.sandbox.session_sync(interpreter="python") as s:
            s.run_cell("x = 7")
            got = {}

            def run():
                try:
                    got["result"] = s.run_cell(LOOP_CELL)
                except airlock.SandboxError as e:
                    got["error"] = e

            t = threading.Thread(target=run)
            t.start()
            deadline = time.monotonic() + 30
            while True:
                try:
                    s.read_file("started")
                    break
                except airlock.SandboxNotFoundError:
                    self.assertLess(time.monotonic(), deadline, "the cell did not start")
                    time.sleep(0.005)
            t0 = time.monotonic()
            s.interrupt()
            t.join(30)
            took = time.monotonic() - t0
            self.assertFalse(t.is_alive(), "run_cell did not return after interrupt()")
            self.assertIn("error", got, got)
            r = got["error"].result
            self.assertEqual((r.outcome, r.state), ("cancelled", "kept"))
            self.assertIn("KeyboardInterrupt", r.stderr)
            self.assertLess(took, 2)
            self.assertEqual(s.run_cell("x").value, "7")
            with self.assertRaises(airlock.SandboxError) as cm:
                s.interrupt()
            self.assertIn("no cell", str(cm.exception))

_BG = SandboxLimits(profile="background")

# A cell that starts a web server on 127.0.0.1:PORT serving the workspace,
# its output away from the cell's (the server lives on after the cell).
_SERVE = (
    "import subprocess, sys\n"
    "open('hello.txt', 'w').write('hello from the first cell')\n"
    "server = subprocess.Popen([sys.executable, '-m', 'http.server', '%d', '--bind', '127.0.0.1'],\n"
    "                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "server.pid > 0"
)
# A later cell that fetches from it, retrying until a deadline (the server
# needs a moment to listen), never a fixed sleep.
_FETCH = (
    "import time, urllib.request\n"
    "end = time.monotonic() + %g\n"
    "while True:\n"
    "    try:\n"
    "        body = urllib.request.urlopen('http://127.0.0.1:%d/hello.txt', timeout=5).read().decode()\n"
    "        break\n"
    "    except OSError as e:\n"
    "        if time.monotonic() > end:\n"
    "            body = 'refused: %%s' %% type(e).__name__\n"
    "            break\n"
    "        time.sleep(0.05)\n"
    "body"
)


def _host_tasks(tag: str) -> List[str]:
    """Live host processes whose command line holds tag."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
            with open("/proc/%s/stat" % pid) as f:
                st = f.read()
        except OSError:
            continue
        if tag.encode() in cmd and st[st.rindex(")") + 2] not in "ZX":
            found.append(pid)
    return found


class BackgroundTest(unittest.TestCase):
    """Background processes of interpreter sessions (issue 30, point 4;
    docs/design-interpreters.md 2.7), through the real daemon."""

    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)

    def tearDown(self) -> None:
        self.assertEqual(self.sandbox.run_sync("print(6 * 7)").stdout, "42\n")

    def why(self, r) -> str:
        with open(_daemon.log, encoding="utf-8", errors="replace") as f:
            log = f.read()
        return "outcome=%s state=%s value=%r stderr=%r\nlog tail:\n%s" % (
            r.outcome, r.state, r.value, r.stderr[-500:], log[-3000:])

    def test_agent_loop_server_then_client(self) -> None:
        # Done-when: an agent loop starts a web server in one cell and
        # fetches from it in the next.
        async def agent() -> List[Any]:
            seen = []
            async with self.sandbox.session(interpreter="python", background=True, limits=_BG) as s:
                for step in (_SERVE % 8000, _FETCH % (50, 8000)):
                    seen.append(await s.run_cell(step))
                listed = [i for i in self.sandbox.list_sessions() if i.id == s.id]
                self.assertEqual([(i.interpreter, i.background) for i in listed], [("python", True)])
            return seen

        first, second = asyncio.run(agent())
        self.assertEqual((first.value, first.state), ("True", "kept"), self.why(first))
        self.assertEqual(second.value, "'hello from the first cell'", self.why(second))

    def test_without_the_option_nothing_outlives_a_cell(self) -> None:
        # The same steps in a session without background: the server dies
        # with its cell, the fetch is refused (and the profile allowing it
        # changes nothing by itself).
        with self.sandbox.session_sync(interpreter="python", limits=_BG) as s:
            self.assertEqual(s.run_cell(_SERVE % 8001).value, "True")
            r = s.run_cell(_FETCH % (1, 8001))
            self.assertEqual(r.value, "'refused: URLError'", self.why(r))
            self.assertEqual([i.background for i in self.sandbox.list_sessions() if i.id == s.id], [False])

    def test_refused_without_the_profile(self) -> None:
        with self.assertRaises(SandboxUnavailableError) as cm:
            with self.sandbox.session_sync(interpreter="python", background=True):
                pass
        self.assertEqual(cm.exception.code, "unauthorized")
        self.assertIn("does not allow background processes", cm.exception.message)
        with self.assertRaises(ValueError):
            self.sandbox.session_sync(background=True)
        with self.assertRaises(TypeError):
            self.sandbox.session_sync(interpreter="python", background="yes")

    def test_they_die_with_the_session(self) -> None:
        tag = "bg%08x" % int.from_bytes(os.urandom(4), "big")
        with self.sandbox.session_sync(interpreter="python", background=True, limits=_BG) as s:
            r = s.run_cell(
                "import subprocess, sys\n"
                "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '%s'])\n"
                "p.pid > 0" % tag
            )
            self.assertEqual(r.value, "True", self.why(r))
            # Alive between cells, and seen by the next cell. Its command
            # line is the parent's until its exec is done: waited for.
            self.assertEqual(len(wait_until(lambda: _host_tasks(tag), len, 10)), 1)
            self.assertEqual(s.run_cell("p.poll() is None").value, "True")
        self.assertEqual(wait_until(lambda: _host_tasks(tag), lambda v: not v, 10), [])

    def test_memory_filler_ends_as_the_limit_says(self) -> None:
        # A background process that fills the session's memory: it ends
        # under the session's memory limit, whatever the back end does
        # with the rest; the session reports it in the next cell and lives.
        with self.sandbox.session_sync(interpreter="python", background=True, limits=_BG) as s:
            nxt = self.start_until_ended(
                s, "p = subprocess.Popen([sys.executable, '-c', 'b = []\\nwhile True: b.append(bytearray(1 << 20))'])"
            )
            if nxt.state == "lost":
                # cgroup2 (memory.oom.group): the whole sandbox ended.
                self.assertEqual(nxt.outcome, "memory_limit", self.why(nxt))
            else:
                # cgroup1 or rlimit: the filler alone died of its limit.
                self.assertIn(nxt.value, ("'-9'", "'1'"), self.why(nxt))
                self.assertEqual(s.run_cell("x").value, "1")

    def test_fork_past_the_limit(self) -> None:
        # A background process forking without end: the session's process
        # limit stops it (a fork refused), the session goes on.
        with self.sandbox.session_sync(interpreter="python", background=True, limits=_BG) as s:
            nxt = self.start_until_ended(
                s,
                "code = 'import os, time\\nn = 0\\nwhile True:\\n    try:\\n        os.fork() or time.sleep(600)\\n        n += 1\\n    except OSError:\\n        print(n, flush=True)\\n        break'\n"
                "p = subprocess.Popen([sys.executable, '-c', code], stdout=open('forks.txt', 'w'))",
            )
            if nxt.state == "lost":
                self.assertIn(nxt.outcome, ("process_limit", "memory_limit"), self.why(nxt))
            else:
                self.assertEqual(nxt.value, "'0'", self.why(nxt))
                forks = int(s.read_file("forks.txt").decode().strip())
                self.assertLess(forks, 32)
                self.assertEqual(s.run_cell("x").value, "1")

    def test_listed_and_stopped_one_by_one(self) -> None:
        # Listed with their cpu and memory, stopped one by one; the
        # interpreter is neither listed nor stoppable; bad input changes
        # nothing.
        with self.sandbox.session_sync(interpreter="python", background=True, limits=_BG) as s:
            self.assertEqual(s.processes(), [])
            r = s.run_cell(
                "import subprocess, sys\n"
                "busy = subprocess.Popen([sys.executable, '-c', 'b = bytes(1) * (32 << 20) + bytes(1)\\nwhile True: pass'])\n"
                "idle = subprocess.Popen(['sleep', '600'])\n"
                "import os; (os.getpid(), busy.pid, idle.pid)"
            )
            me, busy, idle = eval(r.value)
            # The busy one needs a moment of cpu before it shows some.
            procs = wait_until(lambda: {p.pid: p for p in s.processes()},
                               lambda ps: ps.get(busy) is not None and ps[busy].cpu > 0.05, 10, 0.05)
            self.assertEqual(sorted(procs), sorted([busy, idle]), procs)
            self.assertNotIn(me, procs)
            self.assertEqual((procs[busy].name, procs[idle].name), ("python3", "sleep"))
            self.assertGreater(procs[busy].cpu, 0.05, procs)
            self.assertGreater(procs[busy].memory, 32 << 20, procs)
            self.assertLess(procs[idle].memory, 16 << 20, procs)
            self.assertEqual(procs[idle].cpu, 0.0)
            # One by one.
            s.stop_process(busy)
            self.assertEqual(s.run_cell("busy.wait(timeout=10)").value, "-9")
            self.assertEqual([p.pid for p in s.processes()], [idle])
            self.assertEqual(s.run_cell("idle.poll() is None").value, "True")
            # Bad input: the interpreter, pid 1, one not there, pid 0.
            for pid, code in ((me, "bad_request"), (1, "bad_request"), (99999, "not_found")):
                with self.assertRaises(SandboxUnavailableError) as cm:
                    s.stop_process(pid)
                self.assertEqual(cm.exception.code, code, (pid, cm.exception.message))
            with self.assertRaises(ValueError):
                s.stop_process(0)
            self.assertEqual(s.run_cell("idle.poll() is None").value, "True")
            # Another uid's view: the session does not exist (not_found),
            # and a session without background has nothing to list.
            with self.sandbox.session_sync(interpreter="python", limits=_BG) as plain:
                with self.assertRaises(SandboxUnavailableError) as cm:
                    plain.processes()
                self.assertEqual(cm.exception.code, "bad_request")
            sid = s.id
        with self.assertRaises(SandboxUnavailableError) as cm:
            self.sandbox.attach_session_sync(sid).processes()
        self.assertEqual(cm.exception.code, "not_found")

    def start_until_ended(self, s, popen: str):
        """Set x = 1, then start the background process p in a cell
        (popen: the code that makes it, after import subprocess, sys) and
        return the first cell after it ended (until_ended)."""
        s.run_cell("x = 1")
        r = s.run_cell("import subprocess, sys\n" + popen + "\np.pid > 0")
        self.assertEqual(r.value, "True", self.why(r))
        return self.until_ended(s)

    def until_ended(self, s):
        """The first cell after which the background process p has ended
        (its status), or the interpreter did (state lost); 30 s at most."""
        return wait_until(lambda: self.cell_or_result(s, "repr(p.poll())"),
                          lambda nxt: nxt.state == "lost" or nxt.value != "'None'", 30, 0.05)

    def cell_or_result(self, s, code: str):
        try:
            return s.run_cell(code)
        except airlock.SandboxError as e:
            self.assertIsNotNone(e.result, str(e))
            return e.result

if __name__ == "__main__":
    unittest.main(verbosity=2)
