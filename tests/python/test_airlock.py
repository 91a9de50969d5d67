"""Tests of the Python binding (package airlock) against a real airlockd.

Run by meson (suite "python") with AIRLOCK_LIBRARY (the built libairlock.so),
AIRLOCKD (the built daemon) and PYTHONPATH (libclient/python) set. Starts one
daemon as root on a private socket in a temporary directory, drops to user
nobody for the sandboxes, and stops it at the end. Also runs every ```python
block of docs/python.md against that daemon.
"""

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


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, uid_range, wait_for  # noqa: E402


HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs", "python.md")

_daemon = None
SOCKET = None


def setUpModule() -> None:
    global _daemon, SOCKET
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    binary = os.environ.get("AIRLOCKD") or shutil.which("airlockd")
    if not binary:
        raise unittest.SkipTest("no airlockd (set AIRLOCKD)")
    # Room for the sessions (and interpreter sessions: a host of one CPU
    # allows 2 by default) of a failing test that were not closed.
    # "advised": the advisory import check (issue 17, step 8).
    # "background": interpreter sessions may keep processes (issue 30).
    _daemon = Daemon(
        binary,
        "[sessions]\nmax_per_uid = 16\nmax_interpreters = 16\nmax_interpreters_per_uid = 16\n[profile advised]\nblocked_imports = subprocess, os.path\nhidden_paths = /usr/share/doc\n"
        "[profile background]\nbackground_processes = true\nmemory_bytes = 256M\nprocesses = 32\nwall_ms = 60000\n",
        prefix="airlock-py-",
        debug=True,
        uids=(uid_range()[0], uid_range()[1] - MANY_UIDS),
    )
    SOCKET = _daemon.sock
    _daemon.start()


def tearDownModule() -> None:
    global _daemon
    if _daemon is None:
        return
    if os.environ.get("AIRLOCK_TEST_KEEP"):
        _daemon.stop()
    else:
        _daemon.remove()
    _daemon = None


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

    def test_tool_runtime(self) -> None:
        code = "import sys\nprint(sys.flags.no_site)"
        tool = sandbox_tool(self.sandbox)
        self.assertEqual(tool.call_sync(code)["stdout"], "1\n")
        self.assertEqual(tool.call_sync(code, runtime="python-site")["stdout"], "0\n")
        site = sandbox_tool(self.sandbox, runtime="python-site")
        self.assertEqual(site.call_sync(code)["stdout"], "0\n")
        self.assertEqual(self.run_async(site(code, runtime="python"))["stdout"], "1\n")
        with self.assertRaises(ValueError):
            sandbox_tool(self.sandbox, runtime="sh")
        with self.assertRaises(ValueError):
            tool.call_sync(code, runtime="sh")

    def test_non_utf8_names_and_omitted(self) -> None:
        code = (
            "import os\n"
            "open(b'a\\xffb', 'w').write('raw')\n"
            "for i in range(5):\n"
            "    open('old%d' % i, 'w').write('12')\n"
            "    os.utime('old%d' % i, (1000, 1000))\n"
            "os.makedirs('.cache', exist_ok=True)\n"
            "open('.cache/c', 'w').write('cache')\n"
        )
        result = self.sandbox.run_sync(code, limits=SandboxLimits(max_artifacts=2))
        self.assertEqual(result.exit_code, 0, result.stderr)
        names = [a.name_bytes for a in result.artifacts]
        self.assertEqual(names, [b"a\xffb", b"old0"])
        self.assertEqual(result.artifacts[0].name, os.fsdecode(b"a\xffb"))
        self.assertEqual(result.artifacts[0].content, b"raw")
        # old1..old4 and .cache/c: 4 * 2 + 5 bytes.
        self.assertEqual(result.artifacts_omitted, 5)
        self.assertEqual(result.artifacts_omitted_bytes, 13)
        self.assertEqual(self.sandbox.run_sync("open('x', 'w').write('1')").artifacts_omitted, 0)

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
        self.assertIsNone(cm.exception.result.exit_code)
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
        sandbox = AirlockSandbox(os.path.join(_daemon.dir, "no-such.sock"))
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
            self.assertEqual(await run_reached_daemon(self.sandbox), 1)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            return await self.sandbox.run("print('after')")

        self.assertEqual(self.run_async(main()).stdout, "after\n")
        # The daemon stopped the cancelled run (30 s of sleep) rather than letting it run on.
        self.assertEqual(runs_in_daemon(self.sandbox), 0)

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
        # python-site sees the host's python3-numpy; python (-I -S) sees none.
        self.assertIn("numpy", info["runtime_packages"]["python-site"])
        self.assertEqual(info["runtime_packages"]["python"], [])
        self.assertNotIn("sh", info["runtime_packages"])
        # The capacity (issue 28): the config's caps; max_runs is the host's.
        cap = info["capacity"]
        self.assertEqual((cap["max_interpreters"], cap["max_interpreters_per_uid"]), (16, 16))
        self.assertTrue(1 <= cap["max_runs_per_uid"] <= cap["max_runs"], cap)

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


# uids of the many-sessions daemon (SessionListCutTest), the range's last:
# two daemons never share a uid.
MANY_UIDS = 256


class SessionListCutTest(unittest.TestCase):
    """A session list the daemon cuts says how many it left out (issue 32)."""

    def test_list_says_how_many_are_left_out(self) -> None:
        base, count = uid_range()
        many = Daemon(os.environ.get("AIRLOCKD") or shutil.which("airlockd"), "[sessions]\nmax_per_uid = 80\n",
                      prefix="airlock-py-many-", uids=(base + count - MANY_UIDS, MANY_UIDS))
        many.start()
        sandbox = AirlockSandbox(many.sock)
        sessions = []
        try:
            for _ in range(70):
                s = sandbox.session_sync(workspace_bytes=1 << 20)
                s.open()
                sessions.append(s)
            listed = sandbox.list_sessions()
            self.assertEqual(len(listed), 64, many.log_tail())
            self.assertEqual(listed.more, 6, many.log_tail())
            self.assertEqual(len({i.id for i in listed} | {s.id for s in sessions}), 70)
            for s in sessions[:10]:
                s.close()
            whole = sandbox.list_sessions()
            self.assertEqual((len(whole), whole.more), (60, 0))
        finally:
            for s in sessions:
                s.close()
            sandbox.close()
            many.remove()


