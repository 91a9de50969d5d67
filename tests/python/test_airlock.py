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


HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs", "python.md")

_daemon = None
SOCKET = None


def setUpModule() -> None:
    global _daemon, SOCKET
    _daemon = fx.start(MANY_UIDS)
    SOCKET = _daemon.sock


def tearDownModule() -> None:
    global _daemon
    fx.stop(_daemon)
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
