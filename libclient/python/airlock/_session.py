"""Sessions: one workspace on the daemon that outlives each run (libairlock 0.3)."""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
import errno
import functools
import math
import os
import re
import select
import threading
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Union

from . import _lib, _timeout
from ._lists import fetch_call
from ._request import _Request, _run_method, _RunArgs, _to_bytes, figures_svg
from ._result import _bytes_at, _convert
from ._sandbox import BytesLike, OutputCallback, PathLike, _Conn, _stream_name
from ._types import (
    FileContent,
    FileInfo,
    FileList,
    SandboxError,
    SandboxLimits,
    SandboxNotFoundError,
    SandboxPathError,
    SandboxResult,
    SandboxSessionClosedError,
    SandboxUnavailableError,
)

__all__ = ["AirlockSession", "AirlockSessionSync", "ProcessInfo", "SessionInfo"]

_ID_RE = re.compile(r"[0-9a-f]{32}\Z")
_PATH_MAX = 1024  # bytes of a path, as libairlock checks it


@dataclass(frozen=True)
class SessionInfo:
    """One of the caller's open sessions, as AirlockSandbox.list_sessions() reports it.

    id: the session id; age: seconds since it opened; idle: seconds since its
    last run, cell or file operation; runs: runs (or cells) so far; state:
    "idle" or "running"; interpreter: the runtime of its interpreter for a
    session opened with interpreter=..., else None; background: whether it
    was opened with background=True (its cells' processes live on).
    """

    id: str
    age: float
    idle: float
    runs: int
    state: str
    interpreter: Optional[str] = None
    background: bool = False


@dataclass(frozen=True)
class ProcessInfo:
    """A process a background session keeps (AirlockSession.processes()).

    pid: its pid in the session's sandbox (what os.getpid() says there);
    name: its name (comm, at most 15 characters); cpu: seconds of cpu time
    so far; memory: its resident memory in bytes.
    """

    pid: int
    name: str
    cpu: float
    memory: int


class SessionList(List[SessionInfo]):
    """The list list_sessions() returns, plus more: how many of the caller's
    sessions it leaves out.

    The daemon lists at most 64 sessions (the oldest first) and, since 0.10,
    counts the rest; more is 0 when the list holds them all (or when the
    library or daemon is older and cannot say).
    """

    more: int = 0


def session_list_read(lib: ctypes.CDLL, lst: ctypes.c_void_p, out: SessionList) -> None:
    """Append the sessions of libairlock's list lst to out, and set out.more."""
    has_interp = hasattr(lib, "airlock_session_list_interpreter")  # a library before 0.9 cannot say
    has_bg = hasattr(lib, "airlock_session_list_background")  # nor before 0.10
    for i in range(lib.airlock_session_list_count(lst)):
        name = lib.airlock_session_list_interpreter(lst, i) if has_interp else None
        out.append(
            SessionInfo(
                id=(lib.airlock_session_list_id(lst, i) or b"").decode("ascii", "replace"),
                age=lib.airlock_session_list_age_ms(lst, i) / 1000.0,
                idle=lib.airlock_session_list_idle_ms(lst, i) / 1000.0,
                runs=int(lib.airlock_session_list_runs(lst, i)),
                state=(lib.airlock_session_list_state(lst, i) or b"").decode("ascii", "replace"),
                interpreter=name.decode("ascii", "replace") if name else None,
                background=bool(lib.airlock_session_list_background(lst, i)) if has_bg else False,
            )
        )
    if hasattr(lib, "airlock_session_list_more"):  # a library before 0.10 cannot say
        out.more = int(lib.airlock_session_list_more(lst))


def _path(path: object, *, allow_empty: bool = False) -> bytes:
    """A session path as libairlock takes it; TypeError/ValueError for what it would refuse.

    Only the bounds are checked here. Whether the path stays in the workspace
    is the daemon's decision (it resolves every component without following
    links), never a string check of ours.
    """
    if not isinstance(path, str):
        try:
            path = os.fspath(path)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(f"path must be a str, not {type(path).__name__}") from None
        if not isinstance(path, str):
            raise TypeError(f"path must be a str, not {type(path).__name__}")
    b = path.encode("utf-8")
    if b"\0" in b:
        raise ValueError("path must not contain a NUL character")
    if not b and not allow_empty:
        raise ValueError("path must not be empty")
    if len(b) > _PATH_MAX:
        raise ValueError(f"path must be at most {_PATH_MAX} bytes, not {len(b)}")
    return b


