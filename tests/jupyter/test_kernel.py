"""The Airlock Jupyter kernel (libclient/python/airlock_kernel) driven by
jupyter_client as Jupyter drives it, against a real airlockd of this test.

Started with the build's library and binding (AIRLOCK_LIBRARY, PYTHONPATH
from meson). The daemon's log and the kernel's stderr are shown when a test
fails.
"""

import json
import os
import queue
import shutil
import sys
import tempfile
import time
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from airlock_testlib import Daemon  # noqa: E402

from jupyter_client import KernelManager  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

_daemon = None
_specs = None


def setUpModule():
    global _daemon, _specs
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    _daemon = Daemon(os.environ["AIRLOCKD"], "[sessions]\nmax_interpreters = 8\nmax_interpreters_per_uid = 8\n"
                     "[profile advised]\nblocked_imports = subprocess\n",
                     prefix="airlock-jupyter-")
    _daemon.start()
    _specs = tempfile.mkdtemp(prefix="airlock-kernels-")
    d = os.path.join(_specs, "airlock-test")
    os.mkdir(d)
    sys.path.insert(0, os.environ["PYTHONPATH"].split(":")[0])
    from airlock_kernel.cli import spec

    with open(os.path.join(d, "kernel.json"), "w") as f:
        json.dump(spec(None, None, sys.executable), f)


def tearDownModule():
    if _daemon is not None:
        _daemon.stop()
        _daemon.remove()
    if _specs:
        shutil.rmtree(_specs, ignore_errors=True)


class KernelCase(unittest.TestCase):
    """One kernel per test, started by jupyter_client's KernelManager."""

    kernel_env = {}  # the kernel's settings (AIRLOCK_KERNEL_...)

    def setUp(self):
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.km = KernelManager(kernel_name="airlock-test",
                                kernel_spec_manager=KernelSpecManager(kernel_dirs=[_specs]))
        env = dict(os.environ, AIRLOCK_SOCKET=_daemon.sock, **self.kernel_env)
        self.km.start_kernel(env=env, stderr=self.stderr)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def tearDown(self):
        self.kc.stop_channels()
        if self.km.is_alive():
            self.km.shutdown_kernel(now=False)
        outcome = self._outcome
        failed = any(e for _, e in getattr(outcome, "errors", []) if e) or \
            bool(getattr(getattr(outcome, "result", None), "failures", None))
        if failed:
            self.stderr.seek(0)
            print("--- kernel stderr ---\n" + self.stderr.read()[-4000:], file=sys.stderr)
            _daemon.show_log()
        self.stderr.close()

    def run_cell(self, code, timeout=60):
        """execute_interactive: (reply content, [iopub outputs])."""
        outs = []

        def hook(msg):
            t = msg["header"]["msg_type"]
            if t in ("stream", "execute_result", "display_data", "error"):
                outs.append((t, msg["content"]))

        reply = self.kc.execute_interactive(code, output_hook=hook, timeout=timeout)
        return reply["content"], outs

    def iopub_until_reply(self, msg_id, timeout=60):
        """The iopub messages of request msg_id, in order, until its status idle."""
        got, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = self.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            got.append((m["header"]["msg_type"], m["content"]))
            if got[-1] == ("status", {"execution_state": "idle"}):
                return got
        self.fail("no idle status for %s within %s s: %r" % (msg_id, timeout, got))

    def kernel_log(self):
        self.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read()


