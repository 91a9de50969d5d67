"""Plain data of the binding: limits, results, artifacts, and the exceptions."""

from __future__ import annotations

import errno as _errno
import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from . import _lib

__all__ = [
    "SandboxLimits",
    "SandboxArtifact",
    "SandboxResult",
    "SandboxNetwork",
    "SandboxDisplay",
    "SandboxToolCall",
    "SandboxError",
    "SandboxTimeoutError",
    "SandboxMemoryError",
    "SandboxProcessLimitError",
    "SandboxUnavailableError",
    "SandboxRequestTimeoutError",
    "SandboxPathError",
    "SandboxNotFoundError",
    "SandboxSessionClosedError",
    "FileInfo",
    "FileContent",
    "FileList",
]

Number = Union[int, float]

# SandboxLimits field -> (daemon limit, unit multiplier to the daemon's unit)
_LIMIT_FIELDS: Dict[str, Tuple[int, int]] = {
    "wall_seconds": (_lib.LIMIT_WALL_MS, 1000),
    "cpu_seconds": (_lib.LIMIT_CPU_MS, 1000),
    "memory_bytes": (_lib.LIMIT_MEMORY_BYTES, 1),
    "processes": (_lib.LIMIT_PROCESSES, 1),
    "max_output_bytes": (_lib.LIMIT_OUTPUT_BYTES, 1),
    "max_artifact_bytes": (_lib.LIMIT_ARTIFACT_BYTES, 1),
    "max_artifacts": (_lib.LIMIT_ARTIFACTS, 1),
    "open_files": (_lib.LIMIT_OPEN_FILES, 1),
    "file_size_bytes": (_lib.LIMIT_FILE_SIZE_BYTES, 1),
    "workspace_bytes": (_lib.LIMIT_WORKSPACE_BYTES, 1),
    "tmp_bytes": (_lib.LIMIT_TMP_BYTES, 1),
}

_UNSET = object()

# A profile's name, as the daemon checks it (docs/protocol.md).
_PROFILE_RE = re.compile(r"[a-z0-9_-]{1,32}\Z")


