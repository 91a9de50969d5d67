"""Python values from libairlock's objects: SandboxResult from a struct
airlock_result (one function per group of fields), info()'s dict from a struct
airlock_info."""

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


# A profile's policy switches: (enum airlock_profile_switch, key in info()["profiles"][name]).
_PROFILE_SWITCHES: Tuple[Tuple[int, str], ...] = ((0, "file_write"), (1, "subprocess"))
# A profile's lists of names: (enum airlock_profile_list, key in info()["profiles"][name]).
_PROFILE_LISTS: Tuple[Tuple[int, str], ...] = (
    (0, "mounts"),
    (1, "allow_mounts"),
    (2, "blocked_imports"),
    (3, "hidden_paths"),
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
    """A cell's number, state and value (libairlock 0.9); zeros for a run. Its
    rich outputs, or a python run's figures (issue 30)."""
    cell, state, value, display = 0, None, None, []
    if not hasattr(lib, "airlock_result_cell"):  # libairlock 0.9
        return dict(cell=cell, state=state, value=value, display=())
    if lib.airlock_result_cell(res):
        cell = int(lib.airlock_result_cell(res))
        state = "kept" if lib.airlock_result_state(res) == 1 else "lost"
        raw = lib.airlock_result_value(res)
        value = raw.decode("utf-8", "replace") if raw is not None else None
    is_value = getattr(lib, "airlock_result_display_is_value", None)  # libairlock 0.10
    for i in range(lib.airlock_result_display_count(res)):
        mime = ctypes.c_char_p()
        data = ctypes.c_void_p()
        size = ctypes.c_size_t()
        if lib.airlock_result_display_get(res, i, ctypes.byref(mime), ctypes.byref(data), ctypes.byref(size)) == 0:
            display.append(
                SandboxDisplay(mime=(mime.value or b"").decode(), data=ctypes.string_at(data, size.value) if size.value else b"",
                               value=bool(is_value(res, i)) if is_value is not None else False)
            )
    return dict(cell=cell, state=state, value=value, display=tuple(display), **_cell_error(lib, res))

def _cell_error(lib: ctypes.CDLL, res: ctypes.c_void_p) -> Dict[str, Any]:
    """A cell's restarted flag and exception (libairlock 0.10): False and Nones otherwise."""
    out: Dict[str, Any] = dict(restarted=False, ename=None, evalue=None, traceback=None)
    if not hasattr(lib, "airlock_result_restarted") or not lib.airlock_result_cell(res):
        return out
    out["restarted"] = bool(lib.airlock_result_restarted(res))
    name = lib.airlock_result_error_name(res)
    if name is not None:
        out["ename"] = name.decode("utf-8", "replace")
        out["evalue"] = (lib.airlock_result_error_value(res) or b"").decode("utf-8", "replace")
        out["traceback"] = tuple((lib.airlock_result_traceback(res) or b"").decode("utf-8", "replace").splitlines())
    return out


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
    if outcome == _lib.OUTCOME_CANCELLED and result.cell:
        kept = "the interpreter's state is kept" if result.state == "kept" else "the interpreter's state was lost"
        raise SandboxError(f"cell {result.cell} was interrupted (cancelled): {kept}", result=result)
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


def _info_capacity(lib: ctypes.CDLL, info: ctypes.c_void_p) -> Dict[str, int]:
    """info()["capacity"]: the figures the daemon said (enum airlock_capacity order)."""
    if not hasattr(lib, "airlock_info_capacity"):
        return {}
    names = ("max_runs", "max_runs_per_uid", "max_interpreters", "max_interpreters_per_uid")
    figures = {name: int(lib.airlock_info_capacity(info, i)) for i, name in enumerate(names)}
    return {name: v for name, v in figures.items() if v != 0}

def _info_profiles(lib: ctypes.CDLL, info: ctypes.c_void_p) -> Dict[str, Dict[str, Any]]:
    """info()["profiles"]: name -> {"default": bool, "limits": {limit: {"default", "ceiling"}},
    "file_write": bool, "subprocess": bool, "mounts": [str], "allow_mounts": [str],
    "blocked_imports": [str], "hidden_paths": [str]} (policy switches: file_write False when the kernel
    keeps the runs' workspace and /tmp read-only, subprocess False when it allows one
    process, one thread, one exec; True also from a library or daemon before the switch;
    the lists are the names of the profile's airlockd.conf(5) keys, [] from a library or
    daemon before 0.9; blocked_imports is advisory: findings go in SandboxResult.advisories,
    the run is not refused)."""
    out: Dict[str, Dict[str, Any]] = {}
    if not hasattr(lib, "airlock_info_profile_count"):
        return out
    for i in range(lib.airlock_info_profile_count(info)):
        raw = lib.airlock_info_profile_name(info, i)
        if raw is None:
            continue
        limits: Dict[str, Dict[str, int]] = {}
        k = 0
        while lib.airlock_limit_name(k) is not None:
            limits[lib.airlock_limit_name(k).decode()] = {
                "default": int(lib.airlock_info_profile_limit(info, i, k)),
                "ceiling": int(lib.airlock_info_profile_ceiling(info, i, k)),
            }
            k += 1
        out[raw.decode("ascii", "replace")] = {
            "default": bool(lib.airlock_info_profile_is_default(info, i)),
            "limits": limits,
        }
        for sw, key in _PROFILE_SWITCHES:
            allowed = True
            if hasattr(lib, "airlock_info_profile_switch"):
                allowed = lib.airlock_info_profile_switch(info, i, sw) != 0
            out[raw.decode("ascii", "replace")][key] = allowed
        for lst, key in _PROFILE_LISTS:
            names: List[str] = []
            if hasattr(lib, "airlock_info_profile_list_count"):
                for k in range(lib.airlock_info_profile_list_count(info, i, lst)):
                    names.append((lib.airlock_info_profile_list(info, i, lst, k) or b"").decode("ascii", "replace"))
            out[raw.decode("ascii", "replace")][key] = names
    return out

def _info_mounts(lib: ctypes.CDLL, info: ctypes.c_void_p) -> Dict[str, Dict[str, Any]]:
    """info()["mounts"]: name -> {"target": str, "package": bool}."""
    out: Dict[str, Dict[str, Any]] = {}
    if not hasattr(lib, "airlock_info_mount_count"):
        return out
    for i in range(lib.airlock_info_mount_count(info)):
        name = (lib.airlock_info_mount_name(info, i) or b"").decode("ascii", "replace")
        out[name] = {
            "target": (lib.airlock_info_mount_target(info, i) or b"").decode("utf-8", "replace"),
            "package": bool(lib.airlock_info_mount_is_package(info, i)),
        }
    return out


def _convert_info(lib: ctypes.CDLL, info: ctypes.c_void_p) -> Dict[str, Any]:
    """AirlockSandbox.info()'s dict from a struct airlock_info (see there). Does not free info."""
    runtimes = []
    for i in range(lib.airlock_info_runtime_count(info)):
        name = lib.airlock_info_runtime_name(info, i)
        if name is not None:
            runtimes.append(name.decode("utf-8", "replace"))
    limits: Dict[str, Dict[str, int]] = {}
    i = 0
    while True:
        limit_name = lib.airlock_limit_name(i)
        if limit_name is None:
            break
        limits[limit_name.decode()] = {
            "default": int(lib.airlock_info_limit_default(info, i)),
            "ceiling": int(lib.airlock_info_limit_ceiling(info, i)),
        }
        i += 1
    version = lib.airlock_info_daemon_version(info) or b""
    rc_name = None
    if hasattr(lib, "airlock_info_resource_control"):
        raw = lib.airlock_info_resource_control(info)
        rc_name = raw.decode("utf-8", "replace") if raw else None
    packages: Dict[str, List[str]] = {}
    if hasattr(lib, "airlock_info_runtime_packages"):
        for i, name in enumerate(runtimes):
            raw = lib.airlock_info_runtime_packages(info, i)
            if raw is not None:
                text = raw.decode("utf-8", "replace")
                packages[name] = text.split(",") if text else []
    return {
        "daemon_version": version.decode("utf-8", "replace"),
        "runtimes": runtimes,
        "limits": limits,
        "resource_control": rc_name,
        "runtime_packages": packages,
        "profiles": _info_profiles(lib, info),
        "mounts": _info_mounts(lib, info),
        "capacity": _info_capacity(lib, info),
    }
