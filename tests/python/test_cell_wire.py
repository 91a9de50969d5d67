"""What a cell's answer says, for the Jupyter kernel (issue 31,
docs/design-jupyter.md section 5), through a real airlockd: the restarted
flag, the exception's fields (and the frontend's refusal of hostile ones),
and the output streamed while a cell runs, by the Python binding (blocking
and async) and by the airlock command (AIRLOCK_CLI). The daemon's log is
shown when a test fails.
"""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import unittest

import airlock
from airlock import AirlockSandbox, SandboxLimits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, wait_for  # noqa: E402

_daemon = None

# A cell that finds the driver's channel and its reply memfd and speaks as
# the driver would (daemon/ipc/cells_msg.h: the done message with its
# exception's lengths), then sleeps: the frontend must refuse the answer
# and restart the interpreter at once.
_FORGE = """import os, socket, struct, sys, time
n = int(sys._getframe().f_code.co_filename[6:-1])
for f in os.listdir('/proc/self/fd'):
    link = os.readlink('/proc/self/fd/' + f) if os.path.islink('/proc/self/fd/' + f) else ''
    if link.startswith('socket:'):
        chan = socket.socket(fileno=os.dup(int(f)))
    elif link.startswith('/memfd:reply'):
        reply = int(f)
def done(status=1, has=0, vlen=0, err=(0, 0, 0, 0)):
    head = struct.pack('<IIQiIIIII', 0x4C4C4543, status, n, 0, has, vlen, 0, 0, 0)
    return head + struct.pack('<32sQ', b'', 0) * 8 + struct.pack('<IIII', *err)
%s
time.sleep(20)
"""


def setUpModule():
    global _daemon
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    _daemon = Daemon(os.environ["AIRLOCKD"],
                     "[sessions]\nmax_per_uid = 16\nmax_interpreters = 16\nmax_interpreters_per_uid = 16\n",
                     prefix="airlock-cellwire-", debug=True)
    _daemon.start()


def tearDownModule():
    if _daemon is not None:
        _daemon.stop()
        _daemon.remove()


class CellWireCase(unittest.TestCase):
    """One interpreter session per test; the daemon's log on a failure."""

    def setUp(self):
        self.sandbox = AirlockSandbox(_daemon.sock)
        self.addCleanup(self.sandbox.close)
        self.s = self.sandbox.session_sync(interpreter="python", limits=SandboxLimits(memory_bytes=256 << 20))
        self.s.open()
        self.addCleanup(self.s.close)

    def tearDown(self):
        outcome = self._outcome
        if any(e for _, e in getattr(outcome, "errors", []) if e) or \
                getattr(getattr(outcome, "result", None), "failures", None):
            _daemon.show_log()

    def cell(self, code, **kw):
        self.last_error = None
        try:
            return self.s.run_cell(code, **kw)
        except airlock.SandboxError as e:
            self.assertIsNotNone(e.result, str(e))
            self.last_error = str(e)
            return e.result

    def daemon_log(self):
        with open(_daemon.log, encoding="utf-8", errors="replace") as f:
            return f.read()