def _check_profile(value: object) -> Optional[str]:
    """None, or a profile name: 1 to 32 of a-z, 0-9, '-', '_'."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"SandboxLimits.profile must be a str or None, not {type(value).__name__}")
    if not _PROFILE_RE.match(value):
        raise ValueError(f"SandboxLimits.profile {value!r} must be 1 to 32 of a-z, 0-9, '-', '_'")
    return value


def _check_limit(name: str, value: object, integral: bool) -> Optional[Number]:
    """Check one limit value: None, or a positive finite number (an int for counts and bytes)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float) if not integral else int):
        kind = "an int" if integral else "a number"
        raise TypeError(f"SandboxLimits.{name} must be {kind} or None, not {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"SandboxLimits.{name} must be positive, not {value!r}")
    return value


class SandboxLimits:
    """Ceilings of one run; None leaves a limit at the daemon's configured default.

    wall_seconds: wall-clock time; hitting it raises SandboxTimeoutError(limit="wall").
    cpu_seconds: processor time of all processes and threads; hitting it raises
        SandboxTimeoutError(limit="cpu").
    memory_bytes: memory of the whole sandbox (a cgroup limit, not RLIMIT_AS);
        hitting it raises SandboxMemoryError.
    processes: processes and threads the code may have at once.
    max_output_bytes: bytes of stdout and of stderr kept, each; longer output is
        cut and the result's stdout_truncated/stderr_truncated says so.
        max_output_chars is accepted as an alias (the daemon counts bytes; the
        decoded text never has more characters than bytes).
    max_artifact_bytes: bytes kept per artifact; a larger file comes back cut,
        with truncated set.
    max_artifacts: how many artifacts come back.
    open_files: file descriptors the code may have open at once.
    file_size_bytes: the largest file the code may write.
    workspace_bytes: the size of the workspace (the working directory).
    tmp_bytes: the size of the private /tmp.

    profile: the name of one of the daemon's profiles (its administrator's
        named sets of limits; `sandbox.info()["profiles"]` lists the caller's).
        A profile's value of a limit is the run's default and its ceiling: the
        fields above may only ask less. None: the daemon's default profile.
        SandboxLimits.minimal(), .standard() and .generous() name the built-in
        profiles (minimal 128 MiB / 30 s, standard 512 MiB / 60 s, generous
        2 GiB / 300 s, as configured by the daemon's administrator).

    SandboxLimits() sets nothing: every limit is the daemon's default, as its
    administrator configured it (`sandbox.info()["limits"]` shows them).

    Every value must be positive: the daemon reads 0 as "its default", so 0
    cannot mean "none". A value above the daemon's ceiling (or the profile's)
    makes the run fail with SandboxUnavailableError(code="bad_request"); a
    profile that does not exist with code "not_found", one the caller may not
    use "unauthorized".
    """

    __slots__ = tuple(_LIMIT_FIELDS) + ("profile",)

    wall_seconds: Optional[float]
    cpu_seconds: Optional[float]
    memory_bytes: Optional[int]
    processes: Optional[int]
    max_output_bytes: Optional[int]
    max_artifact_bytes: Optional[int]
    max_artifacts: Optional[int]
    open_files: Optional[int]
    file_size_bytes: Optional[int]
    workspace_bytes: Optional[int]
    tmp_bytes: Optional[int]
    profile: Optional[str]

    def __init__(
        self,
        wall_seconds: Optional[Number] = None,
        cpu_seconds: Optional[Number] = None,
        memory_bytes: Optional[int] = None,
        processes: Optional[int] = None,
        max_output_bytes: Optional[int] = None,
        max_artifact_bytes: Optional[int] = None,
        max_artifacts: Optional[int] = None,
        *,
        open_files: Optional[int] = None,
        file_size_bytes: Optional[int] = None,
        workspace_bytes: Optional[int] = None,
        tmp_bytes: Optional[int] = None,
        max_output_chars: Optional[int] = _UNSET,  # type: ignore[assignment]
        profile: Optional[str] = None,
    ) -> None:
        if max_output_chars is not _UNSET:
            if max_output_bytes is not None and max_output_bytes != max_output_chars:
                raise ValueError("give max_output_bytes or its alias max_output_chars, not both")
            max_output_bytes = max_output_chars
        values = {
            "wall_seconds": _check_limit("wall_seconds", wall_seconds, False),
            "cpu_seconds": _check_limit("cpu_seconds", cpu_seconds, False),
            "memory_bytes": _check_limit("memory_bytes", memory_bytes, True),
            "processes": _check_limit("processes", processes, True),
            "max_output_bytes": _check_limit("max_output_bytes", max_output_bytes, True),
            "max_artifact_bytes": _check_limit("max_artifact_bytes", max_artifact_bytes, True),
            "max_artifacts": _check_limit("max_artifacts", max_artifacts, True),
            "open_files": _check_limit("open_files", open_files, True),
            "file_size_bytes": _check_limit("file_size_bytes", file_size_bytes, True),
            "workspace_bytes": _check_limit("workspace_bytes", workspace_bytes, True),
            "tmp_bytes": _check_limit("tmp_bytes", tmp_bytes, True),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "profile", _check_profile(profile))

    @classmethod
    def minimal(cls) -> "SandboxLimits":
        """The daemon's built-in profile "minimal" (128 MiB, 30 s unless its administrator changed it)."""
        return cls(profile="minimal")

    @classmethod
    def standard(cls) -> "SandboxLimits":
        """The daemon's built-in profile "standard" (512 MiB, 60 s unless changed)."""
        return cls(profile="standard")

    @classmethod
    def generous(cls) -> "SandboxLimits":
        """The daemon's built-in profile "generous" (2 GiB, 300 s unless changed; no network)."""
        return cls(profile="generous")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("SandboxLimits is immutable; use replace()")

    @property
    def max_output_chars(self) -> Optional[int]:
        """Alias of max_output_bytes (the name the agent kit's SandboxLimits uses)."""
        return self.max_output_bytes

    def replace(self, **changes: object) -> "SandboxLimits":
        """A copy with some fields changed (like dataclasses.replace)."""
        values: Dict[str, object] = {name: getattr(self, name) for name in _LIMIT_FIELDS}
        values["profile"] = self.profile
        if "max_output_chars" in changes:
            values["max_output_bytes"] = changes.pop("max_output_chars")
        for name in changes:
            if name not in values:
                raise TypeError(f"SandboxLimits has no field {name!r}")
        values.update(changes)
        return SandboxLimits(**values)  # type: ignore[arg-type]

    def as_dict(self) -> Dict[str, Optional[Union[Number, str]]]:
        """The fields as a dict (the limits, then "profile")."""
        out: Dict[str, Optional[Union[Number, str]]] = {name: getattr(self, name) for name in _LIMIT_FIELDS}
        out["profile"] = self.profile
        return out

    def daemon_limits(self) -> Dict[int, int]:
        """The limits as the daemon counts them (enum airlock_limit -> value); None fields left out.

        Seconds become milliseconds rounded up, so a positive value never
        becomes 0 (which the daemon would read as its default).
        """
        out: Dict[int, int] = {}
        for name, (limit, scale) in _LIMIT_FIELDS.items():
            value = getattr(self, name)
            if value is not None:
                out[limit] = max(1, int(math.ceil(value * scale)))
        return out

    def looser_fields(self, other: "SandboxLimits") -> List[str]:
        """The fields where self allows more than other; None in self means "as other"."""
        looser = []
        for name in _LIMIT_FIELDS:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine is not None and theirs is not None and mine > theirs:
                looser.append(name)
        # Another profile is not comparable: it may allow more.
        if self.profile is not None and other.profile is not None and self.profile != other.profile:
            looser.append("profile")
        return looser

    def inherit(self, other: "SandboxLimits") -> "SandboxLimits":
        """A copy where each None field takes other's value."""
        values: Dict[str, object] = {name: getattr(self, name) for name in _LIMIT_FIELDS}
        values["profile"] = self.profile
        for name, value in values.items():
            if value is None:
                values[name] = getattr(other, name)
        return SandboxLimits(**values)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SandboxLimits):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.as_dict().values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items())
        return f"SandboxLimits({inner})"


