"""Tests of the Python binding (package airlock) against a real airlockd.

Run by meson (suite "python") with AIRLOCK_LIBRARY (the built libairlock.so),
AIRLOCKD (the built daemon) and PYTHONPATH (libclient/python) set. Starts one
daemon as root on a private socket in a temporary directory, drops to user
nobody for the sandboxes, and stops it at the end. Also runs every ```python
block of docs/python.md against that daemon.
"""

import asyncio
import contextlib
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import airlock
from airlock import (
    AirlockSandbox,
    SandboxError,
    SandboxLimits,
    SandboxMemoryError,
    SandboxResult,
    SandboxTimeoutError,
    SandboxUnavailableError,
    sandbox_tool,
)

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs", "python.md")
UID_BASE = 1100000

_daemon = None
_dir = None
SOCKET = None


def _daemon_log() -> str:
    try:
        with open(os.path.join(_dir, "airlockd.log"), encoding="utf-8", errors="replace") as f:
            return f.read()[-4000:]
    except OSError:
        return ""


def setUpModule() -> None:
    global _daemon, _dir, SOCKET
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    binary = os.environ.get("AIRLOCKD") or shutil.which("airlockd")
    if not binary:
        raise unittest.SkipTest("no airlockd (set AIRLOCKD)")
    _dir = tempfile.mkdtemp(prefix="airlock-py-")
    os.chmod(_dir, 0o755)
    SOCKET = os.path.join(_dir, "airlock.sock")
    config = os.path.join(_dir, "airlockd.conf")
    with open(config, "w") as f:
        f.write(f"[sandbox]\nuid_base = {UID_BASE}\n")
    log = open(os.path.join(_dir, "airlockd.log"), "wb")
    _daemon = subprocess.Popen(
        [binary, "--foreground", "--debug", "--user", "nobody", "--socket", SOCKET, "--config", config],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
    )
    log.close()
    probe = AirlockSandbox(SOCKET)
    deadline = time.monotonic() + 10
    while True:
        try:
            probe.ping()
            break
        except SandboxUnavailableError:
            if _daemon.poll() is not None or time.monotonic() > deadline:
                tearDownModule()
                raise RuntimeError("airlockd did not answer:\n" + _daemon_log())
            time.sleep(0.02)
    probe.close()


def tearDownModule() -> None:
    global _daemon
    if _daemon is not None:
        _daemon.send_signal(signal.SIGTERM)
        try:
            _daemon.wait(10)
        except subprocess.TimeoutExpired:
            _daemon.kill()
            _daemon.wait()
        _daemon = None
    if _dir and not os.environ.get("AIRLOCK_TEST_KEEP"):
        shutil.rmtree(_dir, ignore_errors=True)


