"""Run requests: _Request (checked, converted for libairlock) and _RunArgs (the
keywords of every run method, defined once)."""

from __future__ import annotations

import ctypes
import errno as _errno
import functools
import inspect
import os
import re as _re
from collections.abc import Mapping as _MappingABC
from collections.abc import Sequence as _SequenceABC
from typing import Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple

from ._bridge import ApproveHook, ToolSet
from ._types import SandboxError, SandboxLimits


def _strerror(rc: int) -> str:
    """The text of a negative errno."""
    return os.strerror(-rc) if rc < 0 else "unknown error"


def _to_bytes(what: str, value: object) -> bytes:
    """bytes of a str (UTF-8) or bytes-like value; TypeError for anything else."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def _mapping_items(what: str, value: object, of: str) -> Iterable[Tuple[Any, Any]]:
    """The items of the mapping value (the argument what, a mapping of `of`); TypeError if it is none."""
    if not isinstance(value, _MappingABC):
        raise TypeError(f"{what} must be a mapping of {of}, not {type(value).__name__}")
    return value.items()


def _c_string(what: str, value: object) -> bytes:
    """A str as NUL-free UTF-8 for a C string; TypeError/ValueError otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    b = value.encode("utf-8")
    if b"\0" in b:
        raise ValueError(f"{what} must not contain a NUL character")
    return b