@dataclass(frozen=True)
class SandboxArtifact:
    """A file the code created or changed in its workspace.

    name: its path relative to the workspace, decoded with os.fsdecode: a
        name that is not UTF-8 keeps its bytes as surrogate escapes, so
        os.fsencode(name) (or name_bytes) is the exact name, and open() or
        os.listdir() on the host agree with it. It comes from the sandbox:
        never use it as a host path without checking it.
    content: the bytes kept (at most max_artifact_bytes).
    truncated: whether content holds fewer bytes than the file had.
    size: the file's size in the workspace (None when not known).
    """

    name: str
    content: bytes
    truncated: bool = False
    size: Optional[int] = None

    @property
    def name_bytes(self) -> bytes:
        """The name's exact bytes (os.fsencode of name)."""
        return os.fsencode(self.name)


@dataclass(frozen=True)
class SandboxNetwork:
    """What a run of a profile with network = proxy did through the daemon's proxy.

    bytes_up, bytes_down: bytes the code sent and received through it.
    connections: connections the code opened to the proxy; refused: how
        many of them were refused.
    contacted: the destinations reached, "host:port", first seen first (at
        most 32).
    refusals: (host, reason) pairs, distinct, first seen first (at most 32):
        host is "host:port" as the code asked ("" when refused before it
        asked, at a limit); reason is "not_listed", "ip_literal",
        "private_address", "limit", "resolve_failed", "connect_failed",
        "bad_request", ...
    """

    bytes_up: int = 0
    bytes_down: int = 0
    connections: int = 0
    refused: int = 0
    contacted: Tuple[str, ...] = ()
    refusals: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SandboxDisplay:
    """One rich output of a cell, as Jupyter shows it: a matplotlib figure
    (plt.show(), or left open), a display() call, or one representation of
    the trailing value (_repr_png_, _repr_svg_, _repr_html_,
    _repr_markdown_); or a figure of a python run (plt.show(), or left open
    at its end).

    mime: "image/png", "image/svg+xml", "text/plain", "text/html",
    "text/markdown", or from a cell run with ipython=True "text/latex" or
    "application/json" (JSON text).
    data: its bytes.
    value: one of the trailing value's representations (with result.value
        as its text/plain, the value's one mime bundle: Jupyter's
        execute_result); False for a display() call or a figure, and with
        libairlock or a daemon before 0.10.
    """

    mime: str
    data: bytes = field(repr=False)
    value: bool = False


@dataclass(frozen=True)
class SandboxToolCall:
    """One call the run's code made of a tool the run declared (or tried to).

    tool: the name asked for ("" when it was not a valid name).
    outcome: "ok", "refused" (the approval hook said no), "error" (the tool
        raised or failed), "undeclared", "malformed", "too_large", "limit",
        "timeout" or "abandoned" (the run ended first).
    seconds: from the call to its answer.
    """

    tool: str
    outcome: str
    seconds: float = 0.0


