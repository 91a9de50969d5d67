"""SandboxResult from a struct airlock_result: one function per group of fields."""

from __future__ import annotations

import ctypes
import os
from typing import Any, Dict, List, Optional, Tuple

from . import _lib
from ._types import (
    SandboxArtifact,
    SandboxDisplay,
    SandboxError,
    SandboxMemoryError,
    SandboxNetwork,
    SandboxProcessLimitError,
    SandboxResult,
    SandboxTimeoutError,
    SandboxToolCall,
)


def _bytes_at(getter: Any, res: ctypes.c_void_p, *extra: Any) -> bytes:
    """Copy the bytes a libairlock result getter points at."""
    data = ctypes.c_void_p()
    size = ctypes.c_size_t()
    rc = getter(res, *extra, ctypes.byref(data), ctypes.byref(size))
    if rc < 0 or not size.value:
        return b""
    return ctypes.string_at(data.value, size.value)


def _network(lib: ctypes.CDLL, res: ctypes.c_void_p) -> Optional[SandboxNetwork]:
    """The network figures of a network = proxy run, or None (also before libairlock 0.7)."""
    if not hasattr(lib, "airlock_result_has_network") or not lib.airlock_result_has_network(res):
        return None
    refusals = []
    for i in range(lib.airlock_result_network_refusal_count(res)):
        reason = ctypes.c_char_p()
        host = lib.airlock_result_network_refusal(res, i, ctypes.byref(reason)) or b""
        refusals.append((host.decode("utf-8", "replace"), (reason.value or b"").decode("utf-8", "replace")))
    return SandboxNetwork(
        bytes_up=int(lib.airlock_result_network(res, 0)),
        bytes_down=int(lib.airlock_result_network(res, 1)),
        connections=int(lib.airlock_result_network(res, 2)),
        refused=int(lib.airlock_result_network(res, 3)),
        contacted=tuple(
            (lib.airlock_result_network_contacted(res, i) or b"").decode("utf-8", "replace")
            for i in range(lib.airlock_result_network_contacted_count(res))
        ),
        refusals=tuple(refusals),
    )


def _outputs(lib: ctypes.CDLL, res: ctypes.c_void_p) -> Dict[str, Any]:
    """stdout, stderr and the artifacts (with what was left out)."""
    out = _bytes_at(lib.airlock_result_stdout, res)
    err = _bytes_at(lib.airlock_result_stderr, res)
    artifacts = []
    for i in range(lib.airlock_result_artifact_count(res)):
        name = lib.airlock_result_artifact_name(res, i) or b""
        artifacts.append(
            SandboxArtifact(
                # os.fsdecode: a name that is not UTF-8 keeps its bytes as
                # surrogates (os.fsencode gives them back), as os.listdir does.
                name=os.fsdecode(name),
                content=_bytes_at(lib.airlock_result_artifact_data, res, i),
                truncated=bool(lib.airlock_result_artifact_truncated(res, i)),
                size=int(lib.airlock_result_artifact_size(res, i)),
            )
        )
    omitted = omitted_bytes = 0
    if hasattr(lib, "airlock_result_artifacts_omitted"):  # libairlock 0.5
        omitted = int(lib.airlock_result_artifacts_omitted(res))
        omitted_bytes = int(lib.airlock_result_artifacts_omitted_bytes(res))
    return dict(
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        stdout_truncated=bool(lib.airlock_result_stdout_truncated(res)),
        stderr_truncated=bool(lib.airlock_result_stderr_truncated(res)),
        stdout_bytes=out,
        stderr_bytes=err,
        artifacts=tuple(artifacts),
        artifacts_omitted=omitted,
        artifacts_omitted_bytes=omitted_bytes,
    )


def _figures(lib: ctypes.CDLL, res: ctypes.c_void_p, outcome: int) -> Dict[str, Any]:
    """How the run ended and what it used."""
    name = lib.airlock_outcome_name(outcome)
    peak = int(lib.airlock_result_memory_peak_bytes(res))
    return dict(
        outcome=name.decode() if name else str(outcome),
        exit_code=int(lib.airlock_result_exit_code(res)) if outcome == _lib.OUTCOME_EXITED else None,
        signal=int(lib.airlock_result_signal(res)) if outcome == _lib.OUTCOME_SIGNALED else None,
        duration=lib.airlock_result_wall_ms(res) / 1000.0,
        cpu_time=lib.airlock_result_cpu_ms(res) / 1000.0,
        memory_peak_bytes=peak or None,
        queued_seconds=lib.airlock_result_queued_ms(res) / 1000.0,
    )