class SandboxTest(unittest.TestCase):
    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)

    def run_async(self, coro):
        return asyncio.run(coro)

    def test_hello_world(self) -> None:
        result = self.run_async(self.sandbox.run("print('hello, world')"))
        self.assertIsInstance(result, SandboxResult)
        self.assertEqual(result.stdout, "hello, world\n")
        self.assertEqual(result.stdout_bytes, b"hello, world\n")
        self.assertEqual(result.stderr, "")
        self.assertEqual(result.exit_code, 0)
        self.assertIsNone(result.signal)
        self.assertEqual(result.outcome, "exited")
        self.assertFalse(result.stdout_truncated)
        self.assertGreater(result.duration, 0)
        self.assertGreaterEqual(result.cpu_time, 0)
        self.assertEqual(result.artifacts, ())

    def test_exit_code_is_a_result(self) -> None:
        result = self.sandbox.run_sync("import sys\nprint('x', file=sys.stderr)\nsys.exit(3)")
        self.assertEqual(result.exit_code, 3)
        self.assertEqual(result.stderr, "x\n")
        self.assertFalse(result.ok)

    def test_traceback_is_a_result(self) -> None:
        result = self.sandbox.run_sync("1/0")
        self.assertEqual(result.exit_code, 1)
        self.assertIn("ZeroDivisionError", result.stderr)

    def test_signal_is_a_result(self) -> None:
        result = self.sandbox.run_sync("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
        self.assertIsNone(result.exit_code)
        self.assertEqual(result.signal, signal.SIGKILL)

    def test_undecodable_output(self) -> None:
        result = self.sandbox.run_sync("import sys\nsys.stdout.buffer.write(b'a\\xffb\\x00')")
        self.assertEqual(result.stdout_bytes, b"a\xffb\x00")
        self.assertEqual(result.stdout, "a\ufffdb\x00")

    def test_files_in_artifacts_out(self) -> None:
        blob = bytes(range(256)) * 300  # > 16 KiB: travels as a memfd
        code = (
            "data = open('in.bin', 'rb').read()\n"
            "open('out.bin', 'wb').write(data[::-1])\n"
            "open('note.txt', 'w').write(open('in.txt').read().upper())\n"
        )
        result = self.sandbox.run_sync(code, files={"in.bin": blob, "in.txt": "héllo"})
        self.assertEqual(result.exit_code, 0, result.stderr)
        names = sorted(a.name for a in result.artifacts)
        self.assertEqual(names, ["note.txt", "out.bin"])  # inputs are not returned
        self.assertEqual(result.artifact("out.bin").content, blob[::-1])
        self.assertFalse(result.artifact("out.bin").truncated)
        self.assertEqual(result.artifact("out.bin").size, len(blob))
        self.assertEqual(result.artifact("note.txt").content, "HÉLLO".encode())

    def test_artifact_truncated(self) -> None:
        limits = SandboxLimits(max_artifact_bytes=10)
        result = self.sandbox.run_sync("open('a', 'w').write('x' * 100)", limits=limits)
        art = result.artifact("a")
        self.assertEqual(art.content, b"x" * 10)
        self.assertTrue(art.truncated)
        self.assertEqual(art.size, 100)

    def test_output_truncated_alias(self) -> None:
        limits = SandboxLimits(max_output_chars=100)
        self.assertEqual(limits.max_output_bytes, 100)
        result = self.sandbox.run_sync("print('y' * 1000)", limits=limits)
        self.assertEqual(result.stdout, "y" * 100)
        self.assertTrue(result.stdout_truncated)

    def test_env_args_stdin(self) -> None:
        code = "import os, sys\nprint(os.environ['GREETING'], sys.argv[1:], sys.stdin.read())"
        result = self.sandbox.run_sync(code, env={"GREETING": "hi"}, args=["a", "b"], stdin="in put")
        self.assertEqual(result.stdout, "hi ['a', 'b'] in put\n")
        result = self.sandbox.run_sync("import os\nprint(os.environ.get('AIRLOCK_LIBRARY'))")
        self.assertEqual(result.stdout, "None\n")  # nothing of ours leaks in

    def test_other_language(self) -> None:
        result = self.sandbox.run_sync("echo $((6 * 7))", language="sh")
        self.assertEqual(result.stdout, "42\n")

    def test_wall_limit(self) -> None:
        limits = SandboxLimits(wall_seconds=1)
        with self.assertRaises(SandboxTimeoutError) as cm:
            self.run_async(self.sandbox.run("import time\nprint('before', flush=True)\ntime.sleep(30)", limits=limits))
        self.assertEqual(cm.exception.limit, "wall")
        self.assertIsNotNone(cm.exception.result)
        self.assertEqual(cm.exception.result.stdout, "before\n")
        self.assertEqual(cm.exception.result.outcome, "wall_limit")
        self.assertLess(cm.exception.result.duration, 10)

    def test_cpu_limit(self) -> None:
        limits = SandboxLimits(wall_seconds=20, cpu_seconds=1)
        with self.assertRaises(SandboxTimeoutError) as cm:
            self.sandbox.run_sync("while True: pass", limits=limits)
        self.assertEqual(cm.exception.limit, "cpu")
        self.assertGreaterEqual(cm.exception.result.cpu_time, 0.9)

    def test_memory_limit(self) -> None:
        limits = SandboxLimits(memory_bytes=64 * 2**20)
        with self.assertRaises(SandboxMemoryError) as cm:
            self.sandbox.run_sync("x = bytearray(512 * 2**20)\nx[::4096] = b'1' * len(x[::4096])", limits=limits)
        self.assertEqual(cm.exception.limit, "memory")
        self.assertIsInstance(cm.exception, SandboxError)

    def test_unreachable(self) -> None:
        sandbox = AirlockSandbox(os.path.join(_dir, "no-such.sock"))
        with self.assertRaises(SandboxUnavailableError) as cm:
            sandbox.run_sync("print(1)")
        self.assertEqual(cm.exception.code, "unreachable")
        with self.assertRaises(SandboxUnavailableError) as cm:
            asyncio.run(sandbox.run("print(1)"))
        self.assertEqual(cm.exception.code, "unreachable")

    def test_above_ceiling_is_bad_request(self) -> None:
        limits = SandboxLimits(wall_seconds=10**6)
        with self.assertRaises(SandboxUnavailableError) as cm:
            self.sandbox.run_sync("print(1)", limits=limits)
        self.assertEqual(cm.exception.code, "bad_request")
        self.assertTrue(cm.exception.message)
        with self.assertRaises(SandboxUnavailableError) as cm:
            asyncio.run(self.sandbox.run("print(1)", limits=limits))
        self.assertEqual(cm.exception.code, "bad_request")
        # The connection stays usable after a refusal.
        self.assertEqual(self.sandbox.run_sync("print(2)").stdout, "2\n")

    def test_unknown_runtime(self) -> None:
        with self.assertRaises(SandboxUnavailableError) as cm:
            self.sandbox.run_sync("x", language="cobol")
        self.assertEqual(cm.exception.code, "unknown_runtime")

    def test_concurrent_runs_on_one_connection(self) -> None:
        async def main():
            code = "import sys, time\ntime.sleep(1)\nprint(int(sys.argv[1]) ** 2)"
            start = time.monotonic()
            results = await asyncio.gather(*(self.sandbox.run(code, args=[str(i)]) for i in range(5)))
            return results, time.monotonic() - start, len(self.sandbox._channels)

        results, elapsed, channels = self.run_async(main())
        self.assertEqual([r.stdout for r in results], [f"{i * i}\n" for i in range(5)])
        self.assertEqual(channels, 1)
        self.assertLess(elapsed, 4.5)  # they overlapped: five 1 s runs, not 5 s

    def test_event_loop_not_blocked(self) -> None:
        async def main():
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.05)
                    ticks += 1

            t = asyncio.create_task(ticker())
            await self.sandbox.run("import time\ntime.sleep(1)")
            t.cancel()
            return ticks

        self.assertGreaterEqual(self.run_async(main()), 10)

    def test_mixed_outcomes_concurrently(self) -> None:
        async def main():
            return await asyncio.gather(
                self.sandbox.run("print('ok')"),
                self.sandbox.run("import time\ntime.sleep(30)", limits=SandboxLimits(wall_seconds=0.5)),
                self.sandbox.run("x", limits=SandboxLimits(cpu_seconds=10**6)),
                self.sandbox.run("raise SystemExit(4)"),
                return_exceptions=True,
            )

        ok, wall, refused, four = self.run_async(main())
        self.assertEqual(ok.stdout, "ok\n")
        self.assertIsInstance(wall, SandboxTimeoutError)
        self.assertIsInstance(refused, SandboxUnavailableError)
        self.assertEqual(refused.code, "bad_request")
        self.assertEqual(four.exit_code, 4)

    def test_cancelled_run(self) -> None:
        async def main():
            task = asyncio.create_task(self.sandbox.run("import time\ntime.sleep(30)"))
            await asyncio.sleep(0.2)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            return await self.sandbox.run("print('after')")

        self.assertEqual(self.run_async(main()).stdout, "after\n")
        # The daemon stopped the cancelled run (30 s of sleep) rather than letting it run on.
        self.assertEqual(self.runs_in_daemon(), 0)

    def runs_in_daemon(self) -> int:
        """Runs the daemon lists (airlock_ps), after they had up to 3 s to end."""
        import ctypes

        lib = self.sandbox._lib
        lib.airlock_ps.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.airlock_ps_count.argtypes = [ctypes.c_void_p]
        lib.airlock_ps_count.restype = ctypes.c_size_t
        lib.airlock_ps_free.argtypes = [ctypes.c_void_p]
        conn = self.sandbox._connect()
        try:
            for _ in range(300):
                ps = ctypes.c_void_p()
                self.assertEqual(lib.airlock_ps(conn.ptr, ctypes.byref(ps)), 0)
                n = lib.airlock_ps_count(ps)
                lib.airlock_ps_free(ps)
                if n == 0:
                    break
                time.sleep(0.01)
            return n
        finally:
            conn.close()

    def test_run_sync_threads(self) -> None:
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            outs = list(pool.map(lambda i: self.sandbox.run_sync(f"print({i})").stdout, range(8)))
        self.assertEqual(outs, [f"{i}\n" for i in range(8)])

    def test_two_loops_one_sandbox(self) -> None:
        self.assertEqual(asyncio.run(self.sandbox.run("print(1)")).stdout, "1\n")
        self.assertEqual(asyncio.run(self.sandbox.run("print(2)")).stdout, "2\n")

    def test_closed(self) -> None:
        self.sandbox.close()
        with self.assertRaises(SandboxError):
            self.sandbox.run_sync("print(1)")

    def test_info(self) -> None:
        info = self.sandbox.info()
        self.assertIn("python", info["runtimes"])
        self.assertEqual(info["limits"]["wall_ms"]["ceiling"], 300000)

    def test_argument_types(self) -> None:
        s = self.sandbox
        with self.assertRaises(TypeError):
            s.run_sync(42)
        with self.assertRaises(TypeError):
            asyncio.run(s.run(None))
        with self.assertRaises(TypeError):
            s.run_sync("x", files=["a"])
        with self.assertRaises(TypeError):
            s.run_sync("x", files={"a": 1})
        with self.assertRaises(TypeError):
            s.run_sync("x", files={1: b"a"})
        with self.assertRaises(ValueError):
            s.run_sync("x", files={"/etc/passwd": b"a"})
        with self.assertRaises(TypeError):
            s.run_sync("x", env={"A": 1})
        with self.assertRaises(ValueError):
            s.run_sync("x", env={"A=B": "c"})
        with self.assertRaises(ValueError):
            s.run_sync("x", env={"A": "b\0c"})
        with self.assertRaises(TypeError):
            s.run_sync("x", args="abc")
        with self.assertRaises(TypeError):
            s.run_sync("x", stdin=5)
        with self.assertRaises(TypeError):
            s.run_sync("x", limits={"wall_seconds": 1})
        with self.assertRaises(TypeError):
            SandboxLimits(wall_seconds="1")
        with self.assertRaises(TypeError):
            SandboxLimits(memory_bytes=1.5)
        with self.assertRaises(ValueError):
            SandboxLimits(wall_seconds=0)
        with self.assertRaises(ValueError):
            SandboxLimits(cpu_seconds=-1)
        with self.assertRaises(TypeError):
            AirlockSandbox(SOCKET, limits=5)
        # Nothing was sent, so nothing was opened.
        self.assertEqual(self.sandbox._idle, [])
        self.assertEqual(self.sandbox._channels, {})