@dataclass(frozen=True)
class SandboxResult:
    """What the code did. A non-zero exit or a signal is a result, not an error.

    stdout, stderr: the output kept, decoded as UTF-8 with errors="replace";
        stdout_bytes, stderr_bytes are the raw bytes.
    exit_code: the exit status, or None when the code was killed by a signal.
    signal: the signal that killed the code, or None.
    duration: wall-clock time of the run, seconds.
    cpu_time: processor time of the run (user + system), seconds.
    stdout_truncated, stderr_truncated: whether output was cut at the limit.
    artifacts: the files the code created or changed, in the daemon's order.
        Input files the code did not change are not returned.
    artifacts_omitted, artifacts_omitted_bytes: how many files the code
        created or changed were left out (past max_artifacts; the daemon
        keeps files outside dot-directories first, then the newest), and
        their total size. 0 with a daemon or libairlock before 0.5.
    memory_peak_bytes: peak memory of the sandbox, None when not measured.
    queued_seconds: how long the request waited in the daemon's queue.
    outcome: the daemon's name for how the run ended ("exited", "signaled",
        "wall_limit", "cpu_limit", "memory_limit", "process_limit"); the
        limits only appear on the result carried by an exception.
    network: a SandboxNetwork for a run of a profile with network = proxy,
        else None (and with a daemon or libairlock before 0.7).
    cell, state, value, display: a cell's (AirlockSession.run_cell()): its
        number in the session, "kept" or "lost" (the interpreter was
        restarted empty: the variables of earlier cells are gone), the repr
        of its trailing expression (None: none, or None), its rich outputs
        (SandboxDisplay). 0, None, None for a run; a python run's display
        holds its matplotlib figures (image/png, or image/svg+xml with
        run(..., figures="svg")).
    restarted: a cell's interpreter ended during it (the cell killed it, the
        memory limit, no stop after an interrupt): state is "lost" and the
        next cell runs in a new one, its own state "lost" but restarted
        False. False for a run, and with a daemon or libairlock before 0.10.
    ename, evalue, traceback: the exception a cell raised (a SyntaxError of
        its code too; "KeyboardInterrupt" when interrupted): its type's name,
        str() of it, and the traceback's lines from the first frame of the
        cell's code (a tuple of str). None when it raised none, for a run,
        and with a daemon or libairlock before 0.10. The traceback is on
        stderr too, unless the cell was streamed (run_cell's on_output).
    tool_calls: the SandboxToolCall of each call the code made of the run's
        tools, in order (at most 256), () for a run without tools.
    advisories: what the daemon's advisory checks found in the code, e.g.
        "blocked import: subprocess (line 3)" for a profile's blocked_imports
        (at most 16). Never a refusal and never a boundary: the run went
        ahead, and code can import a module no check sees. () with a daemon
        or libairlock before 0.9.
    """

    stdout: str
    stderr: str
    exit_code: Optional[int]
    signal: Optional[int] = None
    duration: float = 0.0
    cpu_time: float = 0.0
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    artifacts: Tuple[SandboxArtifact, ...] = ()
    memory_peak_bytes: Optional[int] = None
    artifacts_omitted: int = 0
    artifacts_omitted_bytes: int = 0
    queued_seconds: float = 0.0
    stdout_bytes: bytes = field(default=b"", repr=False)
    stderr_bytes: bytes = field(default=b"", repr=False)
    outcome: str = "exited"
    network: Optional[SandboxNetwork] = None
    tool_calls: Tuple[SandboxToolCall, ...] = ()
    cell: int = 0
    state: Optional[str] = None
    value: Optional[str] = None
    display: Tuple[SandboxDisplay, ...] = ()
    advisories: Tuple[str, ...] = ()
    restarted: bool = False
    ename: Optional[str] = None
    evalue: Optional[str] = None
    traceback: Optional[Tuple[str, ...]] = None

    @property
    def ok(self) -> bool:
        """True when the code exited with status 0."""
        return self.exit_code == 0

    def artifact(self, name: str) -> Optional[SandboxArtifact]:
        """The artifact called name, or None."""
        for a in self.artifacts:
            if a.name == name:
                return a
        return None


class SandboxError(Exception):
    """Base of every error of the binding; raised as such when the sandbox itself failed.

    message: what went wrong. result: the partial result when there is one.
    """

    def __init__(self, message: str, *, result: Optional[SandboxResult] = None) -> None:
        super().__init__(message)
        self.message = message
        self.result = result


class SandboxTimeoutError(SandboxError):
    """The run was killed at its wall-clock (limit == "wall") or CPU (limit == "cpu") limit.

    result holds what the code printed before it was killed.
    """

    def __init__(self, message: str, *, limit: str, result: Optional[SandboxResult] = None) -> None:
        super().__init__(message, result=result)
        self.limit = limit


class SandboxMemoryError(SandboxError):
    """The run was killed at its memory limit (limit == "memory"); result holds the partial output."""

    limit = "memory"


