"""The kernel: Jupyter's five channels on one side, one Airlock interpreter session on the other.

All ZMQ traffic is on the main thread (ZMQ sockets are not thread-safe); a
cell runs on a worker thread, which only calls the binding and then wakes
the main loop through a pipe, as it does for each chunk of output the cell
streams (docs/design-jupyter.md section 6.3). While a cell runs, shell requests wait in
their queue (as ipykernel serves them, one at a time) and control requests
(interrupt, shutdown, kernel_info) are answered at once.
"""

from __future__ import annotations

import json
import os
import queue
import re
import sys
import threading
import time
import codecs
import codeop
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

import zmq
from jupyter_client.session import Session

import airlock

PROTOCOL_VERSION = "5.3"


def _log(msg: str) -> None:
    """One line on stderr: Jupyter keeps a kernel's stderr as its log."""
    sys.stderr.write("airlock-kernel: %s\n" % msg)
    sys.stderr.flush()


@dataclass
class KernelSettings:
    """What the kernel asks the daemon for: from the kernelspec's env or the environment.

    AIRLOCK_KERNEL_RUNTIME: the interpreter runtime (default: the daemon's
        python runtime that imports the most of numpy, pandas, matplotlib
        and scipy, "python" on a tie: what a notebook user expects);
    AIRLOCK_KERNEL_PROFILE: the daemon profile (default: the daemon's);
    AIRLOCK_KERNEL_WALL_S / _MEMORY_MB: per-cell wall and session memory;
    AIRLOCK_SOCKET: the daemon's socket (the binding's default otherwise).
    """

    runtime: Optional[str] = None
    profile: Optional[str] = None
    socket: Optional[str] = None
    wall_s: Optional[float] = None
    memory_mb: Optional[int] = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "KernelSettings":
        def num(name: str, kind: Any) -> Any:
            raw = env.get(name)
            if raw in (None, ""):
                return None
            try:
                value = kind(raw)
            except ValueError:
                raise SystemExit("airlock-kernel: %s=%r is not a number" % (name, raw))
            if value <= 0:
                raise SystemExit("airlock-kernel: %s must be positive" % name)
            return value

        return cls(
            runtime=env.get("AIRLOCK_KERNEL_RUNTIME") or None,
            profile=env.get("AIRLOCK_KERNEL_PROFILE") or None,
            socket=env.get("AIRLOCK_SOCKET") or None,
            wall_s=num("AIRLOCK_KERNEL_WALL_S", float),
            memory_mb=num("AIRLOCK_KERNEL_MEMORY_MB", int),
        )

    def limits(self, cpu_ceiling_s: Optional[float] = None) -> airlock.SandboxLimits:
        """The session's limits; cpu_ceiling_s: the daemon's CPU ceiling for
        this profile (info()), when known."""
        kw: Dict[str, Any] = {}
        if self.wall_s is not None:
            kw["wall_seconds"] = self.wall_s  # SandboxLimits names it so (was wall_time_s: a TypeError)
            # As MCP's timeout_seconds: a cell allowed to run longer is not
            # stopped by the CPU default first, up to the daemon's ceiling.
            if cpu_ceiling_s is not None:
                kw["cpu_seconds"] = min(self.wall_s, cpu_ceiling_s)
        if self.memory_mb is not None:
            kw["memory_bytes"] = self.memory_mb << 20
        if self.profile is not None:
            kw["profile"] = self.profile
        return airlock.SandboxLimits(**kw)


def _cpu_ceiling_s(info: Mapping[str, Any], profile: Optional[str]) -> Optional[float]:
    """The CPU-time ceiling of the profile (or the daemon's) from info(), in
    seconds; None when the daemon does not say."""
    limits = info.get("limits", {})
    if profile is not None:
        limits = info.get("profiles", {}).get(profile, {}).get("limits", limits)
    ceiling = limits.get("cpu_ms", {}).get("ceiling")
    return ceiling / 1000.0 if ceiling else None


# The dotted name before the cursor, and the rest of a name after it.
_TOKEN = re.compile(r"[A-Za-z_][\w.]*$|$")
_NAME_TAIL = re.compile(r"\w*")