class LimitsTest(unittest.TestCase):
    def test_defaults_and_mapping(self) -> None:
        l = SandboxLimits()
        self.assertEqual((l.wall_seconds, l.cpu_seconds, l.memory_bytes), (10.0, 5, 256 * 2**20))
        self.assertIsNone(l.processes)
        self.assertEqual(l.daemon_limits(), {0: 10000, 1: 5000, 2: 256 * 2**20})
        l = SandboxLimits(wall_seconds=0.0001, processes=3, max_output_bytes=7, max_artifact_bytes=8, max_artifacts=9)
        self.assertEqual(l.daemon_limits(), {0: 1, 1: 5000, 2: 256 * 2**20, 3: 3, 6: 7, 10: 8, 9: 9})
        self.assertEqual(SandboxLimits(wall_seconds=None, cpu_seconds=None, memory_bytes=None).daemon_limits(), {})
        self.assertEqual(l.replace(processes=4).processes, 4)
        with self.assertRaises(AttributeError):
            l.processes = 5


class ToolTest(unittest.TestCase):
    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET, limits=SandboxLimits(wall_seconds=10, cpu_seconds=5))
        self.addCleanup(self.sandbox.close)

    def test_description(self) -> None:
        tool = sandbox_tool(self.sandbox)
        d = tool.description
        self.assertEqual(d["name"], "run_python")
        self.assertIsInstance(d["description"], str)
        self.assertEqual(
            d["input_schema"],
            {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
        )
        self.assertTrue(tool.parallel_safe)
        import json

        json.dumps(d)

    def test_normal_call(self) -> None:
        tool = sandbox_tool(self.sandbox)
        out = asyncio.run(tool("open('r.txt', 'w').write('1')\nprint(2 + 2)\nraise SystemExit(1)"))
        self.assertEqual(
            out, {"ok": True, "exit_code": 1, "stdout": "4\n", "stderr": "", "artifacts": ["r.txt"]}
        )
        self.assertEqual(tool.call_sync("print('s')")["stdout"], "s\n")

    def test_wall_limit_is_refusal(self) -> None:
        tool = sandbox_tool(self.sandbox, SandboxLimits(wall_seconds=1, cpu_seconds=5))
        self.assertEqual(tool.limits.wall_seconds, 1)
        out = asyncio.run(tool("import time\nprint('started', flush=True)\ntime.sleep(30)"))
        self.assertFalse(out["ok"])
        self.assertEqual(out["error"]["code"], "sandbox_limit_exceeded")
        self.assertEqual(out["error"]["limit"], "wall")
        self.assertTrue(out["error"]["message"])
        self.assertEqual(out["stdout"], "started\n")
        out = tool.call_sync("while True: pass")  # cpu 5 s > wall 1 s: the wall fires
        self.assertEqual(out["error"]["limit"], "wall")

    def test_memory_refusal(self) -> None:
        tool = sandbox_tool(self.sandbox, SandboxLimits(memory_bytes=64 * 2**20))
        out = tool.call_sync("x = bytearray(512 * 2**20)\nx[::4096] = b'1' * len(x[::4096])")
        self.assertEqual(out["error"], {**out["error"], "code": "sandbox_limit_exceeded", "limit": "memory"})

    def test_looser_limits_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "wall_seconds"):
            sandbox_tool(self.sandbox, SandboxLimits(wall_seconds=20))
        with self.assertRaisesRegex(ValueError, "cpu_seconds"):
            sandbox_tool(self.sandbox, SandboxLimits(cpu_seconds=6))
        tight = AirlockSandbox(SOCKET, limits=SandboxLimits(processes=4))
        with self.assertRaisesRegex(ValueError, "processes"):
            sandbox_tool(tight, SandboxLimits(processes=5))
        tool = sandbox_tool(tight, SandboxLimits(wall_seconds=2))
        self.assertEqual(tool.limits.processes, 4)  # None inherits the sandbox's

    def test_bad_code_type(self) -> None:
        tool = sandbox_tool(self.sandbox)
        with self.assertRaises(TypeError):
            asyncio.run(tool(b"print(1)"))
        with self.assertRaises(TypeError):
            tool.call_sync(None)
        with self.assertRaises(TypeError):
            sandbox_tool(self.sandbox, limits=10)