class SandboxProcessLimitError(SandboxError):
    """The run was stopped at its process limit (limit == "processes"): a fork or
    thread was refused. Only daemons whose limits are enforced by cgroup2 say so;
    elsewhere a refused fork is the code's own error. result holds the partial output.
    """

    limit = "processes"


class SandboxUnavailableError(SandboxError):
    """The daemon could not be reached, or refused the request.

    code: the daemon's stable error code ("unauthorized", "busy", "bad_request",
        "unknown_runtime", "too_large", "internal", ...), or "unreachable" when
        no daemon answered or the connection broke.
    message: the daemon's message, or what failed locally.
    errno: the negative errno libairlock returned (0 when not applicable).
    """

    def __init__(self, code: str, message: str, *, errno: int = 0) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.errno = errno


class SandboxRequestTimeoutError(SandboxUnavailableError, TimeoutError):
    """The daemon did not answer within the call's timeout (code "timeout").

    Raised by any call given timeout= (or made on a sandbox with a default
    timeout) when that much time passed without the answer. A run that
    timed out was cancelled on the daemon; the sandbox stays usable, and an
    answer that comes later is discarded. Also a TimeoutError. Not to be
    confused with SandboxTimeoutError, a run killed at its own wall or cpu
    limit. timeout: the bound, in seconds.
    """

    def __init__(self, timeout: float, what: str = "the request", *, errno: int = 0) -> None:
        super().__init__("timeout", f"no answer from airlockd to {what} within {timeout:g} s; it was cancelled", errno=errno)
        self.timeout = timeout


class SandboxPathError(SandboxError):
    """The daemon refused a path of a session file operation (code "bad_request").

    Raised for a path that leaves the workspace ("../x", an absolute path), that
    goes through a symbolic link (the daemon never follows one, not even one the
    code planted), or that names the wrong kind of thing (reading a directory,
    deleting a non-empty one). path: the path as given; message: the daemon's
    reason; code: "bad_request".
    """

    def __init__(self, path: str, message: str, *, code: str = "bad_request") -> None:
        super().__init__(f"{path!r}: {message}")
        self.message = message
        self.path = path
        self.code = code


class SandboxNotFoundError(SandboxError, FileNotFoundError):
    """No such file or directory in the session's workspace (code "not_found").

    Also a FileNotFoundError (errno ENOENT, filename == path), so
    `except FileNotFoundError` works as for a local file. path: the path as
    given. A session that is no longer open raises SandboxSessionClosedError
    instead, which is not a FileNotFoundError.
    """

    def __init__(self, path: str, message: str) -> None:
        SandboxError.__init__(self, f"{path!r}: {message}")
        self.message = message
        self.path = path
        self.code = "not_found"
        self.errno = _errno.ENOENT
        self.strerror = message
        self.filename = path

    def __str__(self) -> str:
        return f"{self.path!r}: {self.message}"


class SandboxSessionClosedError(SandboxError):
    """The session is not open: closed, expired, ended by the daemon, or not one of the caller's.

    The daemon answers "not_found" alike for a session that ended (closed,
    idle timeout, lifetime, owner gone, daemon restart), one that never
    existed and one of another user (on purpose: ids of other users' sessions
    must not be probeable), so the binding cannot tell these apart either.
    session_id: the session's id; code: "not_found".
    """

    def __init__(self, session_id: Optional[str], message: str) -> None:
        super().__init__(f"session {session_id}: {message}")
        self.message = message
        self.session_id = session_id
        self.code = "not_found"


@dataclass(frozen=True)
class FileInfo:
    """One entry of a session directory listing (links are not followed).

    name: one path component, chosen by the code that ran in the session:
        never use it as a host path without checking it.
    kind: "file", "dir", "link" or "other" (FIFO, socket, device).
    size: bytes (of a link: of the link itself).
    mtime: modification time, seconds since the epoch.
    """

    name: str
    kind: str
    size: int
    mtime: float


class FileContent(bytes):
    """The bytes read_file() returns: bytes, plus what was cut.

    truncated: whether the file holds more than these bytes (the daemon sends
        at most its file_max_bytes, 64 MiB by default).
    size: the file's whole size in the workspace.
    """

    truncated: bool
    size: int

    def __new__(cls, data: bytes, size: int, truncated: bool) -> "FileContent":
        self = super().__new__(cls, data)
        self.size = size
        self.truncated = truncated
        return self

    def __repr__(self) -> str:
        return f"FileContent({bytes(self)!r}, size={self.size}, truncated={self.truncated})"


class FileList(List[FileInfo]):
    """The list list_files() returns, plus truncated: whether the directory holds more entries.

    The daemon lists at most 1000 entries of one directory.
    """

    truncated: bool = False
