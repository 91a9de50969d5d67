"""The Python binding's gaps of issue 30 (docs/python.md): AirlockSandbox.ps()
(the caller's runs, as `airlock ps`), sessions opened detached (as `airlock
session open` does), and timeout= on processes() and stop_process() like
their neighbours; through the binding against a real airlockd.

Run by meson (test python-ps) as test_airlock.py is. On a failure the
daemon's log is printed.
"""

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import unittest

from airlock import AirlockSandbox, RunInfo, RunList, SandboxError, SandboxLimits, SandboxRequestTimeoutError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, uid_range, wait_for  # noqa: E402

_daemon = None
GRACE_MS = 1000  # orphan_grace_ms: how long a session outlives its opener


def setUpModule() -> None:
    global _daemon
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    binary = os.environ.get("AIRLOCKD")
    if not binary:
        raise unittest.SkipTest("no airlockd (set AIRLOCKD)")
    _daemon = Daemon(
        binary,
        "[sessions]\norphan_grace_ms = %d\nmax_interpreters = 8\nmax_interpreters_per_uid = 8\n"
        "[profile background]\nbackground_processes = true\nwall_ms = 60000\n" % GRACE_MS,
        prefix="airlock-ps-", debug=True, uids=uid_range())
    _daemon.start()


def tearDownModule() -> None:
    if _daemon is not None:
        _daemon.remove()


class Base(unittest.TestCase):
    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(_daemon.sock)
        self.addCleanup(self.sandbox.close)

    def run(self, result=None):
        before = len(result.failures) + len(result.errors) if result is not None else 0
        out = super().run(result)
        if result is not None and len(result.failures) + len(result.errors) > before:
            sys.stderr.write("--- airlockd log ---\n%s\n" % _daemon.log_tail(6000))
        return out

    @contextlib.contextmanager
    def stopped_daemon(self):
        """A daemon that answers nothing: its frontend stopped (SIGSTOP)."""
        pid = _daemon.frontend
        self.assertIsNotNone(pid, "no frontend pid")
        os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(pid, signal.SIGCONT)


class PsTest(Base):
    def test_ps_lists_a_running_run(self) -> None:
        # (An interpreter of a session an earlier test closed may still be
        # ending: its run is listed until it is reaped.)
        self.assertTrue(wait_for(lambda: self.sandbox.ps() == [], 10), repr(self.sandbox.ps()))
        result = {}

        def run() -> None:
            try:
                self.sandbox.run_sync("import time\ntime.sleep(30)", limits=SandboxLimits(wall_seconds=20))
            except SandboxError as e:  # cancelled below: its run raises
                result["error"] = str(e)

        t = threading.Thread(target=run)
        t.start()
        try:
            runs = wait_for(lambda: [r for r in self.sandbox.ps(timeout=10) if r.state == "running"], 20)
            self.assertEqual(len(runs), 1, self.sandbox.ps())
            run = runs[0]
            self.assertIsInstance(run, RunInfo)
            self.assertEqual((run.uid, run.pid, run.runtime), (os.geteuid(), os.getpid(), "python"))
            self.assertGreater(run.run_id, 0)
            self.assertGreaterEqual(run.elapsed, 0)
            lst = self.sandbox.ps()
            self.assertIsInstance(lst, RunList)
            self.assertEqual(lst.more, 0)
            # The id is what airlock cancel takes.
            cli = os.environ.get("AIRLOCK_CLI")
            if cli:
                subprocess.run([cli, "--socket", _daemon.sock, "cancel", str(run.run_id)], check=True)
        finally:
            t.join(30)
        self.assertFalse(t.is_alive())
        self.assertIn("cancelled", result.get("error", ""))
        self.assertTrue(wait_for(lambda: self.sandbox.ps() == [], 10), repr(self.sandbox.ps()))

    def test_ps_timeout(self) -> None:
        self.sandbox.ping()
        with self.stopped_daemon():
            with self.assertRaises(SandboxRequestTimeoutError):
                self.sandbox.ps(timeout=1)
        self.assertTrue(wait_for(lambda: self.sandbox.ps() == [], 10), repr(self.sandbox.ps()))
        with self.assertRaises(ValueError):
            self.sandbox.ps(timeout=0)


class DetachedTest(Base):
    def sessions(self) -> set:
        return {s.id for s in self.sandbox.list_sessions()}

    def test_detached_outlives_its_opener(self) -> None:
        # A process opens two sessions, one detached, and exits without
        # closing them: past the grace the other one ends (no connection of
        # the uid is left: this test holds none until then), the detached
        # one stays, and another process attaches to it.
        code = (
            "import airlock, sys\n"
            "s = airlock.AirlockSandbox(sys.argv[1])\n"
            "a = s.session_sync(detached=True).open()\n"
            "b = s.session_sync().open()\n"
            "a.write_file('kept.txt', 'yes')\n"
            "print(a.id, b.id)\n"
            "import os; os._exit(0)\n"
        )
        out = subprocess.run([sys.executable, "-c", code, _daemon.sock], capture_output=True, text=True,
                             env=os.environ)
        self.assertEqual(out.returncode, 0, out.stderr)
        detached, plain = out.stdout.split()
        gone = "session %s uid %d: ended (its owner has been gone too long)" % (plain[:8], os.geteuid())
        self.assertTrue(wait_for(lambda: gone in _daemon.log_text(), GRACE_MS / 1000 + 15),
                        "the plain session outlived its grace")
        self.assertNotIn(plain, self.sessions())
        self.assertIn(detached, self.sessions())
        s = self.sandbox.attach_session_sync(detached)
        self.assertEqual(s.read_file("kept.txt"), b"yes")
        s.close()
        self.assertNotIn(detached, self.sessions())

    def test_detached_must_be_a_bool(self) -> None:
        with self.assertRaises(TypeError):
            self.sandbox.session_sync(detached="yes")


class ProcessTimeoutTest(Base):
    def test_processes_and_stop_process_take_timeout(self) -> None:
        with self.sandbox.session_sync(interpreter="python", background=True,
                                       limits=SandboxLimits(profile="background")) as s:
            s.run_cell("import subprocess\np = subprocess.Popen(['sleep', '60'])")
            [p] = s.processes(timeout=10)
            with self.stopped_daemon():
                with self.assertRaises(SandboxRequestTimeoutError):
                    s.processes(timeout=1)
                with self.assertRaises(SandboxRequestTimeoutError):
                    s.stop_process(p.pid, timeout=1)
            # What the stopped daemon then read still happens: the stop.
            self.assertTrue(wait_for(lambda: s.processes(timeout=10) == [], 15))
            with self.assertRaises(ValueError):
                s.processes(timeout=-1)

    def test_async_processes_timeout(self) -> None:
        async def go():
            s = await self.sandbox.session(interpreter="python", background=True,
                                           limits=SandboxLimits(profile="background"))
            try:
                await s.run_cell("import subprocess\np = subprocess.Popen(['sleep', '60'])")
                [p] = await s.processes(timeout=10)
                await s.stop_process(p.pid, timeout=10)
                return await s.processes(timeout=10)
            finally:
                await s.close()

        self.assertEqual(asyncio.run(go()), [])


if __name__ == "__main__":
    unittest.main()
