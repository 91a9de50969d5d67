"""sandbox_tool: the run_python tool an agent exposes to a model."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional, Union

from ._types import (
    SandboxLimits,
    SandboxMemoryError,
    SandboxProcessLimitError,
    SandboxResult,
    SandboxTimeoutError,
)

__all__ = ["SandboxTool", "sandbox_tool", "TOOL_NAME", "TOOL_SCHEMA"]

TOOL_NAME = "run_python"

# The errors of a run that a limit stopped: the tool answers them, with the limit named.
_LIMIT_ERRORS = (SandboxTimeoutError, SandboxMemoryError, SandboxProcessLimitError)

TOOL_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string"}},
    "required": ["code"],
}

_LIMIT_WORDS = {"wall": "wall-clock time", "cpu": "CPU time", "memory": "memory", "processes": "process"}


def _describe_limits(limits: SandboxLimits) -> str:
    """The limits a model should know about, in words."""
    parts = []
    if limits.wall_seconds is not None:
        parts.append(f"{limits.wall_seconds:g} s wall-clock")
    if limits.cpu_seconds is not None:
        parts.append(f"{limits.cpu_seconds:g} s CPU")
    if limits.memory_bytes is not None:
        parts.append(f"{limits.memory_bytes // (1024 * 1024)} MiB memory")
    return ", ".join(parts) if parts else "the daemon's defaults"


class SandboxTool:
    """A model tool that runs Python code in a fresh airlockd sandbox per call.

    description: the tool's declaration for a model API (name, description,
        JSON schema of its single "code" argument).
    limits: the limits every call runs with (never looser than the sandbox's,
        or the session's when it has limits of its own).
    session: None, or the AirlockSession / AirlockSessionSync every call runs
        in (so files one call writes are there for the next).
    parallel_safe: True without a session: every call gets its own
        single-use sandbox and workspace, so calls cannot see each other's
        files. False with a session: the calls share its workspace, so two
        calls in flight would read and write the same files, and the daemon
        runs a session's runs one at a time anyway (the second would wait for
        the first, its wall-clock time counting only once it starts).

    Calling it (`await tool(code)` or `tool.call_sync(code)`) returns a
    JSON-ready dict: {"ok": True, "exit_code", "stdout", "stderr",
    "artifacts": [names]} for a run that finished (whatever its exit code),
    or {"ok": False, "error": {"code": "sandbox_limit_exceeded", "limit":
    "wall"|"cpu"|"memory", "message"}, "stdout", "stderr"} when a limit killed
    it: a refusal, not an exception, because running the same code again
    would hit the same ceiling. Other failures (daemon unreachable or
    refusing, bad arguments) raise.
    """

    name = TOOL_NAME
    parallel_safe = True

    def __init__(
        self, sandbox: Any, limits: Optional[SandboxLimits] = None, session: Any = None, runtime: str = "python"
    ) -> None:
        self.runtime = self._runtime(runtime)
        if not callable(getattr(sandbox, "run", None)):
            raise TypeError("sandbox must have an async run(code, *, limits=...) method")
        base = getattr(sandbox, "limits", None)
        core = None
        if session is not None:
            from ._session import AirlockSession, AirlockSessionSync

            if not isinstance(session, (AirlockSession, AirlockSessionSync)):
                raise TypeError(f"session must be an AirlockSession or None, not {type(session).__name__}")
            if session.sandbox is not sandbox:
                raise ValueError("the session belongs to another sandbox")
            core = session._core
            base = core.run_limits
        if limits is None:
            limits = base if isinstance(base, SandboxLimits) else SandboxLimits()
        elif not isinstance(limits, SandboxLimits):
            raise TypeError(f"limits must be SandboxLimits or None, not {type(limits).__name__}")
        elif isinstance(base, SandboxLimits):
            looser = limits.looser_fields(base)
            if looser:
                detail = ", ".join(f"{f}={getattr(limits, f)!r} > {getattr(base, f)!r}" for f in looser)
                raise ValueError(f"the tool's limits must not be looser than the sandbox's: {detail}")
            limits = limits.inherit(base)
        self.sandbox = sandbox
        self.limits = limits
        self.session = session
        self._core = core
        # A session's calls share one workspace and run one at a time.
        self.parallel_safe = session is None

    @property
    def description(self) -> Dict[str, Any]:
        """The tool declaration: {"name", "description", "input_schema"} (also as "parameters")."""
        if self._core is None:
            text = (
                "Run Python 3 code in a fresh, isolated sandbox and return its exit code, stdout "
                "and stderr. Each call starts from nothing: no network, no state from earlier "
                "calls, only the standard library. Print what you want to see. Files the code "
                "writes in its working directory are returned by name as artifacts. "
                f"Limits: {_describe_limits(self.limits)}; output beyond the limit is cut."
            )
        else:
            text = (
                "Run Python 3 code in an isolated sandbox and return its exit code, stdout and "
                "stderr. Calls share one working directory: files written by earlier calls are "
                "still there, but each call is a new Python process, so variables and imports "
                "do not carry over (save what you need to a file). No network, only the "
                "standard library. Print what you want to see. Files a call creates or changes "
                "are returned by name as artifacts. "
                f"Limits per call: {_describe_limits(self.limits)}; output beyond the limit is cut."
            )
        return {
            "name": TOOL_NAME,
            "description": text,
            "input_schema": dict(TOOL_SCHEMA),
            "parameters": dict(TOOL_SCHEMA),
        }

    @staticmethod
    def _runtime(runtime: object) -> str:
        # A Python runtime only: "python" (standard library) or "python-..."
        # ("python-site": the system's packages, numpy, pandas, matplotlib).
        if not isinstance(runtime, str) or not (runtime == "python" or runtime.startswith("python-")):
            raise ValueError(f"runtime must be a Python runtime (python, python-site, ...), not {runtime!r}")
        return runtime

    @staticmethod
    def _check(code: object) -> str:
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, not {type(code).__name__}")
        return code

    @staticmethod
    def _ok(result: SandboxResult) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "ok": True,
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "artifacts": [a.name for a in result.artifacts],
        }
        if result.signal is not None:
            out["signal"] = result.signal
        if result.stdout_truncated or result.stderr_truncated:
            out["truncated"] = True
        if result.artifacts_omitted:
            out["artifacts_omitted"] = result.artifacts_omitted
            out["artifacts_omitted_bytes"] = result.artifacts_omitted_bytes
        return out

    def _limit_refusal(
        self, exc: Union[SandboxTimeoutError, SandboxMemoryError, SandboxProcessLimitError]
    ) -> Dict[str, Any]:
        """The answer to a run that a limit stopped (one of _LIMIT_ERRORS)."""
        if isinstance(exc, SandboxTimeoutError):
            limit = exc.limit
        elif isinstance(exc, SandboxMemoryError):
            limit = "memory"
        else:
            limit = "processes"
        return self._refusal(limit, exc, exc.result)

    def _refusal(self, limit: str, exc: Exception, result: Optional[SandboxResult]) -> Dict[str, Any]:
        if limit == "wall":
            bound = f" of {self.limits.wall_seconds:g} s" if self.limits.wall_seconds else ""
        elif limit == "cpu":
            bound = f" of {self.limits.cpu_seconds:g} s" if self.limits.cpu_seconds else ""
        elif limit == "processes":
            bound = f" of {self.limits.processes}" if getattr(self.limits, "processes", None) else ""
        else:
            bound = f" of {self.limits.memory_bytes} bytes" if self.limits.memory_bytes else ""
        return {
            "ok": False,
            "error": {
                "code": "sandbox_limit_exceeded",
                "limit": limit,
                "message": f"the code exceeded the sandbox's {_LIMIT_WORDS[limit]} limit{bound}; "
                "running it again would hit the same limit",
            },
            "stdout": result.stdout if result else "",
            "stderr": result.stderr if result else "",
        }

    async def __call__(self, code: str, runtime: Optional[str] = None) -> Dict[str, Any]:
        """Run code (in runtime, default the tool's) and return the tool result dict (see the class docstring)."""
        code = self._check(code)
        rt = self.runtime if runtime is None else self._runtime(runtime)
        try:
            if self._core is not None:
                core = self._core
                result = await core.run_async(core.code_request(code, rt, self.limits), None)
            elif rt == "python":
                result = await self.sandbox.run(code, limits=self.limits)
            else:
                result = await self.sandbox.run(code, language=rt, limits=self.limits)
        except _LIMIT_ERRORS as e:
            return self._limit_refusal(e)
        return self._ok(result)

    def call_sync(self, code: str, runtime: Optional[str] = None) -> Dict[str, Any]:
        """Like `await tool(code)`, blocking (uses the sandbox's run_sync when it has one)."""
        code = self._check(code)
        rt = self.runtime if runtime is None else self._runtime(runtime)
        run_sync = getattr(self.sandbox, "run_sync", None)
        if run_sync is None:
            return asyncio.run(self(code, rt))
        try:
            if self._core is not None:
                core = self._core
                result = core.run_blocking(core.code_request(code, rt, self.limits), None)
            elif rt == "python":
                result = run_sync(code, limits=self.limits)
            else:
                result = run_sync(code, language=rt, limits=self.limits)
        except _LIMIT_ERRORS as e:
            return self._limit_refusal(e)
        return self._ok(result)

    def __repr__(self) -> str:
        where = f", session={self.session.id!r}" if self.session is not None else ""
        return f"SandboxTool(name={TOOL_NAME!r}, limits={self.limits!r}{where})"


def sandbox_tool(
    sandbox: Any, limits: Optional[SandboxLimits] = None, session: Any = None, runtime: str = "python"
) -> SandboxTool:
    """The run_python tool over sandbox, with its own limits (never looser than the sandbox's).

    limits: None uses the sandbox's limits; a field left None takes the
    sandbox's value; a field looser than the sandbox's raises ValueError.
    session: an AirlockSession (or AirlockSessionSync) of sandbox to run every
    call in; its limits, when it has its own, take the sandbox's place above.
    The tool then declares parallel_safe = False: its calls share the
    session's workspace and the daemon runs them one at a time.
    runtime: the Python runtime every call uses unless it names one
    (`tool(code, runtime=...)`): "python" (the standard library only) or
    "python-site" (the system's packages: numpy, pandas, matplotlib, scipy
    where installed); anything not "python" or "python-..." is a ValueError.
    """
    return SandboxTool(sandbox, limits, session, runtime)