# Helper cells (AirlockKernel.ask): each defines a function, calls it and
# deletes it, so the session's globals keep no name of the kernel's; each
# prints one JSON line. The argument is a dotted name (_TOKEN: letters,
# digits, "_" and "."), written as a JSON string, which Python reads as the
# same string: nothing of the request becomes code.
_COMPLETE = """
def __airlock_complete(text):
    import json, rlcompleter
    completer, found, i = rlcompleter.Completer(globals()), set(), 0
    while i < 1000:
        match = completer.complete(text, i)
        if match is None:
            break
        found.add(match.rstrip("("))
        i += 1
    print(json.dumps(sorted(found)))
try:
    __airlock_complete(%s)
finally:
    del __airlock_complete
"""
_INSPECT = """
def __airlock_inspect(name):
    import inspect, json
    try:
        obj = eval(name, globals())
    except Exception:
        print(json.dumps(""))
        return
    head = name
    try:
        head += str(inspect.signature(obj))
    except (TypeError, ValueError):
        pass
    print(json.dumps("%%s\\ntype: %%s\\n%%s" %% (head, type(obj).__name__, inspect.getdoc(obj) or "")))
try:
    __airlock_inspect(%s)
finally:
    del __airlock_inspect
"""


# The first line of a cell's stderr when the driver was asked for IPython
# and the runtime cannot import it (daemon/frontend/cells/cells.py).
NO_IPYTHON = "airlock: IPython is not importable in this runtime; plain Python\n"


def pick_runtime(info: Mapping[str, Any]) -> str:
    """The python runtime with the most data-science packages; "python" on a tie."""
    pkgs = info.get("runtime_packages") or {}
    best = max(sorted(pkgs), key=lambda name: (len(pkgs[name]), name == "python"), default="python")
    return best if pkgs.get(best) else "python"


@dataclass
class _Cell:
    """A cell on its way: the request it answers and what the worker found."""

    parent: Dict[str, Any]
    idents: List[bytes]
    code: str
    silent: bool
    store_history: bool
    count: int
    result: Any = None
    error: Optional[BaseException] = None
    done: threading.Event = field(default_factory=threading.Event)
    # Streamed output: bytes of each stream sent to iopub, and a decoder
    # each (a chunk may end inside a UTF-8 character).
    sent: Dict[str, int] = field(default_factory=lambda: {"stdout": 0, "stderr": 0})
    decoders: Dict[str, Any] = field(default_factory=lambda: {
        name: codecs.getincrementaldecoder("utf-8")("replace") for name in ("stdout", "stderr")})