def _seconds_to_ms(name: str, value: object) -> int:
    """A positive duration in seconds as milliseconds (rounded up; 0 would mean "the default")."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds or None, not {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be positive, not {value!r}")
    return max(1, int(math.ceil(value * 1000)))


class _SyncCell:
    """A blocking run_cell in flight: AirlockSessionSync.interrupt(), from any
    thread, wakes it through a pipe (os.pipe: close-on-exec), and the thread
    that runs it sends the cancel on its own connection (a connection is
    never used by two threads)."""

    def __init__(self, on_output: Optional[Callable[[str, bytes], None]] = None) -> None:
        self.r, self.w = os.pipe()
        self.on_output = on_output
        self.failure: Optional[BaseException] = None

    def take_events(self, lib: Any, conn: Any) -> None:
        """Hand the cell's queued stream events to on_output, in order; the
        first exception it raises is kept (raised after the cell's end) and
        it is not called again. Before each result taken: taking a result
        drops its run's events."""
        while self.on_output is not None:
            ev = ctypes.c_void_p()
            if lib.airlock_conn_next_event(conn.ptr, ctypes.byref(ev)) < 0:
                return
            try:
                data = _bytes_at(lib.airlock_event_data, ev)
                if self.failure is None:
                    try:
                        self.on_output(_stream_name(lib.airlock_event_stream(ev)), data)
                    except BaseException as e:  # raised once the cell has ended
                        self.failure = e
            finally:
                lib.airlock_event_free(ev)

    def close(self) -> None:
        os.close(self.r)
        os.close(self.w)


class _SessionCore:
    """The state of one session, shared by its async and blocking faces; thread-safe.

    Every daemon call is blocking on a connection of the sandbox's pool
    (sessions are not tied to a connection); the async face runs them in the
    loop's default executor, except runs, which go on the loop's channel so
    that they can stream without a thread.
    """

    def __init__(self, sandbox: Any, session_id: Optional[str], limits: Optional[SandboxLimits], state: str) -> None:
        self.sandbox = sandbox
        self.id = session_id
        self.limits = limits
        self.state = state  # "new", "open" or "closed"
        self.closed_reason = ""
        self.options = (0, 0, 0)
        self.interpreter: Optional[str] = None  # a session of cells
        self.cells: List[_Request] = []  # run_cell awaits in flight, oldest first
        self.sync_cells: List["_SyncCell"] = []  # blocking run_cell calls in flight (under lock)
        self.background = False  # its cells' processes live on between cells
        self.detached = False  # it outlives its opener's connections
        self.archive: Optional[bytes] = None  # what its workspace starts as
        self.lock = threading.Lock()

    @classmethod
    def new(
        cls, sandbox: Any, workspace_bytes: object, idle_timeout: object, lifetime: object, limits: object,
        interpreter: object = None,
        background: object = False,
        archive: object = None,
        detached: object = False,
    ) -> "_SessionCore":
        if workspace_bytes is not None:
            if isinstance(workspace_bytes, bool) or not isinstance(workspace_bytes, int):
                raise TypeError(f"workspace_bytes must be an int or None, not {type(workspace_bytes).__name__}")
            if workspace_bytes <= 0:
                raise ValueError(f"workspace_bytes must be positive, not {workspace_bytes!r}")
        if limits is not None and not isinstance(limits, SandboxLimits):
            raise TypeError(f"limits must be SandboxLimits or None, not {type(limits).__name__}")
        if interpreter is not None and not isinstance(interpreter, str):
            raise TypeError(f"interpreter must be a str or None, not {type(interpreter).__name__}")
        if not isinstance(background, bool):
            raise TypeError(f"background must be a bool, not {type(background).__name__}")
        if background and interpreter is None:
            raise ValueError('background=True needs an interpreter (interpreter="python")')
        if not isinstance(detached, bool):
            raise TypeError(f"detached must be a bool, not {type(detached).__name__}")
        core = cls(sandbox, None, limits, "new")
        core.interpreter = interpreter
        core.background = background
        core.detached = detached
        if archive is not None and not isinstance(archive, (bytes, bytearray, memoryview)):
            raise TypeError(f"archive must be bytes or None, not {type(archive).__name__}")
        core.archive = bytes(archive) if archive is not None else None
        core.options = (
            workspace_bytes or 0,
            _seconds_to_ms("idle_timeout", idle_timeout),
            _seconds_to_ms("lifetime", lifetime),
        )
        return core

    @classmethod
    def attached(cls, sandbox: Any, session_id: object, limits: object) -> "_SessionCore":
        if not isinstance(session_id, str):
            raise TypeError(f"session_id must be a str, not {type(session_id).__name__}")
        if not _ID_RE.match(session_id):
            raise ValueError(f"a session id is 32 lowercase hex characters, not {session_id!r}")
        if limits is not None and not isinstance(limits, SandboxLimits):
            raise TypeError(f"limits must be SandboxLimits or None, not {type(limits).__name__}")
        return cls(sandbox, session_id, limits, "open")

    @property
    def is_open(self) -> bool:
        return self.state == "open"

    @property
    def run_limits(self) -> SandboxLimits:
        """The limits of a run that passes none: the session's, else the sandbox's."""
        return self.limits if self.limits is not None else self.sandbox.limits

    # ---- state ----------------------------------------------------------

    def check_open(self) -> bytes:
        """The id as bytes when the session is open; raise otherwise."""
        state = self.state
        if state == "new":
            raise SandboxError("the session is not open yet: use `async with`/`with`, or open() it")
        if state == "closed":
            raise SandboxSessionClosedError(self.id, self.closed_reason)
        assert self.id is not None
        return self.id.encode("ascii")

    def gone(self, message: str) -> SandboxSessionClosedError:
        """The daemon no longer has the session: remember it, and the exception to raise."""
        with self.lock:
            if self.state != "closed":
                self.state = "closed"
                self.closed_reason = (
                    "the session is not open: it was closed, it expired (idle timeout or lifetime), "
                    f"the daemon ended it, or it is not one of yours (daemon: {message})"
                )
            return SandboxSessionClosedError(self.id, self.closed_reason)

    def listed(self) -> bool:
        """Whether the daemon still lists the session among the caller's (True when it cannot say)."""
        try:
            return any(info.id == self.id for info in self.sandbox.list_sessions())
        except SandboxError:
            return True

    def learn_interpreter(self) -> None:
        """An attached session's interpreter, from the daemon's listing (blocking, once)."""
        for info in self.sandbox.list_sessions():
            if info.id == self.id:
                if info.interpreter is None:
                    raise SandboxError(f"session {self.id} is not an interpreter session: run_cell needs one")
                self.interpreter = info.interpreter
                return
        raise self.gone("not in the daemon's list of the caller's sessions")

    def file_error(self, exc: SandboxUnavailableError, path: str) -> SandboxError:
        """The exception for a file operation's refusal."""
        if exc.code == "bad_request":
            return SandboxPathError(path, exc.message)
        if exc.code == "not_found":
            # The daemon says not_found both for no such file and for no such
            # session; a listing tells them apart without reading its words.
            if self.listed():
                return SandboxNotFoundError(path, exc.message)
            return self.gone(exc.message)
        return exc

    # ---- open and close -------------------------------------------------

    def open_blocking(self) -> None:
        with self.lock:
            if self.state == "open":
                return
            if self.state == "closed":
                raise SandboxSessionClosedError(self.id, self.closed_reason)
            lib = self.sandbox._lib
            workspace, idle_ms, lifetime_ms = self.options
            limits = self.limits.daemon_limits() if self.limits is not None else {}
            # The session's profile (its limits', else the sandbox's), fixed at open.
            run_limits = self.run_limits
            profile = run_limits.profile.encode("ascii") if run_limits.profile is not None else None
            buf = ctypes.create_string_buffer(_lib.SESSION_ID_LEN + 1)

            def call(conn: _Conn) -> int:
                opts = ctypes.c_void_p()
                rc = lib.airlock_session_opts_new(ctypes.byref(opts))
                if rc < 0:
                    return rc
                try:
                    if workspace:
                        rc = rc or lib.airlock_session_opts_set_workspace_bytes(opts, workspace)
                    if idle_ms:
                        rc = rc or lib.airlock_session_opts_set_idle_timeout_ms(opts, idle_ms)
                    if lifetime_ms:
                        rc = rc or lib.airlock_session_opts_set_lifetime_ms(opts, lifetime_ms)
                    for limit, value in limits.items():
                        rc = rc or lib.airlock_session_opts_set_limit(opts, limit, value)
                    if profile is not None:
                        if not hasattr(lib, "airlock_session_opts_set_profile"):
                            raise SandboxError("profiles need libairlock 0.6 or later")
                        rc = rc or lib.airlock_session_opts_set_profile(opts, profile)
                    if self.interpreter is not None:
                        if not hasattr(lib, "airlock_session_opts_set_interpreter"):
                            raise SandboxError("interpreter sessions need libairlock 0.9 or later")
                        rc = rc or lib.airlock_session_opts_set_interpreter(opts, self.interpreter.encode())
                    if self.background:
                        if not hasattr(lib, "airlock_session_opts_set_background"):
                            raise SandboxError("background processes need libairlock 0.10 or later")
                        rc = rc or lib.airlock_session_opts_set_background(opts, True)
                    if self.detached:
                        if not hasattr(lib, "airlock_session_opts_set_detached"):
                            raise SandboxError("a detached session needs libairlock 0.10 or later")
                        rc = rc or lib.airlock_session_opts_set_detached(opts, True)
                    if self.archive is not None:
                        if not hasattr(lib, "airlock_session_opts_set_archive"):
                            raise SandboxError("a session from an archive needs libairlock 0.10 or later")
                        # The bytes object lives until the open returns (self.archive).
                        rc = rc or lib.airlock_session_opts_set_archive(opts, self.archive, len(self.archive))
                    if rc < 0:
                        raise ValueError(f"session options refused by libairlock: {os.strerror(-rc)}")
                    return lib.airlock_session_open(conn.ptr, opts, buf)
                finally:
                    lib.airlock_session_opts_free(opts)

            self.sandbox._call(call)
            self.id = buf.value.decode("ascii")
            self.state = "open"

    def close_blocking(self) -> None:
        """Close the session (idempotent); one that already ended is not an error."""
        with self.lock:
            if self.state != "open":
                if self.state == "new":
                    self.state = "closed"
                    self.closed_reason = "closed before it was opened"
                return
            lib = self.sandbox._lib
            sid = self.id.encode("ascii") if self.id else b""
            try:
                self.sandbox._call(lambda conn: lib.airlock_session_close(conn.ptr, sid))
            except SandboxUnavailableError as e:
                if e.code != "not_found":
                    raise
            self.state = "closed"
            self.closed_reason = "the session was closed"

    # ---- runs -------------------------------------------------------------

    def request(self, a: _RunArgs) -> _Request:
        request = a.request(self.run_limits)
        request.session = self.check_open()
        return request

    def code_request(self, code: object, language: object, limits: object) -> _Request:
        """A request of code alone (a cell's, a tool's) in this session; limits None: the session's."""
        request = _Request(code, language, self.run_limits if limits is None else limits, None, None, None, None)
        request.session = self.check_open()
        return request

    def cell(self, code: object, limits: object, figures: str = "png", ipython: bool = False) -> _Request:
        svg = figures_svg(figures)
        if self.interpreter is None and self.is_open:
            self.learn_interpreter()
        if self.interpreter is None:
            raise SandboxError("run_cell needs a session opened with interpreter=\"python\"")
        request = self.code_request(code, self.interpreter, limits)
        request.cell = True
        request.figures_svg = svg
        request.ipython = bool(ipython)
        return request

    def run_blocking(self, request: _Request, on_output: Optional[Callable[[str, bytes], None]]) -> SandboxResult:
        try:
            return self.sandbox._run_blocking(request, on_output)
        except SandboxUnavailableError as e:
            if e.code == "not_found":  # a run has no path: it is the session that is gone
                raise self.gone(e.message) from None
            raise

    def cell_blocking(self, request: _Request, cell: _SyncCell) -> SandboxResult:
        """Run the cell request on a pooled connection, waiting for its result
        or for cell's pipe: then a cancel (once), and the wait goes on."""
        sandbox, lib = self.sandbox, self.sandbox._lib
        conn = sandbox._take_idle() or sandbox._connect()
        req = request.build(lib)
        rid, got, res = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_void_p()
        try:
            rc = lib.airlock_run_submit(conn.ptr, req, ctypes.byref(rid))
        finally:
            lib.airlock_run_req_free(req)
        asked = False
        while rc >= 0:
            cell.take_events(lib, conn)
            rc = lib.airlock_conn_next_result(conn.ptr, ctypes.byref(got), ctypes.byref(res))
            if rc != -errno.EAGAIN:
                break
            rc = 0
            p = select.poll()
            p.register(conn.fd(), select.POLLIN)
            p.register(cell.r, select.POLLIN)
            ready = dict(p.poll())
            if cell.r in ready:
                os.read(cell.r, 64)
                if not asked:
                    asked = True
                    c = lib.airlock_cancel(conn.ptr, rid.value)
                    if c < 0 and -c not in _lib.DAEMON_ERRNOS:  # not_found: it just ended
                        rc = c
            if rc >= 0 and conn.fd() in ready:
                rc = lib.airlock_conn_process(conn.ptr)
        try:
            sandbox._settle(conn, rc)
        except SandboxUnavailableError as e:
            if e.code == "not_found":
                raise self.gone(e.message) from None
            raise
        try:
            if cell.failure is not None:
                raise cell.failure
            return _convert(lib, res)
        finally:
            lib.airlock_result_free(res)

    async def run_async(self, request: _Request, on_output: Optional[OutputCallback]) -> SandboxResult:
        try:
            return await self.sandbox._run_async(request, on_output)
        except SandboxUnavailableError as e:
            if e.code == "not_found":
                raise self.gone(e.message) from None
            raise

    # ---- files ------------------------------------------------------------

    def _file_call(self, path: str, call: Callable[[_Conn], int]) -> None:
        try:
            self.sandbox._call(call)
        except SandboxUnavailableError as e:
            raise self.file_error(e, path) from None

    def write_blocking(self, path: PathLike, data: BytesLike) -> None:
        bpath = _path(path)
        blob = _to_bytes("data", data)
        sid = self.check_open()
        lib = self.sandbox._lib
        self._file_call(os.fsdecode(bpath), lambda conn: lib.airlock_file_write(conn.ptr, sid, bpath, blob, len(blob)))

    def _file_fetch(self, path: str, fetch: Callable[[_Conn, Any], int], free: Callable[[Any], None], read: Callable[[Any], Any]) -> Any:
        """A file operation whose answer is a library object: fetch(conn,
        byref(obj)) gets it, read(obj) makes the Python value, free(obj)
        frees it whatever read() does."""
        out: list = []
        fetch_call(lambda call: self._file_call(path, call), fetch, free, lambda obj: out.append(read(obj)))
        return out[0]

    def read_blocking(self, path: PathLike) -> FileContent:
        bpath = _path(path)
        sid = self.check_open()
        lib = self.sandbox._lib

        def read(f: Any) -> FileContent:
            data = ctypes.c_void_p()
            size = ctypes.c_size_t()
            lib.airlock_file_data(f, ctypes.byref(data), ctypes.byref(size))
            blob = ctypes.string_at(data.value, size.value) if size.value else b""
            return FileContent(blob, int(lib.airlock_file_size(f)), bool(lib.airlock_file_truncated(f)))

        return self._file_fetch(
            bpath.decode("utf-8"),
            lambda conn, ref: lib.airlock_file_read(conn.ptr, sid, bpath, ref),
            lib.airlock_file_free,
            read,
        )

    def list_blocking(self, path: PathLike) -> FileList:
        bpath = _path(path, allow_empty=True)
        shown = bpath.decode("utf-8")
        # The root as ".": the keeper of this daemon lists "" through a dup of
        # its root fd, whose offset a listing leaves at the end, so a second
        # listing of "" comes back empty (daemon/keeper/keeper.c keep_list).
        bpath = bpath or b"."
        sid = self.check_open()
        lib = self.sandbox._lib

        def read(lst: Any) -> FileList:
            out = FileList()
            for i in range(lib.airlock_file_list_count(lst)):
                name = lib.airlock_file_list_name(lst, i) or b""
                out.append(
                    FileInfo(
                        name=os.fsdecode(name),
                        kind=_lib.FILE_KINDS.get(lib.airlock_file_list_kind(lst, i), "other"),
                        size=int(lib.airlock_file_list_size(lst, i)),
                        mtime=lib.airlock_file_list_mtime_ms(lst, i) / 1000.0,
                    )
                )
            out.truncated = bool(lib.airlock_file_list_truncated(lst))
            return out

        return self._file_fetch(
            shown,
            lambda conn, ref: lib.airlock_file_list(conn.ptr, sid, bpath, ref),
            lib.airlock_file_list_free,
            read,
        )

    def extend_blocking(self, seconds: object) -> None:
        ms = _seconds_to_ms("seconds", seconds)
        if ms == 0:
            raise TypeError("seconds must be a number of seconds, not None")
        sid = self.check_open()
        lib = self.sandbox._lib
        if not hasattr(lib, "airlock_session_extend"):
            raise NotImplementedError("this libairlock has no session leases (AIRLOCK_0.10)")
        self._file_call(".", lambda conn: lib.airlock_session_extend(conn.ptr, sid, ms))

    def save_blocking(self) -> bytes:
        sid = self.check_open()
        lib = self.sandbox._lib
        if not hasattr(lib, "airlock_session_save"):
            raise NotImplementedError("this libairlock cannot save a workspace (AIRLOCK_0.10)")

        def read(f: Any) -> bytes:
            data = ctypes.c_void_p()
            size = ctypes.c_size_t()
            lib.airlock_file_data(f, ctypes.byref(data), ctypes.byref(size))
            return ctypes.string_at(data.value, size.value) if size.value else b""

        return self._file_fetch(".", lambda conn, ref: lib.airlock_session_save(conn.ptr, sid, ref), lib.airlock_file_free, read)

    def delete_blocking(self, path: PathLike) -> None:
        bpath = _path(path)
        sid = self.check_open()
        lib = self.sandbox._lib
        self._file_call(bpath.decode("utf-8"), lambda conn: lib.airlock_file_delete(conn.ptr, sid, bpath))

    def processes_blocking(self) -> list:
        sid = self.check_open()
        lib = self.sandbox._lib
        if not hasattr(lib, "airlock_session_ps"):
            raise SandboxError("background processes need libairlock 0.10 or later")
        out: list = []

        def read(lst: ctypes.c_void_p) -> None:
            for i in range(lib.airlock_process_list_count(lst)):
                out.append(
                    ProcessInfo(
                        pid=int(lib.airlock_process_list_pid(lst, i)),
                        name=(lib.airlock_process_list_name(lst, i) or b"").decode("ascii", "replace"),
                        cpu=lib.airlock_process_list_cpu_ms(lst, i) / 1000.0,
                        memory=int(lib.airlock_process_list_memory_bytes(lst, i)),
                    )
                )

        fetch_call(self.sandbox._call, lambda conn, ref: lib.airlock_session_ps(conn.ptr, sid, ref),
                   lib.airlock_process_list_free, read)
        return out

    def stop_process_blocking(self, pid: object) -> None:
        if isinstance(pid, bool) or not isinstance(pid, int):
            raise TypeError(f"pid must be an int, not {type(pid).__name__}")
        if not 0 < pid < 2**32:
            raise ValueError(f"pid must be a positive pid, not {pid!r}")
        sid = self.check_open()
        lib = self.sandbox._lib
        if not hasattr(lib, "airlock_process_stop"):
            raise SandboxError("background processes need libairlock 0.10 or later")
        self.sandbox._call(lambda conn: lib.airlock_process_stop(conn.ptr, sid, pid))


class AirlockSession:
    """A session for async code: one workspace on the daemon that outlives each run.

    Made by AirlockSandbox.session() (or attach_session()); opened by
    `async with` or `await`. Every run is still a fresh sandbox (a new
    process: no variables survive), but it works in the session's workspace,
    so files written by one run or by write_file() are there for the next.
    Runs of one session never run at once: the daemon queues them. The
    session ends on close() (leaving `async with` closes it), after its idle
    timeout, after its lifetime, or when the daemon stops; then every
    operation raises SandboxSessionClosedError.

    File operations take paths relative to the workspace. The daemon resolves
    them without following any link and never outside the workspace: a path
    it refuses raises SandboxPathError; a missing file SandboxNotFoundError.
    File operations and open/close are blocking round trips run in the
    loop's default executor; cancelling their await does not undo them.
    """

    def __init__(self, core: _SessionCore) -> None:
        self._core = core

    @property
    def id(self) -> Optional[str]:
        """The session id (32 lowercase hex characters), None before it is opened."""
        return self._core.id

    @property
    def sandbox(self) -> Any:
        return self._core.sandbox

    @property
    def limits(self) -> SandboxLimits:
        """The limits of a run that passes none: the session's, else the sandbox's."""
        return self._core.run_limits

    @property
    def closed(self) -> bool:
        """Whether the session is known to have ended (closed here, or found gone)."""
        return self._core.state == "closed"

    async def _blocking(self, fn: Callable[..., Any], *args: Any) -> Any:
        # In a copy of this task's context: the worker thread sees the call's timeout.
        ctx = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(ctx.run, fn, *args))

    async def open(self, *, timeout: Optional[float] = None) -> "AirlockSession":
        """Open the session on the daemon (a no-op when open); returns self.

        timeout, here and in every method: seconds to wait for the daemon
        (None: the sandbox's timeout; math.inf: no bound); past it
        SandboxRequestTimeoutError is raised, a run is cancelled on the
        daemon, and the session stays usable.
        """
        with _timeout.given(timeout):
            await self._blocking(self._core.open_blocking)
        return self

    def __await__(self):  # type: ignore[no-untyped-def]
        return self.open().__await__()

    async def __aenter__(self) -> "AirlockSession":
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, *, timeout: Optional[float] = None) -> None:
        """End the session: a run in progress is cancelled, the workspace is gone. Idempotent."""
        with _timeout.given(timeout):
            await self._blocking(self._core.close_blocking)

    @_run_method(mounts=False)
    async def run(self, a: _RunArgs) -> SandboxResult:
        """Run code in a fresh sandbox working in the session's workspace.

        As AirlockSandbox.run() (tools and approve too); files are written
        into the workspace first, and the artifacts are the files this run
        created or changed. limits None means the session's limits (else the
        sandbox's). Raises SandboxSessionClosedError when the session is not
        open.
        """
        request = self._core.request(a)
        a.attach_tools(request, blocking=False)
        with _timeout.given(a.timeout):
            return await self._core.run_async(request, a.on_output)

    async def run_cell(
        self, code: Union[str, bytes], *, limits: Optional[SandboxLimits] = None, figures: str = "png",
        ipython: bool = False, on_output: Optional[OutputCallback] = None, timeout: Optional[float] = None
    ) -> SandboxResult:
        """Run a cell in the session's interpreter (a session opened with interpreter="python").

        Every cell runs in the same globals, so variables, imports and
        functions stay from one cell to the next. result.value is the repr of
        a trailing expression, result.display the figures it showed
        (SandboxDisplay), result.state "kept", or "lost" when the interpreter
        had to be restarted empty. A cell over its wall or CPU limit is
        interrupted (KeyboardInterrupt) and SandboxTimeoutError is raised
        with the result (state "kept"); one that does not stop within 2 s, or
        hits the memory limit, loses the state (SandboxMemoryError for memory).
        A session from attach_session() runs cells as the one that opened it.
        result.artifacts are the files the cell created or changed. figures:
        "png" (the default) or "svg", the type of its matplotlib figures
        (libairlock 0.10 and a daemon that knows it). ipython: run the cell
        through IPython's InteractiveShell (magics such as %timeit, `!cmd`
        as a process of the sandbox) when the session's runtime can import
        IPython ("python-site" on Debian with python3-ipython); without it
        the cell runs plain and its stderr's first line says so. on_output: as
        run()'s, called with each chunk the cell writes while it runs (the
        daemon looks every 50 ms; libairlock and a daemon of 0.10); the result
        still carries the whole output, and the exception's traceback is
        then in result.traceback only, not on stderr. result.restarted,
        .ename, .evalue, .traceback: SandboxResult.
        """
        core = self._core
        with _timeout.given(timeout):
            if core.interpreter is None and core.is_open:
                await self._blocking(core.learn_interpreter)
            request = core.cell(code, limits, figures, ipython)
            core.cells.append(request)
            try:
                return await core.run_async(request, on_output)
            finally:
                core.cells.remove(request)

    async def interrupt(self) -> None:
        """Interrupt the cell of this session that runs now (the oldest run_cell awaited here).

        As at its wall limit: KeyboardInterrupt in the cell, and the
        interpreter keeps its state; the run_cell await raises SandboxError
        with the result (outcome "cancelled", state "kept"), and the cells
        queued behind it then run. A cell that does not
        stop within 2 s is killed with its interpreter (state "lost"). Raises
        SandboxError when no cell of the session is in flight here, or the
        daemon's not_found when the cell has just ended (its result stands).
        Cancelling a run_cell task does the same to that cell.
        """
        core = self._core
        core.check_open()
        rid = next((r.rid for r in core.cells if r.rid != 0), 0)
        if rid == 0:
            raise SandboxError(f"no cell of session {core.id} is running")
        channel = core.sandbox._channel(asyncio.get_running_loop())
        conn = channel.conn
        if conn is None:
            raise SandboxError(f"no cell of session {core.id} is running")
        rc = conn.lib.airlock_cancel(conn.ptr, rid)  # one round trip to the local daemon
        channel.drain()  # replies read meanwhile
        if rc < 0:
            raise conn.error(rc)

    async def write_file(self, path: PathLike, data: BytesLike, *, timeout: Optional[float] = None) -> None:
        """Write data (bytes, or str as UTF-8) as the file path, replacing it; parents are made."""
        with _timeout.given(timeout):
            await self._blocking(self._core.write_blocking, path, data)

    async def read_file(self, path: PathLike, *, timeout: Optional[float] = None) -> FileContent:
        """The bytes of the regular file path: a FileContent (bytes with .truncated and .size)."""
        with _timeout.given(timeout):
            return await self._blocking(self._core.read_blocking, path)

    async def list_files(self, path: PathLike = "", *, timeout: Optional[float] = None) -> FileList:
        """The entries of directory path ("" for the workspace): a list of FileInfo with .truncated."""
        with _timeout.given(timeout):
            return await self._blocking(self._core.list_blocking, path)

    async def delete_file(self, path: PathLike, *, timeout: Optional[float] = None) -> None:
        """Delete a file, a link (not its target) or an empty directory."""
        with _timeout.given(timeout):
            await self._blocking(self._core.delete_blocking, path)

    async def processes(self, *, timeout: Optional[float] = None) -> list:
        """The processes a session opened with background=True keeps (every
        process of its sandbox but the interpreter), as ProcessInfo: pid,
        name, cpu seconds, resident memory. At most 64."""
        with _timeout.given(timeout):
            return await self._blocking(self._core.processes_blocking)

    async def stop_process(self, pid: int, *, timeout: Optional[float] = None) -> None:
        """Stop (SIGKILL) one of them, by the pid processes() shows;
        SandboxUnavailableError("not_found") when there is none."""
        with _timeout.given(timeout):
            await self._blocking(self._core.stop_process_blocking, pid)

    async def extend(self, seconds: float, *, timeout: Optional[float] = None) -> None:
        """Extend the session's lease: it now ends `seconds` from now (at most
        the daemon's lifetime_ms_max). A session kept across a daemon restart
        keeps its lease."""
        with _timeout.given(timeout):
            await self._blocking(self._core.extend_blocking, seconds)

    async def save(self, *, timeout: Optional[float] = None) -> bytes:
        """The workspace as a tar (POSIX ustar) archive: its directories and
        regular files; links and special files are left out."""
        with _timeout.given(timeout):
            return await self._blocking(self._core.save_blocking)

    def __repr__(self) -> str:
        return f"AirlockSession(id={self.id!r}, state={self._core.state!r})"


