"""AirlockSandbox: runs code in airlockd's single-use sandboxes through libairlock."""

from __future__ import annotations

import asyncio
import collections
import ctypes
import errno as _errno
import inspect
import os
import select
import threading
import weakref
from typing import Any, Awaitable, Callable, Deque, Dict, List, Optional, Tuple, Union

from . import _lib, _lists, _timeout
from ._bridge import ToolSet
from ._request import _c_string, _Request, _run_method, _RunArgs, _strerror
from ._result import _bytes_at, _convert, _convert_info
from ._types import (
    SandboxError,
    SandboxLimits,
    SandboxRequestTimeoutError,
    SandboxResult,
    SandboxUnavailableError,
)

__all__ = ["AirlockSandbox"]

BytesLike = Union[bytes, bytearray, memoryview, str]
PathLike = Union[str, "os.PathLike[str]"]
# on_output(stream, data): stream is "stdout" or "stderr"; may be a coroutine function.
OutputCallback = Callable[[str, bytes], Union[None, Awaitable[None]]]
# libairlock frees what a tool handler answers with free(): it is malloc()ed here.
_libc = ctypes.CDLL(None)
_libc_malloc = _libc.malloc
_libc_malloc.restype = ctypes.c_void_p
_libc_malloc.argtypes = [ctypes.c_size_t]


def _stream_name(stream: int) -> str:
    return "stderr" if stream == _lib.STREAM_STDERR else "stdout"


def _check_on_output(on_output: object) -> None:
    if on_output is not None and not callable(on_output):
        raise TypeError(f"on_output must be callable or None, not {type(on_output).__name__}")


def _require_sessions(lib: ctypes.CDLL, what: str) -> None:
    """Raise when the loaded libairlock predates AIRLOCK_0.3."""
    if not _lib.has_sessions(lib):
        raise SandboxError(f"{what} needs libairlock 0.3 (AIRLOCK_0.3); the loaded library is older")


class _Conn:
    """One libairlock connection. Not thread-safe: each user holds it alone."""

    def __init__(self, lib: ctypes.CDLL, socket: Optional[bytes], timeout: Optional[float] = None) -> None:
        self.lib = lib
        self.timeout = timeout  # the bound of the blocking calls made now (seconds; None: none)
        ptr = ctypes.c_void_p()
        code = ctypes.create_string_buffer(64)
        message = ctypes.create_string_buffer(512)
        ms = _timeout.to_ms(timeout)
        if ms and hasattr(lib, "airlock_connect_timeout"):  # libairlock 0.4
            rc = lib.airlock_connect_timeout(socket, ms, ctypes.byref(ptr), code, len(code), message, len(message))
        else:
            rc = lib.airlock_connect_error(socket, ctypes.byref(ptr), code, len(code), message, len(message))
        if rc == -_errno.ETIMEDOUT and timeout is not None:
            raise SandboxRequestTimeoutError(timeout, "the connection's hello", errno=rc)
        if rc < 0:
            where = socket.decode("utf-8", "replace") if socket else "the default socket"
            if code.value:
                raise SandboxUnavailableError(
                    code.value.decode("utf-8", "replace"), message.value.decode("utf-8", "replace"), errno=rc
                )
            raise SandboxUnavailableError(
                "unreachable", f"cannot connect to airlockd at {where}: {_strerror(rc)}", errno=rc
            )
        self.ptr: Optional[ctypes.c_void_p] = ptr
        self.has_events = _lib.has_sessions(lib)

    def fd(self) -> int:
        """The connection's socket."""
        return int(self.lib.airlock_conn_fd(self.ptr))

    def bound(self, timeout: Optional[float]) -> None:
        """Bound each later blocking call on this connection to timeout seconds
        (None or math.inf: no bound). libairlock cancels a run whose call timed
        out and discards the late answer: the connection stays usable."""
        self.timeout = timeout
        if self.ptr is not None and hasattr(self.lib, "airlock_conn_set_timeout"):  # libairlock 0.4
            self.lib.airlock_conn_set_timeout(self.ptr, _timeout.to_ms(timeout))

    def error(self, rc: int) -> SandboxUnavailableError:
        """The exception for a failed call that returned rc."""
        if rc == -_errno.ETIMEDOUT and self.timeout is not None:
            return SandboxRequestTimeoutError(self.timeout, errno=rc)
        if -rc in _lib.DAEMON_ERRNOS:
            code_p = ctypes.c_char_p()
            msg_p = ctypes.c_char_p()
            if self.lib.airlock_conn_last_error(self.ptr, ctypes.byref(code_p), ctypes.byref(msg_p)) == 0:
                return SandboxUnavailableError(
                    (code_p.value or b"").decode("utf-8", "replace"),
                    (msg_p.value or b"").decode("utf-8", "replace"),
                    errno=rc,
                )
        return SandboxUnavailableError("unreachable", f"connection to airlockd lost: {_strerror(rc)}", errno=rc)

    def alive(self) -> bool:
        """Whether an idle connection is still usable (reads a pending hang-up without blocking)."""
        if self.ptr is None:
            return False
        if hasattr(self.lib, "airlock_conn_check"):  # libairlock 0.4
            return self.lib.airlock_conn_check(self.ptr) == 0
        p = select.poll()
        p.register(self.fd(), select.POLLIN)
        if p.poll(0):
            return self.lib.airlock_conn_process(self.ptr) == 0
        return True

    def close(self) -> None:
        """Free the connection (runs in flight are abandoned; the daemon ends them)."""
        ptr, self.ptr = self.ptr, None
        if ptr is not None:
            self.lib.airlock_conn_free(ptr)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class _Sink:
    """The chunks of one streamed run not yet given to its on_output, and who waits for them."""

    __slots__ = ("chunks", "wakeup")

    def __init__(self) -> None:
        self.chunks: Deque[Tuple[str, bytes]] = collections.deque()
        self.wakeup: Optional[asyncio.Future] = None

    def push(self, stream: str, data: bytes) -> None:
        self.chunks.append((stream, data))
        if self.wakeup is not None and not self.wakeup.done():
            self.wakeup.set_result(None)