class SessionTest(unittest.TestCase):
    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)

    def test_state_carried_between_runs(self) -> None:
        async def main():
            async with self.sandbox.session() as s:
                self.assertRegex(s.id, r"\A[0-9a-f]{32}\Z")
                first = await s.run("open('count.txt', 'w').write('1')\nimport os\nprint(os.getcwd())")
                second = await s.run("n = int(open('count.txt').read())\nopen('count.txt', 'w').write(str(n + 1))\nprint(n + 1)")
                third = await s.run("print(open('count.txt').read())")
                listed = [i.id for i in self.sandbox.list_sessions()]
            return s, first, second, third, listed

        s, first, second, third, listed = asyncio.run(main())
        self.assertEqual(first.exit_code, 0, first.stderr)
        self.assertEqual([a.name for a in first.artifacts], ["count.txt"])
        self.assertEqual(second.stdout, "2\n")
        self.assertEqual([a.name for a in second.artifacts], ["count.txt"])  # what this run changed
        self.assertEqual(third.stdout, "2\n")
        self.assertEqual(third.artifacts, ())
        self.assertIn(s.id, listed)
        # Leaving `async with` closed it.
        self.assertTrue(s.closed)
        self.assertNotIn(s.id, [i.id for i in self.sandbox.list_sessions()])
        with self.assertRaises(SandboxSessionClosedError):
            asyncio.run(s.run("print(1)"))

    def test_sync_session_and_file_operations(self) -> None:
        blob = bytes(range(256)) * 300  # > 16 KiB: travels as a memfd
        with self.sandbox.session_sync() as s:
            s.write_file("in.txt", "héllo")
            s.write_file("deep/er/blob.bin", blob)  # parents made
            result = s.run(
                "import os\nprint(open('in.txt').read().upper())\n"
                "open('out.bin', 'wb').write(open('deep/er/blob.bin', 'rb').read()[::-1])\n"
            )
            self.assertEqual(result.stdout, "HÉLLO\n", result.stderr)
            self.assertEqual([a.name for a in result.artifacts], ["out.bin"])  # inputs are not returned
            data = s.read_file("out.bin")
            self.assertEqual(data, blob[::-1])
            self.assertIsInstance(data, bytes)
            self.assertFalse(data.truncated)
            self.assertEqual(data.size, len(blob))
            self.assertEqual(s.read_file("in.txt"), "héllo".encode())

            entries = {e.name: e for e in s.list_files()}
            self.assertEqual(sorted(entries), ["deep", "in.txt", "out.bin"])
            self.assertEqual(entries["deep"].kind, "dir")
            self.assertEqual(entries["in.txt"], FileInfo("in.txt", "file", 6, entries["in.txt"].mtime))
            self.assertEqual(sorted(e.name for e in s.list_files()), sorted(entries))  # a second listing
            self.assertLess(abs(entries["out.bin"].mtime - time.time()), 60)
            self.assertFalse(s.list_files().truncated)
            self.assertEqual([e.name for e in s.list_files("deep/er")], ["blob.bin"])

            with self.assertRaises(SandboxPathError):  # a non-empty directory
                s.delete_file("deep/er")
            s.delete_file("deep/er/blob.bin")
            s.delete_file("deep/er")
            s.delete_file("in.txt")
            self.assertEqual(sorted(e.name for e in s.list_files()), ["deep", "out.bin"])
            with self.assertRaises(SandboxNotFoundError) as cm:
                s.read_file("in.txt")
            self.assertIsInstance(cm.exception, FileNotFoundError)
            self.assertIsInstance(cm.exception, SandboxError)
            self.assertEqual(cm.exception.path, "in.txt")
            with self.assertRaises(FileNotFoundError):
                s.delete_file("in.txt")
            with self.assertRaises(FileNotFoundError):
                s.list_files("no/such/dir")
            self.assertEqual(s.run("import os\nprint(os.path.exists('in.txt'))").stdout, "False\n")
        self.assertTrue(s.closed)

    def test_async_file_operations(self) -> None:
        async def main():
            async with self.sandbox.session() as s:
                await s.write_file("a.txt", b"abc")
                await s.write_file("empty", b"")
                got = await s.read_file("a.txt"), await s.read_file("empty")
                names = sorted(e.name for e in await s.list_files())
                await s.delete_file("a.txt")
                with self.assertRaises(SandboxNotFoundError):
                    await s.read_file("a.txt")
                return got, names

        (a, empty), names = asyncio.run(main())
        self.assertEqual((a, a.size, empty, empty.size), (b"abc", 3, b"", 0))
        self.assertEqual(names, ["a.txt", "empty"])

    def test_paths_refused(self) -> None:
        with self.sandbox.session_sync() as s:
            s.write_file("sub/f", b"")
            for bad in ("../x", "sub/../../x", "/etc/passwd"):
                with self.subTest(path=bad):
                    with self.assertRaises(SandboxPathError) as cm:
                        s.read_file(bad)
                    self.assertEqual(cm.exception.path, bad)
                    self.assertEqual(cm.exception.code, "bad_request")
                    self.assertTrue(cm.exception.message)
                    with self.assertRaises(SandboxPathError):
                        s.write_file(bad, b"x")
            # Links planted by the code are never followed.
            result = s.run("ln -s /etc/passwd pw && ln -s / root && mkdir d && ln -s .. d/up", language="sh")
            self.assertEqual(result.exit_code, 0, result.stderr)
            kinds = {e.name: e.kind for e in s.list_files()}
            self.assertEqual(kinds, {"pw": "link", "root": "link", "d": "dir", "sub": "dir"})
            for bad in ("pw", "root/etc/passwd", "d/up/pw"):
                with self.subTest(path=bad):
                    with self.assertRaises(SandboxPathError) as cm:
                        s.read_file(bad)
                    self.assertEqual(cm.exception.path, bad)
            with self.assertRaises(SandboxPathError):
                s.write_file("pw", b"overwritten?")
            with self.assertRaises(SandboxPathError):
                s.list_files("root")
            with self.assertRaises(SandboxPathError):  # a directory is not a file to read
                s.read_file("d")
            s.delete_file("pw")  # the link itself
            self.assertNotIn("pw", [e.name for e in s.list_files()])
            # Checked here (nothing sent): bounds libairlock would refuse.
            with self.assertRaises(ValueError):
                s.read_file("")
            with self.assertRaises(ValueError):
                s.read_file("a" * 1025)
            with self.assertRaises(ValueError):
                s.write_file("a\0b", b"")
            with self.assertRaises(TypeError):
                s.read_file(5)
            with self.assertRaises(TypeError):
                s.write_file("a", 5)

    def test_other_session_and_unknown_ids(self) -> None:
        a = self.sandbox.session_sync().open()
        b = self.sandbox.session_sync().open()
        self.assertNotEqual(a.id, b.id)
        a.write_file("only-a", b"1")
        # Another session's files are not there.
        with self.assertRaises(SandboxNotFoundError):
            b.read_file("only-a")
        self.assertIn("FileNotFoundError", b.run("open('only-a')").stderr)
        # Any object (or process) of the same user may use a session by its id.
        again = self.sandbox.attach_session_sync(a.id)
        self.assertEqual(again.read_file("only-a"), b"1")
        self.assertEqual(asyncio.run(self.sandbox.attach_session(a.id).read_file("only-a")), b"1")
        # An id that is not one of ours: the daemon answers as for one that ended.
        stranger = self.sandbox.attach_session_sync("0" * 32)
        with self.assertRaises(SandboxSessionClosedError) as cm:
            stranger.read_file("only-a")
        self.assertEqual(cm.exception.session_id, "0" * 32)
        self.assertEqual(cm.exception.code, "not_found")
        self.assertNotIsInstance(cm.exception, FileNotFoundError)
        with self.assertRaises(SandboxSessionClosedError):
            self.sandbox.attach_session_sync("f" * 32).run("print(1)")
        with self.assertRaises(ValueError):
            self.sandbox.attach_session("not-an-id")
        a.close()
        a.close()  # idempotent
        with self.assertRaises(SandboxSessionClosedError):
            a.read_file("only-a")  # known closed: nothing sent
        with self.assertRaises(SandboxSessionClosedError):
            again.read_file("only-a")  # closed elsewhere: the daemon says so
        self.assertTrue(again.closed)
        again.close()  # closing a session that already ended is not an error
        b.close()

    def test_idle_expiry(self) -> None:
        s = self.sandbox.session_sync(idle_timeout=0.5).open()
        s.write_file("f", b"x")
        self.assertTrue(session_gone(self.sandbox, s.id))
        with self.assertRaises(SandboxSessionClosedError):
            s.read_file("f")
        self.assertTrue(s.closed)
        with self.assertRaises(SandboxSessionClosedError):
            s.run("print(1)")
        # A run (not a file operation) finding the session gone says the same.
        with self.assertRaises(SandboxSessionClosedError):
            asyncio.run(self.sandbox.attach_session(s.id).run("print(1)"))
        self.assertNotIn(s.id, [i.id for i in self.sandbox.list_sessions()])

    def test_lifetime_and_options(self) -> None:
        s = self.sandbox.session_sync(lifetime=3, workspace_bytes=1 << 20, limits=SandboxLimits(wall_seconds=1))
        with self.assertRaises(SandboxError):
            s.read_file("x")  # not open yet
        with s:
            self.assertEqual(s.limits.wall_seconds, 1)
            with self.assertRaises(SandboxTimeoutError):
                s.run("import time\ntime.sleep(30)")  # the session's limits apply
            with self.assertRaises(SandboxUnavailableError) as cm:
                s.write_file("big", b"x" * (2 << 20))  # larger than the workspace
            self.assertEqual(cm.exception.code, "too_large")
            self.assertEqual(len(s.list_files()), 0)
            self.assertTrue(session_gone(self.sandbox, s.id))
            with self.assertRaises(SandboxSessionClosedError):  # its lifetime is over
                s.list_files()
        with self.assertRaises(SandboxUnavailableError) as cm:
            self.sandbox.session_sync(idle_timeout=10**7).open()
        self.assertEqual(cm.exception.code, "bad_request")
        with self.assertRaises(ValueError):
            self.sandbox.session(idle_timeout=0)
        with self.assertRaises(TypeError):
            self.sandbox.session(workspace_bytes=1.5)
        with self.assertRaises(TypeError):
            self.sandbox.session(limits={"wall_seconds": 1})

    def test_sandbox_close_closes_its_sessions(self) -> None:
        sandbox = AirlockSandbox(SOCKET)
        s = sandbox.session_sync().open()
        a = asyncio.run(sandbox.session().open())
        self.assertEqual(len({s.id, a.id} & {i.id for i in self.sandbox.list_sessions()}), 2)
        sandbox.close()
        self.assertTrue(s.closed and a.closed)
        self.assertEqual({s.id, a.id} & {i.id for i in self.sandbox.list_sessions()}, set())

    def test_close_cancels_the_run(self) -> None:
        async def main():
            s = await self.sandbox.session()
            task = asyncio.create_task(s.run("import time\ntime.sleep(30)"))
            self.assertEqual(await run_reached_daemon(self.sandbox), 1)
            await s.close()
            with self.assertRaises(SandboxError):
                await task

        start = time.monotonic()
        asyncio.run(main())
        self.assertLess(time.monotonic() - start, 10)


class StreamTest(unittest.TestCase):
    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)

    CODE = (
        "import sys, time\n"
        "print('a', flush=True)\ntime.sleep(0.3)\n"
        "print('b', file=sys.stderr, flush=True)\ntime.sleep(0.3)\n"
        "print('c', flush=True)\ntime.sleep(0.3)\n"
    )

    @staticmethod
    def merged(chunks):
        """Consecutive chunks of one stream joined (the daemon may split or join writes)."""
        out = []
        for stream, data in chunks:
            if out and out[-1][0] == stream:
                out[-1] = (stream, out[-1][1] + data)
            else:
                out.append((stream, data))
        return out

    def check(self, chunks, result, returned_at) -> None:
        self.assertEqual(self.merged([(c[0], c[1]) for c in chunks]), [("stdout", b"a\n"), ("stderr", b"b\n"), ("stdout", b"c\n")])
        self.assertEqual(b"".join(d for st, d, _ in chunks if st == "stdout"), result.stdout_bytes)
        self.assertEqual(result.stderr, "b\n")
        # Delivered as written, not all at the end.
        self.assertLess(chunks[0][2], returned_at - 0.5)

    def test_one_shot_async(self) -> None:
        chunks = []

        async def main():
            result = await self.sandbox.run(self.CODE, on_output=lambda st, d: chunks.append((st, d, time.monotonic())))
            return result, time.monotonic()

        self.check(chunks, *asyncio.run(main()))

    def test_async_callback_and_session(self) -> None:
        chunks = []

        async def on_output(stream, data):
            await asyncio.sleep(0.01)
            chunks.append((stream, data, time.monotonic()))

        async def main():
            async with self.sandbox.session() as s:
                result = await s.run(self.CODE, on_output=on_output)
                n = len(chunks)
                return result, time.monotonic(), n

        result, returned_at, n_before_return = asyncio.run(main())
        self.assertEqual(n_before_return, len(chunks))  # every chunk before the result
        self.check(chunks, result, returned_at)

    def test_sync(self) -> None:
        chunks = []
        result = self.sandbox.run_sync(self.CODE, on_output=lambda st, d: chunks.append((st, d, time.monotonic())))
        self.check(chunks, result, time.monotonic())
        chunks.clear()
        with self.sandbox.session_sync() as s:
            result = s.run(self.CODE, on_output=lambda st, d: chunks.append((st, d, time.monotonic())))
            self.check(chunks, result, time.monotonic())

    def test_concurrent_streams_kept_apart(self) -> None:
        async def main():
            got = {i: [] for i in range(4)}
            code = "import sys, time\nfor k in range(3):\n    print(sys.argv[1], k, flush=True)\n    time.sleep(0.1)"
            results = await asyncio.gather(
                *(self.sandbox.run(code, args=[str(i)], on_output=lambda st, d, i=i: got[i].append(d)) for i in range(4))
            )
            return got, results

        got, results = asyncio.run(main())
        for i, result in enumerate(results):
            self.assertEqual(b"".join(got[i]), result.stdout_bytes)
            self.assertEqual(result.stdout, "".join(f"{i} {k}\n" for k in range(3)))

    def test_output_limit_applies_to_stream(self) -> None:
        chunks = []
        result = asyncio.run(
            self.sandbox.run("print('y' * 100000)", limits=SandboxLimits(max_output_bytes=100), on_output=lambda st, d: chunks.append(d))
        )
        self.assertTrue(result.stdout_truncated)
        self.assertEqual(b"".join(chunks), b"y" * 100)

    def test_callback_error_cancels_the_run(self) -> None:
        def on_output(stream, data):
            raise KeyError("stop")

        async def main():
            await self.sandbox.run("import time\nprint('x', flush=True)\ntime.sleep(30)", on_output=on_output)

        start = time.monotonic()
        with self.assertRaises(KeyError):
            asyncio.run(main())
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(runs_in_daemon(self.sandbox), 0)
        # Blocking: raised once the run has ended.
        with self.assertRaises(KeyError):
            self.sandbox.run_sync("print('x')", on_output=on_output)
        with self.assertRaises(TypeError):
            self.sandbox.run_sync("print('x')", on_output=lambda st, d: asyncio.sleep(0))
        with self.assertRaises(TypeError):
            self.sandbox.run_sync("print('x')", on_output="print")
        self.assertEqual(self.sandbox.run_sync("print('ok')").stdout, "ok\n")