class TestRestartedAndErrors(CellWireCase):
    def test_restarted_only_for_the_cell_that_ended(self):
        # A fresh session's first cell is no restart.
        first = self.cell("x = 1")
        self.assertEqual((first.state, first.restarted), ("kept", False))
        for code in ("import os\nos._exit(3)", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
                     "b = bytearray(1 << 30)"):
            r = self.cell(code)
            self.assertEqual((r.state, r.restarted), ("lost", True), code)
            # The next cell's state is empty, and it is not a second crash.
            after = self.cell("'x' in globals()")
            self.assertEqual((after.value, after.state, after.restarted), ("False", "lost", False))
            again = self.cell("x = 1")
            self.assertEqual((again.state, again.restarted), ("kept", False))

    def test_error_fields(self):
        r = self.cell('def f():\n    raise ValueError("x")\nf()')
        self.assertEqual((r.ename, r.evalue, r.state), ("ValueError", "x", "kept"))
        self.assertEqual(r.traceback[0], "Traceback (most recent call last):")
        self.assertEqual(r.traceback[-1], "ValueError: x")
        self.assertTrue(r.traceback[1].startswith('  File "<cell 1>"'), r.traceback)
        self.assertIn("ValueError: x", r.stderr)  # not streamed: on stderr too, as before
        r = self.cell("x = (")
        self.assertEqual(r.ename, "SyntaxError", r.traceback)
        self.assertTrue(r.traceback[-1].startswith("SyntaxError: "), r.traceback)
        self.assertNotIn("Traceback (most recent call last):", r.traceback)  # no driver frame
        ok = self.cell("1 + 1")
        self.assertEqual((ok.ename, ok.evalue, ok.traceback), (None, None, None))
        # A name with a space, a NUL and 100 kB in the value: made safe by
        # the driver and bounded, the state kept.
        r = self.cell('E = type("a b", (Exception,), {})\nraise E("v\\0" + "w" * 100000)')
        self.assertEqual((r.ename, r.state), ("a_b", "kept"))
        self.assertTrue(r.evalue.startswith("v\\x00www"), r.evalue[:20])
        self.assertLessEqual(len(r.evalue.encode()), 4096)

    def test_hostile_error_fields_refused(self):
        # The driver is the code's: fields past the bounds or not a name
        # (the driver's own encoder replaced), and answers forged whole,
        # are refused by the frontend, which restarts the interpreter.
        cases = [
            ("import sys\nsys.modules['__main__']._utf8 = lambda t, n, front=False: %s\nraise ValueError()" % bad, why)
            for bad, why in (("b'E' * 300", "error fields larger than their bounds"),
                             ("b'bad name'", "an error name with a space or a control character"),
                             ("b'\\xff'", "error fields that are not UTF-8"))
        ] + [(_FORGE % code, why) for code, why in (
            ("chan.send(done(err=(257, 0, 0, 0)))", "error fields larger than their bounds"),
            ("chan.send(done(err=(1, 0, 16385, 0)))", "error fields larger than their bounds"),
            ("chan.send(done(err=(1, 0, 0, 1)))", "error fields larger than their bounds"),
            ("chan.send(done(err=(0, 1, 0, 0)))", "an error without a name"),
            ("chan.send(done(status=0, err=(1, 0, 0, 0)))", "error fields for a cell that raised nothing"),
            ("chan.send(done(err=(1, 0, 0, 0)))", "lengths past the reply"),
            ("os.pwrite(reply, b'E\\x01', 0)\nchan.send(done(err=(2, 0, 0, 0)))",
             "an error name with a space or a control character"),
            ("os.pwrite(reply, b'Ex\\xc3(', 0)\nchan.send(done(err=(1, 3, 0, 0)))", "error fields that are not UTF-8"),
            ("os.pwrite(reply, b'42E', 0)\nchan.send(done(has=1, vlen=2, err=(1, 0, 0, 0)))", "an error with a value"),
        )]
        for code, why in cases:
            with self.subTest(why=why, code=code):
                self.cell("x = 1")
                t = time.monotonic()
                r = self.cell(code)
                self.assertLess(time.monotonic() - t, 10)
                self.assertEqual((r.outcome, r.state, r.restarted, r.ename), ("error", "lost", True, None))
                self.assertIn("the interpreter's answer is refused: " + why, self.daemon_log())
                # The cell's own error says why, not how the interpreter
                # we killed for it ended ("the interpreter ended (signaled)").
                self.assertIn("the interpreter's answer is refused: " + why, self.last_error or "")
                self.assertNotIn("the interpreter ended", self.last_error or "")
                after = self.cell("'x' in globals()")
                self.assertEqual((after.value, after.state, after.restarted), ("False", "lost", False))


class TestCellFigures(CellWireCase):
    def test_cpu_is_each_cells_own(self):
        # Each cell's cpu is counted from its own start: the supervisor's
        # baseline is the last cell's end (nothing runs between cells),
        # so a spin is the spinning cell's and not the next one's.
        spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
        for _ in range(2):
            r = self.cell(spin)
            self.assertGreaterEqual(r.cpu_time, 0.25, self.last_error)
            r = self.cell("x = 1")
            self.assertLess(r.cpu_time, 0.2, self.last_error)

    def test_no_pipe_to_the_supervisor(self):
        # The code holds no pipe it can write to: a done pipe to the
        # supervisor was tried and removed (docs/design-interpreters.md
        # section 2.9); the supervisor reads nothing of the code's.
        # (The fd listdir had open is gone when the list is read: readlink.)
        r = self.cell("import fcntl, os\n"
                      "def writable_pipe(f):\n"
                      "    try:\n"
                      "        return (os.readlink('/proc/self/fd/' + f).startswith('pipe:')\n"
                      "                and fcntl.fcntl(int(f), fcntl.F_GETFL) & 3 != 0)\n"
                      "    except OSError:\n"
                      "        return False\n"
                      "[f for f in os.listdir('/proc/self/fd') if writable_pipe(f)]")
        self.assertEqual((r.outcome, r.state), ("exited", "kept"), self.last_error)
        self.assertEqual(r.value, "[]", (r.stdout, r.stderr, self.last_error))