class DocsTest(unittest.TestCase):
    """Every ```python block of docs/python.md runs, in order, in one namespace, against the daemon."""

    def test_docs_examples(self) -> None:
        with open(DOCS, encoding="utf-8") as f:
            text = f.read()
        blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
        self.assertGreaterEqual(len(blocks), 5)
        old = os.environ.get("AIRLOCK_SOCKET")
        os.environ["AIRLOCK_SOCKET"] = SOCKET
        namespace = {"__name__": "__docs__"}
        try:
            for i, block in enumerate(blocks):
                out = io.StringIO()
                with self.subTest(block=i), contextlib.redirect_stdout(out):
                    exec(compile(block, f"docs/python.md block {i}", "exec"), namespace)
        finally:
            if old is None:
                os.environ.pop("AIRLOCK_SOCKET", None)
            else:
                os.environ["AIRLOCK_SOCKET"] = old


class LibraryTest(unittest.TestCase):
    def test_explicit_library_path(self) -> None:
        lib = airlock.load_library(os.environ["AIRLOCK_LIBRARY"])
        self.assertIsNotNone(lib.airlock_run_submit)
        with self.assertRaises(airlock.LibraryNotFoundError):
            airlock.load_library("/nonexistent/libairlock.so")

    def test_soname_without_env(self) -> None:
        env = dict(os.environ)
        env.pop("AIRLOCK_LIBRARY")
        env["LD_LIBRARY_PATH"] = os.path.dirname(os.environ["AIRLOCK_LIBRARY"])
        code = "import airlock, sys; s = airlock.AirlockSandbox(sys.argv[1]); print(s.run_sync('print(5)').stdout, end='')"
        out = subprocess.run([sys.executable, "-c", code, SOCKET], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual((out.returncode, out.stdout), (0, "5\n"), out.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