class _Request:
    """A checked run request, converted to what libairlock takes; built before anything is sent."""

    __slots__ = (
        "language",
        "code",
        "files",
        "env",
        "args",
        "stdin",
        "limits",
        "profile",
        "mounts",
        "session",
        "cell",
        "figures_svg",
        "ipython",
        "stream",
        "tools",
        "rid",
    )

    def __init__(
        self,
        code: object,
        language: object,
        limits: SandboxLimits,
        files: object,
        env: object,
        args: object,
        stdin: object,
        mounts: object = None,
    ) -> None:
        if not isinstance(code, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"code must be str or bytes, not {type(code).__name__}")
        self.code = _to_bytes("code", code)
        self.rid = 0  # its request id once submitted on a loop's channel (AirlockSession.interrupt)
        self.language = _c_string("language", language)
        if not self.language or len(self.language) > 32:
            raise ValueError("language must be a runtime name of 1 to 32 bytes")
        if not isinstance(limits, SandboxLimits):
            raise TypeError(f"limits must be SandboxLimits or None, not {type(limits).__name__}")
        self.limits = limits.daemon_limits()
        self.profile = limits.profile.encode("ascii") if limits.profile is not None else None
        self.mounts: List[bytes] = []
        if mounts is not None:
            if isinstance(mounts, (str, bytes)) or not isinstance(mounts, _SequenceABC):
                raise TypeError(f"mounts must be a sequence of names, not {type(mounts).__name__}")
            for name in mounts:
                bname = _c_string("a mount name", name)
                if not _re.fullmatch(rb"[a-z0-9_-]{1,32}", bname):
                    raise ValueError(f"mount name {name!r}: expected 1 to 32 of a-z, 0-9, '-', '_'")
                self.mounts.append(bname)
            if len(self.mounts) > 16:
                raise ValueError("at most 16 mounts")

        self.files: List[Tuple[bytes, bytes]] = []
        if files is not None:
            for name, content in _mapping_items("files", files, "name to bytes"):
                bname = _c_string("a file name", name)
                parts = bname.split(b"/")
                if (
                    not bname
                    or bname.startswith(b"/")
                    or len(bname) > 255
                    or any(part in (b"", b".", b"..") for part in parts)
                    or any(c < 0x20 or c == 0x7F for c in bname)
                ):
                    # The daemon would refuse these too; refused here alike,
                    # whatever the reason, before anything is sent.
                    raise ValueError(
                        f"file name {name!r} must be a relative path of at most 255 bytes "
                        "without empty, '.' or '..' components or control characters"
                    )
                self.files.append((bname, _to_bytes(f"files[{name!r}]", content)))

        self.env: List[Tuple[bytes, bytes]] = []
        if env is not None:
            for key, value in _mapping_items("env", env, "str to str"):
                bkey = _c_string("an env key", key)
                if not bkey or b"=" in bkey:
                    raise ValueError(f"env key {key!r} must be non-empty and contain no '='")
                self.env.append((bkey, _c_string(f"env[{key!r}]", value)))

        self.args: List[bytes] = []
        if args is not None:
            if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
                raise TypeError(f"args must be a sequence of str, not {type(args).__name__}")
            self.args = [_c_string("an argument", a) for a in args]

        self.stdin = b"" if stdin is None else _to_bytes("stdin", stdin)
        self.session: Optional[bytes] = None  # a session id to run in (set by the session)
        self.cell = False  # a cell of the session's interpreter
        self.figures_svg = False  # a cell's or a python run's figures as SVG
        self.ipython = False  # a cell through IPython
        self.stream = False  # whether to ask for stream events
        self.tools: Optional[ToolSet] = None  # the tools the code may call

    def session_limits(self) -> SandboxLimits:
        """The limits of a temporary session for this run: its profile (a session's runs use its own)."""
        return SandboxLimits(profile=self.profile.decode("ascii") if self.profile is not None else None)

    def build(self, lib: ctypes.CDLL) -> ctypes.c_void_p:
        """A struct airlock_run_req for this request; the caller frees it."""
        req = ctypes.c_void_p()
        rc = lib.airlock_run_req_new(ctypes.byref(req))
        if rc < 0:
            raise MemoryError("airlock_run_req_new: " + _strerror(rc))
        try:
            step = "set_runtime"
            rc = lib.airlock_run_req_set_runtime(req, self.language)
            if rc == 0:
                step = "set_code"
                rc = lib.airlock_run_req_set_code(req, self.code, len(self.code))
            if rc == 0 and self.stdin:
                step = "set_stdin"
                rc = lib.airlock_run_req_set_stdin(req, self.stdin, len(self.stdin))
            for arg in self.args:
                if rc == 0:
                    step = "add_arg"
                    rc = lib.airlock_run_req_add_arg(req, arg)
            for key, value in self.env:
                if rc == 0:
                    step = "set_env"
                    rc = lib.airlock_run_req_set_env(req, key, value)
            for name, content in self.files:
                if rc == 0:
                    step = "add_file " + name.decode("utf-8", "replace")
                    rc = lib.airlock_run_req_add_file(req, name, content, len(content))
            for limit, value in self.limits.items():
                if rc == 0:
                    step = "set_limit"
                    rc = lib.airlock_run_req_set_limit(req, limit, value)
            if rc == 0 and self.profile is not None:
                step = "set_profile"
                if not hasattr(lib, "airlock_run_req_set_profile"):
                    raise SandboxError("profiles need libairlock 0.6 or later")
                rc = lib.airlock_run_req_set_profile(req, self.profile)
            for name in self.mounts:
                if rc == 0:
                    step = "add_mount"
                    if not hasattr(lib, "airlock_run_req_add_mount"):
                        raise SandboxError("mounts need libairlock 0.7 or later")
                    rc = lib.airlock_run_req_add_mount(req, name)
            if rc == 0 and self.session is not None:
                step = "set_session"
                rc = lib.airlock_run_req_set_session(req, self.session)
            if rc == 0 and self.cell:
                step = "set_cell"
                if not hasattr(lib, "airlock_run_req_set_cell"):
                    raise SandboxError("interpreter sessions need libairlock 0.9 or later")
                rc = lib.airlock_run_req_set_cell(req, True)
            if rc == 0 and self.figures_svg:
                step = "set_figures_svg"
                if not hasattr(lib, "airlock_run_req_set_figures_svg"):
                    raise SandboxError("figures=\"svg\" needs libairlock 0.10 or later")
                rc = lib.airlock_run_req_set_figures_svg(req, True)
            if rc == 0 and self.ipython:
                step = "set_ipython"
                if not hasattr(lib, "airlock_run_req_set_ipython"):
                    raise SandboxError("ipython=True needs libairlock 0.10 or later")
                rc = lib.airlock_run_req_set_ipython(req, True)
            if rc == 0 and self.stream:
                step = "set_stream"
                rc = lib.airlock_run_req_set_stream(req, True)
            if self.tools is not None:
                if not hasattr(lib, "airlock_run_req_add_tool"):
                    raise SandboxError("tools need libairlock 0.8 or later")
                for name, description, schema in self.tools.declarations():
                    if rc == 0:
                        step = "add_tool " + name.decode()
                        rc = lib.airlock_run_req_add_tool(req, name, description, schema)
            if rc == -_errno.ENOMEM:
                raise MemoryError(f"airlock_run_req_{step}: out of memory")
            if rc < 0:
                # Bounds libairlock checks (counts, sizes, duplicate names).
                raise ValueError(f"request refused by libairlock at {step}: {_strerror(rc)}")
        except BaseException:
            lib.airlock_run_req_free(req)
            raise
        return req