class LimitsTest(unittest.TestCase):
    def test_defaults_and_mapping(self) -> None:
        # Unset limits are the daemon's defaults: nothing is sent for them.
        l = SandboxLimits()
        self.assertEqual((l.wall_seconds, l.cpu_seconds, l.memory_bytes), (None, None, None))
        self.assertIsNone(l.processes)
        self.assertEqual(l.daemon_limits(), {})
        l = SandboxLimits(wall_seconds=0.0001, processes=3, max_output_bytes=7, max_artifact_bytes=8, max_artifacts=9)
        self.assertEqual(l.daemon_limits(), {0: 1, 3: 3, 6: 7, 10: 8, 9: 9})
        # Every daemon limit can be set.
        l = SandboxLimits(open_files=20, file_size_bytes=1 << 20, workspace_bytes=8 << 20, tmp_bytes=4 << 20)
        self.assertEqual(l.daemon_limits(), {4: 20, 5: 1 << 20, 7: 8 << 20, 8: 4 << 20})
        self.assertEqual(SandboxLimits(wall_seconds=None, cpu_seconds=None, memory_bytes=None).daemon_limits(), {})
        self.assertEqual(l.replace(processes=4).processes, 4)
        with self.assertRaises(AttributeError):
            l.processes = 5


class ProfileTest(unittest.TestCase):
    """Issue 17, step 1: the daemon's profiles (built in: minimal, standard, generous)."""

    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)

    def test_limits_objects(self) -> None:
        self.assertEqual(SandboxLimits.minimal().profile, "minimal")
        self.assertEqual(SandboxLimits.standard(), SandboxLimits(profile="standard"))
        self.assertEqual(SandboxLimits.generous().daemon_limits(), {})
        self.assertNotEqual(SandboxLimits.minimal(), SandboxLimits())
        self.assertEqual(SandboxLimits(wall_seconds=2).inherit(SandboxLimits.minimal()).profile, "minimal")
        self.assertEqual(SandboxLimits.minimal().replace(memory_bytes=5).as_dict()["profile"], "minimal")
        self.assertEqual(SandboxLimits.minimal().looser_fields(SandboxLimits.standard()), ["profile"])
        for bad in ("Minimal", "", "a" * 33, "a/b"):
            with self.assertRaises(ValueError):
                SandboxLimits(profile=bad)
        with self.assertRaises(TypeError):
            SandboxLimits(profile=1)
        self.assertEqual(AirlockSandbox(SOCKET, profile="generous").limits.profile, "generous")

    def test_minimal_memory_limit_applies(self) -> None:
        code = "x = bytearray(200 * 2**20)\nx[::4096] = b'1' * len(x[::4096])\nprint('survived')"
        with self.assertRaises(SandboxMemoryError):
            self.sandbox.run_sync(code, limits=SandboxLimits.minimal())
        with self.assertRaises(SandboxMemoryError):
            asyncio.run(AirlockSandbox(SOCKET, profile="minimal").run(code))
        self.assertEqual(self.sandbox.run_sync(code, limits=SandboxLimits.generous()).stdout, "survived\n")

    def test_refusals(self) -> None:
        with self.assertRaises(SandboxUnavailableError) as cm:
            self.sandbox.run_sync("print(1)", limits=SandboxLimits(profile="nope"))
        self.assertEqual(cm.exception.code, "not_found")
        self.assertIn("profile 'nope' does not exist", cm.exception.message)
        with self.assertRaises(SandboxUnavailableError) as cm:
            self.sandbox.run_sync("print(1)", limits=SandboxLimits(memory_bytes=1 << 30, profile="minimal"))
        self.assertEqual(cm.exception.code, "bad_request")
        self.assertIn("profile 'minimal'", cm.exception.message)
        self.assertEqual(self.sandbox.run_sync("print(2)", limits=SandboxLimits.minimal()).stdout, "2\n")

    def test_session_takes_the_profile(self) -> None:
        with self.sandbox.session_sync(limits=SandboxLimits.minimal()) as s:
            with self.assertRaises(SandboxMemoryError):
                s.run("x = bytearray(200 * 2**20)\nx[::4096] = b'1' * len(x[::4096])")
            with self.assertRaises(SandboxUnavailableError) as cm:
                s.run("print(1)", limits=SandboxLimits.generous())
            self.assertEqual(cm.exception.code, "bad_request")

    def test_many_files_keep_the_profile(self) -> None:
        files = {f"f{i:03}.txt": "x" for i in range(70)}
        r = self.sandbox.run_sync("import os; print(len(os.listdir('.')))", files=files, limits=SandboxLimits.minimal())
        self.assertEqual(r.stdout, "70\n")

    def test_info_profiles(self) -> None:
        profiles = self.sandbox.info()["profiles"]
        self.assertEqual(set(profiles), {"minimal", "standard", "generous", "default", "advised", "background"})
        self.assertTrue(profiles["default"]["default"])
        self.assertFalse(profiles["minimal"]["default"])
        self.assertEqual(profiles["minimal"]["limits"]["memory_bytes"], {"default": 128 << 20, "ceiling": 128 << 20})
        self.assertEqual(profiles["generous"]["limits"]["wall_ms"]["ceiling"], 300000)
        # The built-ins switch nothing off.
        self.assertEqual({p["file_write"] for p in profiles.values()}, {True})
        self.assertEqual(profiles["standard"]["limits"]["memory_bytes"]["default"], 512 << 20)
        # The names of the lists: only advised has any (no [mount] is configured).
        self.assertEqual(profiles["advised"]["blocked_imports"], ["subprocess", "os.path"])
        self.assertEqual(profiles["minimal"]["blocked_imports"], [])
        self.assertEqual(profiles["advised"]["hidden_paths"], ["/usr/share/doc"])
        self.assertEqual(profiles["minimal"]["hidden_paths"], [])
        self.assertEqual({len(p["mounts"]) + len(p["allow_mounts"]) for p in profiles.values()}, {0})
        self.assertEqual(self.sandbox.info()["mounts"], {})

    def test_blocked_imports_are_advisories(self) -> None:
        # Reported in the result, never refused: the code ran to the end;
        # a name built at run time is not seen (docs/security.md).
        code = "import os.path, json\nimport subprocess as sp\n__import__('sub' + 'process')\nprint(sp.run(['true']).returncode)\n"
        r = self.sandbox.run_sync(code, limits=SandboxLimits(profile="advised"))
        self.assertTrue(r.ok, r.stderr)
        self.assertEqual(r.stdout, "0\n")
        self.assertEqual(r.advisories, ("blocked import: os.path (line 1)", "blocked import: subprocess (line 2)"))
        self.assertEqual(self.sandbox.run_sync(code).advisories, ())


