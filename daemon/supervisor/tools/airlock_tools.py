"""Call the tools of the client that started this run (the Airlock tool bridge).

    import airlock_tools
    hits = airlock_tools.call("search", query="x")   # or airlock_tools.search(query="x")

Each call is one JSON line {"id", "tool", "args"} on a connection to
$AIRLOCK_TOOLS (a unix socket); the answer is one line {"id", "ok",
"result"} or {"id", "ok": false, "code", "error"}. A refused, failed or
undeclared call raises ToolError with .code set. Standard library only.
"""
import json
import os
import socket
import threading

__all__ = ["call", "names", "ToolError"]

_PATH = os.environ.get("AIRLOCK_TOOLS", "/run/tools/tools.sock")
names = tuple(n for n in os.environ.get("AIRLOCK_TOOL_NAMES", "").split(",") if n)


class ToolError(Exception):
    """A call that did not give a result: .code is undeclared, refused,
    failed, malformed, too_large, limit, timeout or unavailable."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


_lock = threading.Lock()
_conn = None  # (pid, socket, reader): one connection per process
_next_id = 0


def _connection():
    global _conn
    if _conn is None or _conn[0] != os.getpid():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(_PATH)
        except OSError as e:
            s.close()
            raise ToolError("unavailable", "cannot reach the tool bridge: %s" % e) from None
        _conn = (os.getpid(), s, s.makefile("rb"))
    return _conn


def call(name, /, **args):
    """Call the tool name with keyword arguments; return its result."""
    global _conn, _next_id
    line = json.dumps({"id": 0, "tool": name, "args": args}, allow_nan=False,
                      separators=(",", ":"), ensure_ascii=False)
    with _lock:
        _, s, reader = _connection()
        _next_id += 1
        ident = _next_id
        data = ('{"id":%d' % ident + line[len('{"id":0'):] + "\n").encode()
        try:
            s.sendall(data)
            answer = reader.readline()
        except OSError as e:
            _conn = None
            raise ToolError("unavailable", str(e)) from None
        if not answer.endswith(b"\n"):
            _conn = None
            raise ToolError("unavailable", "the tool bridge closed the connection")
    reply = json.loads(answer)
    if reply.get("ok") is True:
        return reply.get("result")
    raise ToolError(reply.get("code", "failed"), reply.get("error", ""))


def _tool_function(name):
    def tool(**args):
        return call(name, **args)

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = "Call the tool %r of this run's client." % name
    return tool


for _name in names:
    if _name.isidentifier() and not _name.startswith("_") and _name not in globals():
        globals()[_name] = _tool_function(_name)
# No names (AIRLOCK_TOOL_NAMES unset, e.g. by a subprocess that cleared its
# environment): the loop bound nothing, and the module must still import.
globals().pop("_name", None)