def _attach_tools(
    request: _Request,
    tools: Optional[Mapping[str, Callable[..., Any]]],
    approve: Optional[ApproveHook],
    blocking_on_output: Optional[Callable[[str, bytes], None]],
) -> None:
    """Give request the tools its code may call; blocking_on_output is the
    on_output of a blocking run (which cannot also serve tools), else None."""
    if tools is not None:
        if blocking_on_output is not None:
            raise ValueError("run_sync takes tools or on_output, not both")
        request.tools = ToolSet(tools, approve)
    elif approve is not None:
        raise ValueError("approve needs tools")


class _RunArgs:
    """The arguments of a run method: AirlockSandbox.run() and run_sync(), and
    the run() of AirlockSession and AirlockSessionSync.

    _RUN_KEYWORDS below is their one definition. Each method is written
    `def run(self, a: _RunArgs)` under @_run_method(...), which gives it the
    public signature (inspect, help(), the docs) and binds every call against
    that signature, so a wrong call is the TypeError it always was.
    """

    __slots__ = (
        "code", "language", "limits", "files", "env", "args", "stdin", "mounts", "on_output", "tools", "approve", "timeout",
        "figures",
    )

    def __init__(self, bound: inspect.BoundArguments) -> None:
        bound.apply_defaults()
        for name in self.__slots__:
            setattr(self, name, bound.arguments.get(name))

    def request(self, default_limits: SandboxLimits) -> _Request:
        """The checked _Request (limits None: default_limits)."""
        limits = default_limits if self.limits is None else self.limits
        svg = figures_svg(self.figures)
        request = _Request(self.code, self.language, limits, self.files, self.env, self.args, self.stdin, self.mounts)
        request.figures_svg = svg
        return request

    def attach_tools(self, request: _Request, blocking: bool) -> None:
        """_attach_tools() with this call's tools and approve."""
        _attach_tools(request, self.tools, self.approve, self.on_output if blocking else None)


# (name, default, annotation as the source writes it) of each keyword, in order.
_RUN_KEYWORDS: Tuple[Tuple[str, Any, str], ...] = (
    ("language", "python", "str"),
    ("limits", None, "Optional[SandboxLimits]"),
    ("files", None, "Optional[Mapping[str, BytesLike]]"),
    ("env", None, "Optional[Mapping[str, str]]"),
    ("args", None, "Optional[Sequence[str]]"),
    ("stdin", None, "Optional[BytesLike]"),
    ("mounts", None, "Optional[Sequence[str]]"),
    ("on_output", None, "Optional[OutputCallback]"),
    ("tools", None, "Optional[Mapping[str, Callable[..., Any]]]"),
    ("approve", None, "Optional[ApproveHook]"),
    ("timeout", None, "Optional[float]"),
    ("figures", "png", "str"),
)


def figures_svg(figures: object) -> bool:
    """Whether figures= ("png" or "svg") asks SVG: a cell's, a python run's."""
    if figures not in ("png", "svg"):
        raise ValueError(f"figures must be \"png\" or \"svg\", not {figures!r}")
    return figures == "svg"


def _run_signature(mounts: bool, blocking: bool) -> inspect.Signature:
    """The public signature of a run method: without mounts for a session's
    runs, and a plain on_output callback for a blocking one."""
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD), P("code", P.POSITIONAL_OR_KEYWORD, annotation="Union[str, bytes]")]
    for name, default, annotation in _RUN_KEYWORDS:
        if name == "mounts" and not mounts:
            continue
        if name == "on_output" and blocking:
            annotation = "Optional[Callable[[str, bytes], None]]"
        params.append(P(name, P.KEYWORD_ONLY, default=default, annotation=annotation))
    return inspect.Signature(params, return_annotation="SandboxResult")


def _run_method(*, mounts: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate `def run(self, a: _RunArgs)` (async or not) as a run method
    with the keywords of _RUN_KEYWORDS (mounts: whether it takes them)."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        is_async = inspect.iscoroutinefunction(fn)
        sig = _run_signature(mounts, blocking=not is_async)
        keep = ("__module__", "__name__", "__qualname__", "__doc__")
        if is_async:

            @functools.wraps(fn, assigned=keep, updated=())
            async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
                return await fn(self, _RunArgs(sig.bind(self, *args, **kwargs)))

        else:

            @functools.wraps(fn, assigned=keep, updated=())
            def method(self: Any, *args: Any, **kwargs: Any) -> Any:
                return fn(self, _RunArgs(sig.bind(self, *args, **kwargs)))

        method.__signature__ = sig  # type: ignore[attr-defined]
        return method

    return wrap