class DaemonDefaultsTest(unittest.TestCase):
    """Issue 16: limits left unset are the daemon's, every limit is settable,
    many input files, consistent exceptions, async reconnect."""

    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)

    def test_unset_limits_are_the_daemons(self) -> None:
        info = self.sandbox.info()
        code = "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], resource.getrlimit(resource.RLIMIT_FSIZE)[0])"
        out = self.sandbox.run_sync(code).stdout.split()
        self.assertEqual(int(out[0]), info["limits"]["open_files"]["default"])
        out = self.sandbox.run_sync(code, limits=SandboxLimits(open_files=17, file_size_bytes=1 << 20)).stdout.split()
        self.assertEqual(out, ["17", str(1 << 20)])
        # A wall limit below the daemon's default, and the workspace size.
        r = self.sandbox.run_sync(
            "import os; s = os.statvfs('.'); print(s.f_blocks * s.f_frsize)",
            limits=SandboxLimits(workspace_bytes=4 << 20, tmp_bytes=2 << 20),
        )
        self.assertEqual(int(r.stdout), 4 << 20)

    def test_500_input_files_in_one_request(self) -> None:
        # Issue 17: 500 files go in the run request itself (a file bundle), no session.
        files = {f"d{i % 20:02}/f{i:03}.bin": bytes((i + j) % 256 for j in range(i * 41 % 3000)) for i in range(500)}
        code = (
            "import hashlib, os\n"
            "names = sorted(os.path.join(d, f)[2:] for d, _, fs in os.walk('.') for f in fs)\n"
            "print(len(names), hashlib.sha256(b''.join(n.encode() + open(n, 'rb').read() for n in names)).hexdigest())\n"
        )
        want = hashlib.sha256(b"".join(n.encode() + files[n] for n in sorted(files))).hexdigest()
        self.assertTrue(airlock._lib.has_bundles(self.sandbox._lib))
        with unittest.mock.patch.object(self.sandbox, "session_sync", side_effect=AssertionError("a session")):
            r = self.sandbox.run_sync(code, files=files)
        self.assertEqual(r.stdout, f"500 {want}\n")
        self.assertEqual(list(r.artifacts), [])
        with unittest.mock.patch.object(self.sandbox, "session", side_effect=AssertionError("a session")):
            r = asyncio.run(self.sandbox.run(code, files=files))
        self.assertEqual(r.stdout, f"500 {want}\n")

    def test_many_input_files(self) -> None:
        files = {f"in/f{i:03}.txt": str(i) for i in range(150)}
        code = "import os\nprint(sum(int(open('in/' + n).read()) for n in os.listdir('in')))\nopen('out.txt', 'w').write('x')"
        r = self.sandbox.run_sync(code, files=files)
        self.assertEqual(r.stdout, f"{sum(range(150))}\n")
        self.assertEqual([a.name for a in r.artifacts], ["out.txt"])
        # More than one request carries: through a temporary session.
        with unittest.mock.patch("airlock._lib.RUN_FILES_MAX", 100):
            r = self.sandbox.run_sync(code, files=files)
        self.assertEqual(r.stdout, f"{sum(range(150))}\n")
        self.assertEqual([a.name for a in r.artifacts], ["out.txt"])
        with unittest.mock.patch("airlock._lib.RUN_FILES_MAX", 100):
            r = asyncio.run(self.sandbox.run(code, files=files))
        self.assertEqual(r.stdout, f"{sum(range(150))}\n")
        self.assertEqual([a.name for a in r.artifacts], ["out.txt"])
        self.assertEqual(self.sandbox.list_sessions(), [])  # the temporary sessions are closed

    def test_bad_file_names_are_value_errors(self) -> None:
        for bad in ("../x", "a/../../x", "/etc/x", "a//b", "./x", "", "a\nb", "x\x1b[31m", "del\x7f"):
            with self.assertRaises(ValueError, msg=bad):
                self.sandbox.run_sync("1", files={bad: "x"})

    def test_async_reconnect_after_restart(self) -> None:
        loop = asyncio.new_event_loop()
        self.addCleanup(loop.close)
        self.assertEqual(loop.run_until_complete(self.sandbox.run("print(1)")).stdout, "1\n")
        # The daemon restarts while the loop is idle: the loop has not seen the hang-up.
        _daemon.stop()
        _daemon.start()
        self.assertEqual(loop.run_until_complete(self.sandbox.run("print(2)")).stdout, "2\n")
        self.assertEqual(self.sandbox.run_sync("print(3)").stdout, "3\n")


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

    def test_session_tool(self) -> None:
        async def main():
            async with self.sandbox.session() as s:
                tool = sandbox_tool(self.sandbox, SandboxLimits(wall_seconds=5), session=s)
                first = await tool("open('notes.txt', 'w').write('kept')")
                second = await tool("print(open('notes.txt').read())")
                return tool, first, second

        tool, first, second = asyncio.run(main())
        self.assertFalse(tool.parallel_safe)
        self.assertTrue(sandbox_tool(self.sandbox).parallel_safe)
        self.assertEqual(first["artifacts"], ["notes.txt"])
        self.assertEqual(second["stdout"], "kept\n")
        self.assertIn("share one working directory", tool.description["description"])
        with self.sandbox.session_sync(limits=SandboxLimits(wall_seconds=1)) as s:
            tool = sandbox_tool(self.sandbox, session=s)
            self.assertFalse(tool.parallel_safe)
            self.assertEqual(tool.limits.wall_seconds, 1)  # the session's limits are the base
            with self.assertRaisesRegex(ValueError, "wall_seconds"):
                sandbox_tool(self.sandbox, SandboxLimits(wall_seconds=2), session=s)
            self.assertEqual(tool.call_sync("open('n', 'w').write('1')")["artifacts"], ["n"])
            self.assertEqual(tool.call_sync("print(open('n').read())")["stdout"], "1\n")
            self.assertEqual(tool.call_sync("import time\ntime.sleep(5)")["error"]["limit"], "wall")
        with self.assertRaises(SandboxSessionClosedError):
            tool.call_sync("print(1)")
        other = AirlockSandbox(SOCKET)
        self.addCleanup(other.close)
        with self.assertRaises(ValueError):
            sandbox_tool(other, session=s)
        with self.assertRaises(TypeError):
            sandbox_tool(self.sandbox, session="abc")

    def test_bad_code_type(self) -> None:
        tool = sandbox_tool(self.sandbox)
        with self.assertRaises(TypeError):
            asyncio.run(tool(b"print(1)"))
        with self.assertRaises(TypeError):
            tool.call_sync(None)
        with self.assertRaises(TypeError):
            sandbox_tool(self.sandbox, limits=10)


class ToolBridgeTest(unittest.TestCase):
    """tools= and approve= of run() and run_sync(): the code calls the client's functions."""

    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)

    CODE = (
        "import airlock_tools as t\n"
        "print(t.add(a=2, b=3) * 10)\n"
        "for name in ('boom', 'nope'):\n"
        "    try:\n"
        "        t.call(name)\n"
        "    except t.ToolError as e:\n"
        "        print(name, e.code, e.message)\n"
    )

    @staticmethod
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @staticmethod
    def boom() -> None:
        raise RuntimeError("it broke")

    def check(self, result) -> None:
        self.assertEqual(
            result.stdout.splitlines(),
            ["50", "boom failed RuntimeError: it broke", "nope undeclared no such tool: the run did not declare it"],
        )
        self.assertEqual([(c.tool, c.outcome) for c in result.tool_calls], [("add", "ok"), ("boom", "error"), ("nope", "undeclared")])

    def test_sync(self) -> None:
        self.check(self.sandbox.run_sync(self.CODE, tools={"add": self.add, "boom": self.boom}))

    def test_async_handlers_and_concurrent_runs(self) -> None:
        async def add(a, b):
            await asyncio.sleep(0.05)
            return a + b

        async def main():
            tools = {"add": add, "boom": self.boom}
            return await asyncio.gather(*(self.sandbox.run(self.CODE, tools=tools) for _ in range(3)))

        for result in asyncio.run(main()):
            self.check(result)

    def test_approve_refuses_and_edits(self) -> None:
        seen = []

        def approve(name, args):
            seen.append((name, args))
            return {"a": 1, "b": 1} if name == "add" else False

        result = self.sandbox.run_sync(self.CODE, tools={"add": self.add, "boom": self.boom}, approve=approve)
        self.assertEqual(result.stdout.splitlines()[:2], ["20", "boom refused refused by the approval hook"])
        self.assertEqual(seen, [("add", {"a": 2, "b": 3}), ("boom", {})])
        self.assertEqual([c.outcome for c in result.tool_calls], ["ok", "refused", "undeclared"])

    def test_session_runs(self) -> None:
        """A session's runs take tools too, blocking and async; the files stay between them."""
        tools = {"add": self.add, "boom": self.boom}
        with self.sandbox.session_sync() as s:
            self.check(s.run(self.CODE + "open('x', 'w').write('kept')\n", tools=tools))
            result = s.run("import airlock_tools as t\nprint(t.add(a=1, b=open('x').read() == 'kept'))\n",
                           tools={"add": self.add})
            self.assertEqual(result.stdout, "2\n")
            with self.assertRaises(ValueError):
                s.run("pass", approve=lambda n, a: True)

        async def main():
            async with self.sandbox.session() as s:
                return await s.run(self.CODE, tools=tools)

        self.check(asyncio.run(main()))

    def test_bad_arguments(self) -> None:
        with self.assertRaises(ValueError):
            self.sandbox.run_sync("pass", tools={"bad-name": self.add})
        with self.assertRaises(TypeError):
            self.sandbox.run_sync("pass", tools={"add": 1})
        with self.assertRaises(ValueError):
            self.sandbox.run_sync("pass", approve=lambda n, a: True)
        with self.assertRaises(ValueError):
            self.sandbox.run_sync("pass", tools={"add": self.add}, on_output=lambda s, d: None)


# A cell that does something to each socket it holds: the driver's channel.
_EACH_SOCKET = """import os
for f in os.listdir('/proc/self/fd'):
    try:
        if os.readlink('/proc/self/fd/' + f).startswith('socket:'):
            %s
    except OSError:
        pass
"""


# A cell that finds the driver's channel and its reply memfd and speaks as
# the driver would (daemon/ipc/cells_msg.h), then waits: the frontend must refuse
# what it sends and restart the interpreter at once.
_FORGE = """import os, socket, struct, sys, time
n = int(sys._getframe().f_code.co_filename[6:-1])
def done(magic=0x4C4C4543, status=0, cell=None, code=0, has=0, vlen=0, disp=(), nd=None):
    head = struct.pack('<IIQiIII', magic, status, n if cell is None else cell, code, has, vlen,
                       len(disp) if nd is None else nd)
    body = b''.join(struct.pack('<32sQ', m, l) for m, l in disp)
    return head + body + struct.pack('<32sQ', b'', 0) * (8 - len(disp))
for f in os.listdir('/proc/self/fd'):
    try:
        link = os.readlink('/proc/self/fd/' + f)
    except OSError:
        continue
    if link.startswith('socket:'):
        chan = socket.socket(fileno=os.dup(int(f)))
    elif link.startswith('/memfd:reply'):
        reply = int(f)
%s
"""


# A cell that marks its start in the workspace, then waits for ever.
LOOP_CELL = "import time\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.01)\n"


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


