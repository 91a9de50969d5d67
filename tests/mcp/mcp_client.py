"""The harness of tests/mcp/test_mcp.py: one `airlock mcp` process driven as
an MCP client drives it (newline-delimited JSON-RPC 2.0 on its stdin and
stdout, every stdout line checked to be one message), and the PNG helpers
its figure tests use. Python 3 standard library only."""

import json
import os
import queue
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import zlib

# The airlock command (AIRLOCK_CLI, set by meson; or the one on PATH).
CLI = os.environ.get("AIRLOCK_CLI") or shutil.which("airlock")


def tiny_png_code() -> str:
    """Python source that writes a valid 2x2 red PNG to plot.png (zlib + struct only)."""
    return (
        "import struct, zlib\n"
        "def chunk(kind, data):\n"
        "    c = struct.pack('>I', len(data)) + kind + data\n"
        "    return c + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)\n"
        "raw = b''.join(b'\\x00' + b'\\xff\\x00\\x00' * 2 for _ in range(2))\n"
        "png = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 2, 2, 8, 2, 0, 0, 0))\n"
        "       + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))\n"
        "open('plot.png', 'wb').write(png)\n"
        "print('wrote', len(png), 'bytes')\n"
    )


def png_is_valid(data: bytes) -> bool:
    """Walk the PNG's chunks and check each CRC and the image data."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    off, idat, kinds = 8, b"", []
    while off < len(data):
        (n,) = struct.unpack(">I", data[off : off + 4])
        kind, body = data[off + 4 : off + 8], data[off + 8 : off + 8 + n]
        (crc,) = struct.unpack(">I", data[off + 8 + n : off + 12 + n])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            return False
        kinds.append(kind)
        if kind == b"IDAT":
            idat += body
        off += 12 + n
    return kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and len(zlib.decompress(idat)) == 2 * 7


class Server:
    """One `airlock mcp` process and a thread reading its stdout."""

    def __init__(self, socket_path: str, options=()):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [CLI, "--socket", socket_path, "mcp", *options],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.lines = []  # every stdout line, raw
        self.bad = []  # stdout lines that are not one JSON-RPC 2.0 message
        self.messages = queue.Queue()
        self.next_id = 100
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            self.lines.append(raw)
            try:
                msg = json.loads(raw)
                ok = (
                    raw.endswith(b"\n")
                    and isinstance(msg, dict)
                    and msg.get("jsonrpc") == "2.0"
                    and (("id" in msg and ("result" in msg) != ("error" in msg)) or "method" in msg)
                )
            except ValueError:
                ok = False
            if not ok:
                self.bad.append(raw)
                continue
            self.messages.put(msg)
        self.messages.put(None)

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: dict) -> None:
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def request(self, method: str, params=None, rid=None):
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def notify(self, method: str, params=None) -> None:
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def wait(self, rid, timeout: float = 30, notes=None) -> dict:
        """The response to rid; notifications seen meanwhile go to notes."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no response to {rid!r} within {timeout} s; stderr:\n{self.log()}")
            try:
                msg = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if msg is None:
                raise AssertionError(f"server closed stdout waiting for {rid!r}; stderr:\n{self.log()}")
            if "method" in msg:
                if notes is not None:
                    notes.append(msg)
                continue
            if msg.get("id") == rid:
                return msg
            raise AssertionError(f"unexpected response {msg!r} while waiting for {rid!r}")

    def call(self, rid, timeout: float = 30, notes=None) -> dict:
        return self.wait(rid, timeout, notes)

    def tool(self, name: str, arguments: dict, timeout: float = 60, meta=None) -> dict:
        params = {"name": name, "arguments": arguments}
        if meta is not None:
            params["_meta"] = meta
        rid = self.request("tools/call", params)
        reply = self.wait(rid, timeout)
        if "error" in reply:
            raise AssertionError(f"{name}: JSON-RPC error {reply['error']!r}")
        return reply["result"]

    def initialize(self, version: str = "2025-06-18") -> dict:
        rid = self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test_mcp", "version": "1"}},
        )
        reply = self.wait(rid)
        self.notify("notifications/initialized")
        return reply

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-4000:]

    def close(self) -> int:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("airlock mcp did not exit when its stdin closed")
        self.reader.join(timeout=10)
        self.proc.stdout.close()
        self.stderr.close()
        return rc


def text_of(result: dict) -> str:
    return "\n".join(b["text"] for b in result["content"] if b["type"] == "text")