class _Channel:
    """The asynchronous connection of one sandbox on one event loop.

    Only ever used from the loop's thread, so the connection is never shared
    between threads. Results are matched to waiting futures by request id.
    """

    def __init__(self, sandbox: "AirlockSandbox", loop: asyncio.AbstractEventLoop) -> None:
        self.sandbox = sandbox
        self.loop = loop
        self.conn: Optional[_Conn] = None
        self.fd = -1
        self.pending: Dict[int, asyncio.Future] = {}
        self.connecting = asyncio.Lock()
        self.finished = 0  # runs of ours that ended, for the busy retry
        self.waiters: List[asyncio.Future] = []
        self.sinks: Dict[int, _Sink] = {}  # streamed runs: request id -> chunks not yet handed out
        self.toolsets: Dict[int, ToolSet] = {}  # runs with tools: request id -> their tools
        self.tool_tasks: Dict[int, set] = {}  # request id -> its calls being answered

    async def ensure(self) -> _Conn:
        """The open connection, connecting first (in a worker thread) when there is none.

        An idle connection the daemon has closed (it restarted) is dropped
        and replaced, even before the loop has seen the hang-up.
        """
        async with self.connecting:
            if self.conn is not None and not self.conn.alive():
                self.broken(SandboxUnavailableError("unreachable", "connection to airlockd lost"))
            if self.conn is None:
                # The call's timeout is read here: the worker thread does not see this task's context.
                seconds = _timeout.current(self.sandbox.timeout)
                conn = await self.loop.run_in_executor(None, self.sandbox._connect, seconds)
                self.conn = conn
                self.fd = conn.fd()
                self.loop.add_reader(self.fd, self.readable)
            return self.conn

    async def run(self, request: _Request, on_output: Optional[OutputCallback] = None) -> SandboxResult:
        """Submit request and wait for its result without blocking the loop.

        A "busy" refusal while runs of ours are in flight on this channel is
        not final: the daemon refused because of our own runs, so the request
        is sent again when one of them has finished (a refused run never
        started, so sending it again cannot run the code twice).

        on_output: called in this task with each chunk of output, in order,
        all before the result is returned (the request must ask for stream
        events). If it raises, the run is cancelled and the exception propagates.
        """
        resent = False
        while True:
            conn = await self.ensure()
            generation = self.finished
            try:
                rid = self.submit(conn, request)
            except SandboxUnavailableError as e:
                # The connection broke under the submit (the daemon restarted
                # since the check): the run was not sent, so sending it once
                # on a new connection cannot run the code twice.
                if e.code != "unreachable" or resent:
                    raise
                resent = True
                continue
            request.rid = rid
            future = self.loop.create_future()
            self.pending[rid] = future
            if request.tools is not None:
                self.toolsets[rid] = request.tools
            sink = None
            if on_output is not None:
                sink = self.sinks[rid] = _Sink()
            # The submit may have read and queued replies while the send buffer was full.
            self.drain()
            try:
                if sink is None:
                    return await future
                return await self.deliver(future, sink, on_output)
            except SandboxUnavailableError as e:
                if e.code != "busy" or not self.pending:
                    raise
            except BaseException:
                # Cancelled, or on_output raised: stop the run if its result has not
                # come (drain() takes it out of pending then; the future itself is
                # cancelled along with an await of it, so its state does not tell).
                if rid in self.pending:
                    self.cancel(rid)
                raise
            finally:
                self.pending.pop(rid, None)
                self.sinks.pop(rid, None)
                self.toolsets.pop(rid, None)
                # Calls still being answered are moot: the run is over.
                for task in self.tool_tasks.pop(rid, ()):
                    task.cancel()
                if future.done() and not future.cancelled():
                    future.exception()  # retrieved: no "never retrieved" warning
            if self.finished == generation:
                waiter = self.loop.create_future()
                self.waiters.append(waiter)
                await waiter

    async def deliver(self, future: asyncio.Future, sink: "_Sink", on_output: OutputCallback) -> SandboxResult:
        """Hand sink's chunks to on_output as they come, then return the run's result.

        Every event of a run comes before its result, and drain() takes events
        before results, so once the future is done its chunks are all in sink.
        """
        while True:
            while sink.chunks:
                stream, data = sink.chunks.popleft()
                ret = on_output(stream, data)
                if inspect.isawaitable(ret):
                    await ret
            if future.done():
                return future.result()
            sink.wakeup = self.loop.create_future()
            await asyncio.wait((future, sink.wakeup), return_when=asyncio.FIRST_COMPLETED)
            sink.wakeup = None

    def submit(self, conn: _Conn, request: _Request) -> int:
        """Send request on conn; its request id."""
        lib = conn.lib
        req = request.build(lib)
        # The wait for room in the send buffer is bounded by this call's
        # timeout, not by whatever an earlier call's cancel left on the channel.
        conn.bound(_timeout.current(self.sandbox.timeout))
        try:
            rid = ctypes.c_uint32()
            rc = lib.airlock_run_submit(conn.ptr, req, ctypes.byref(rid))
        finally:
            lib.airlock_run_req_free(req)
        if rc < 0:
            exc = conn.error(rc)
            if exc.code == "unreachable":
                self.broken(exc)
            raise exc
        return rid.value

    def cancel(self, rid: int) -> None:
        """Ask the daemon to stop run rid, whose awaiting task was cancelled.

        airlock_cancel() is blocking (one round trip to the local daemon);
        the cancelled result, when it comes, is freed by drain().
        """
        conn = self.conn
        if conn is None or self.sandbox._closed or not hasattr(conn.lib, "airlock_cancel"):
            return
        # Bounded like the call being cancelled: a daemon that does not answer
        # (stopped) must not hold the cancelling task, and with it the
        # caller's timeout, for ever.
        conn.bound(_timeout.current(self.sandbox.timeout))
        rc = conn.lib.airlock_cancel(conn.ptr, rid)
        # Replies read during the blocking call are queued but no longer make the fd readable.
        self.drain()
        # A cancel that timed out leaves the connection usable (libairlock
        # discards the late answer); anything else but a daemon refusal broke it.
        if rc < 0 and rc != -_errno.ETIMEDOUT and -rc not in _lib.DAEMON_ERRNOS and self.conn is conn:
            self.broken(conn.error(rc))

    def wake(self) -> None:
        """A run of ours finished: wake the runs waiting to resend after "busy"."""
        self.finished += 1
        waiters, self.waiters = self.waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def readable(self) -> None:
        """The socket is readable: read every reply and hand out finished runs."""
        conn = self.conn
        if conn is None:
            return
        rc = conn.lib.airlock_conn_process(conn.ptr)
        self.drain()
        if rc < 0 and self.conn is conn:
            self.broken(conn.error(rc))

    def drain(self) -> None:
        """Hand every queued stream event to its sink, then every queued result to its future."""
        conn = self.conn
        if conn is not None and conn.has_events:
            self.drain_events(conn)
        while conn is not None and self.conn is conn:
            lib = conn.lib
            rid = ctypes.c_uint32(0)
            res = ctypes.c_void_p()
            rc = lib.airlock_conn_next_result(conn.ptr, ctypes.byref(rid), ctypes.byref(res))
            if rc == -_errno.EAGAIN:
                return
            if rc == 0:
                self.wake()
                future = self.pending.pop(rid.value, None)
                try:
                    if future is not None and not future.done():
                        try:
                            future.set_result(_convert(lib, res))
                        except SandboxError as e:
                            future.set_exception(e)
                finally:
                    lib.airlock_result_free(res)
            elif rid.value != 0:
                # One run was refused; the connection stays usable.
                future = self.pending.pop(rid.value, None)
                if future is not None and not future.done():
                    if rc == -_errno.ENOMEM:
                        future.set_exception(MemoryError("libairlock could not store the result"))
                    else:
                        future.set_exception(conn.error(rc))
            else:
                self.broken(conn.error(rc))
                return

    def drain_events(self, conn: _Conn) -> None:
        """Take every queued stream event (before any result: taking a result drops its run's events)."""
        lib = conn.lib
        while True:
            ev = ctypes.c_void_p()
            rc = lib.airlock_conn_next_event(conn.ptr, ctypes.byref(ev))
            if rc < 0:
                return  # -EAGAIN, or a broken connection that the results loop reports
            try:
                rid = int(lib.airlock_event_request_id(ev))
                if hasattr(lib, "airlock_event_kind") and lib.airlock_event_kind(ev) == _lib.EVENT_TOOL_CALL:
                    self.tool_call(conn, rid, ev)
                    continue
                sink = self.sinks.get(rid)
                if sink is not None:
                    stream = _stream_name(lib.airlock_event_stream(ev))
                    sink.push(stream, _bytes_at(lib.airlock_event_data, ev))
            finally:
                lib.airlock_event_free(ev)

    def tool_call(self, conn: _Conn, rid: int, ev: ctypes.c_void_p) -> None:
        """A call of one of run rid's tools: answered by a task of its own, so
        a slow tool never holds up the loop or the run's other calls."""
        lib = conn.lib
        call = int(lib.airlock_event_tool_call(ev))
        name = (lib.airlock_event_tool_name(ev) or b"").decode("utf-8", "replace")
        args = _bytes_at(lib.airlock_event_data, ev)
        tools = self.toolsets.get(rid)
        if tools is None:
            lib.airlock_tool_fail(conn.ptr, rid, call, b"this run has no tool handlers", False)
            return
        task = self.loop.create_task(self.answer(conn, rid, call, tools, name, args))
        tasks = self.tool_tasks.setdefault(rid, set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def answer(self, conn: _Conn, rid: int, call: int, tools: ToolSet, name: str, args: bytes) -> None:
        """Run the approval hook and the tool, and send the answer (a failure is the code's error)."""
        ok, payload, refused = await tools.handle_async(self.loop, name, args)
        if self.conn is not conn:
            return  # the connection is gone; so is the run
        if ok:
            rc = conn.lib.airlock_tool_reply(conn.ptr, rid, call, payload, len(payload))
        else:
            rc = conn.lib.airlock_tool_fail(conn.ptr, rid, call, payload, refused)
        if rc < 0 and -rc not in _lib.DAEMON_ERRNOS and self.conn is conn:
            self.broken(conn.error(rc))

    def broken(self, exc: SandboxError) -> None:
        """The connection is unusable: fail every waiting run and forget it (the next run reconnects)."""
        self.detach()
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(exc)
        self.wake()

    def detach(self) -> None:
        """Stop watching the socket and free the connection."""
        conn, self.conn = self.conn, None
        if conn is None:
            return
        if not self.loop.is_closed():
            self.loop.remove_reader(self.fd)
        self.fd = -1
        conn.close()

    def close(self) -> None:
        """Close the channel; runs still waiting fail with SandboxError."""
        self.broken(SandboxError("the sandbox was closed"))



class AirlockSandbox:
    """Runs code in airlockd's sandboxes: each run gets a fresh, single-use sandbox.

    socket: the daemon's socket path; None means $AIRLOCK_SOCKET if set, else
        /run/airlock/airlock.sock.
    limits: the SandboxLimits of every run that does not pass its own; None
        means SandboxLimits(): every limit is the daemon's default.
    library: the path of libairlock.so; None means $AIRLOCK_LIBRARY, else the
        installed libairlock.so.0.
    profile: the daemon profile of every run (sets limits.profile; see
        SandboxLimits); None keeps limits' own (by default the daemon's
        default profile).

    Connections are opened lazily on the first run. `await run()` shares one
    connection per event loop, on which any number of runs proceed at once;
    run_sync() takes a connection from a small pool, so threads never share
    one. close() (or `with`/`async with`) frees them.
    """

    def __init__(
        self,
        socket: Optional[PathLike] = None,
        limits: Optional[SandboxLimits] = None,
        library: Optional[PathLike] = None,
        *,
        profile: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> None:
        if limits is None:
            limits = SandboxLimits()
        if not isinstance(limits, SandboxLimits):
            raise TypeError(f"limits must be SandboxLimits or None, not {type(limits).__name__}")
        if profile is not None:
            limits = limits.replace(profile=profile)
        if socket is not None:
            socket = os.fspath(socket)
            if not isinstance(socket, str):
                raise TypeError("socket must be a str path")
        # Every blocking call's and await's bound when the call gives none.
        self.timeout = _timeout.check("timeout", timeout)
        self._lib = _lib.load_library(library)
        self._socket = socket
        self._socket_c = _c_string("socket", socket) if socket is not None else None
        self.limits = limits
        self._lock = threading.Lock()
        self._channels: Dict[asyncio.AbstractEventLoop, _Channel] = {}
        self._idle: List[_Conn] = []
        self._closed = False
        self._sessions: "weakref.WeakSet[Any]" = weakref.WeakSet()  # sessions opened here, for close()

    @property
    def socket(self) -> Optional[str]:
        """The socket path given, or None for the library's default."""
        return self._socket

    def _connect(self, timeout: Optional[float] = None) -> _Conn:
        """Open a new connection (blocking: the hello handshake, bounded by timeout seconds)."""
        if self._closed:
            raise SandboxError("the sandbox is closed")
        return _Conn(self._lib, self._socket_c, timeout)

    def _conn(self) -> _Conn:
        """A pooled (or new) connection bounded by the running call's timeout."""
        seconds = _timeout.current(self.timeout)
        conn = self._take_idle() or self._connect(seconds)
        conn.bound(seconds)
        return conn

    def _channel(self, loop: asyncio.AbstractEventLoop) -> _Channel:
        """This loop's channel, created on first use; channels of closed loops are dropped."""
        with self._lock:
            if self._closed:
                raise SandboxError("the sandbox is closed")
            for other in [l for l in self._channels if l.is_closed()]:
                self._channels.pop(other).detach()
            channel = self._channels.get(loop)
            if channel is None:
                channel = self._channels[loop] = _Channel(self, loop)
            return channel

    @_run_method(mounts=True)
    async def run(self, a: _RunArgs) -> SandboxResult:
        """Run code in a fresh sandbox and return what it did, without blocking the event loop.

        code: the program (str is sent as UTF-8).
        language: the daemon's runtime name ("python", "sh", "bash", "node",
            "exec"; see the daemon's configuration).
        limits: this run's SandboxLimits, replacing the sandbox's as a whole.
        files: input files, name (relative to the workspace) -> bytes or str;
            up to 4096 go in the request itself (libairlock 0.8), more through
            a temporary session.
        env: the run's environment variables (the sandbox inherits none of ours).
        args: extra arguments after the code (the whole argv for "exec").
        stdin: what the code reads on stdin.
        mounts: names of the daemon's read-only [mount]s this run adds to its
            profile's (each must be in the profile's allow_mounts; never a
            host path).
        on_output: on_output(stream, data) with stream "stdout" or "stderr" and
            data the bytes of one chunk, called for the output as the code
            writes it, in order, all before run() returns (only the bytes
            within the output limit are streamed; the result still holds
            them). A coroutine function is awaited, chunk by chunk. If it
            raises, the run is cancelled and the exception propagates.
        tools: functions the code may call, by name (`import airlock_tools`
            in the sandbox: `airlock_tools.search(query="x")`), each with
            keyword arguments that are JSON values, returning a JSON value;
            a coroutine function is awaited, a plain one runs in the loop's
            default executor; each has 30 s. The name, the first paragraph of
            the docstring and a schema from the signature are declared to the
            daemon. An exception becomes an error answer to the code (its
            type and message), never an exception here. Only these names
            reach the caller: the daemon answers any other itself.
        approve: approve(name, args) before each call: True lets it run,
            False refuses it (the code gets the error "refused"), a dict runs
            the tool with those arguments instead; may be a coroutine function.

        Returns a SandboxResult (a non-zero exit is a result). Raises
        SandboxTimeoutError / SandboxMemoryError when a limit killed the run,
        SandboxUnavailableError when the daemon is unreachable or refuses,
        SandboxError when the sandbox itself failed, TypeError/ValueError for
        bad arguments (before anything is sent). Cancelling the await cancels
        the run on the daemon.
        timeout: seconds to wait for the result (None: the sandbox's
            timeout; math.inf: no bound). When it passes, the run is
            cancelled on the daemon and SandboxRequestTimeoutError is raised;
            the sandbox stays usable. A run's own wall limit needs a timeout
            above it.
        """
        request = a.request(self.limits)
        a.attach_tools(request, blocking=False)
        with _timeout.given(a.timeout):
            return await self._run_async(request, a.on_output)

    async def _run_async(self, request: _Request, on_output: Optional[OutputCallback]) -> SandboxResult:
        """_run_unbounded() within the running call's timeout: past it the run
        is cancelled (the cancellation of the await sends the daemon a
        cancel) and SandboxRequestTimeoutError raised."""
        seconds = _timeout.current(self.timeout)
        if _timeout.to_ms(seconds) == 0:
            return await self._run_unbounded(request, on_output)
        try:
            return await asyncio.wait_for(self._run_unbounded(request, on_output), seconds)
        except asyncio.TimeoutError as e:
            if isinstance(e, SandboxRequestTimeoutError):
                raise
            raise SandboxRequestTimeoutError(seconds, "the run") from None

    async def _run_unbounded(self, request: _Request, on_output: Optional[OutputCallback]) -> SandboxResult:
        """Run a checked request on this loop's channel, streamed when on_output is given."""
        _check_on_output(on_output)
        if on_output is not None:
            _require_sessions(self._lib, "on_output")
            request.stream = True
        if len(request.files) > _lib.files_max(self._lib) and request.session is None:
            return await self._run_many_files(request, on_output)
        channel = self._channel(asyncio.get_running_loop())
        return await channel.run(request, on_output)

    async def _run_many_files(self, request: _Request, on_output: Optional[OutputCallback]) -> SandboxResult:
        """A run with more input files than one request carries: the files are
        written into a temporary session, the run runs there, the session is
        closed. The artifacts are the same: files the run created or changed."""
        _require_sessions(self._lib, f"more than {_lib.files_max(self._lib)} files")
        async with self.session(
            workspace_bytes=request.limits.get(_lib.LIMIT_WORKSPACE_BYTES), limits=request.session_limits()
        ) as s:
            for name, content in request.files:
                await s.write_file(name.decode("utf-8", "surrogateescape"), content)
            request.files = []
            request.session = s.id.encode()
            return await self._run_async(request, on_output)

    @_run_method(mounts=True)
    def run_sync(self, a: _RunArgs) -> SandboxResult:
        """Like run(), but blocking; safe to call from several threads at once.

        Each call holds a connection of its own for its duration (taken from a
        pool of idle ones, or opened), so threads never share a connection.
        on_output must be a plain function here; it is called on this thread
        while the run goes on. If it raises, it is not called again and its
        exception is raised once the run has ended (the run is not cancelled).
        tools and approve: as for run(); called on this thread, one call at a
        time (a coroutine function is run to completion with asyncio.run); not
        together with on_output.
        timeout: seconds to wait for the result (None: the sandbox's
        timeout; math.inf: no bound); past it the run is cancelled on the
        daemon and SandboxRequestTimeoutError is raised, the sandbox usable.
        """
        request = a.request(self.limits)
        a.attach_tools(request, blocking=True)
        with _timeout.given(a.timeout):
            return self._run_blocking(request, a.on_output)

    def _run_blocking(self, request: _Request, on_output: Optional[Callable[[str, bytes], None]]) -> SandboxResult:
        """Run a checked request on a pooled connection, streamed when on_output is given."""
        _check_on_output(on_output)
        if on_output is not None:
            _require_sessions(self._lib, "on_output")
        if len(request.files) > _lib.files_max(self._lib) and request.session is None:
            _require_sessions(self._lib, f"more than {_lib.files_max(self._lib)} files")
            with self.session_sync(
                workspace_bytes=request.limits.get(_lib.LIMIT_WORKSPACE_BYTES), limits=request.session_limits()
            ) as s:
                for name, content in request.files:
                    s.write_file(name.decode("utf-8", "surrogateescape"), content)
                request.files = []
                request.session = s.id.encode()
                return self._run_blocking(request, on_output)
        conn = self._conn()
        lib = self._lib
        req = request.build(lib)
        res = ctypes.c_void_p()
        failures: List[BaseException] = []
        try:
            if request.tools is not None:
                rc = self._run_tools_blocking(conn, req, request.tools, res)
            elif on_output is None:
                rc = lib.airlock_run(conn.ptr, req, ctypes.byref(res))
            else:

                def chunk(arg: object, stream: int, buf: int, length: int) -> None:
                    # Runs inside libairlock: nothing may propagate out of here.
                    if failures:
                        return
                    try:
                        ret = on_output(_stream_name(stream), ctypes.string_at(buf, length))
                        if inspect.isawaitable(ret):
                            if inspect.iscoroutine(ret):
                                ret.close()
                            raise TypeError("on_output of a blocking run must not be a coroutine function")
                    except BaseException as e:
                        failures.append(e)

                callback = _lib.STREAM_FN(chunk)
                rc = lib.airlock_run_stream(conn.ptr, req, callback, None, ctypes.byref(res))
        finally:
            lib.airlock_run_req_free(req)
        if rc >= 0 and failures:
            lib.airlock_result_free(res)
            self._give_back(conn)
            raise failures[0]
        self._settle(conn, rc)
        try:
            return _convert(lib, res)
        finally:
            lib.airlock_result_free(res)

    def _run_tools_blocking(self, conn: _Conn, req: ctypes.c_void_p, tools: ToolSet, res: ctypes.c_void_p) -> int:
        """airlock_run_tools() with tools answering each call on this thread."""
        lib = self._lib

        def handler(arg: object, name: bytes, args: int, length: int, ret_json: Any, ret_len: Any) -> int:
            # Runs inside libairlock: nothing may propagate out of here.
            try:
                ok, payload, refused = tools.handle_sync(
                    (name or b"").decode("utf-8", "replace"), ctypes.string_at(args, length)
                )
                buf = _libc_malloc(len(payload) + 1)
                if not buf:
                    return -_errno.ENOMEM
                ctypes.memmove(buf, payload, len(payload))
                ctypes.memset(buf + len(payload), 0, 1)
                ret_json[0] = buf
                ret_len[0] = len(payload)
                if ok:
                    return 0
                return _lib.TOOL_REFUSED if refused else -_errno.EIO
            except BaseException:
                return -_errno.EIO

        callback = _lib.TOOL_FN(handler)
        return lib.airlock_run_tools(conn.ptr, req, callback, None, ctypes.byref(res))

    def ping(self, *, timeout: Optional[float] = None) -> None:
        """Check that the daemon answers (blocking); raises SandboxUnavailableError if not
        (SandboxRequestTimeoutError when it does not answer within timeout seconds)."""
        with _timeout.given(timeout):
            self._ping()

    def _ping(self) -> None:
        conn = self._conn()
        rc = self._lib.airlock_ping(conn.ptr)
        if rc < 0:
            exc = conn.error(rc)
            if isinstance(exc, SandboxRequestTimeoutError):
                self._give_back(conn)  # usable: the late answer is discarded
            else:
                conn.close()
            raise exc
        self._give_back(conn)

    def info(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """What the daemon offers this user (blocking; timeout: as for ping()).

        Returns {"daemon_version": str, "runtimes": [names], "limits":
        {limit name: {"default": int, "ceiling": int}}, "resource_control":
        str or None} with the daemon's limit names and units (wall_ms, cpu_ms,
        memory_bytes, ...); resource_control is what enforces memory,
        processes and cpu: "cgroup2", "cgroup1" or "rlimit" (None: not said).
        "runtime_packages" maps each runtime the daemon looked at (those named
        python...) to the data-science packages it can import, of numpy,
        pandas, matplotlib and scipy, e.g. {"python": [], "python-site":
        ["numpy", "pandas", "matplotlib", "scipy"]}; {} from an older daemon
        or library. "profiles" maps each profile the caller may use to
        {"default": bool (what a run naming none gets), "limits": {limit name:
        {"default": int, "ceiling": int}}}; {} from an older daemon or library.
        "mounts" maps each named read-only mount those profiles and the
        runtimes give or allow to {"target": str (where a run sees it),
        "package": bool (exec allowed)}; the host source is not told; {} from
        a daemon or library before 0.9. "capacity" maps "max_runs",
        "max_runs_per_uid" (run slots: runs and running cells; an idle
        interpreter holds none), "max_interpreters" and
        "max_interpreters_per_uid" (interpreter sessions open at once) to the
        daemon's figures; {} from an older daemon or library.
        """
        with _timeout.given(timeout):
            return self._info()

    def _info(self) -> Dict[str, Any]:
        conn = self._conn()
        lib = self._lib
        info = ctypes.c_void_p()
        rc = lib.airlock_info(conn.ptr, ctypes.byref(info))
        if rc < 0:
            exc = conn.error(rc)
            if isinstance(exc, SandboxRequestTimeoutError):
                self._give_back(conn)  # usable: the late answer is discarded
            else:
                conn.close()
            raise exc
        self._give_back(conn)
        try:
            return _convert_info(lib, info)
        finally:
            lib.airlock_info_free(info)

    def _call(self, call: Callable[[_Conn], int]) -> None:
        """call(conn) on a pooled connection (blocking); raise what a negative return means.

        A daemon refusal raises SandboxUnavailableError with the daemon's code
        (the connection goes back to the pool); a broken connection raises it
        with code "unreachable" (the connection is freed).
        """
        conn = self._conn()
        try:
            rc = call(conn)
        except BaseException:
            conn.close()
            raise
        if rc == -_errno.ENOMEM:
            self._give_back(conn)
            raise MemoryError("libairlock: out of memory")
        self._settle(conn, rc)

    def _settle(self, conn: _Conn, rc: int) -> None:
        """After a call that returned rc on the pooled connection conn: give it
        back, or free it when the daemon is unreachable; raise what a negative
        rc means (conn.error(rc))."""
        if rc < 0:
            exc = conn.error(rc)
            if exc.code == "unreachable":
                conn.close()
            else:
                self._give_back(conn)
            raise exc
        self._give_back(conn)

    def session(
        self,
        *,
        workspace_bytes: Optional[int] = None,
        idle_timeout: Optional[float] = None,
        lifetime: Optional[float] = None,
        limits: Optional[SandboxLimits] = None,
        interpreter: Optional[str] = None,
        background: bool = False,
        archive: Optional[bytes] = None,
        detached: bool = False,
    ) -> "AirlockSession":
        """A session: one workspace on the daemon that outlives each run (for async code).

        Nothing is sent yet: `async with sandbox.session() as s:` (or
        `s = await sandbox.session()`) opens it. See AirlockSession.

        workspace_bytes: size of the workspace (a tmpfs); idle_timeout: end the
        session after this many seconds without a run or file operation;
        lifetime: end it this many seconds after it opened, whatever it does.
        None leaves each at the daemon's default (and a value above the
        daemon's ceiling is refused with SandboxUnavailableError("bad_request")).
        limits: the SandboxLimits of the session's runs that pass none (also
        sent as the session's defaults); None means the sandbox's limits.
        interpreter: "python" keeps one interpreter alive in the session for
        run_cell() (variables stay from cell to cell); such a session runs
        cells and file operations only.
        background: with an interpreter, the processes a cell starts (a
        server, a long job) live on between cells until the session ends, so
        a later cell reaches a server on 127.0.0.1; the daemon's profile must
        allow it (background_processes), else opening raises
        SandboxUnavailableError("unauthorized"). Default False: every process
        a cell started dies at its end.
        archive: bytes of a tar (POSIX ustar) archive, as save() returns one,
        that the workspace starts as; the daemon refuses the whole archive
        (SandboxError, nothing opened) for links, devices, absolute or ".."
        names, or contents past the workspace size.
        detached: the session does not end when this process's connections
        have been gone for the daemon's grace period (as `airlock session
        open` opens them): only close(), its idle timeout and its lifetime
        end it; another process attaches to it by id (libairlock 0.10).
        """
        from ._session import AirlockSession

        return AirlockSession(
            self._session_core(workspace_bytes, idle_timeout, lifetime, limits, interpreter, background, archive,
                               detached)
        )

    def session_sync(
        self,
        *,
        workspace_bytes: Optional[int] = None,
        idle_timeout: Optional[float] = None,
        lifetime: Optional[float] = None,
        limits: Optional[SandboxLimits] = None,
        interpreter: Optional[str] = None,
        background: bool = False,
        archive: Optional[bytes] = None,
        detached: bool = False,
    ) -> "AirlockSessionSync":
        """Like session(), with blocking methods: `with sandbox.session_sync() as s:`. See AirlockSessionSync."""
        from ._session import AirlockSessionSync

        return AirlockSessionSync(
            self._session_core(workspace_bytes, idle_timeout, lifetime, limits, interpreter, background, archive,
                               detached)
        )

    def attach_session(self, session_id: str, *, limits: Optional[SandboxLimits] = None) -> "AirlockSession":
        """An AirlockSession for a session already open (by another object, process or airlock(1)).

        Nothing is checked or sent: if the id is not one of the caller's open
        sessions, its first operation raises SandboxSessionClosedError.
        sandbox.close() does not close it; leaving `async with` or close() does.
        """
        from ._session import AirlockSession, _SessionCore

        _require_sessions(self._lib, "sessions")
        return AirlockSession(_SessionCore.attached(self, session_id, limits))

    def attach_session_sync(self, session_id: str, *, limits: Optional[SandboxLimits] = None) -> "AirlockSessionSync":
        """Like attach_session(), with blocking methods."""
        from ._session import AirlockSessionSync, _SessionCore

        _require_sessions(self._lib, "sessions")
        return AirlockSessionSync(_SessionCore.attached(self, session_id, limits))

    def _session_core(
        self, workspace_bytes: object, idle_timeout: object, lifetime: object, limits: object,
        interpreter: object = None, background: object = False, archive: object = None,
        detached: object = False,
    ) -> Any:
        from ._session import _SessionCore

        _require_sessions(self._lib, "sessions")
        with self._lock:
            if self._closed:
                raise SandboxError("the sandbox is closed")
        core = _SessionCore.new(
            self, workspace_bytes, idle_timeout, lifetime, limits, interpreter, background, archive, detached
        )
        with self._lock:
            self._sessions.add(core)
        return core

    def list_sessions(self, *, timeout: Optional[float] = None) -> "SessionList":
        """The caller's open sessions, on every connection and process (blocking; timeout: as for ping()).

        At most 64 are listed; the list's more says how many are left out.
        """
        _require_sessions(self._lib, "sessions")
        with _timeout.given(timeout):
            return _lists.session_list_blocking(self)

    def ps(self, *, timeout: Optional[float] = None) -> "_lists.RunList":
        """The caller's runs in progress and queued, on every connection and
        process, as `airlock ps` lists them: a RunList of RunInfo (run_id,
        uid, pid, runtime, state, elapsed seconds) with .more (blocking;
        timeout: as for ping()). An administrator such as root sees every
        user's."""
        with _timeout.given(timeout):
            return _lists.ps_blocking(self)

    def _take_idle(self) -> Optional[_Conn]:
        """An idle pooled connection that is still alive, or None."""
        while True:
            with self._lock:
                if self._closed:
                    raise SandboxError("the sandbox is closed")
                if not self._idle:
                    return None
                conn = self._idle.pop()
            if conn.alive():
                return conn
            conn.close()

    def _give_back(self, conn: _Conn) -> None:
        """Return a connection to the pool (or free it when the sandbox is closed)."""
        with self._lock:
            if not self._closed and len(self._idle) < 8:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close the sessions opened through this sandbox, free every connection. Idempotent.

        Runs still awaited fail with SandboxError. Closing a session is one
        blocking round trip to the daemon each.
        """
        with self._lock:
            sessions = [s for s in self._sessions if s.is_open]
        for session in sessions:
            try:
                session.close_blocking()
            except Exception:
                pass  # best effort: the daemon ends it after its idle timeout anyway
        with self._lock:
            self._closed = True
            self._sessions.clear()
            channels = list(self._channels.values())
            self._channels.clear()
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        try:
            current: Optional[asyncio.AbstractEventLoop] = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        for channel in channels:
            loop = channel.loop
            if loop is current or loop.is_closed() or not loop.is_running():
                channel.close()
            else:
                # The loop runs in another thread: close there, where the reader is.
                loop.call_soon_threadsafe(channel.close)

    def __enter__(self) -> "AirlockSandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "AirlockSandbox":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AirlockSandbox(socket={self._socket!r}, limits={self.limits!r})"