class AirlockSessionSync:
    """A session with blocking methods: `with sandbox.session_sync() as s:`.

    The same session as AirlockSession (see there), with the same methods
    blocking instead of async. Safe to use from several threads.
    """

    def __init__(self, core: _SessionCore) -> None:
        self._core = core

    id = AirlockSession.id
    sandbox = AirlockSession.sandbox
    limits = AirlockSession.limits
    closed = AirlockSession.closed

    def open(self, *, timeout: Optional[float] = None) -> "AirlockSessionSync":
        """Open the session on the daemon (a no-op when open); returns self (timeout: as AirlockSession's)."""
        with _timeout.given(timeout):
            self._core.open_blocking()
        return self

    def __enter__(self) -> "AirlockSessionSync":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, *, timeout: Optional[float] = None) -> None:
        """End the session: a run in progress is cancelled, the workspace is gone. Idempotent."""
        with _timeout.given(timeout):
            self._core.close_blocking()

    @_run_method(mounts=False)
    def run(self, a: _RunArgs) -> SandboxResult:
        """As AirlockSession.run(), blocking (on_output, tools and approve: as AirlockSandbox.run_sync())."""
        request = self._core.request(a)
        a.attach_tools(request, blocking=True)
        with _timeout.given(a.timeout):
            return self._core.run_blocking(request, a.on_output)

    def run_cell(
        self, code: Union[str, bytes], *, limits: Optional[SandboxLimits] = None, figures: str = "png",
        ipython: bool = False, on_output: Optional[Callable[[str, bytes], None]] = None,
        timeout: Optional[float] = None
    ) -> SandboxResult:
        """As AirlockSession.run_cell(), blocking; interrupt() from another
        thread interrupts it. on_output: a plain function, called on this
        thread with each chunk as it comes; if it raises, it is not called
        again and its exception is raised once the cell has ended."""
        core = self._core
        with _timeout.given(timeout):
            request = core.cell(code, limits, figures, ipython)
            if on_output is not None:
                if not callable(on_output):
                    raise TypeError(f"on_output must be callable or None, not {type(on_output).__name__}")
                request.stream = True
            cell = _SyncCell(on_output)
            with core.lock:
                core.sync_cells.append(cell)
            try:
                return core.cell_blocking(request, cell)
            finally:
                with core.lock:
                    core.sync_cells.remove(cell)
                cell.close()

    def interrupt(self) -> None:
        """As AirlockSession.interrupt(), from any thread: the oldest run_cell()
        in flight on this session object is interrupted (it raises SandboxError
        with the result, outcome "cancelled", state "kept"). Returns at once;
        SandboxError when no cell is in flight."""
        core = self._core
        with core.lock:
            if not core.sync_cells:
                raise SandboxError(f"no cell of session {core.id} is running")
            os.write(core.sync_cells[0].w, b"i")

    def write_file(self, path: PathLike, data: BytesLike, *, timeout: Optional[float] = None) -> None:
        """As AirlockSession.write_file(), blocking."""
        with _timeout.given(timeout):
            self._core.write_blocking(path, data)

    def read_file(self, path: PathLike, *, timeout: Optional[float] = None) -> FileContent:
        """As AirlockSession.read_file(), blocking."""
        with _timeout.given(timeout):
            return self._core.read_blocking(path)

    def list_files(self, path: PathLike = "", *, timeout: Optional[float] = None) -> FileList:
        """As AirlockSession.list_files(), blocking."""
        with _timeout.given(timeout):
            return self._core.list_blocking(path)

    def delete_file(self, path: PathLike, *, timeout: Optional[float] = None) -> None:
        """As AirlockSession.delete_file(), blocking."""
        with _timeout.given(timeout):
            self._core.delete_blocking(path)

    def processes(self, *, timeout: Optional[float] = None) -> list:
        """As AirlockSession.processes(), blocking."""
        with _timeout.given(timeout):
            return self._core.processes_blocking()

    def stop_process(self, pid: int, *, timeout: Optional[float] = None) -> None:
        """As AirlockSession.stop_process(), blocking."""
        with _timeout.given(timeout):
            self._core.stop_process_blocking(pid)

    def extend(self, seconds: float, *, timeout: Optional[float] = None) -> None:
        """As AirlockSession.extend(), blocking."""
        with _timeout.given(timeout):
            self._core.extend_blocking(seconds)

    def save(self, *, timeout: Optional[float] = None) -> bytes:
        """As AirlockSession.save(), blocking."""
        with _timeout.given(timeout):
            return self._core.save_blocking()

    def __repr__(self) -> str:
        return f"AirlockSessionSync(id={self.id!r}, state={self._core.state!r})"
