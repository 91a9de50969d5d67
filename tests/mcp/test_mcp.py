"""Tests of `airlock mcp` (libclient/mcp/) against a real airlockd.

Run by meson (suite "mcp") with AIRLOCK_CLI (the built airlock command) and
AIRLOCKD (the built daemon) set. Starts one daemon as root on a private
socket in a temporary directory (sandboxes as user nobody), and drives
`airlock --socket S mcp` as a subprocess, the way an MCP client does:
newline-delimited JSON-RPC 2.0 on its stdin and stdout. Every line the
server writes on stdout is checked to be one JSON-RPC 2.0 message.
Python 3 standard library only.
"""

import base64
import contextlib
import json
import os
import sys
import queue
import re
import shutil
import struct
import subprocess
import tempfile
import time
import unittest


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, uid_range  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import Server, png_is_valid, text_of, tiny_png_code  # noqa: E402


SESSION_RE = re.compile(r"\b[0-9a-f]{32}\b")

_daemon = None
SOCKET = None
CLI = None


def setUpModule() -> None:
    global _daemon, SOCKET, CLI
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    CLI = os.environ.get("AIRLOCK_CLI") or shutil.which("airlock")
    binary = os.environ.get("AIRLOCKD") or shutil.which("airlockd")
    if not binary or not CLI:
        raise unittest.SkipTest("no airlockd or airlock (set AIRLOCKD and AIRLOCK_CLI)")
    # "locked": both switches off and an advisory import check (issue 17).
    # The last SMALL_UIDS uids of the range are the one-slot daemon's
    # (test_idle_interpreter_holds_no_slot): two daemons never share a uid.
    base, count = uid_range()
    _daemon = Daemon(
        binary,
        "[profile locked]\nfile_write = false\nsubprocess = false\nblocked_imports = ctypes\nhidden_paths = /usr/share/doc\n"
        # A Python by its program and a shell by its: not by their names (issue 32).
        "[runtime py3x]\nargv = /usr/bin/python3 -I -B {code}\ncode_name = main.py\nprestart = false\n"
        "[runtime python-sh]\nargv = /bin/sh {code}\ncode_name = main.sh\n",
        prefix="airlock-mcp-",
        debug=True,
        uids=(base, count - SMALL_UIDS),
    )
    SOCKET = _daemon.sock
    _daemon.start()


# uids of the second daemon some tests start (its uid_count).
SMALL_UIDS = 64


def tearDownModule() -> None:
    if _daemon is not None:
        _daemon.remove()


# The client of test_killed_client_leaves_nothing_running: starts `airlock
# mcp` as its child, opens a session, starts a long run in it, prints the
# server's pid and the session once the daemon runs it, then waits to be killed.
KILLED_CLIENT = r"""
import json, subprocess, sys, time
cli, sock = sys.argv[1], sys.argv[2]
p = subprocess.Popen([cli, "--socket", sock, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def wait(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "k", "version": "1"}}})
wait(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "session_open", "arguments": {}}})
sid = wait(2)["result"]["structuredContent"]["session"]
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "run_python", "arguments": {"code": "import time; time.sleep(60)", "session": sid}}})
send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "run_shell", "arguments": {"command": "sleep 60"}}})
deadline = time.monotonic() + 30
while subprocess.run([cli, "--socket", sock, "ps"], capture_output=True).stdout.count(b"running") < 2:
    if time.monotonic() > deadline:
        sys.exit("the runs did not start within 30 s")
    time.sleep(0.05)
print(p.pid, sid, flush=True)
time.sleep(120)
"""


class McpTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = Server(SOCKET)

    def tearDown(self) -> None:
        server, self.server = self.server, None
        log = server.log()
        rc = server.close()
        self.assertEqual(server.bad, [], "stdout carried something that is not a JSON-RPC 2.0 line")
        self.assertEqual(rc, 0, log)

    def run_python(self, code: str, **kw) -> dict:
        return self.server.tool("run_python", dict(code=code, **kw))

    # ---- protocol ----

    def test_initialize_and_versions(self) -> None:
        reply = self.server.initialize("2025-06-18")["result"]
        self.assertEqual(reply["protocolVersion"], "2025-06-18")
        self.assertEqual(reply["capabilities"], {"tools": {"listChanged": False}, "resources": {}})
        self.assertEqual(reply["serverInfo"]["name"], "airlock")
        self.assertIsInstance(reply["serverInfo"]["version"], str)
        # A second initialize is refused.
        again = self.server.wait(self.server.request("initialize", {"protocolVersion": "2025-06-18"}))
        self.assertEqual(again["error"]["code"], -32600)
        for asked, got in (
            ("2025-11-25", "2025-11-25"),
            ("2025-03-26", "2025-03-26"),
            ("2024-11-05", "2024-11-05"),
            ("1999-01-01", "2025-11-25"),
        ):
            other = Server(SOCKET)
            try:
                self.assertEqual(other.initialize(asked)["result"]["protocolVersion"], got)
            finally:
                self.assertEqual(other.close(), 0)
                self.assertEqual(other.bad, [])

    def test_before_initialize(self) -> None:
        reply = self.server.wait(self.server.request("tools/list"))
        self.assertIn("error", reply)
        self.assertIn("initialize", reply["error"]["message"])
        reply = self.server.wait(self.server.request("tools/call", {"name": "run_python", "arguments": {"code": "1"}}))
        self.assertIn("error", reply)
        self.assertEqual(self.server.wait(self.server.request("ping"))["result"], {})

    def test_errors(self) -> None:
        self.server.initialize()
        self.server.send_raw(b"{this is not json\n")
        reply = self.server.wait(None)
        self.assertEqual(reply["error"]["code"], -32700)
        reply = self.server.wait(self.server.request("no/such/method"))
        self.assertEqual(reply["error"]["code"], -32601)
        # An unknown notification gets no answer: the ping's comes next.
        self.server.notify("notifications/whatever")
        self.assertEqual(self.server.wait(self.server.request("ping"))["result"], {})
        bad = [
            {"name": "run_python", "arguments": {}},
            {"name": "run_python", "arguments": {"code": 5}},
            {"name": "run_python", "arguments": {"code": "1", "timeout_seconds": -1}},
            {"name": "run_python", "arguments": {"code": "1", "bogus": 1}},
            {"name": "no_such_tool", "arguments": {}},
            {"name": "read_file", "arguments": {"session": "nope", "path": "x"}},
            {"arguments": {}},
        ]
        for params in bad:
            reply = self.server.wait(self.server.request("tools/call", params))
            self.assertEqual(reply.get("error", {}).get("code"), -32602, params)
        # An id that is neither a string nor an integer is an invalid request.
        self.server.send({"jsonrpc": "2.0", "id": [1], "method": "ping"})
        self.assertEqual(self.server.wait(None)["error"]["code"], -32600)
        # A line too long to parse is answered with its id, found at either end.
        big = "x" * (65 << 20)
        self.server.send_raw(('{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"' + big + '"}}}\n').encode())
        self.assertEqual(self.server.wait(77, timeout=60)["error"]["code"], -32600)
        self.server.send_raw(('{"method":"tools/call","params":{"name":"run_python","arguments":{"code":"' + big + '"}},"jsonrpc":"2.0","id":"sdk-9"}\n').encode())
        self.assertEqual(self.server.wait("sdk-9", timeout=60)["error"]["code"], -32600)
        self.assertEqual(self.server.wait(self.server.request("ping"))["result"], {})

    def test_tool_errors_since_2025_11_25(self) -> None:
        # Bad arguments are a tool error the model can act on, not -32602.
        self.server.initialize("2025-11-25")
        for params in (
            {"name": "run_python", "arguments": {}},
            {"name": "run_python", "arguments": {"code": "1", "cpu_seconds": "x"}},
            {"name": "read_file", "arguments": {"session": "nope", "path": "x"}},
        ):
            reply = self.server.wait(self.server.request("tools/call", params))
            self.assertTrue(reply["result"]["isError"], reply)
            self.assertIn("argument", text_of(reply["result"]))
        reply = self.server.wait(self.server.request("tools/call", {"name": "no_such_tool", "arguments": {}}))
        self.assertEqual(reply["error"]["code"], -32602)

    def test_tools_list(self) -> None:
        self.server.initialize()
        tools = self.server.wait(self.server.request("tools/list"))["result"]["tools"]
        names = {t["name"]: t for t in tools}
        for name in ("run_python", "run_python_cell", "reset_python", "run_shell", "session_open", "session_close", "write_file", "read_file", "list_files"):
            self.assertIn(name, names)
            schema = names[name]["inputSchema"]
            self.assertEqual(schema["type"], "object")
            self.assertIn("properties", schema)
            self.assertTrue(names[name]["description"])
        self.assertEqual(names["run_python"]["inputSchema"]["required"], ["code"])
        self.assertIn("timeout_seconds", names["run_python"]["inputSchema"]["properties"])
        self.assertIn("session", names["run_shell"]["inputSchema"]["properties"])
        self.assertEqual(set(names["write_file"]["inputSchema"]["required"]), {"session", "path", "content"})

    def test_profiles(self) -> None:
        # The schema's enum is the caller's profiles from the daemon's info.
        self.server.initialize()
        tools = self.server.wait(self.server.request("tools/list"))["result"]["tools"]
        names = {t["name"]: t for t in tools}
        # Issue 30, point 3: run_python_cell and session_open take one too.
        for name in ("run_python", "run_shell", "run_python_cell", "session_open"):
            prop = names[name]["inputSchema"]["properties"]["profile"]
            self.assertEqual(prop["type"], "string")
            self.assertEqual(set(prop["enum"]), {"minimal", "standard", "generous", "default", "locked"})
            self.assertIn("default: default", prop["description"])
            # Each profile with its switches, not only its limits.
            self.assertIn(
                "'locked': 10 s wall, 256 MiB memory, 64 processes; file_write off (workspace and /tmp "
                "read-only: output only through stdout and stderr); subprocess off (one process: fork, "
                "threads and exec fail); no network; not there in its runs: /usr/share/doc; imports of these are "
                "reported, not blocked: ctypes.",
                prop["description"],
            )
            self.assertIn("'minimal': 30 s wall, 128 MiB memory, 16 processes; file_write on; subprocess on; no network.", prop["description"])
        self.assertIn("runtime", names["run_python_cell"]["inputSchema"]["properties"])
        # minimal's 128 MiB ends a run allocating 200 MiB; generous lets it finish.
        code = "x = bytearray(200 * 2**20)\nx[::4096] = b'1' * len(x[::4096])\nprint('survived')"
        result = self.run_python(code, profile="minimal")
        self.assertTrue(result["isError"])
        self.assertEqual(result["structuredContent"]["outcome"], "memory_limit")
        result = self.run_python(code, profile="generous", timeout_seconds=20)
        self.assertFalse(result["isError"], text_of(result))
        self.assertIn("survived", text_of(result))
        # Unknown, badly named, and loosened: errors naming them.
        result = self.run_python("print(1)", profile="nope")
        self.assertTrue(result["isError"])
        self.assertIn("profile 'nope' does not exist", text_of(result))
        result = self.run_python("print(1)", profile="minimal", memory_mb=1024)
        self.assertTrue(result["isError"])
        self.assertIn("profile 'minimal'", text_of(result))
        # blocked_imports: reported with the result, the run not refused.
        result = self.run_python("import ctypes\nprint(ctypes.c_int(3).value)", profile="locked")
        self.assertFalse(result["isError"], text_of(result))
        self.assertEqual(result["structuredContent"]["advisories"], ["blocked import: ctypes (line 1)"])
        self.assertIn("advisory (not enforced): blocked import: ctypes (line 1)", text_of(result))
        self.assertIn("3", result["structuredContent"]["stdout"])
        self.assertNotIn("advisories", self.run_python("import ctypes")["structuredContent"])
        rid = self.server.request("tools/call", {"name": "run_python", "arguments": {"code": "1", "profile": "Bad"}})
        reply = self.server.wait(rid)
        text = json.dumps(reply)
        self.assertIn("argument 'profile' must be a profile name", text)

    # ---- runs ----

    def test_run_python_output(self) -> None:
        self.server.initialize()
        result = self.run_python("import sys\nprint('hello', 6 * 7)\nprint('oops', file=sys.stderr)\n")
        self.assertFalse(result["isError"])
        text = text_of(result)
        self.assertIn("exit code 0", text)
        self.assertIn("hello 42", text)
        self.assertIn("oops", text)
        # A non-zero exit is a result, not an error.
        result = self.run_python("raise SystemExit(3)")
        self.assertFalse(result["isError"])
        self.assertIn("exit code 3", text_of(result))
        result = self.run_python("1/0")
        self.assertFalse(result["isError"])
        self.assertIn("ZeroDivisionError", text_of(result))
        # Input files, and run_shell.
        result = self.run_python("print(open('in.txt').read().upper())", files={"in.txt": "abc"})
        self.assertIn("ABC", text_of(result))
        # 500 input files in one call (one request, a file bundle on the wire).
        many = {f"d{i % 10}/f{i:03}.txt": f"content {i}\n" * (i % 5 + 1) for i in range(500)}
        code = (
            "import os\n"
            "bad = [i for i in range(500) if open('d%d/f%03d.txt' % (i % 10, i)).read() != 'content %d\\n' % i * (i % 5 + 1)]\n"
            "print('files', sum(len(f) for _, _, f in os.walk('.')), 'bad', bad)\n"
        )
        result = self.run_python(code, files=many)
        self.assertFalse(result["isError"], text_of(result))
        self.assertIn("files 500 bad []", text_of(result))
        result = self.run_python("1", files={"a\nb": "x"})
        self.assertTrue(result["isError"])
        self.assertIn("without control characters", text_of(result))
        result = self.server.tool("run_shell", {"command": "echo shell-$((2+3)); exit 4"})
        self.assertFalse(result["isError"])
        self.assertIn("shell-5", text_of(result))
        self.assertIn("exit code 4", text_of(result))

    def test_output_truncated(self) -> None:
        self.server.initialize()
        result = self.run_python("print('a' * 50000 + 'b' * 50000 + 'THE END', end='')")
        text = text_of(result)
        # The head and the tail, the middle cut, within the output budget.
        self.assertRegex(text, r"\[\.\.\. \d+ bytes cut \.\.\.\]")
        self.assertTrue(text.endswith("THE END"))
        self.assertLess(len(json.dumps(result["content"])), 41000)
        # Invalid UTF-8 does not break the JSON: it becomes U+FFFD.
        result = self.run_python("import sys; sys.stdout.buffer.write(b'a\\xffb\\x00c')")
        self.assertIn("a\ufffdb\ufffdc", text_of(result))

    def test_wall_limit(self) -> None:
        self.server.initialize()
        t0 = time.monotonic()
        result = self.run_python("import time\nprint('before', flush=True)\ntime.sleep(30)\n", timeout_seconds=1)
        self.assertLess(time.monotonic() - t0, 15)
        self.assertTrue(result["isError"])
        text = text_of(result)
        self.assertIn("wall-clock limit of 1 s exceeded", text)
        self.assertIn("before", text)
        # A killed run has no exit code.
        self.assertEqual(result["structuredContent"]["outcome"], "wall_limit")
        self.assertIsNone(result["structuredContent"]["exit_code"])

    def test_python_runtime(self) -> None:
        # run_python's runtime: the argument, else --python-runtime, else python.
        self.server.initialize("2025-11-25")
        code = "import sys\nprint(sys.flags.no_site)\n"
        self.assertIn("1", text_of(self.run_python(code)).split("stdout:")[-1])
        result = self.run_python(code, runtime="python-site")
        self.assertFalse(result["isError"], text_of(result))
        self.assertIn("0", text_of(result).split("stdout:")[-1])
        result = self.run_python(code, runtime="sh")
        self.assertTrue(result["isError"])
        self.assertIn("not a Python runtime", text_of(result))
        # What a runtime is, not its name: py3x runs, python-sh is refused.
        result = self.run_python(code, runtime="py3x")
        self.assertFalse(result["isError"], text_of(result))
        self.assertIn("0", text_of(result).split("stdout:")[-1])
        result = self.run_python(code, runtime="python-sh")
        self.assertTrue(result["isError"])
        self.assertIn("not a Python runtime", text_of(result))
        other = Server(SOCKET, ["--python-runtime", "python-site"])
        try:
            other.initialize()
            result = other.tool("run_python", {"code": code})
            self.assertIn("0", text_of(result).split("stdout:")[-1])
            if subprocess.run(["/usr/bin/python3", "-c", "import numpy, matplotlib"]).returncode == 0:
                result = other.tool("run_python", {"code": (
                    "import numpy as np, matplotlib.pyplot as plt\n"
                    "plt.plot(np.arange(5)); plt.savefig('p.png')\n")})
                self.assertFalse(result["isError"], text_of(result))
                # The saved file, and the figure left open (a run's
                # figures come back since issue 30).
                images = [b for b in result["content"] if b["type"] == "image"]
                self.assertEqual(len(images), 2, text_of(result))
        finally:
            log = other.log()
            self.assertEqual(other.close(), 0, log)

    def test_non_utf8_name_and_omitted_files(self) -> None:
        self.server.initialize()
        code = (
            "import os\n"
            "open(b'a\\xffb', 'w').write('raw')\n"
            "for i in range(200):\n"
            "    open('f%03d' % i, 'w').write('x')\n"
            "    os.utime('f%03d' % i, (1000, 1000))\n"
        )
        result = self.run_python(code)
        self.assertFalse(result["isError"], text_of(result))
        text = text_of(result)
        # Escaped in the text and the structured list, newest kept first.
        self.assertIn("a\\xffb (3 bytes)", text)
        names = [f["name"] for f in result["structuredContent"]["files"]]
        self.assertIn("a\\xffb", names)
        omitted = result["structuredContent"]["files_omitted"]
        self.assertEqual(omitted, 201 - len(names))
        self.assertGreater(omitted, 0)
        self.assertEqual(result["structuredContent"]["files_omitted_bytes"], omitted)
        self.assertIn(f"{omitted} more files ({omitted} bytes) were left out", text)

    def test_png_artifact(self) -> None:
        self.server.initialize()
        result = self.run_python(tiny_png_code() + "open('notes.txt', 'w').write('some notes')\n")
        self.assertFalse(result["isError"], text_of(result))
        images = [b for b in result["content"] if b["type"] == "image"]
        self.assertEqual(len(images), 1, result["content"])
        self.assertEqual(images[0]["mimeType"], "image/png")
        self.assertTrue(png_is_valid(base64.b64decode(images[0]["data"], validate=True)))
        resources = [b["resource"] for b in result["content"] if b["type"] == "resource"]
        self.assertEqual(
            [(r["uri"], r["mimeType"], r["text"]) for r in resources],
            [("airlock://artifact/notes.txt", "text/plain", "some notes")],
        )
        self.assertIn("plot.png", text_of(result))
        # Binary that is no image comes back as a blob resource.
        result = self.run_python("open('data.bin', 'wb').write(bytes(range(256)))")
        blobs = [b["resource"] for b in result["content"] if b["type"] == "resource"]
        self.assertEqual(len(blobs), 1)
        self.assertEqual(blobs[0]["mimeType"], "application/octet-stream")
        self.assertEqual(base64.b64decode(blobs[0]["blob"]), bytes(range(256)))
        # At most 4 images in one result; the rest are named in notes (a
        # one-shot run's files are gone: no link to them).
        result = self.run_python(tiny_png_code() + "import shutil\nfor i in range(6): shutil.copy('plot.png', f'p{i}.png')\n")
        kinds = [b["type"] for b in result["content"]]
        self.assertEqual(kinds.count("image"), 4)
        self.assertEqual(kinds.count("resource_link"), 0)
        self.assertEqual(sum("not included" in b.get("text", "") for b in result["content"]), 3)

    def test_progress(self) -> None:
        self.server.initialize()
        notes = []
        rid = self.server.request(
            "tools/call",
            {
                "name": "run_python",
                "arguments": {"code": "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.7)\n"},
                "_meta": {"progressToken": "tok-1"},
            },
        )
        reply = self.server.wait(rid, notes=notes)
        self.assertFalse(reply["result"]["isError"])
        progress = [n["params"] for n in notes if n["method"] == "notifications/progress"]
        self.assertGreaterEqual(len(progress), 2, notes)
        self.assertTrue(all(p["progressToken"] == "tok-1" for p in progress))
        values = [p["progress"] for p in progress]
        self.assertEqual(values, sorted(set(values)), "progress must increase")
        self.assertTrue(any("tick" in p.get("message", "") for p in progress), progress)
        # Without a token, no progress.
        notes = []
        rid = self.server.request("tools/call", {"name": "run_python", "arguments": {"code": "import time; time.sleep(1.2)"}})
        self.server.wait(rid, notes=notes)
        self.assertEqual(notes, [])

    def test_cancel(self) -> None:
        self.server.initialize()
        notes = []
        rid = self.server.request(
            "tools/call",
            {
                "name": "run_python",
                "arguments": {"code": "import time\nprint('started', flush=True)\ntime.sleep(60)\n", "timeout_seconds": 60},
                "_meta": {"progressToken": 7},
            },
        )
        # Wait until the code runs (its output comes back as progress).
        deadline = time.monotonic() + 20
        while not any("started" in n["params"].get("message", "") for n in notes):
            self.assertLess(time.monotonic(), deadline, "the run did not start")
            msg = self.server.messages.get(timeout=20)
            self.assertIsNotNone(msg)
            self.assertIn("method", msg, "a response came before the cancel")
            notes.append(msg)
        t0 = time.monotonic()
        self.server.notify("notifications/cancelled", {"requestId": rid, "reason": "test"})
        # The server still answers pings, and never answers the cancelled call.
        pong = self.server.wait(self.server.request("ping"), timeout=10)
        self.assertEqual(pong["result"], {})
        nxt = self.server.request("tools/call", {"name": "run_python", "arguments": {"code": "print('after')"}})
        reply = self.server.wait(nxt, timeout=30)  # raises on a response to rid
        self.assertIn("after", text_of(reply["result"]))
        self.assertLess(time.monotonic() - t0, 20, "the cancelled run was not stopped")
        # The cancelled run ends (it would sleep 60 s): wait for it, within a
        # bound, rather than look once. A look right after the next call's
        # answer found a run still listed as running under load (two suites
        # and a VM on 2 cores), 221 ms after its request.
        deadline = time.monotonic() + 15
        while True:
            ps = subprocess.run([CLI, "--socket", SOCKET, "--json", "ps"], capture_output=True, text=True)
            self.assertEqual(ps.returncode, 0, ps.stderr)
            if "running" not in ps.stdout or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertNotIn("running", ps.stdout, "%s\ndaemon log:\n%s" % (ps.stdout, _daemon.log_tail(20000)))
        # Nothing comes for the cancelled call: a ping's answer is the
        # barrier, not a fixed wait. The daemon sent the run's end to the
        # server before it answered the ps above, so an answer to rid (or a
        # note of it) would reach us before the pong; wait() raises on one.
        late = []
        self.server.wait(self.server.request("ping"), timeout=10, notes=late)
        self.assertEqual(late, [], "something came after the next call's answer")

    def test_cancel_queued(self) -> None:
        # A request cancelled while it waits behind a run is dropped unanswered.
        self.server.initialize()
        first = self.server.request("tools/call", {"name": "run_python", "arguments": {"code": "import time; time.sleep(1.5); print('one')"}})
        second = self.server.request("tools/call", {"name": "run_python", "arguments": {"code": "print('two')"}})
        self.server.notify("notifications/cancelled", {"requestId": second})
        third = self.server.request("ping")
        self.assertEqual(self.server.wait(third)["result"], {})
        self.assertIn("one", text_of(self.server.wait(first)["result"]))
        last = self.server.request("ping")
        self.assertEqual(self.server.wait(last)["result"], {})  # raises if second was answered

    # ---- sessions ----

    def test_python_cells(self) -> None:
        self.server.initialize()
        first = self.server.tool("run_python_cell", {"code": "x = 40\nprint('set')"})
        self.assertFalse(first["isError"], text_of(first))
        self.assertIn("set", text_of(first))
        # Issue 30, point 3: the text names the interpreter's session.
        sid = first["structuredContent"]["session"]
        self.assertRegex(sid, SESSION_RE)
        self.assertIn(f"cell 1 of session {sid} (pass it as \"session\" to read_file", text_of(first))
        self.assertIn("variables kept", text_of(first))
        second = self.server.tool("run_python_cell", {"code": "x + 2"})
        self.assertIn("value:\n42", text_of(second))
        self.assertEqual(second["structuredContent"]["value"], "42")
        self.assertEqual(second["structuredContent"]["state"], "kept")
        stuck = self.server.tool("run_python_cell", {"code": "while True: pass", "timeout_seconds": 1})
        self.assertTrue(stuck["isError"])
        self.assertIn("KeyboardInterrupt", text_of(stuck))
        self.assertIn("value:\n40", text_of(self.server.tool("run_python_cell", {"code": "x"})))
        png = self.server.tool(
            "run_python_cell",
            {"code": tiny_png_code() + "class P:\n    def _repr_png_(self):\n        return png\nP()"},
        )
        images = [b for b in png["content"] if b["type"] == "image"]
        # Two: the file plot.png the cell wrote (a cell's files are its
        # artifacts, issue 30) and the display of P().
        self.assertEqual(len(images), 2, png["content"])
        self.assertIn("files created or changed in the session: plot.png", text_of(png))
        self.assertTrue(png_is_valid(base64.b64decode(images[1]["data"], validate=True)))
        # A cell runs in the server's interpreter only: no other session.
        bad = self.server.wait(
            self.server.request("tools/call", {"name": "run_python_cell", "arguments": {"code": "1", "session": "0" * 32}})
        )
        self.assertIn("unknown argument 'session'", bad["error"]["message"])
        # Issue 31: a cell that ends its interpreter says so; the next
        # one ran in a new interpreter, no second crash.
        crash = self.server.tool("run_python_cell", {"code": "import os\nos._exit(3)"})
        self.assertIn("the interpreter ended during this cell", text_of(crash))
        self.assertTrue(crash["structuredContent"]["restarted"])
        fresh = self.server.tool("run_python_cell", {"code": "1"})
        self.assertFalse(fresh["structuredContent"]["restarted"])
        self.assertIn("the interpreter was restarted: variables of earlier cells", text_of(fresh))
        reset = self.server.tool("reset_python", {})
        self.assertFalse(reset["isError"], text_of(reset))
        after = self.server.tool("run_python_cell", {"code": "x"})
        self.assertIn("NameError", text_of(after))
        self.assertIn("cell 1 of session", text_of(after))
        self.assertEqual(self.run_python("print(6 * 7)")["structuredContent"]["stdout"], "42\n")

    def test_python_cell_runtime_profile_and_display(self) -> None:
        # Issue 30, points 2 and 3: run_python_cell takes the runtime and
        # the profile its interpreter starts with (another one asks for
        # reset_python first: no variables lost silently); the session id
        # and the cell's files can be read with it; display items come
        # back as images or labelled text.
        self.server.initialize()
        code = "import sys\nsys.flags.no_site"
        cell = self.server.tool("run_python_cell", {"code": code, "runtime": "python-site", "profile": "minimal"})
        self.assertFalse(cell["isError"], text_of(cell))
        self.assertEqual(cell["structuredContent"]["value"], "0", text_of(cell))
        sid = cell["structuredContent"]["session"]
        # The profile's 128 MiB (minimal) is the interpreter's.
        big = self.server.tool("run_python_cell", {"code": "b = bytearray(200 << 20)\nb[::4096] = b'1' * len(b[::4096])"})
        self.assertEqual(big["structuredContent"]["outcome"], "memory_limit", text_of(big))
        other = self.server.tool("run_python_cell", {"code": "1", "runtime": "python"})
        self.assertTrue(other["isError"])
        self.assertIn(f"the interpreter (session {sid}) runs runtime 'python-site' with profile 'minimal'; "
                      "call reset_python first", text_of(other))
        other = self.server.tool("run_python_cell", {"code": "1", "profile": "generous"})
        self.assertIn("call reset_python first", text_of(other))
        bad = self.server.wait(self.server.request("tools/call", {"name": "run_python_cell", "arguments": {"code": "1", "runtime": "sh"}}))
        self.assertIn("runtime 'sh' is not a Python runtime", json.dumps(bad))
        wrote = self.server.tool("run_python_cell", {"code": (
            "open('made.txt', 'w').write('by a cell')\n"
            "class M:\n    def _repr_markdown_(self):\n        return '**bold**'\n"
            "    def _repr_svg_(self):\n        return '<svg xmlns=\"http://www.w3.org/2000/svg\"/>'\n"
            "display('shown')\nM()")})
        self.assertFalse(wrote["isError"], text_of(wrote))
        text = text_of(wrote)
        self.assertIn("display 1 (text/plain):\n'shown'", text)
        self.assertIn("display 3 (text/markdown):\n**bold**", text)
        svg = [b for b in wrote["content"] if b["type"] == "resource" and b["resource"]["uri"].endswith("figure-2.svg")]
        self.assertEqual(len(svg), 1, wrote["content"])
        # The files the cell made: in its text and structuredContent.
        self.assertIn("files created or changed in the session: made.txt (9 bytes)", text)
        self.assertEqual(wrote["structuredContent"]["files"], [{"name": "made.txt", "size": 9}])
        read = self.server.tool("read_file", {"session": sid, "path": "made.txt"})
        self.assertIn("by a cell", text_of(read))
        self.assertFalse(self.server.tool("reset_python", {})["isError"])
        # figure_format: svg (matplotlib where the host has it).
        bad = self.server.wait(self.server.request("tools/call", {"name": "run_python_cell", "arguments": {
            "code": "1", "figure_format": "gif"}}))
        self.assertIn("'figure_format' must be", json.dumps(bad))
        if subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode == 0:
            fig = self.server.tool("run_python_cell", {
                "code": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()", "runtime": "python-site",
                "figure_format": "svg", "timeout_seconds": 60, "cpu_seconds": 30})
            svg = [b for b in fig["content"] if b["type"] == "resource" and b["resource"]["uri"].endswith("figure-1.svg")]
            self.assertEqual(len(svg), 1, text_of(fig))
            self.assertIn("<svg", svg[0]["resource"]["text"])
            self.assertFalse(self.server.tool("reset_python", {})["isError"])
        plain = self.server.tool("run_python_cell", {"code": code, "runtime": "python"})
        self.assertEqual(plain["structuredContent"]["value"], "1", text_of(plain))
        self.assertNotEqual(plain["structuredContent"]["session"], sid)
        self.assertFalse(self.server.tool("reset_python", {})["isError"])

    def test_session_profile(self) -> None:
        # Issue 30, point 3: session_open takes a profile; the session's
        # runs are under it (locked: file_write and subprocess off).
        self.server.initialize()
        opened = self.server.tool("session_open", {"profile": "locked"})
        self.assertFalse(opened["isError"], text_of(opened))
        self.assertIn("opened with profile locked", text_of(opened))
        sid = opened["structuredContent"]["session"]
        ran = self.server.tool("run_shell", {"command": "echo hi > x", "session": sid})
        self.assertNotEqual(ran["structuredContent"]["exit_code"], 0, text_of(ran))
        self.assertIn("Read-only file system", text_of(ran))
        bad = self.server.tool("session_open", {"profile": "nope"})
        self.assertTrue(bad["isError"])
        self.assertIn("nope", text_of(bad))
        bad = self.server.wait(self.server.request("tools/call", {"name": "session_open", "arguments": {"profile": "Bad!"}}))
        self.assertIn("argument 'profile' must be a profile name", json.dumps(bad))
        self.assertFalse(self.server.tool("session_close", {"session": sid})["isError"])

    @contextlib.contextmanager
    def one_slot_server(self):
        """A daemon of its own with one run slot (on the test's last
        SMALL_UIDS uids) and an initialized server on it, as (daemon,
        server); the server must close cleanly, and the daemon goes."""
        base, count = uid_range()
        one = Daemon(os.environ.get("AIRLOCKD") or shutil.which("airlockd"), "[daemon]\nmax_runs = 1\n",
                     prefix="airlock-mcp1-", uids=(base + count - SMALL_UIDS, SMALL_UIDS))
        server = None
        try:
            one.start()
            server = Server(one.sock)
            server.initialize()
            yield one, server
        finally:
            if server is not None:
                self.assertEqual(server.close(), 0)
            one.remove()

    def test_idle_interpreter_holds_no_slot(self) -> None:
        # Issue 28: the server's interpreter, waiting for its next cell,
        # held a run slot until the server exited; with one slot, a
        # run_python after a run_python_cell waited for ever.
        with self.one_slot_server() as (one, server):
            cell = server.tool("run_python_cell", {"code": "x = 6 * 7\nx"})
            self.assertEqual(cell["structuredContent"]["value"], "42", text_of(cell))
            t0 = time.monotonic()
            try:
                run = server.tool("run_python", {"code": "print('hi')"}, timeout=20)
            except AssertionError as e:
                raise AssertionError(f"{e}\ndaemon log:\n{one.log_tail()}") from None
            self.assertEqual(run["structuredContent"]["stdout"], "hi\n", one.log_tail())
            print(f"run_python behind an idle MCP interpreter, one slot: {time.monotonic() - t0:.3f} s",
                  file=sys.stderr)
            again = server.tool("run_python_cell", {"code": "x"})
            self.assertEqual(again["structuredContent"]["value"], "42", text_of(again))

    def test_queued_runs_say_waiting_with_place(self) -> None:
        # Issue 32: runs the daemon holds in its queue (one slot here) were
        # reported as "running" in progress notes; they say they wait, and
        # their place in the queue.
        with self.one_slot_server() as (one, server):
            rids = [
                server.request("tools/call", {"name": "run_python", "arguments": {"code": f"import time; time.sleep({t}); print({i})"},
                                              "_meta": {"progressToken": f"q{i}"}})
                for i, t in enumerate((2.5, 0.1, 0.1))
            ]
            notes = []
            for rid in rids:
                reply = server.wait(rid, timeout=30, notes=notes)
                self.assertFalse(reply["result"]["isError"], text_of(reply["result"]) + one.log_tail())
            said = {}
            for n in notes:
                if n["method"] == "notifications/progress":
                    said.setdefault(n["params"]["progressToken"], []).append(n["params"].get("message", ""))
            log = f"{said}\ndaemon log:\n{one.log_tail()}"
            self.assertTrue(any(m.startswith("running for") for m in said.get("q0", [])), log)
            self.assertFalse(any("waiting" in m for m in said.get("q0", [])), log)
            self.assertTrue(any(m.startswith("waiting in airlockd's queue: place 1 ") for m in said.get("q1", [])), log)
            self.assertTrue(any(m.startswith("waiting in airlockd's queue: place 2 ") for m in said.get("q2", [])), log)
            self.assertFalse(any(m.startswith("running") for m in said.get("q1", []) + said.get("q2", [])), log)
            print(f"\nprogress notes with one slot: {said}", file=sys.stderr)

    def test_session_flow(self) -> None:
        self.server.initialize()
        opened = self.server.tool("session_open", {})
        self.assertFalse(opened["isError"])
        match = SESSION_RE.search(text_of(opened))
        self.assertIsNotNone(match, text_of(opened))
        sid = match.group(0)
        wrote = self.server.tool("write_file", {"session": sid, "path": "data/in.txt", "content": "hello session"})
        self.assertFalse(wrote["isError"], text_of(wrote))
        ran = self.run_python(
            "s = open('data/in.txt').read()\nprint(s.upper())\nopen('out.txt', 'w').write(s[::-1])\n",
            session=sid,
        )
        self.assertFalse(ran["isError"], text_of(ran))
        self.assertIn("HELLO SESSION", text_of(ran))
        shell = self.server.tool("run_shell", {"command": "cat out.txt", "session": sid})
        self.assertIn("noisses olleh", text_of(shell))
        read = self.server.tool("read_file", {"session": sid, "path": "out.txt"})
        self.assertFalse(read["isError"])
        self.assertIn("noisses olleh", text_of(read))
        listing = self.server.tool("list_files", {"session": sid})
        self.assertFalse(listing["isError"])
        self.assertIn("out.txt", text_of(listing))
        self.assertRegex(text_of(listing), r"dir\s+\d+\s+data/")
        sub = self.server.tool("list_files", {"session": sid, "path": "data"})
        self.assertIn("in.txt", text_of(sub))
        missing = self.server.tool("read_file", {"session": sid, "path": "nope.txt"})
        self.assertTrue(missing["isError"])
        escape = self.server.tool("read_file", {"session": sid, "path": "../../etc/passwd"})
        self.assertTrue(escape["isError"])
        # Paths the library refuses before sending: empty, or longer than 1024 bytes.
        empty = self.server.tool("write_file", {"session": sid, "path": "", "content": "x"})
        self.assertTrue(empty["isError"])
        self.assertIn("write_file: bad path '': it must be relative, non-empty", text_of(empty))
        long_path = self.server.tool("read_file", {"session": sid, "path": "x" * 1025})
        self.assertTrue(long_path["isError"])
        self.assertIn("read_file: bad path 'xxx", text_of(long_path))
        closed = self.server.tool("session_close", {"session": sid})
        self.assertFalse(closed["isError"], text_of(closed))
        gone = self.server.tool("read_file", {"session": sid, "path": "out.txt"})
        self.assertTrue(gone["isError"])
        self.assertIn("no such", text_of(gone))
        gone = self.run_python("print(1)", session=sid)
        self.assertTrue(gone["isError"])
        self.assertIn("no such session", text_of(gone))

    # ---- the daemon away, and the end ----

    def test_unreachable_daemon(self) -> None:
        away = Server(os.path.join(_daemon.dir, "no-such.sock"))
        try:
            away.initialize()
            t0 = time.monotonic()
            rid = away.request("tools/call", {"name": "run_python", "arguments": {"code": "print(1)"}})
            result = away.wait(rid, timeout=10)["result"]
            self.assertLess(time.monotonic() - t0, 5)
            self.assertTrue(result["isError"])
            self.assertIn("cannot reach airlockd", text_of(result))
            self.assertIn("no-such.sock", text_of(result))
            result = away.wait(away.request("tools/call", {"name": "session_open", "arguments": {}}), timeout=10)["result"]
            self.assertTrue(result["isError"])
        finally:
            self.assertEqual(away.close(), 0)
        self.assertEqual(away.bad, [])

    def test_killed_client_leaves_nothing_running(self) -> None:
        # Issue 32: an MCP client killed with SIGKILL mid-call (its stdin and
        # stdout pipes close with it, and it was the server's parent): within
        # 2 s the server cancels its runs, closes its sessions and exits, so
        # the user's next run starts at once.
        errors = tempfile.TemporaryFile()  # the client's and the server's stderr
        client = subprocess.Popen(
            [sys.executable, "-c", KILLED_CLIENT, CLI, SOCKET],
            stdout=subprocess.PIPE,
            stderr=errors,
        )

        def log() -> str:
            errors.seek(0)
            return errors.read().decode(errors="replace")[-4000:] + "\ndaemon log:\n" + _daemon.log_tail(6000)

        try:
            line = client.stdout.readline()  # "PID SESSION" once the run is running
            self.assertTrue(line, log())
            pid, session = line.decode().split()
            client.kill()
            client.wait()
            t0 = time.monotonic()
            gone = False
            while time.monotonic() - t0 < 2.0:
                try:
                    os.kill(int(pid), 0)
                except ProcessLookupError:
                    gone = True
                    break
                # Not our child: reaped by init; a zombie still answers kill(0).
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().split(") ")[-1].startswith("Z"):
                        gone = True
                        break
                time.sleep(0.05)
            took = time.monotonic() - t0
            self.assertTrue(gone, "airlock mcp still running 2 s after its client was killed\n" + log())
            ps = subprocess.run([CLI, "--socket", SOCKET, "ps"], capture_output=True, text=True, timeout=10)
            self.assertNotIn("running", ps.stdout, "a run outlived the client: " + ps.stdout + log())
            self.assertNotIn("queued", ps.stdout, "a run outlived the client: " + ps.stdout + log())
            ls = subprocess.run([CLI, "--socket", SOCKET, "session", "ls"], capture_output=True, text=True, timeout=10)
            self.assertNotIn(session, ls.stdout, "the session outlived the client\n" + log())
            t1 = time.monotonic()
            nxt = subprocess.run([CLI, "--socket", SOCKET, "run", "-c", "print(7)"], capture_output=True, text=True, timeout=30)
            self.assertEqual(nxt.stdout.strip(), "7", nxt.stderr)
            self.assertLess(time.monotonic() - t1, 10)
            print(f"\nmcp exited {took:.2f} s after its client's SIGKILL", file=sys.stderr)
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
            client.stdout.close()
            errors.close()

    def test_eof_bounds_the_runs_in_flight(self) -> None:
        # Issue 32: stdin's end is the MCP client's "shut down" (the stdio
        # transport); a run still going 1.5 s later is cancelled and the
        # server exits within 2 s, its runs stopped on the daemon.
        self.server.initialize()
        self.server.request("tools/call", {"name": "run_shell", "arguments": {"command": "sleep 30"}})
        deadline = time.monotonic() + 30
        while "running" not in subprocess.run([CLI, "--socket", SOCKET, "ps"], capture_output=True, text=True).stdout:
            self.assertLess(time.monotonic(), deadline, "the run did not start")
            time.sleep(0.05)
        t0 = time.monotonic()
        self.server.proc.stdin.close()
        try:
            rc = self.server.proc.wait(timeout=2.5)
        except subprocess.TimeoutExpired:
            rc = None
        took = time.monotonic() - t0
        self.assertEqual(rc, 0, f"airlock mcp still running {took:.1f} s after stdin ended\n{self.server.log()}")
        self.assertLess(took, 2.0, self.server.log())
        deadline = time.monotonic() + 5
        while "running" in subprocess.run([CLI, "--socket", SOCKET, "ps"], capture_output=True, text=True).stdout:
            self.assertLess(time.monotonic(), deadline, "the run outlived the server")
            time.sleep(0.05)
        print(f"\nmcp exited {took:.2f} s after its stdin ended with a run in flight", file=sys.stderr)

    def test_eof_finishes_queued_work(self) -> None:
        # Like `printf ... | airlock mcp`: stdin ends with a run queued; it is
        # still answered, then the server exits 0.
        self.server.initialize()
        rid = self.server.request("tools/call", {"name": "run_python", "arguments": {"code": "print('last words')"}})
        self.server.proc.stdin.close()
        self.assertIn("last words", text_of(self.server.wait(rid)["result"]))
        self.assertEqual(self.server.proc.wait(timeout=30), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