def _calls(lib: ctypes.CDLL, res: ctypes.c_void_p) -> Dict[str, Any]:
    """The tool calls (libairlock 0.8), the advisories (0.9) and the network figures."""
    calls: List[SandboxToolCall] = []
    if hasattr(lib, "airlock_result_tool_call_count"):  # libairlock 0.8
        for i in range(lib.airlock_result_tool_call_count(res)):
            calls.append(
                SandboxToolCall(
                    tool=(lib.airlock_result_tool_call_name(res, i) or b"").decode("utf-8", "replace"),
                    outcome=(lib.airlock_result_tool_call_outcome(res, i) or b"").decode(),
                    seconds=lib.airlock_result_tool_call_ms(res, i) / 1000.0,
                )
            )
    advisories: Tuple[str, ...] = ()
    if hasattr(lib, "airlock_result_advisory_count"):  # libairlock 0.9
        advisories = tuple(
            (lib.airlock_result_advisory(res, i) or b"").decode("utf-8", "replace")
            for i in range(lib.airlock_result_advisory_count(res))
        )
    return dict(tool_calls=tuple(calls), advisories=advisories, network=_network(lib, res))


def _cell(lib: ctypes.CDLL, res: ctypes.c_void_p) -> Dict[str, Any]:
    """A cell's number, state, value and rich outputs (libairlock 0.9); zeros for a run."""
    cell, state, value, display = 0, None, None, []
    if hasattr(lib, "airlock_result_cell") and lib.airlock_result_cell(res):  # libairlock 0.9
        cell = int(lib.airlock_result_cell(res))
        state = "kept" if lib.airlock_result_state(res) == 1 else "lost"
        raw = lib.airlock_result_value(res)
        value = raw.decode("utf-8", "replace") if raw is not None else None
        for i in range(lib.airlock_result_display_count(res)):
            mime = ctypes.c_char_p()
            data = ctypes.c_void_p()
            size = ctypes.c_size_t()
            if lib.airlock_result_display_get(res, i, ctypes.byref(mime), ctypes.byref(data), ctypes.byref(size)) == 0:
                display.append(
                    SandboxDisplay(mime=(mime.value or b"").decode(), data=ctypes.string_at(data, size.value) if size.value else b"")
                )
    return dict(cell=cell, state=state, value=value, display=tuple(display))


def _raise_for_outcome(lib: ctypes.CDLL, res: ctypes.c_void_p, outcome: int, result: SandboxResult) -> None:
    """Raise the error a limit or a failure outcome stands for; nothing for an exit or a signal."""
    if outcome in (_lib.OUTCOME_EXITED, _lib.OUTCOME_SIGNALED):
        return
    if outcome == _lib.OUTCOME_WALL_LIMIT:
        raise SandboxTimeoutError(
            f"the run hit its wall-clock limit after {result.duration:.3f} s", limit="wall", result=result
        )
    if outcome == _lib.OUTCOME_CPU_LIMIT:
        raise SandboxTimeoutError(
            f"the run hit its CPU-time limit after {result.cpu_time:.3f} s of CPU", limit="cpu", result=result
        )
    if outcome == _lib.OUTCOME_MEMORY_LIMIT:
        raise SandboxMemoryError("the run hit its memory limit", result=result)
    if outcome == _lib.OUTCOME_PROCESS_LIMIT:
        raise SandboxProcessLimitError("the run hit its process limit (a fork was refused)", result=result)
    if outcome == _lib.OUTCOME_CANCELLED:
        raise SandboxError("the run was cancelled (by its owner or a stopping daemon)", result=result)
    why = lib.airlock_result_error(res)
    message = why.decode("utf-8", "replace") if why else f"outcome {result.outcome}"
    raise SandboxError("the sandbox failed: " + message, result=result)


def _convert(lib: ctypes.CDLL, res: ctypes.c_void_p) -> SandboxResult:
    """Turn a struct airlock_result into a SandboxResult, or raise for a limit or an error outcome.

    Does not free res.
    """
    outcome = lib.airlock_result_outcome(res)
    result = SandboxResult(
        **_cell(lib, res), **_calls(lib, res), **_outputs(lib, res), **_figures(lib, res, outcome)
    )
    _raise_for_outcome(lib, res, outcome, result)
    return result