class TestStream(CellWireCase):
    def test_stream_reaches_the_client_while_the_cell_runs(self):
        # The first chunk is waited for: the cell runs 60 s unless the
        # chunk comes while it runs, when the callback interrupts it.
        got = []

        def out(stream, data):
            got.append((stream, data))
            if len(got) == 1:
                self.s.interrupt()

        r = self.cell("import time\nprint('first')\nt = time.monotonic()\n"
                      "while time.monotonic() < t + 60:\n    time.sleep(0.05)\nprint('never')",
                      on_output=out, limits=SandboxLimits(wall_seconds=120))
        self.assertEqual(got[0], ("stdout", b"first\n"))
        self.assertEqual((r.outcome, r.state, r.stdout), ("cancelled", "kept", "first\n"))
        # Streamed: the exception in the fields only, stderr the code's.
        self.assertEqual((r.ename, r.stderr), ("KeyboardInterrupt", ""))

    def test_stream_order_and_bound(self):
        chunks = {"stdout": b"", "stderr": b""}

        def out(stream, data):
            chunks[stream] += data

        r = self.cell("import sys, time\nfor i in range(4):\n    print(i)\n    print('e%d' % i, file=sys.stderr)\n"
                      "    time.sleep(0.06)\n1/0", on_output=out)
        self.assertEqual((chunks["stdout"].decode(), chunks["stderr"].decode()), (r.stdout, r.stderr))
        self.assertEqual((r.stdout, r.stderr, r.ename), ("0\n1\n2\n3\n", "e0\ne1\ne2\ne3\n", "ZeroDivisionError"))
        chunks["stdout"] = b""
        r = self.cell("print('y' * 100000)", on_output=out, limits=SandboxLimits(max_output_bytes=1000))
        self.assertEqual((len(chunks["stdout"]), r.stdout_truncated), (1000, True))

    def test_async_stream(self):
        # run_cell(on_output=...) of the async session: the first chunk
        # comes while the cell runs (it waits 60 s for the file written
        # only after that chunk), then the rest, in order.
        async def main():
            async with self.sandbox.session(interpreter="python") as s:
                chunks, got = [], asyncio.Event()

                async def out(stream, data):
                    chunks.append((stream, data))
                    got.set()

                cell = asyncio.create_task(s.run_cell(
                    "import os, time\nprint('first')\nt = time.monotonic()\n"
                    "while not os.path.exists('go') and time.monotonic() < t + 60:\n"
                    "    time.sleep(0.02)\nprint('second')", on_output=out,
                    limits=SandboxLimits(wall_seconds=120)))
                await asyncio.wait_for(got.wait(), 60)
                self.assertFalse(cell.done())
                await s.write_file("go", b"")
                return chunks, await cell

        chunks, r = asyncio.run(main())
        self.assertEqual(chunks[0], ("stdout", b"first\n"))
        self.assertEqual(b"".join(d for _, d in chunks), b"first\nsecond\n")
        self.assertEqual((r.stdout, r.state), ("first\nsecond\n", "kept"))


class TestCli(CellWireCase):
    """airlock run --session ID --cell: the restart notes, --json's
    fields, --stream (through airlock_run_stream's events) and Ctrl-C."""

    def cli(self, *args, **kw):
        return subprocess.run([os.environ["AIRLOCK_CLI"], "--socket", _daemon.sock] + list(args),
                              capture_output=True, text=True, timeout=120, **kw)

    def test_restarted_text_and_json(self):
        sid = self.s.id
        r = self.cli("run", "--session", sid, "--cell", "-c", "import os\nos._exit(3)")
        self.assertIn("the interpreter ended during this cell", r.stderr)
        r = self.cli("run", "--session", sid, "--cell", "-c", "1")
        self.assertNotIn("ended during this cell", r.stderr)
        self.assertIn("the interpreter was restarted", r.stderr)
        j = json.loads(self.cli("--json", "run", "--session", sid, "--cell", "-c", "import os\nos._exit(3)").stdout)
        self.assertEqual((j["restarted"], j["state"]), (True, "lost"))
        j = json.loads(self.cli("--json", "run", "--session", sid, "--cell", "-c", "raise ValueError('v')").stdout)
        self.assertEqual((j["restarted"], j["ename"], j["evalue"]), (False, "ValueError", "v"))
        self.assertTrue(j["traceback"].endswith("ValueError: v\n"), j["traceback"])

    def test_stream_prints_the_traceback(self):
        # A streamed cell keeps its traceback out of stderr: the command
        # prints it from the result.
        r = self.cli("run", "--session", self.s.id, "--cell", "--stream", "-c", "print(1)\nraise ValueError('s')")
        self.assertEqual(r.stdout, "1\n")
        self.assertIn("Traceback (most recent call last):", r.stderr)
        self.assertIn("ValueError: s\n", r.stderr)

    def test_ctrl_c_interrupts_a_streamed_cell(self):
        # Before, --stream went around the cell's Ctrl-C handling: SIGINT
        # ended the command and the cell ran on to its limit.
        self.cell("x = 41")
        p = subprocess.Popen([os.environ["AIRLOCK_CLI"], "--socket", _daemon.sock, "run", "--session", self.s.id,
                              "--cell", "--stream", "-c",
                              "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.01)"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline(), "started\n")  # streamed: the cell runs
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 124, err)
        self.assertIn("cancelled; the interpreter's state is kept", err)
        self.assertIn("KeyboardInterrupt", err)
        self.assertEqual(wait_for(lambda: self.cell("x").value, 10), "41")


if __name__ == "__main__":
    unittest.main(verbosity=2)