class CellTest(unittest.TestCase):
    """Interpreter sessions (docs/design-interpreters.md section 4): one
    interpreter per session, through the real daemon; the daemon keeps
    serving throughout (each test ends with a plain run)."""

    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)
        self.s = self.sandbox.session_sync(interpreter="python", limits=SandboxLimits(memory_bytes=256 << 20))
        self.s.open()
        self.addCleanup(self.s.close)

    def tearDown(self) -> None:
        self.assertEqual(self.sandbox.run_sync("print(6 * 7)").stdout, "42\n")

    def cell(self, code: str, **kw):
        self.last_error = None
        try:
            return self.s.run_cell(code, **kw)
        except airlock.SandboxError as e:
            self.assertIsNotNone(e.result, str(e))
            self.last_error = str(e)
            return e.result

    def why(self, r) -> str:
        """What a cell's result and the daemon's log say, for a failure's
        message (a failure seen once under load must tell its cause)."""
        return "outcome=%s exit=%s error=%r stderr=%r duration=%.3f\nlog tail:\n%s" % (
            r.outcome, r.exit_code, self.last_error, r.stderr[-300:], r.duration,
            self.daemon_log()[-3000:])

    def test_state_kept(self) -> None:
        first = self.cell("x = 1\nprint('one')")
        second = self.cell("x += 1; x")
        self.assertEqual((first.cell, first.state, first.stdout, first.value), (1, "kept", "one\n", None))
        self.assertEqual((second.cell, second.state, second.value, second.outcome), (2, "kept", "2", "exited"))
        err = self.cell("1/0")
        self.assertEqual((err.exit_code, err.state), (1, "kept"))
        self.assertIn("ZeroDivisionError", err.stderr)

    def test_interrupt_keeps_state(self) -> None:
        self.cell("x = 7")
        t = time.monotonic()
        r = self.cell("while True: pass", limits=SandboxLimits(wall_seconds=1))
        self.assertLess(time.monotonic() - t, 2.5)
        self.assertEqual((r.outcome, r.state), ("wall_limit", "kept"))
        self.assertIn("KeyboardInterrupt", r.stderr)
        self.assertEqual(self.cell("x").value, "7")
        r = self.cell("while True: pass", limits=SandboxLimits(wall_seconds=20, cpu_seconds=1))
        self.assertEqual((r.outcome, r.state), ("cpu_limit", "kept"))
        self.assertGreaterEqual(r.cpu_time, 1.0)
        self.assertEqual(self.cell("x").value, "7")

    def test_sigint_ignored_is_lost_after_grace(self) -> None:
        self.cell("x = 7")
        t = time.monotonic()
        r = self.cell(
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass",
            limits=SandboxLimits(wall_seconds=1),
        )
        self.assertLess(time.monotonic() - t, 6)
        self.assertEqual((r.outcome, r.state), ("wall_limit", "lost"))
        after = self.cell("'x' in globals(), 1 + 1")
        self.assertEqual((after.value, after.state, after.outcome), ("(False, 2)", "lost", "exited"))
        self.assertEqual(self.cell("3").state, "kept")

    def test_memory_is_lost(self) -> None:
        self.cell("y = 5")
        r = self.cell("b = bytearray(1 << 30)")
        self.assertEqual((r.outcome, r.state), ("memory_limit", "lost"))
        if self.sandbox.info()["resource_control"] != "rlimit":
            # The cell's own peak (SUP_CELL_LOST): at its 256 MiB limit.
            self.assertGreater(r.memory_peak_bytes or 0, 200 << 20)
        self.assertIn("NameError", self.cell("y").stderr)

    def test_memory_peak_per_cell(self) -> None:
        # A cell's memory_peak_bytes (docs/protocol.md): the peak since the
        # cell began where the back end can reset it (cgroup1
        # memory.max_usage_in_bytes; cgroup2 memory.peak's per-fd reset,
        # kernel 6.12), else the session's peak so far; none with rlimit.
        # Each cell touches every byte it allocates.
        rc = self.sandbox.info()["resource_control"]
        small = self.cell("x = 1")
        big = self.cell("b = b'x' * (96 << 20)\ndel b")
        after = self.cell("x")
        peaks = [c.memory_peak_bytes for c in (small, big, after)]
        if rc == "rlimit":
            self.assertEqual(peaks, [None, None, None])
            return
        self.assertTrue(all(p is not None and p > 0 for p in peaks), peaks)
        self.assertGreater(peaks[1], peaks[0] + (90 << 20), peaks)
        kernel = tuple(int(v) for v in re.findall(r"\d+", os.uname().release)[:2])
        if rc == "cgroup1" or kernel >= (6, 12):
            self.assertLess(peaks[2], peaks[1] - (64 << 20), peaks)
        else:
            self.assertGreaterEqual(peaks[2], peaks[1], peaks)

    def test_png_display(self) -> None:
        r = self.cell("class P:\n    def _repr_png_(self):\n        return b'\\x89PNG\\r\\n\\x1a\\n' + bytes(100)\nP()")
        self.assertEqual([d.mime for d in r.display], ["image/png"])
        self.assertTrue(r.display[0].data.startswith(b"\x89PNG\r\n\x1a\n"))

    def test_matplotlib_figure(self) -> None:
        if subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode != 0:
            self.skipTest("no python3-matplotlib on this host")
        with self.sandbox.session_sync(interpreter="python-site") as s:
            r = s.run_cell(
                "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()",
                limits=SandboxLimits(wall_seconds=60, cpu_seconds=60),
            )
            self.assertEqual(r.outcome, "exited", r.stderr)
            self.assertEqual([d.mime for d in r.display], ["image/png"])
            self.assertTrue(r.display[0].data.startswith(b"\x89PNG\r\n\x1a\n"))
            # plt.show() shows the figures at that point (Jupyter's inline
            # backend): closing them after loses nothing; in order with
            # display(); SVG when the code asks.
            r = s.run_cell(
                "plt.plot([1, 2]); plt.show(); plt.close('all')\n"
                "display('between')\n"
                "plt.rcParams['savefig.format'] = 'svg'\n"
                "plt.figure(); plt.plot([3, 1]); plt.show()\n"
                "plt.rcParams['savefig.format'] = 'png'\n"
                "plt.figure(); plt.bar([1], [2])",
                limits=SandboxLimits(wall_seconds=60, cpu_seconds=60),
            )
            self.assertEqual(r.outcome, "exited", r.stderr)
            self.assertEqual([d.mime for d in r.display],
                             ["image/png", "text/plain", "image/svg+xml", "image/png"])
            self.assertTrue(r.display[0].data.startswith(b"\x89PNG\r\n\x1a\n"))
            self.assertIn(b"<svg", r.display[2].data)
            self.assertEqual(s.run_cell("plt.get_fignums()").value, "[]")
            # SVG when the request asks (figures_svg), for that cell only.
            code = "plt.plot([1, 2]); plt.show()\nplt.figure(); plt.plot([2, 1])"
            r = s.run_cell(code, figures="svg", limits=SandboxLimits(wall_seconds=60, cpu_seconds=60))
            self.assertEqual([d.mime for d in r.display], ["image/svg+xml"] * 2, r.stderr)
            r = s.run_cell(code, limits=SandboxLimits(wall_seconds=60, cpu_seconds=60))
            self.assertEqual([d.mime for d in r.display], ["image/png"] * 2, r.stderr)
            with self.assertRaises(ValueError):
                s.run_cell("1", figures="gif")

    def test_rich_reprs_and_display(self) -> None:
        # Issue 30, point 2: an object's _repr_svg_, _repr_html_ and
        # _repr_markdown_ come back as display items (in that order, after
        # the display() calls, as Jupyter shows them); display() of an
        # object with no rich representation gives its repr as text/plain.
        self.cell(
            "class R:\n"
            "    def _repr_svg_(self): return '<svg/>'\n"
            "    def _repr_html_(self): return ('<b>r</b>', {})\n"
            "    def _repr_markdown_(self): return '**r**'\n"
            "    def __repr__(self): return 'R()'\n"
            "class Bad:\n"
            "    def _repr_html_(self): raise ValueError('no html')\n"
        )
        r = self.cell("display(42, Bad())\nprint('p')\nR()")
        self.assertEqual((r.outcome, r.exit_code, r.value, r.stdout), ("exited", 0, "R()", "p\n"), self.why(r))
        got = [(d.mime, d.data) for d in r.display]
        # Bad's _repr_html_ raised: its traceback on stderr, its repr shown.
        self.assertEqual(got[:1], [("text/plain", b"42")])
        self.assertEqual(got[1][0], "text/plain")
        self.assertTrue(got[1][1].startswith(b"<__main__.Bad object at 0x"), got)
        self.assertEqual(got[2:], [("image/svg+xml", b"<svg/>"), ("text/html", b"<b>r</b>"),
                                   ("text/markdown", b"**r**")])
        self.assertIn("ValueError: no html", r.stderr)
        # At most 8 items (the first that fit), the state kept.
        r = self.cell("for i in range(12):\n    display(i)")
        self.assertEqual([d.data for d in r.display], [b"%d" % i for i in range(8)])
        self.assertEqual(r.state, "kept")

    def test_cell_files_are_its_artifacts(self) -> None:
        # Issue 30, point 2: the files a cell creates or changes come back
        # as a run's artifacts; the next cell's, only what it changed (the
        # previous cell's files, written in the same clock tick as its
        # end, are not reported again).
        r = self.cell("import os\nopen('a.txt', 'w').write('one')\nos.makedirs('d', exist_ok=True)\n"
                      "open('d/b.bin', 'wb').write(bytes(10))")
        self.assertEqual({a.name: a.content for a in r.artifacts}, {"a.txt": b"one", "d/b.bin": bytes(10)},
                         self.why(r))
        r = self.cell("open('c.txt', 'w').write('c')")
        self.assertEqual([a.name for a in r.artifacts], ["c.txt"], self.why(r))
        self.assertEqual(self.cell("x = 1").artifacts, [] if isinstance(r.artifacts, list) else ())
        r = self.cell("open('a.txt', 'a').write('two')")
        self.assertEqual([(a.name, a.content) for a in r.artifacts], [("a.txt", b"onetwo")], self.why(r))
        # Back to back, each cell writing one new file: each is its own.
        for i in range(20):
            r = self.cell(f"open('f{i}', 'w').write('{i}')")
            self.assertEqual([a.name for a in r.artifacts], [f"f{i}"], self.why(r))
        # The cell's own limits choose and cut them, as a run's.
        r = self.cell("for n in 'xyz':\n    open(n, 'w').write(n * 100)",
                      limits=SandboxLimits(max_artifacts=2, max_artifact_bytes=10))
        self.assertEqual((len(r.artifacts), r.artifacts_omitted, r.artifacts_omitted_bytes), (2, 1, 100),
                         self.why(r))
        self.assertEqual([(len(a.content), a.truncated, a.size) for a in r.artifacts], [(10, True, 100)] * 2)
        # A file written between cells (the file operations) is the next cell's.
        self.s.write_file("between.txt", "w")
        self.assertEqual([a.name for a in self.cell("1").artifacts], ["between.txt"])

    def test_traceback_shows_the_users_code_only(self) -> None:
        # Issue 30, point 2: no driver frame (the daemon's main.py, exec,
        # ast.parse), and the cell's own lines, as Jupyter shows them: also
        # for a function of an earlier cell raising in a later one.
        self.cell("def f(x):\n    return 1 / x\n")
        r = self.cell("y = 2\nf(0)")
        self.assertEqual((r.outcome, r.exit_code, r.state), ("exited", 1, "kept"), self.why(r))
        err = r.stderr
        self.assertTrue(err.startswith("Traceback (most recent call last):\n  File \"<cell "), err)
        self.assertIn("    f(0)\n", err)
        self.assertIn("    return 1 / x\n", err)
        self.assertIn("ZeroDivisionError", err)
        for driver in ("main.py", "_run", "exec(", "eval("):
            self.assertNotIn(driver, err)
        r = self.cell("x = (")
        self.assertIn("SyntaxError", r.stderr)
        for driver in ("main.py", "ast.py", "Traceback"):
            self.assertNotIn(driver, r.stderr)
        self.assertEqual(self.cell("y").value, "2")

    def test_forked_sleeper_ends_with_the_cell(self) -> None:
        t = time.monotonic()
        r = self.cell("import subprocess, sys\nsubprocess.Popen(['sleep', '30'], stdout=sys.stdout)\nprint('forked')")
        self.assertLess(time.monotonic() - t, 3)
        self.assertEqual((r.stdout, r.state), ("forked\n", "kept"))
        # Dead, not only signalled: a zombie of the interpreter's (its
        # child, reaped by the driver at a cell's start) is no process.
        left = self.cell(
            "import os\n"
            "def live(p):\n"
            "    s = open('/proc/%s/stat' % p).read()\n"
            "    return s[s.rindex(')') + 2] != 'Z'\n"
            "sorted(open('/proc/%s/comm' % p).read().strip() for p in os.listdir('/proc') if p.isdigit() and live(p))"
        )
        self.assertNotIn("sleep", left.value)

    def test_zombie_leader_thread_ends_with_the_cell(self) -> None:
        # Issue 28, point 2: a process the cell forks whose main thread
        # exits while another of its threads spins. Its leader is a zombie
        # (state Z), so the end-of-cell kill skipped it and the thread spun
        # on between cells, charged to no cell. After the cell nothing of
        # it may run: no live task of it on the host, none in the next cell.
        tag = "zl%08x" % int.from_bytes(os.urandom(4), "big")
        sys_exit = {"x86_64": 60, "aarch64": 93}.get(os.uname().machine)
        if sys_exit is None:
            self.skipTest("SYS_exit of this architecture not known")
        r = self.cell(
            "import ctypes, os, threading, time\n"
            "libc = ctypes.CDLL(None)\n"
            "rd, wr = os.pipe()\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    libc.prctl(15, b'%s', 0, 0, 0)\n"
            "    def spin():\n"
            "        os.write(wr, b'x')\n"
            "        while True:\n"
            "            pass\n"
            "    threading.Thread(target=spin, name='%s').start()\n"
            "    libc.syscall(%d, 0)\n"
            "os.read(rd, 1)\n"
            "def stat():\n"
            "    s = open('/proc/%%d/stat' %% pid).read()\n"
            "    f = s[s.rindex(')') + 2:].split()\n"
            "    return f[0], int(f[17])\n"
            "end = time.monotonic() + 10\n"
            "while stat()[0] != 'Z' and time.monotonic() < end:\n"
            "    time.sleep(0.01)\n"
            "stat()" % (tag, tag, sys_exit)
        )
        # The state the cell left: the leader a zombie, its thread alive.
        self.assertEqual((r.value, r.state), ("('Z', 2)", "kept"), self.why(r))

        def live_tasks():
            found = []
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    tids = os.listdir("/proc/%s/task" % pid)
                except OSError:
                    continue
                for tid in tids:
                    try:
                        with open("/proc/%s/task/%s/stat" % (pid, tid)) as f:
                            s = f.read()
                    except OSError:
                        continue
                    comm, state = s[s.index("(") + 1 : s.rindex(")")], s[s.rindex(")") + 2]
                    if comm == tag and state not in "ZX":
                        found.append((pid, tid, state))
            return found

        # The cell's answer comes after the kill: nothing is left to wait for.
        self.assertEqual(live_tasks(), [], self.why(r))
        nxt = self.cell(
            "import os\n"
            "def tasks():\n"
            "    for p in filter(str.isdigit, os.listdir('/proc')):\n"
            "        try:\n"
            "            for t in os.listdir('/proc/%%s/task' %% p):\n"
            "                yield open('/proc/%%s/task/%%s/comm' %% (p, t)).read().strip()\n"
            "        except OSError:\n"
            "            pass\n"
            "'%s' in list(tasks())" % tag
        )
        self.assertEqual((nxt.value, nxt.state), ("False", "kept"), self.why(nxt))
        self.assertEqual(live_tasks(), [])

    def test_forking_leftovers_end_with_the_cell(self) -> None:
        # What the end-of-cell kill races: processes the cell left that fork
        # all the time, each child forking on and its parent exiting, so
        # that the live ones keep moving to new pids while the supervisor
        # walks /proc (its passes end only when one finds nothing alive
        # and no pid was given out meanwhile). After the answer none lives.
        tag = "fk%08x" % int.from_bytes(os.urandom(4), "big")
        r = self.cell(
            "import ctypes, os, time\n"
            "libc = ctypes.CDLL(None)\n"
            "rd, wr = os.pipe()\n"
            "for i in range(4):\n"
            "    if os.fork() == 0:\n"
            "        libc.prctl(15, b'%s', 0, 0, 0)\n"
            "        os.write(wr, b'x')\n"
            "        while True:\n"
            "            try:\n"
            "                if os.fork() != 0:\n"
            "                    os._exit(0)\n"
            "            except OSError:\n"
            "                pass\n"
            "len(os.read(rd, 4)) > 0" % tag
        )
        self.assertEqual((r.value, r.state), ("True", "kept"), self.why(r))
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/stat" % pid) as f:
                    st = f.read()
            except OSError:
                continue
            if st[st.index("(") + 1 : st.rindex(")")] == tag and st[st.rindex(")") + 2] not in "ZX":
                left.append(pid)
        self.assertEqual(left, [], self.why(r))
        self.assertEqual(self.cell("6 * 7").value, "42")

    def test_closed_stdout_and_channel(self) -> None:
        self.cell("x = 1")
        r = self.cell("import os\nos.close(1)\nos.close(0)\nx")
        self.assertEqual((r.value, r.state), ("1", "kept"))
        self.assertEqual(self.cell("print(x)").stdout, "1\n")
        r = self.cell(_EACH_SOCKET % "os.close(int(f))")
        self.assertEqual(r.state, "lost")
        self.assertEqual(self.cell("1 + 1").value, "2")

    def test_modules_cleared(self) -> None:
        self.cell("import sys\nsys.modules.clear()")
        r = self.cell("2 + 2")
        self.assertEqual(r.value, "4")

    def test_garbage_on_the_channel_restarts(self) -> None:
        self.cell("x = 1")
        r = self.cell(_EACH_SOCKET % "os.write(int(f), b'garbage')")
        self.assertEqual((r.outcome, r.state), ("error", "lost"))
        self.assertIn("NameError", self.cell("x").stderr)
        self.assertEqual(self.cell("1").state, "kept")
        with open(_daemon.log, encoding="utf-8", errors="replace") as f:
            self.assertIn("malformed message", f.read())

    def test_blocked_imports_read_each_cell(self) -> None:
        # The session's profile's advisory check reads each cell (never the
        # driver's own code): reported, never refused.
        with self.sandbox.session_sync(interpreter="python", limits=SandboxLimits(profile="advised")) as s:
            r = s.run_cell("import subprocess\nsubprocess.__name__")
            self.assertEqual((r.value, r.advisories), ("'subprocess'", ("blocked import: subprocess (line 1)",)))
            self.assertEqual(s.run_cell("1").advisories, ())

    def test_files_between_cells(self) -> None:
        self.s.write_file("in.txt", b"abc")
        self.assertEqual(self.cell("open('in.txt').read()").value, "'abc'")
        self.cell("open('out.txt', 'w').write('zz')")
        self.assertEqual(self.s.read_file("out.txt"), b"zz")

    def test_plain_run_refused(self) -> None:
        with self.assertRaises(SandboxUnavailableError) as e:
            self.s.run("print(1)")
        self.assertEqual(e.exception.code, "bad_request")

    def daemon_log(self) -> str:
        with open(_daemon.log, encoding="utf-8", errors="replace") as f:
            return f.read()

    def test_forged_answers_refused(self) -> None:
        # Each answer breaks one rule of cells_check_done() or of the
        # message's shape: refused, the interpreter restarted at once (the
        # cell would sleep 20 s), the result says the state is lost.
        cases = [
            ("chan.send(done(magic=1))", "bad magic"),
            ("chan.send(done(cell=n + 1))", "wrong cell number"),
            ("chan.send(done(status=4))", "unknown status"),
            ("chan.send(done(has=2))", "bad value length"),
            ("chan.send(done(has=0, vlen=1))", "bad value length"),
            ("chan.send(done(has=1, vlen=16385))", "bad value length"),
            ("chan.send(done(nd=9))", "too many display items"),
            ("chan.send(done(disp=[(b'image/gif', 0)]))", "a mime type outside the set"),
            ("chan.send(done(disp=[(b'image/png'.ljust(32, b'x'), 0)]))", "a mime type outside the set"),
            ("chan.send(done(disp=[(b'image/png\\0x', 0)]))", "bytes after a mime type"),
            ("chan.send(done(disp=[(b'image/png', 1 << 40)]))", "display larger than its bound"),
            ("chan.send(done(disp=[(b'image/png', 0)], nd=0))", "data past the display items"),
            ("chan.send(done(has=1, vlen=100))", "lengths past the reply"),
            ("chan.send(done()[:-1])", "malformed message (351 bytes, 0 fds)"),
            ("chan.send(done() + b'x')", "malformed message (-90 bytes"),
            ("socket.send_fds(chan, [done()], [reply])", "malformed message (352 bytes, 1 fds)"),
        ]
        for code, why in cases:
            with self.subTest(why=why, code=code):
                self.cell("x = 1")
                t = time.monotonic()
                r = self.cell(_FORGE % (code + "\ntime.sleep(20)"))
                self.assertLess(time.monotonic() - t, 10)
                self.assertEqual((r.outcome, r.state), ("error", "lost"))
                self.assertIn(why, self.daemon_log())
                after = self.cell("'x' in globals()")
                self.assertEqual((after.value, after.state), ("False", "lost"), self.why(after))

    def test_forged_answer_then_the_real_one(self) -> None:
        # The code may answer for the driver (it is the driver): that answer
        # is the result. The interpreter is stopped from then until the next
        # cell, in which the driver's own answer to the forging cell comes:
        # refused (not that cell's number), the interpreter is restarted,
        # and that cell and the one after it say so.
        self.cell("x = 1")
        r = self.cell(_FORGE % "os.pwrite(reply, b\"'forged'\", 0)\nchan.send(done(has=1, vlen=8))\ntime.sleep(0.5)")
        self.assertEqual((r.value, r.state), ("'forged'", "kept"))
        time.sleep(1)
        after = self.cell("'x' in globals()")
        self.assertEqual((after.outcome, after.state), ("error", "lost"))
        self.assertIn("wrong cell number", self.daemon_log())
        after = self.cell("'x' in globals()")
        self.assertEqual((after.value, after.state), ("False", "lost"))

    def test_answer_between_cells(self) -> None:
        # A thread of the interpreter would speak on the channel while no
        # cell runs; stopped between cells, it speaks during the next one
        # (which waits for it): refused, the interpreter is restarted, and
        # the cells after it run in a new one.
        self.cell("x = 1")
        self.cell(_FORGE % "import threading\nthreading.Timer(0.3, lambda: chan.send(done())).start()")
        time.sleep(1.5)
        after = self.cell("__import__('time').sleep(1)\n'x' in globals()")
        self.assertEqual((after.outcome, after.state), ("error", "lost"))
        self.assertEqual(self.cell("'x' in globals()").value, "False")

    def test_os_exit_mid_cell(self) -> None:
        self.cell("x = 1")
        r = self.cell("import os\nprint('before', flush=True)\nos._exit(3)")
        self.assertEqual((r.outcome, r.exit_code, r.state, r.stdout), ("exited", 3, "lost", "before\n"))
        after = self.cell("'x' in globals()")
        self.assertEqual((after.value, after.state), ("False", "lost"))
        self.assertEqual(self.cell("1").state, "kept")

    def test_channel_overwritten_then_sleeps(self) -> None:
        # The channel's fd is overwritten and the cell goes on: the driver
        # can never answer; the cell is not held until its wall limit.
        self.cell("x = 1")
        t = time.monotonic()
        r = self.cell(
            _EACH_SOCKET % "os.dup2(os.open('/dev/null', os.O_RDONLY), int(f))" + "import time\ntime.sleep(30)\n",
            limits=SandboxLimits(wall_seconds=30),
        )
        self.assertLess(time.monotonic() - t, 10)
        self.assertEqual(r.state, "lost")
        self.assertEqual(self.cell("'x' in globals()").value, "False")

    def test_python_stdout_closed_or_replaced(self) -> None:
        self.cell("x = 1")
        for code in ("import sys\nsys.stdout.close()", "import sys\nsys.stderr.close()",
                     "import sys\nsys.stdout = None", "import sys\nsys.stdout = 5"):
            with self.subTest(code=code):
                r = self.cell(code)
                self.assertEqual(r.state, "kept")
                after = self.cell("print('hi'); x")
                self.assertEqual((after.state, after.value, after.stdout), ("kept", "1", "hi\n"))

    def test_driver_corrupted(self) -> None:
        # The driver is the code's __main__: a cell that breaks it loses the
        # state, and says so; the next cell runs in a new interpreter.
        self.cell("x = 1")
        r = self.cell("import sys\nsys.modules['__main__'].DONE_HEAD = None")
        self.assertEqual(r.state, "lost")
        self.assertEqual(self.cell("'x' in globals()").value, "False")
        r = self.cell("import builtins\nbuiltins.len = None")
        self.assertEqual(r.state, "lost")
        self.assertEqual(self.cell("len('ab')").value, "2")

    def test_exit_code_out_of_range(self) -> None:
        self.cell("x = 1")
        r = self.cell("raise SystemExit(1 << 40)")
        self.assertEqual((r.outcome, r.state), ("exited", "kept"))
        self.assertNotEqual(r.exit_code, 0)
        self.assertEqual(self.cell("x").value, "1")

    def test_double_fork_ends_with_the_cell(self) -> None:
        # The grandchild is reparented to the supervisor (pid 1): it dies at
        # the cell's end too, and is reaped.
        r = self.cell(
            "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            "        os.execvp('sleep', ['sleep', '60'])\n    os._exit(0)\nos.wait()\nprint('away')"
        )
        self.assertEqual((r.stdout, r.state), ("away\n", "kept"))
        deadline = time.monotonic() + 10  # the grandchild's kill is the cell end's work: a deadline, not 3 tries
        while True:
            left = self.cell(
                "import os\nsorted(open('/proc/%s/stat' % p).read().split(')')[1].split()[0] + "
                "open('/proc/%s/comm' % p).read().strip() for p in os.listdir('/proc') if p.isdigit())"
            )
            if "sleep" not in left.value or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        self.assertNotIn("sleep", left.value)

    def test_fork_bomb(self) -> None:
        self.cell("x = 1")
        r = self.cell("import os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)")
        after = self.cell("'x' in globals()")
        # Whether the interpreter survived or not, a lost state is reported.
        if after.value != "True":
            self.assertIn("lost", (r.state, after.state))
        self.assertEqual(self.cell("1 + 1").value, "2")

    def test_client_gone_with_cells_queued(self) -> None:
        # A client queues two cells and leaves; the first ends the
        # interpreter, so the second, no one's, would need a new one.
        self.cell("x = 1")
        child = (
            "import asyncio, os, sys\nimport airlock\n"
            "async def main():\n"
            "    s = airlock.AirlockSandbox(sys.argv[1]).attach_session(sys.argv[2])\n"
            "    s._core.interpreter = 'python'\n"  # attach_session() does not know it is one
            "    asyncio.ensure_future(s.run_cell('import os, time\\ntime.sleep(1)\\nos._exit(3)'))\n"
            "    await asyncio.sleep(0.4)\n"
            "    asyncio.ensure_future(s.run_cell('y = 2'))\n"
            "    await asyncio.sleep(0.4)\n"
            "    os._exit(0)\n"
            "asyncio.run(main())\n"
        )
        subprocess.run([sys.executable, "-c", child, SOCKET, self.s.id], check=True, timeout=30)
        # Until the daemon is done with both (not listed running), 30 s at most: not a fixed 2 s.
        state = wait_until(lambda: session_state(self.sandbox, self.s.id), lambda st: st != "running", 30, 0.05)
        self.assertNotEqual(state, "running", self.daemon_log()[-3000:])
        r = self.cell("'x' in globals()")
        self.assertEqual((r.value, r.state), ("False", "lost"))

    def test_interpreter_that_cannot_start(self) -> None:
        # Too little memory for python: the cell is answered, once; no
        # endless restarts.
        async def main():
            s = self.sandbox.session(interpreter="python", limits=SandboxLimits(memory_bytes=1 << 20))
            try:
                await s.open()
                return await asyncio.wait_for(s.run_cell("1"), 20)
            except airlock.SandboxError as e:
                return e
            finally:
                with contextlib.suppress(airlock.SandboxError):
                    await s.close()

        r = asyncio.run(main())
        self.assertNotIsInstance(r, asyncio.TimeoutError)

    def test_queued_cells_count_against_the_budget(self) -> None:
        # The daemon copies a waiting cell's code: 250 MiB each, four fit
        # in the uid's max_bytes_per_uid (1 GiB), the fifth is refused busy
        # (not queued, uncounted, 16 per session). The fifth comes from
        # another connection: a channel with runs in flight resends "busy".
        big = b"x = 1\n#" + b"a" * (250 << 20)

        def fifth(sid):
            other = AirlockSandbox(SOCKET)
            try:
                s = other.attach_session_sync(sid)
                s._core.interpreter = "python"  # attach_session() does not know it is one
                with self.assertRaises(SandboxUnavailableError) as e:
                    s.run_cell(big)
                return e.exception.code
            finally:
                other.close()

        def listed_running(sid):  # on a connection of its own: the loop's is busy with s
            with contextlib.closing(AirlockSandbox(SOCKET)) as other:
                return session_running(other, sid)

        async def main():
            s = await self.sandbox.session(interpreter="python", limits=SandboxLimits(wall_seconds=120))
            try:
                # Busy until its wall limit (120 s): the queue cannot move
                # while the cells below are sent, however loaded the machine
                # (under ASan on two busy cores the sends took more than 15 s).
                first = asyncio.ensure_future(s.run_cell("import time\ntime.sleep(600)"))
                # The daemon has it (the session is listed running), not a fixed 1.5 s.
                running = await asyncio.get_running_loop().run_in_executor(None, listed_running, s.id)
                self.assertTrue(running, "the first cell never reached the daemon")
                waiting = []
                for _ in range(4):
                    waiting.append(asyncio.ensure_future(s.run_cell(big)))
                    await asyncio.sleep(0.3)
                # A deadline, not a speed: the answer is "busy" at once once
                # the fifth's bytes are in.
                code = await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, fifth, s.id), 90)
                self.assertEqual(code, "busy")
                self.assertFalse(first.done())
            finally:
                with contextlib.suppress(airlock.SandboxError):
                    await s.close()
            # The session's end answers the waiting cells.
            await asyncio.wait_for(asyncio.gather(first, *waiting, return_exceptions=True), 20)

        asyncio.run(main())

    def test_session_closed_while_a_cell_runs(self) -> None:
        async def main():
            s = await self.sandbox.session(interpreter="python")
            task = asyncio.ensure_future(s.run_cell("import time\ntime.sleep(30)"))
            loop = asyncio.get_running_loop()
            self.assertTrue(await loop.run_in_executor(None, session_running, self.sandbox, s.id))
            other = AirlockSandbox(SOCKET)
            try:
                await other.attach_session(s.id).close()
            finally:
                other.close()
            t = time.monotonic()
            with self.assertRaises(airlock.SandboxError):
                await asyncio.wait_for(task, 10)
            with contextlib.suppress(airlock.SandboxError):
                await s.close()
            return time.monotonic() - t

        self.assertLess(asyncio.run(main()), 5)

    def test_listed_with_its_interpreter(self) -> None:
        listed = {i.id: i for i in self.sandbox.list_sessions()}
        self.assertEqual(listed[self.s.id].interpreter, "python")
        with self.sandbox.session_sync() as plain:
            listed = {i.id: i for i in self.sandbox.list_sessions()}
            self.assertIsNone(listed[plain.id].interpreter)

    def test_attached_runs_cells(self) -> None:
        self.cell("x = 5")
        other = AirlockSandbox(SOCKET)
        self.addCleanup(other.close)
        r = other.attach_session_sync(self.s.id).run_cell("x += 1; x")
        self.assertEqual((r.value, r.state, r.cell), ("6", "kept", 2))
        self.assertEqual(asyncio.run(other.attach_session(self.s.id).run_cell("x")).value, "6")
        with other.session_sync() as plain:
            with self.assertRaisesRegex(airlock.SandboxError, "not an interpreter session"):
                other.attach_session_sync(plain.id).run_cell("1")

    def test_lost_cell_counts_its_own_time(self) -> None:
        # Before each cell that kills the interpreter, the same interpreter
        # spent 2.5 s of cpu (and more of wall) on a spin: had the daemon
        # reported the interpreter's life, the lost cell's figures would
        # hold the spin's own. So the cpu is below the spin's own figure,
        # and the wall below what the client waited for this cell alone
        # (the cell's span lies within the request's), neither a bound that
        # load on the machine can pass.
        spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 2.5: pass"
        before = self.cell(spin)
        time.sleep(0.5)

        def lost(code, **kw):
            t0 = time.monotonic()
            r = self.cell(code, **kw)
            waited = time.monotonic() - t0
            self.assertEqual(r.state, "lost", code)
            self.assertLess(r.cpu_time, before.cpu_time, code)
            self.assertLessEqual(r.duration, waited, code)
            return r

        for code in ("import os\nos._exit(3)", "b = bytearray(1 << 30)"):
            lost(code)
            before = self.cell(spin)
        # SIGINT at 1 s, ignored; killed 2 s later (state lost, wall_limit).
        r = lost(
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nimport time\ntime.sleep(60)",
            limits=SandboxLimits(wall_seconds=1),
        )
        self.assertEqual(r.outcome, "wall_limit")
        self.assertGreater(r.duration, 2.5)

    def test_interrupt_after_the_cell_with_threads(self) -> None:
        # The cell starts a thread (SIGINT not blocked in it) and ends; the
        # driver's flush of its stdout runs past the wall limit, so the
        # supervisor's SIGINT arrives after the cell ended. It must hit
        # neither the driver nor the next cell.
        self.cell("x = 7")
        r = self.cell(
            "import sys, threading, time\n"
            "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
            "class Slow:\n"
            "    def write(self, s): return len(s)\n"
            "    def flush(self): time.sleep(1.5)\n"
            "sys.stdout = Slow()\n",
            limits=SandboxLimits(wall_seconds=1),
        )
        self.assertEqual((r.outcome, r.state), ("wall_limit", "kept"))
        after = self.cell("x")
        self.assertEqual((after.value, after.state, after.outcome), ("7", "kept", "exited"))
        self.assertNotIn("KeyboardInterrupt", after.stderr)

    def test_threads_stopped_between_cells(self) -> None:
        # A thread the cell leaves running stamps the time every 10 ms; the
        # stamps have a gap as long as the pause between two cells.
        self.cell(
            "import threading, time\nstamps = []\n"
            "def tick():\n"
            "    while True:\n"
            "        stamps.append(time.monotonic())\n"
            "        time.sleep(0.01)\n"
            "threading.Thread(target=tick, daemon=True).start()\ntime.sleep(0.1)"
        )
        time.sleep(1.5)
        r = self.cell("time.sleep(0.1)\nmax(b - a for a, b in zip(stamps, stamps[1:]))")
        self.assertGreater(float(r.value), 1.2)

    def test_async(self) -> None:
        async def main():
            async with self.sandbox.session(interpreter="python") as s:
                await s.run_cell("a = [1]")
                return await s.run_cell("a * 2")

        self.assertEqual(asyncio.run(main()).value, "[1, 1]")


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