class TestKernel(KernelCase):
    def test_kernel_info(self):
        self.kc.kernel_info()
        reply = self.kc.get_shell_msg(timeout=30)["content"]
        self.assertEqual(reply["implementation"], "airlock")
        self.assertEqual(reply["language_info"]["name"], "python")
        self.assertEqual(reply["protocol_version"], "5.3")

    def test_state_streams_and_results(self):
        reply, outs = self.run_cell("x = 41\nprint('hello')")
        self.assertEqual(reply["status"], "ok")
        self.assertEqual(reply["execution_count"], 1)
        self.assertEqual(outs, [("stream", {"name": "stdout", "text": "hello\n"})])
        reply, outs = self.run_cell("x + 1")
        self.assertEqual(reply["execution_count"], 2)
        self.assertEqual(outs, [("execute_result", {"execution_count": 2, "data": {"text/plain": "42"},
                                                    "metadata": {}})])

    def test_error(self):
        reply, outs = self.run_cell("def f():\n    return 1 / 0\nf()")
        self.assertEqual((reply["status"], reply["ename"], reply["evalue"]),
                         ("error", "ZeroDivisionError", "division by zero"))
        errors = [c for t, c in outs if t == "error"]
        self.assertEqual(len(errors), 1)
        self.assertEqual(errors[0]["traceback"][-1], "ZeroDivisionError: division by zero")
        reply, outs = self.run_cell("'still here'")
        self.assertEqual(outs[0][1]["data"]["text/plain"], "'still here'")

    def test_ipython_magics_and_shell_in_the_sandbox(self):
        # IPython in the sandbox (the kernel's runtime, python-site here,
        # has Debian's python3-ipython): magics; `!cmd` a process of the
        # sandbox: another pid namespace and hostname than the host's.
        reply, outs = self.run_cell("y = 5\n%pwd")
        self.assertEqual(reply["status"], "ok", outs)
        self.assertEqual(outs[-1][1]["data"]["text/plain"], "'/workspace'")
        reply, outs = self.run_cell("!readlink /proc/self/ns/pid; hostname")
        self.assertEqual(reply["status"], "ok", outs)
        ns, host = "".join(c["text"] for t, c in outs if t == "stream").split()
        self.assertNotEqual(ns, os.readlink("/proc/self/ns/pid"))
        self.assertEqual(host, "airlock")
        self.assertNotEqual(host, os.uname().nodename)
        reply, outs = self.run_cell("%no_such_magic")
        self.assertEqual(reply["status"], "error", outs)
        self.assertTrue(reply["ename"].endswith("UsageError"), reply)  # its module path, from the traceback

    def test_code_runs_in_the_sandbox_not_on_the_host(self):
        marker = "/tmp/airlock-kernel-%s" % uuid.uuid4().hex
        reply, outs = self.run_cell("open(%r, 'w').write('x')\nimport os\nos.getuid()" % marker)
        self.assertEqual(reply["status"], "ok", outs)
        self.assertFalse(os.path.exists(marker), "the cell wrote on the host")
        self.assertNotEqual(outs[-1][1]["data"]["text/plain"], str(os.getuid()))

    def test_figure_is_png(self):
        reply, outs = self.run_cell("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                                    "plt.plot([1, 2, 3])\nNone")
        self.assertEqual(reply["status"], "ok", outs)
        shown = [c for t, c in outs if t == "display_data"]
        self.assertEqual(len(shown), 1, outs)
        import base64

        self.assertTrue(base64.b64decode(shown[0]["data"]["image/png"]).startswith(b"\x89PNG"))

    def test_is_complete(self):
        for code, status in (("x = 1", "complete"), ("for i in range(3):", "incomplete"), ("1 +* 2", "invalid")):
            self.kc.is_complete(code)
            self.assertEqual(self.kc.get_shell_msg(timeout=30)["content"]["status"], status, code)

    def test_complete_and_inspect_see_the_sandbox_globals(self):
        self.run_cell("import math\nairlock_value = 3\ndef airlock_fn(a, b=2):\n    'Adds.'\n    return a + b")
        self.kc.complete("x = airlock_", 12)
        reply = self.kc.get_shell_msg(timeout=60)["content"]
        self.assertEqual(sorted(reply["matches"]), ["airlock_fn", "airlock_value"])
        self.assertEqual((reply["cursor_start"], reply["cursor_end"]), (4, 12))
        self.kc.complete("math.fl", 7)
        self.assertIn("math.floor", self.kc.get_shell_msg(timeout=60)["content"]["matches"])
        self.kc.inspect("airlock_fn(1)", 3)
        reply = self.kc.get_shell_msg(timeout=60)["content"]
        self.assertTrue(reply["found"])
        self.assertIn("airlock_fn(a, b=2)", reply["data"]["text/plain"])
        self.assertIn("Adds.", reply["data"]["text/plain"])
        self.kc.inspect("no_such_name", 5)
        self.assertFalse(self.kc.get_shell_msg(timeout=60)["content"]["found"])
        # The helper cells left no name and took no execution count.
        reply, outs = self.run_cell("sorted(n for n in globals() if 'airlock' in n)")
        self.assertEqual(outs[-1][1]["data"]["text/plain"], "['airlock_fn', 'airlock_value']")
        self.assertEqual(reply["execution_count"], 2)

    def test_crashed_interpreter_is_a_restart(self):
        self.run_cell("z = 1")
        statuses = []
        reply, outs = self.run_cell("import os\nos._exit(3)")
        self.assertEqual(reply["status"], "error")
        self.assertEqual(reply["ename"], "DeadKernelError", outs)
        self.assertIn("state is lost", reply["evalue"])
        reply, outs = self.run_cell("z")
        self.assertEqual(reply["ename"], "NameError")
        self.assertEqual(reply["execution_count"], 1, "the count starts again after a restart")

    def test_interrupt_keeps_the_state(self):
        self.run_cell("x = 7")
        msg_id = self.kc.execute("import time\nwhile True:\n    time.sleep(0.01)")
        # execute_input: the kernel has handed the cell to the daemon.
        deadline = time.monotonic() + 60
        started = False
        while not started and time.monotonic() < deadline:
            try:
                m = self.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            started = m["header"]["msg_type"] == "execute_input" and m["parent_header"].get("msg_id") == msg_id
        self.assertTrue(started, "the cell did not start")
        t0 = time.monotonic()
        self.km.interrupt_kernel()  # interrupt_mode "message": an interrupt_request on control
        reply = self.kc.get_shell_msg(timeout=30)
        took = time.monotonic() - t0
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        self.assertEqual(reply["content"].get("ename"), "KeyboardInterrupt", reply["content"])
        self.assertLess(took, 5, "the interrupt took %.1f s" % took)
        reply, outs = self.run_cell("x")
        self.assertEqual(outs[-1][1].get("data", {}).get("text/plain"), "7", outs)

    def test_error_fields_not_stderr(self):
        msg_id = self.kc.execute('import sys\nprint("to err", file=sys.stderr)\nraise ValueError("x")')
        got = self.iopub_until_reply(msg_id)
        streams = [c for t, c in got if t == "stream"]
        self.assertEqual(streams, [{"name": "stderr", "text": "to err\n"}], got)
        errors = [c for t, c in got if t == "error"]
        self.assertEqual((errors[0]["ename"], errors[0]["evalue"]), ("ValueError", "x"))
        self.assertEqual(errors[0]["traceback"][-1], "ValueError: x")
        reply, outs = self.run_cell("x = (")
        self.assertEqual(reply["ename"], "SyntaxError", outs)
        self.assertEqual([t for t, _ in outs], ["error"], outs)

    def test_fresh_session_first_cell_is_no_restart(self):
        msg_id = self.kc.execute("1 + 1")
        got = self.iopub_until_reply(msg_id)
        self.assertNotIn(("status", {"execution_state": "restarting"}), got)
        self.assertEqual([t for t, _ in got if t in ("stream", "error")], [], got)

    def test_crash_is_one_restart(self):
        # os._exit and a SIGKILL of itself: each a dead kernel, restarting,
        # its state lost; the next cell is no second crash.
        for n, code in enumerate(("import os\nos._exit(3)", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")):
            self.run_cell("z = 1")
            msg_id = self.kc.execute(code)
            got = self.iopub_until_reply(msg_id)
            self.assertIn(("status", {"execution_state": "restarting"}), got)
            self.assertEqual([c["ename"] for t, c in got if t == "error"], ["DeadKernelError"], got)
            msg_id = self.kc.execute("z")
            got = self.iopub_until_reply(msg_id)
            self.assertNotIn(("status", {"execution_state": "restarting"}), got)
            self.assertEqual([c["ename"] for t, c in got if t == "error"], ["NameError"], got)
            self.assertEqual([c for t, c in got if t == "stream"], [], got)

    def test_bad_signature_is_dropped(self):
        # A request signed with another key: dropped with a log line, and the
        # kernel goes on answering well-signed ones.
        from jupyter_client.session import Session

        forged = Session(key=b"not-the-key", username="mallory")
        forged.send(self.kc.shell_channel.socket, "execute_request",
                    {"code": "print('forged')", "silent": False, "store_history": True, "user_expressions": {},
                     "allow_stdin": False})
        reply, outs = self.run_cell("print('real')")
        self.assertEqual(outs, [("stream", {"name": "stdout", "text": "real\n"})])
        self.assertEqual(reply["execution_count"], 1, "the forged request ran")
        self.assertIn("dropped a message on shell", self.kernel_log())

    def test_restart_is_a_new_session(self):
        self.run_cell("y = 5")
        self.km.restart_kernel(now=False)
        self.kc.wait_for_ready(timeout=60)
        reply, outs = self.run_cell("y")
        self.assertEqual(reply["ename"], "NameError", outs)



class TestKernelWithoutIPython(KernelCase):
    """A runtime without IPython (python: -I -S, no dist-packages)."""

    kernel_env = {"AIRLOCK_KERNEL_RUNTIME": "python"}

    def test_said_once_then_plain(self):
        reply, outs = self.run_cell("print(1)")
        self.assertEqual(reply["status"], "ok", outs)
        self.assertEqual(outs, [("stream", {"name": "stdout", "text": "1\n"}),
                                ("stream", {"name": "stderr", "text": "airlock: IPython is not importable in "
                                            "this runtime; plain Python\n"})])
        reply, outs = self.run_cell("2")
        self.assertEqual(outs, [("execute_result", {"execution_count": 2, "data": {"text/plain": "2"},
                                                    "metadata": {}})])
        reply, outs = self.run_cell("%pwd")  # no magics: Python's syntax error
        self.assertIn("SyntaxError: invalid syntax", json.dumps(outs), outs)

class TestKernelLongCells(KernelCase):
    """A kernel whose cells may run 120 s."""

    kernel_env = {"AIRLOCK_KERNEL_WALL_S": "120"}

    def test_stream_comes_while_the_cell_runs(self):
        # The cell runs 90 s (under a 120 s wall limit) unless its first
        # stream message reaches the client while it runs, within 60 s:
        # then it is interrupted (the message is waited for, no sleep).
        msg_id = self.kc.execute("import time\nprint('first')\nt = time.monotonic()\n"
                                 "while time.monotonic() < t + 90:\n    time.sleep(0.05)\nprint('never')")
        deadline, first = time.monotonic() + 60, None
        while first is None and time.monotonic() < deadline:
            try:
                m = self.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if m["parent_header"].get("msg_id") == msg_id and m["header"]["msg_type"] in ("stream", "error"):
                first = (m["header"]["msg_type"], m["content"])
        self.assertEqual(first, ("stream", {"name": "stdout", "text": "first\n"}))
        self.km.interrupt_kernel()
        reply = self.kc.get_shell_msg(timeout=30)["content"]
        self.assertEqual(reply.get("ename"), "KeyboardInterrupt", reply)
        rest = self.iopub_until_reply(msg_id)
        # Sent once: the answer's stdout is not sent again, and the
        # interrupt's traceback is the error message, not stderr.
        self.assertEqual([c for t, c in rest if t == "stream"], [])



class TestKernelAdvised(KernelCase):
    """A kernel of a profile whose blocked_imports give cells advisories."""

    kernel_env = {"AIRLOCK_KERNEL_PROFILE": "advised"}

    def test_crash_with_advisories_is_a_restart(self):
        # A crashed cell's advisories do not hide its crash (the kernel
        # read them as a restart between cells before issue 31's field).
        self.run_cell("z = 1")
        msg_id = self.kc.execute("import subprocess, os\nos._exit(3)")
        got = self.iopub_until_reply(msg_id)
        self.assertIn(("status", {"execution_state": "restarting"}), got)
        self.assertEqual([c["ename"] for t, c in got if t == "error"], ["DeadKernelError"], got)
        reply, outs = self.run_cell("z")
        self.assertEqual((reply["ename"], reply["execution_count"]), ("NameError", 1), outs)


if __name__ == "__main__":
    unittest.main(verbosity=2)