class AirlockKernel:
    """One kernel for one connection file."""

    def __init__(self, connection: Mapping[str, Any], settings: KernelSettings) -> None:
        self.conn = dict(connection)
        self.settings = settings
        scheme = self.conn.get("signature_scheme", "hmac-sha256")
        key = self.conn.get("key", "")
        self.session = Session(key=key.encode() if isinstance(key, str) else key, signature_scheme=scheme,
                               username="airlock")
        self.ctx = zmq.Context.instance()
        self.count = 0
        self.cell: Optional[_Cell] = None
        self.wake_r, self.wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.done_q: "queue.Queue[_Cell]" = queue.Queue()
        self.out_q: "queue.Queue[Tuple[_Cell, str, bytes]]" = queue.Queue()  # streamed chunks
        self.stopping = False
        self.ipython = True  # ask cells through IPython until the driver says the runtime has none
        # The last cell's answer said its interpreter ended (restarted): the
        # next one's "lost" state is that restart, already reported.
        self.restart_told = False
        self.sandbox: Optional[airlock.AirlockSandbox] = None
        self.limits: Optional[airlock.SandboxLimits] = None  # the session's, set with the sandbox
        self.asession: Any = None

    # -- sockets -----------------------------------------------------------

    def _url(self, port_key: str) -> str:
        transport = self.conn.get("transport", "tcp")
        ip = self.conn.get("ip", "127.0.0.1")
        port = self.conn[port_key]
        if transport == "ipc":
            return "ipc://%s-%s" % (ip, port)
        return "%s://%s:%d" % (transport, ip, int(port))

    def bind(self) -> None:
        self.shell = self.ctx.socket(zmq.ROUTER)
        self.control = self.ctx.socket(zmq.ROUTER)
        self.stdin = self.ctx.socket(zmq.ROUTER)
        self.iopub = self.ctx.socket(zmq.PUB)
        for sock, key in ((self.shell, "shell_port"), (self.control, "control_port"),
                          (self.stdin, "stdin_port"), (self.iopub, "iopub_port")):
            sock.linger = 1000
            sock.bind(self._url(key))
        hb = threading.Thread(target=self._heartbeat, name="airlock-kernel-hb", daemon=True)
        hb.start()

    def _heartbeat(self) -> None:
        """Echo every ping while the daemon's session lives; a lost daemon stops it (a dead kernel)."""
        sock = self.ctx.socket(zmq.REP)
        sock.linger = 0
        sock.bind(self._url("hb_port"))
        while not self.stopping:
            if sock.poll(200):
                sock.send(sock.recv())

    # -- the daemon side ---------------------------------------------------

    def open_session(self) -> None:
        s = self.settings
        if self.sandbox is None:
            info = self.sandbox_info() if s.runtime is None or s.wall_s is not None else {}
            self.limits = s.limits(_cpu_ceiling_s(info, s.profile))
            self.sandbox = airlock.AirlockSandbox(s.socket, limits=self.limits)
            if s.runtime is None:
                s.runtime = pick_runtime(info)
        self.asession = self.sandbox.session_sync(interpreter=s.runtime, limits=self.limits)
        self.ipython = True
        self.asession.open()
        _log("session %s open (runtime %s, profile %s)" % (self.asession.id, s.runtime, s.profile or "default"))

    def sandbox_info(self) -> Dict[str, Any]:
        """What the daemon offers (runtimes, ceilings), before the sandbox
        with the session's limits exists."""
        return airlock.AirlockSandbox(self.settings.socket).info()

    def close_session(self) -> None:
        if self.asession is not None:
            try:
                self.asession.close()
            except airlock.SandboxError as e:
                _log("closing the session: %s" % e)
            self.asession = None

    def _wake(self) -> None:
        try:
            os.write(self.wake_w, b"x")
        except BlockingIOError:
            pass

    def _work(self, cell: _Cell) -> None:
        def chunk(stream: str, data: bytes) -> None:
            self.out_q.put((cell, stream, data))
            self._wake()

        try:
            # Through IPython (magics, !cmd in the sandbox) when the runtime
            # has it; otherwise the driver runs it plain and its stderr says
            # so: said once, then the session's cells are asked plain.
            cell.result = self.asession.run_cell(cell.code, ipython=self.ipython,
                                                 on_output=None if cell.silent else chunk)
            if cell.result.stderr.startswith(NO_IPYTHON):
                self.ipython = False
        except airlock.SandboxError as e:
            cell.result = getattr(e, "result", None)
            cell.error = e
        except BaseException as e:  # the binding failed: report, never run anything here
            cell.error = e
        cell.done.set()
        self.done_q.put(cell)
        self._wake()

    def stream(self, cell: _Cell, name: str, data: bytes, final: bool = False) -> None:
        """Output of cell on iopub as a Jupyter stream message (as ipykernel
        sends one while a cell runs); data is what was not sent yet."""
        cell.sent[name] += len(data)
        text = cell.decoders[name].decode(data, final)
        if text:
            self.send(self.iopub, "stream", {"name": name, "text": text}, cell.parent)

    # -- messages ----------------------------------------------------------

    def send(self, sock: zmq.Socket, msg_type: str, content: Dict[str, Any], parent: Optional[Dict[str, Any]],
             idents: Optional[List[bytes]] = None) -> None:
        self.session.send(sock, msg_type, content, parent=parent, ident=idents)

    def status(self, state: str, parent: Optional[Dict[str, Any]]) -> None:
        self.send(self.iopub, "status", {"execution_state": state}, parent)

    def kernel_info(self) -> Dict[str, Any]:
        return {
            "status": "ok",
            "protocol_version": PROTOCOL_VERSION,
            "implementation": "airlock",
            "implementation_version": airlock.__version__,
            "language_info": {
                "name": "python",
                "version": "%d.%d.%d" % sys.version_info[:3],
                "mimetype": "text/x-python",
                "file_extension": ".py",
                "pygments_lexer": "ipython3",
                "codemirror_mode": {"name": "ipython", "version": 3},
                "nbconvert_exporter": "python",
            },
            "banner": "Airlock: cells run in a sandbox of airlockd (runtime %s)" % self.settings.runtime,
            "help_links": [],
        }

    def recv(self, sock: zmq.Socket) -> Optional[Tuple[List[bytes], Dict[str, Any]]]:
        """One message, or None when it is malformed or wrongly signed (dropped, logged)."""
        frames = sock.recv_multipart(copy=True)
        try:
            idents, rest = self.session.feed_identities(frames, copy=True)
            msg = self.session.deserialize(rest, content=True, copy=True)
        except Exception as e:  # bad signature, replay, malformed JSON, missing frames
            _log("dropped a message on %s: %s" % ("control" if sock is self.control else "shell", e))
            return None
        if not isinstance(msg.get("content"), dict) or "msg_type" not in msg.get("header", {}):
            _log("dropped a message without content")
            return None
        return idents, msg

    def handle(self, sock: zmq.Socket, idents: List[bytes], msg: Dict[str, Any]) -> None:
        kind = msg["header"]["msg_type"]
        content = msg["content"]
        self.status("busy", msg)
        if kind == "execute_request":
            self.execute(idents, msg)  # busy until the cell ends (finish())
            return
        try:
            if kind == "kernel_info_request":
                self.send(sock, "kernel_info_reply", self.kernel_info(), msg, idents)
            elif kind == "is_complete_request":
                self.send(sock, "is_complete_reply", self.is_complete(str(content.get("code", ""))), msg, idents)
            elif kind == "complete_request":
                self.send(sock, "complete_reply", self.complete(content), msg, idents)
            elif kind == "inspect_request":
                self.send(sock, "inspect_reply", self.inspect(content), msg, idents)
            elif kind == "history_request":
                self.send(sock, "history_reply", {"status": "ok", "history": []}, msg, idents)
            elif kind == "comm_info_request":
                self.send(sock, "comm_info_reply", {"status": "ok", "comms": {}}, msg, idents)
            elif kind == "interrupt_request":
                self.interrupt()
                self.send(sock, "interrupt_reply", {"status": "ok"}, msg, idents)
            elif kind == "shutdown_request":
                restart = bool(content.get("restart", False))
                self.shutdown(restart)
                self.send(sock, "shutdown_reply", {"status": "ok", "restart": restart}, msg, idents)
                if not restart:
                    self.stopping = True
            else:
                _log("unknown request %r: not answered" % kind)
        finally:
            self.status("idle", msg)

    @staticmethod
    def is_complete(code: str) -> Dict[str, Any]:
        """Compiled on the host, never run: codeop tells complete, incomplete or invalid."""
        try:
            compiled = codeop.compile_command(code, "<cell>", "exec")
        except (SyntaxError, OverflowError, ValueError):
            return {"status": "invalid"}
        if compiled is None:
            return {"status": "incomplete", "indent": "    " if code.rstrip().endswith(":") else ""}
        return {"status": "complete"}

    def ask(self, code: str) -> Any:
        """Run a helper cell that prints one JSON line; its answer, or None.

        The question is about the session's globals, which live in the
        sandbox, so it is asked there: a cell the user does not see (no
        execution count, no output, nothing bound to _), whose printed JSON
        is parsed here with json (never evaluated). A cell already running
        has the interpreter: the shell loop does not read requests then.
        """
        try:
            r = self.asession.run_cell(code)
        except airlock.SandboxError as e:
            _log("helper cell: %s" % e)
            return None
        self.restart_told = r.restarted  # a helper's answer is the last one too
        if r.outcome != "exited" or r.exit_code != 0:
            return None
        try:
            return json.loads(r.stdout.strip().split("\n")[-1])
        except (ValueError, IndexError):
            return None

    def complete(self, content: Mapping[str, Any]) -> Dict[str, Any]:
        code = str(content.get("code", ""))
        pos = content.get("cursor_pos")
        pos = len(code) if not isinstance(pos, int) or not 0 <= pos <= len(code) else pos
        token = _TOKEN.search(code[:pos]).group(0)
        matches = self.ask(_COMPLETE % json.dumps(token)) if token else None
        if not isinstance(matches, list) or not all(isinstance(m, str) for m in matches):
            matches = []
        return {"status": "ok", "matches": matches[:200], "cursor_start": pos - len(token), "cursor_end": pos,
                "metadata": {}}

    def inspect(self, content: Mapping[str, Any]) -> Dict[str, Any]:
        code = str(content.get("code", ""))
        pos = content.get("cursor_pos")
        pos = len(code) if not isinstance(pos, int) or not 0 <= pos <= len(code) else pos
        name = _TOKEN.search(code[:pos]).group(0) + _NAME_TAIL.match(code[pos:]).group(0)
        text = self.ask(_INSPECT % json.dumps(name.strip("."))) if name.strip(".") else None
        if not isinstance(text, str) or not text:
            return {"status": "ok", "found": False, "data": {}, "metadata": {}}
        return {"status": "ok", "found": True, "data": {"text/plain": text}, "metadata": {}}

    def execute(self, idents: List[bytes], msg: Dict[str, Any]) -> None:
        content = msg["content"]
        code = str(content.get("code", ""))
        silent = bool(content.get("silent", False))
        store = bool(content.get("store_history", not silent)) and not silent
        if store:
            self.count += 1
        cell = _Cell(parent=msg, idents=idents, code=code, silent=silent, store_history=store, count=self.count)
        if not silent:
            self.send(self.iopub, "execute_input", {"code": code, "execution_count": self.count}, msg)
        self.cell = cell
        threading.Thread(target=self._work, args=(cell,), name="airlock-kernel-cell", daemon=True).start()

    def interrupt(self) -> None:
        """The running cell's interrupt: KeyboardInterrupt in it, its state kept (the binding's interrupt()).

        The worker may not have handed the cell to the binding yet (an
        interrupt right after execute_request): asked again for up to 1 s.
        """
        s = self.asession
        if self.cell is None or s is None or not hasattr(s, "interrupt"):
            return
        deadline = time.monotonic() + 1.0
        while self.cell is not None and not self.cell.done.is_set():
            try:
                s.interrupt()
                return
            except airlock.SandboxError as e:
                if time.monotonic() > deadline:
                    _log("interrupt: %s" % e)
                    return
            time.sleep(0.01)

    def shutdown(self, restart: bool) -> None:
        self.close_session()
        if restart:
            self.count = 0
            self.open_session()

    def drain_output(self) -> None:
        """Send the chunks the worker queued. Before any cell's end: the
        worker queues every chunk of a cell before the cell itself."""
        while True:
            try:
                self.stream(*self.out_q.get_nowait())
            except queue.Empty:
                return

    def finish(self, cell: _Cell) -> None:
        """Publish a cell's outputs and answer its request."""
        self.drain_output()
        self.cell = None
        parent = cell.parent
        r = cell.result
        reply: Dict[str, Any] = {"status": "ok", "execution_count": cell.count, "user_expressions": {},
                                 "payload": []}
        error: Optional[Tuple[str, str, List[str]]] = None
        if r is None:
            e = cell.error
            error = (type(e).__name__ if e else "Error", str(e) if e else "no answer", [])
            _log("cell %d: %s" % (cell.count, error[1]))
            if isinstance(e, airlock.SandboxUnavailableError):
                self.stopping = True  # the daemon is gone: a dead kernel, never code on the host
        else:
            # What the daemon says (docs/design-jupyter.md section 5): the
            # exception as fields, and whether the interpreter ended in
            # this cell (restarted) or before it (lost, not restarted).
            if r.ename is not None:
                error = (r.ename, r.evalue or "", list(r.traceback or ()))
            elif r.restarted:
                error = ("DeadKernelError", "the interpreter ended (%s): its state is lost" % r.outcome, [])
            elif r.outcome in ("cancelled", "wall_limit", "cpu_limit"):
                error = ("KeyboardInterrupt", "", ["KeyboardInterrupt"])
            if not cell.silent:
                self.publish(cell, r, error is None)
            if r.restarted:
                self.status("restarting", parent)  # as ipykernel's nanny after a dead kernel
                self.count = 0
            elif r.state == "lost" and not self.restart_told and not cell.silent:
                # Restarted between cells (a reload, a daemon restart, an
                # end while idle): it ran, in an empty namespace; say so.
                self.status("restarting", parent)
                self.send(self.iopub, "stream", {"name": "stderr", "text": "[the interpreter was restarted: "
                                                 "earlier state is lost%s]\n" % _why(r)}, parent)
            self.restart_told = r.restarted
        if error is not None:
            ename, evalue, tb = error
            if not cell.silent:
                self.send(self.iopub, "error", {"ename": ename, "evalue": evalue, "traceback": tb}, parent)
            reply.update(status="error", ename=ename, evalue=evalue, traceback=tb)
        self.send(self.shell, "execute_reply", reply, parent, cell.idents)
        self.status("idle", parent)

    def publish(self, cell: _Cell, r: Any, with_result: bool) -> None:
        """A cell's output on iopub: the tail of each stream not streamed
        yet, its displays, and its value as execute_result."""
        for name, raw in (("stdout", r.stdout_bytes), ("stderr", r.stderr_bytes)):
            self.stream(cell, name, raw[cell.sent[name]:], final=True)
        # The value's representations (display items flagged value) join
        # its text/plain in one execute_result, as ipykernel's.
        bundle = {"text/plain": r.value} if r.value is not None else {}
        for item in r.display:
            if getattr(item, "value", False) and r.value is not None:
                bundle[item.mime] = _mime_data(item.mime, item.data)
                continue
            self.send(self.iopub, "display_data", {"data": {item.mime: _mime_data(item.mime, item.data)},
                                                   "metadata": {}, "transient": {}}, cell.parent)
        if r.value is not None and with_result:
            self.send(self.iopub, "execute_result", {"execution_count": cell.count,
                                                     "data": bundle, "metadata": {}}, cell.parent)

    # -- the loop ----------------------------------------------------------

    def serve(self) -> int:
        poller = zmq.Poller()
        poller.register(self.control, zmq.POLLIN)
        poller.register(self.shell, zmq.POLLIN)
        poller.register(self.wake_r, zmq.POLLIN)
        self.status("starting", None)
        while not self.stopping:
            events = dict(poller.poll(500))
            if self.wake_r in events:
                try:
                    os.read(self.wake_r, 64)
                except BlockingIOError:
                    pass
                self.drain_output()
                while True:
                    try:
                        self.finish(self.done_q.get_nowait())
                    except queue.Empty:
                        break
            if self.control in events:
                got = self.recv(self.control)
                if got:
                    self.handle(self.control, *got)
            # Shell requests wait while a cell runs: one at a time, in order.
            if self.cell is None and self.shell in events:
                got = self.recv(self.shell)
                if got:
                    self.handle(self.shell, *got)
        self.close_session()
        time.sleep(0.1)  # let iopub flush the last status
        return 0


def _why(r: Any) -> str:
    return ": " + "; ".join(r.advisories) if r.advisories else ""


def _mime_data(mime: str, data: bytes) -> Any:
    """Jupyter's JSON form: text as text, JSON as JSON, images base64."""
    if mime == "application/json":
        try:
            return json.loads(data)
        except ValueError:
            return {}
    if mime.startswith("text/") or mime == "image/svg+xml":
        return data.decode("utf-8", "replace")
    import base64

    return base64.b64encode(data).decode("ascii")


def load_connection(path: str) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        conn = json.load(f)
    for key in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"):
        if key not in conn:
            raise SystemExit("airlock-kernel: %s has no %s" % (path, key))
    return conn