def wait_until(probe, done, seconds: float, every: float = 0.02):
    """probe() polled every `every` s until done(its value) or seconds have passed: its
    last value, for the caller's assertion (a deadline for an event, not a fixed wait)."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if done(value) or time.monotonic() >= deadline:
            return value
        time.sleep(every)


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


class RequestTimeoutTest(unittest.TestCase):
    """timeout= on blocking calls and awaits (issue 32): past it the call
    raises SandboxRequestTimeoutError, a run is cancelled on the daemon (its
    processes are gone long before its own wall limit), and the sandbox and
    its pooled connection stay usable. A daemon that does not answer at all
    is a stopped frontend (SIGSTOP), as in the issue."""

    SLEEP = "import time\nprint('started', flush=True)\ntime.sleep(60)"
    LIMITS = SandboxLimits(wall_seconds=60)

    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(SOCKET)
        self.addCleanup(self.sandbox.close)
        self.cancelled = self.cancelled_runs()

    @staticmethod
    def cancelled_runs() -> int:
        return len(re.findall(r"audit (?:time=\S+ )?run=\d+ .*outcome=cancelled", _daemon.log_text()))

    def assert_run_cancelled(self) -> None:
        # The daemon's audit line of the run: cancelled, not ended at its 60 s wall.
        seen = wait_for(lambda: self.cancelled_runs() > self.cancelled, 15)
        self.assertTrue(seen, "the timed-out run was not cancelled on the daemon:\n" + _daemon.log_tail())
        self.cancelled = self.cancelled_runs()

    @contextlib.contextmanager
    def stopped_daemon(self):
        pid = _daemon.frontend
        self.assertIsNotNone(pid, "no frontend pid")
        os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(pid, signal.SIGCONT)

    def test_run_sync_timeout_cancels_the_run(self) -> None:
        self.sandbox.ping()
        conn = self.sandbox._idle[-1]
        t0 = time.monotonic()
        with self.assertRaises(SandboxRequestTimeoutError) as cm:
            self.sandbox.run_sync(self.SLEEP, limits=self.LIMITS, timeout=1.5)
        elapsed = time.monotonic() - t0
        self.assertGreaterEqual(elapsed, 1.4)
        self.assertLess(elapsed, 10)
        self.assertEqual(cm.exception.code, "timeout")
        self.assertEqual(cm.exception.timeout, 1.5)
        self.assertIsInstance(cm.exception, TimeoutError)
        self.assertIsInstance(cm.exception, SandboxUnavailableError)
        self.assert_run_cancelled()
        # The same connection went back to the pool and still works.
        self.assertIn(conn, self.sandbox._idle)
        self.assertEqual(self.sandbox.run_sync("print(6 * 7)").stdout, "42\n")

    def test_default_timeout_of_the_sandbox(self) -> None:
        sandbox = AirlockSandbox(SOCKET, timeout=1.5)
        self.addCleanup(sandbox.close)
        self.assertEqual(sandbox.timeout, 1.5)
        with self.assertRaises(SandboxRequestTimeoutError):
            sandbox.run_sync(self.SLEEP, limits=self.LIMITS)
        self.assert_run_cancelled()
        # A call's own timeout overrides the default; math.inf lifts it.
        result = sandbox.run_sync("import time\ntime.sleep(2)\nprint('done')", timeout=float("inf"))
        self.assertEqual(result.stdout, "done\n")

    def test_async_run_timeout_cancels_the_run(self) -> None:
        async def go():
            t0 = time.monotonic()
            with self.assertRaises(SandboxRequestTimeoutError):
                await self.sandbox.run(self.SLEEP, limits=self.LIMITS, timeout=1.5)
            self.assertLess(time.monotonic() - t0, 10)
            self.assert_run_cancelled()
            # The loop's channel is still usable.
            return await self.sandbox.run("print(6 * 7)")

        self.assertEqual(asyncio.run(go()).stdout, "42\n")

    def test_stopped_daemon_ping_and_info(self) -> None:
        self.sandbox.ping()
        conn = self.sandbox._idle[-1]
        with self.stopped_daemon():
            for call in (self.sandbox.ping, self.sandbox.info, self.sandbox.list_sessions):
                t0 = time.monotonic()
                with self.assertRaises(SandboxRequestTimeoutError, msg=call.__name__):
                    call(timeout=0.5)
                self.assertLess(time.monotonic() - t0, 5, call.__name__)
        self.sandbox.ping(timeout=10)
        self.assertIn(conn, self.sandbox._idle)
        self.assertIn("runtimes", self.sandbox.info(timeout=10))

    def test_stopped_daemon_async_run(self) -> None:
        async def go():
            await self.sandbox.run("pass")  # the channel connected
            with self.stopped_daemon():
                t0 = time.monotonic()
                with self.assertRaises(SandboxRequestTimeoutError):
                    await self.sandbox.run("print(1)", timeout=0.5)
                # The run's submit, its wait and the cancel each bounded.
                self.assertLess(time.monotonic() - t0, 5)
            return await self.sandbox.run("print(6 * 7)", timeout=30)

        self.assertEqual(asyncio.run(go()).stdout, "42\n")

    def test_session_calls_take_timeout(self) -> None:
        with self.sandbox.session_sync() as s:
            s.write_file("a.txt", b"x", timeout=10)
            with self.stopped_daemon():
                with self.assertRaises(SandboxRequestTimeoutError):
                    s.read_file("a.txt", timeout=0.5)
                with self.assertRaises(SandboxRequestTimeoutError):
                    s.run("print(1)", timeout=0.5)
            # extend() and save() (session-persist) take it too.
            s.extend(600, timeout=10)
            self.assertGreater(len(s.save(timeout=10)), 0)
            with self.stopped_daemon():
                with self.assertRaises(SandboxRequestTimeoutError):
                    s.save(timeout=0.5)
                with self.assertRaises(SandboxRequestTimeoutError):
                    s.extend(600, timeout=0.5)
            self.assertEqual(s.read_file("a.txt", timeout=10), b"x")
            self.assertEqual(s.run("print(6 * 7)", timeout=30).stdout, "42\n")

        async def go():
            async with self.sandbox.session() as s:
                await s.write_file("b.txt", b"y", timeout=10)
                with self.stopped_daemon():
                    with self.assertRaises(SandboxRequestTimeoutError):
                        await s.list_files(timeout=0.5)
                    with self.assertRaises(SandboxRequestTimeoutError):
                        await s.extend(600, timeout=0.5)
                    with self.assertRaises(SandboxRequestTimeoutError):
                        await s.save(timeout=0.5)
                await s.extend(600, timeout=10)
                return await s.read_file("b.txt", timeout=10)

        self.assertEqual(asyncio.run(go()), b"y")

    def test_bad_timeouts(self) -> None:
        for bad in (0, -1, float("nan")):
            with self.assertRaises(ValueError):
                self.sandbox.ping(timeout=bad)
            with self.assertRaises(ValueError):
                AirlockSandbox(SOCKET, timeout=bad)
        for bad in ("1", True):
            with self.assertRaises(TypeError):
                self.sandbox.run_sync("pass", timeout=bad)


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
