"""Loading libairlock with ctypes and declaring the functions the binding calls.

Only the standard library is used. The library is found, in this order: an
explicit path given by the caller, the environment variable AIRLOCK_LIBRARY,
the installed soname ``libairlock.so.0``, then whatever
``ctypes.util.find_library("airlock")`` names.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import threading
from typing import Dict, Optional, Union

__all__ = ["load_library", "LibraryNotFoundError", "SONAME", "has_sessions", "has_bundles", "files_max"]

SONAME = "libairlock.so.0"

# enum airlock_outcome (airlock.h); values are stable.
OUTCOME_EXITED = 0
OUTCOME_SIGNALED = 1
OUTCOME_WALL_LIMIT = 2
OUTCOME_CPU_LIMIT = 3
OUTCOME_MEMORY_LIMIT = 4
OUTCOME_ERROR = 5
OUTCOME_CANCELLED = 6  # since libairlock 0.2
OUTCOME_PROCESS_LIMIT = 7  # since libairlock 0.4 (daemons with cgroup2)

# enum airlock_limit (airlock.h); values are stable.
LIMIT_WALL_MS = 0
LIMIT_CPU_MS = 1
LIMIT_MEMORY_BYTES = 2
LIMIT_PROCESSES = 3
LIMIT_OPEN_FILES = 4
LIMIT_FILE_SIZE_BYTES = 5
LIMIT_OUTPUT_BYTES = 6
LIMIT_WORKSPACE_BYTES = 7
LIMIT_TMP_BYTES = 8
LIMIT_ARTIFACTS = 9
LIMIT_ARTIFACT_BYTES = 10

# Input files one run request carries: with libairlock 0.8 (file bundles,
# has_bundles()) RUN_FILES_MAX, with an older one FILES_MAX; more go through
# a temporary session.
FILES_MAX = 64
RUN_FILES_MAX = 4096

# enum airlock_stream (airlock.h, since 0.3); values are stable.
STREAM_STDOUT = 1
STREAM_STDERR = 2

# enum airlock_file_kind (airlock.h, since 0.3); values are stable.
FILE_KINDS = {0: "file", 1: "dir", 2: "link", 3: "other"}

# A session id: 32 lowercase hex characters (AIRLOCK_SESSION_ID_LEN).
SESSION_ID_LEN = 32

# The errno values libairlock returns for a daemon error reply (airlock.h,
# airlock_conn_last_error); anything else from a run is a connection error.
DAEMON_ERRNOS = frozenset(
    {errno.EACCES, errno.EBUSY, errno.ENOENT, errno.E2BIG, errno.EPROTONOSUPPORT, errno.EPROTO}
)

_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_int = ctypes.c_int
_u64 = ctypes.c_uint64
_size = ctypes.c_size_t
_str = ctypes.c_char_p
_bool = ctypes.c_bool

# name: (restype, argtypes)
_SIGNATURES = {
    "airlock_connect_error": (_int, [_str, _pp, _str, _size, _str, _size]),
    "airlock_conn_free": (None, [_p]),
    "airlock_conn_fd": (_int, [_p]),
    "airlock_conn_last_error": (_int, [_p, ctypes.POINTER(_str), ctypes.POINTER(_str)]),
    "airlock_ping": (_int, [_p]),
    "airlock_info": (_int, [_p, _pp]),
    "airlock_info_free": (None, [_p]),
    "airlock_info_daemon_version": (_str, [_p]),
    "airlock_info_runtime_count": (_size, [_p]),
    "airlock_info_runtime_name": (_str, [_p, _size]),
    "airlock_info_limit_default": (_u64, [_p, _int]),
    "airlock_info_limit_ceiling": (_u64, [_p, _int]),
    "airlock_run_req_new": (_int, [_pp]),
    "airlock_run_req_free": (None, [_p]),
    "airlock_run_req_set_runtime": (_int, [_p, _str]),
    "airlock_run_req_set_code": (_int, [_p, _str, _size]),
    "airlock_run_req_add_arg": (_int, [_p, _str]),
    "airlock_run_req_set_env": (_int, [_p, _str, _str]),
    "airlock_run_req_set_stdin": (_int, [_p, _str, _size]),
    "airlock_run_req_add_file": (_int, [_p, _str, _str, _size]),
    "airlock_run_req_set_limit": (_int, [_p, _int, _u64]),
    "airlock_run": (_int, [_p, _p, _pp]),
    "airlock_run_submit": (_int, [_p, _p, ctypes.POINTER(ctypes.c_uint32)]),
    "airlock_conn_process": (_int, [_p]),
    "airlock_conn_next_result": (_int, [_p, ctypes.POINTER(ctypes.c_uint32), _pp]),
    "airlock_result_free": (None, [_p]),
    "airlock_result_outcome": (_int, [_p]),
    "airlock_result_exit_code": (_int, [_p]),
    "airlock_result_signal": (_int, [_p]),
    "airlock_result_wall_ms": (_u64, [_p]),
    "airlock_result_cpu_ms": (_u64, [_p]),
    "airlock_result_memory_peak_bytes": (_u64, [_p]),
    "airlock_result_queued_ms": (_u64, [_p]),
    "airlock_result_stdout": (_int, [_p, _pp, ctypes.POINTER(_size)]),
    "airlock_result_stderr": (_int, [_p, _pp, ctypes.POINTER(_size)]),
    "airlock_result_stdout_truncated": (_bool, [_p]),
    "airlock_result_stderr_truncated": (_bool, [_p]),
    "airlock_result_error": (_str, [_p]),
    "airlock_result_artifact_count": (_size, [_p]),
    "airlock_result_artifact_name": (_str, [_p, _size]),
    "airlock_result_artifact_size": (_u64, [_p, _size]),
    "airlock_result_artifact_truncated": (_bool, [_p, _size]),
    "airlock_result_artifact_data": (_int, [_p, _size, _pp, ctypes.POINTER(_size)]),
    "airlock_outcome_name": (_str, [_int]),
    "airlock_limit_name": (_str, [_int]),
}

_u32 = ctypes.c_uint32

# Since AIRLOCK_0.2 and AIRLOCK_0.3; declared when the library has them.
_OPTIONAL = {
    "airlock_cancel": (_int, [_p, _u32]),
    # 0.2: the caller's runs (AirlockSandbox.ps())
    "airlock_ps": (_int, [_p, _pp]),
    "airlock_ps_free": (None, [_p]),
    "airlock_ps_count": (_size, [_p]),
    "airlock_ps_run_id": (_u32, [_p, _size]),
    "airlock_ps_uid": (_u32, [_p, _size]),
    "airlock_ps_pid": (ctypes.c_int32, [_p, _size]),
    "airlock_ps_runtime": (_str, [_p, _size]),
    "airlock_ps_state": (_str, [_p, _size]),
    "airlock_ps_elapsed_ms": (_u64, [_p, _size]),
    # 0.3: sessions, file operations, streaming.
    "airlock_session_opts_new": (_int, [_pp]),
    "airlock_session_opts_free": (None, [_p]),
    "airlock_session_opts_set_workspace_bytes": (_int, [_p, _u64]),
    "airlock_session_opts_set_idle_timeout_ms": (_int, [_p, _u64]),
    "airlock_session_opts_set_lifetime_ms": (_int, [_p, _u64]),
    "airlock_session_opts_set_limit": (_int, [_p, _int, _u64]),
    "airlock_session_open": (_int, [_p, _p, ctypes.c_char_p]),
    # 0.10: a session's lease, its workspace as an archive.
    "airlock_session_extend": (_int, [_p, _str, _u64]),
    "airlock_session_save": (_int, [_p, _str, _pp]),
    "airlock_session_opts_set_archive": (_int, [_p, ctypes.c_char_p, _size]),
    "airlock_session_close": (_int, [_p, _str]),
    "airlock_session_list": (_int, [_p, _pp]),
    "airlock_session_list_free": (None, [_p]),
    "airlock_session_list_count": (_size, [_p]),
    "airlock_session_list_id": (_str, [_p, _size]),
    "airlock_session_list_age_ms": (_u64, [_p, _size]),
    "airlock_session_list_idle_ms": (_u64, [_p, _size]),
    "airlock_session_list_runs": (_u64, [_p, _size]),
    "airlock_session_list_state": (_str, [_p, _size]),
    "airlock_file_write": (_int, [_p, _str, _str, _str, _size]),
    "airlock_file_read": (_int, [_p, _str, _str, _pp]),
    "airlock_file_free": (None, [_p]),
    "airlock_file_data": (_int, [_p, _pp, ctypes.POINTER(_size)]),
    "airlock_file_size": (_u64, [_p]),
    "airlock_file_truncated": (_bool, [_p]),
    "airlock_file_list": (_int, [_p, _str, _str, _pp]),
    "airlock_file_list_free": (None, [_p]),
    "airlock_file_list_count": (_size, [_p]),
    "airlock_file_list_name": (_str, [_p, _size]),
    "airlock_file_list_kind": (_int, [_p, _size]),
    "airlock_file_list_size": (_u64, [_p, _size]),
    "airlock_file_list_mtime_ms": (_u64, [_p, _size]),
    "airlock_file_list_truncated": (_bool, [_p]),
    "airlock_file_delete": (_int, [_p, _str, _str]),
    "airlock_run_req_set_session": (_int, [_p, _str]),
    "airlock_run_req_set_stream": (_int, [_p, _bool]),
    "airlock_run_stream": (_int, [_p, _p, _p, _p, _pp]),
    "airlock_conn_next_event": (_int, [_p, _pp]),
    "airlock_event_free": (None, [_p]),
    "airlock_event_request_id": (_u32, [_p]),
    "airlock_event_stream": (_int, [_p]),
    "airlock_event_data": (_int, [_p, _pp, ctypes.POINTER(_size)]),
    # 0.4
    "airlock_info_resource_control": (_str, [_p]),
    "airlock_conn_check": (_int, [_p]),
    "airlock_connect_timeout": (_int, [_str, _u64, _pp, _str, _size, _str, _size]),
    "airlock_conn_set_timeout": (_int, [_p, _u64]),
    "airlock_library_version": (_str, []),
    # 0.5
    "airlock_result_artifacts_omitted": (_u64, [_p]),
    "airlock_result_artifacts_omitted_bytes": (_u64, [_p]),
    "airlock_info_runtime_packages": (_str, [_p, _size]),
    # 0.6: profiles
    "airlock_run_req_set_profile": (_int, [_p, _str]),
    "airlock_session_opts_set_profile": (_int, [_p, _str]),
    "airlock_info_profile_count": (_size, [_p]),
    "airlock_info_profile_name": (_str, [_p, _size]),
    "airlock_info_profile_is_default": (_bool, [_p, _size]),
    "airlock_info_profile_limit": (_u64, [_p, _size, _int]),
    "airlock_info_profile_ceiling": (_u64, [_p, _size, _int]),
    # 0.7: network egress
    "airlock_result_has_network": (_bool, [_p]),
    "airlock_result_network": (_u64, [_p, _int]),
    "airlock_result_network_contacted_count": (_size, [_p]),
    "airlock_result_network_contacted": (_str, [_p, _size]),
    "airlock_result_network_refusal_count": (_size, [_p]),
    "airlock_result_network_refusal": (_str, [_p, _size, ctypes.POINTER(ctypes.c_char_p)]),
    "airlock_info_profile_network": (_bool, [_p, _size]),
    "airlock_info_profile_allow_count": (_size, [_p, _size]),
    "airlock_info_profile_allow": (_str, [_p, _size, _size, ctypes.POINTER(ctypes.c_bool)]),
    # 0.7: mounts
    "airlock_run_req_add_mount": (_int, [_p, _str]),
    # 0.7: profiles' policy switches
    "airlock_info_profile_switch": (_int, [_p, _size, _int]),
    # 0.8: file bundles
    "airlock_run_req_add_file_mode": (_int, [_p, _str, _str, _size, ctypes.c_uint]),
    # 0.8: tools the run's code may call
    "airlock_run_req_add_tool": (_int, [_p, _str, _str, _str]),
    "airlock_event_kind": (_int, [_p]),
    "airlock_event_tool_call": (_u32, [_p]),
    "airlock_event_tool_name": (_str, [_p]),
    "airlock_tool_reply": (_int, [_p, _u32, _u32, _p, _size]),
    "airlock_tool_fail": (_int, [_p, _u32, _u32, _str, _bool]),
    "airlock_run_tools": (_int, [_p, _p, _p, _p, _pp]),
    "airlock_result_tool_call_count": (_size, [_p]),
    "airlock_result_tool_call_name": (_str, [_p, _size]),
    "airlock_result_tool_call_outcome": (_str, [_p, _size]),
    "airlock_result_tool_call_ms": (_u64, [_p, _size]),
    "airlock_result_tool_calls_omitted": (_u64, [_p]),
    # 0.9: interpreter sessions
    "airlock_session_opts_set_interpreter": (_int, [_p, _str]),
    "airlock_run_req_set_cell": (_int, [_p, _bool]),
    "airlock_run_req_set_figures_svg": (_int, [_p, _bool]),
    "airlock_run_req_set_ipython": (_int, [_p, _bool]),
    "airlock_session_list_interpreter": (_str, [_p, _size]),
    "airlock_result_cell": (_u64, [_p]),
    "airlock_result_state": (_int, [_p]),
    "airlock_result_value": (_str, [_p]),
    # 0.10: a cell's restart and exception (docs/design-jupyter.md §5)
    "airlock_result_restarted": (_bool, [_p]),
    "airlock_result_error_name": (_str, [_p]),
    "airlock_result_error_value": (_str, [_p]),
    "airlock_result_traceback": (_str, [_p]),
    "airlock_result_display_count": (_size, [_p]),
    "airlock_result_display_get": (_int, [_p, _size, ctypes.POINTER(ctypes.c_char_p), _pp, ctypes.POINTER(_size)]),
    "airlock_result_display_is_value": (_bool, [_p, _size]),
    # 0.9: advisories, mounts, profile lists
    "airlock_result_advisory_count": (_size, [_p]),
    "airlock_result_advisory": (_str, [_p, _size]),
    "airlock_info_profile_list_count": (_size, [_p, _size, _int]),
    "airlock_info_profile_list": (_str, [_p, _size, _int, _size]),
    "airlock_info_mount_count": (_size, [_p]),
    "airlock_info_mount_name": (_str, [_p, _size]),
    "airlock_info_mount_target": (_str, [_p, _size]),
    "airlock_info_mount_is_package": (_bool, [_p, _size]),
    "airlock_info_capacity": (ctypes.c_uint32, [_p, _int]),
    # 0.10: lists that say how many they leave out
    "airlock_session_list_more": (_u64, [_p]),
    "airlock_ps_more": (_u64, [_p]),
    # 0.10: a session that outlives its opener's connections
    "airlock_session_opts_set_detached": (_int, [_p, _bool]),
    # 0.10: background processes of interpreter sessions
    "airlock_session_opts_set_background": (_int, [_p, _bool]),
    "airlock_session_list_background": (_bool, [_p, _size]),
    "airlock_session_ps": (_int, [_p, _str, _pp]),
    "airlock_process_list_free": (None, [_p]),
    "airlock_process_list_count": (_size, [_p]),
    "airlock_process_list_truncated": (_bool, [_p]),
    "airlock_process_list_pid": (ctypes.c_uint32, [_p, _size]),
    "airlock_process_list_name": (_str, [_p, _size]),
    "airlock_process_list_cpu_ms": (_u64, [_p, _size]),
    "airlock_process_list_memory_bytes": (_u64, [_p, _size]),
    "airlock_process_stop": (_int, [_p, _str, ctypes.c_uint32]),
}

# void (*airlock_stream_fn)(void *arg, enum airlock_stream stream, const void *buf, size_t len)
STREAM_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)

# enum airlock_event_kind (airlock.h, since 0.8); values are stable.
EVENT_STREAM = 1
EVENT_TOOL_CALL = 2

# AIRLOCK_TOOL_REFUSED: what a tool handler returns for a refused call.
TOOL_REFUSED = 1

# int (*airlock_tool_fn)(void *arg, const char *name, const char *args, size_t args_len,
#                        char **ret_json, size_t *ret_len)
TOOL_FN = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_char_p,
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_size_t),
)

_cache: Dict[str, ctypes.CDLL] = {}
_cache_lock = threading.Lock()


class LibraryNotFoundError(OSError):
    """libairlock could not be loaded (neither the given path, AIRLOCK_LIBRARY nor the soname)."""


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    """Set restype and argtypes of every function the binding uses (fails on a missing symbol)."""
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    for name, (restype, argtypes) in _OPTIONAL.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def has_sessions(lib: ctypes.CDLL) -> bool:
    """Whether lib has the AIRLOCK_0.3 functions (sessions, file operations, streaming)."""
    return hasattr(lib, "airlock_conn_next_event") and hasattr(lib, "airlock_session_open")


def has_bundles(lib: ctypes.CDLL) -> bool:
    """Whether lib sends up to RUN_FILES_MAX input files in one request (AIRLOCK_0.8)."""
    return hasattr(lib, "airlock_run_req_add_file_mode")


def files_max(lib: ctypes.CDLL) -> int:
    """The input files one request of lib carries."""
    return RUN_FILES_MAX if has_bundles(lib) else FILES_MAX


def load_library(path: Union[str, "os.PathLike[str]", None] = None) -> ctypes.CDLL:
    """Load libairlock and declare its functions; the same path loads once per process.

    path: an explicit file to load; None means $AIRLOCK_LIBRARY if set and
    non-empty, else the installed soname libairlock.so.0, else what
    ctypes.util.find_library("airlock") finds.
    """
    candidates = []
    if path is not None:
        candidates.append(os.fspath(path))
    else:
        env = os.environ.get("AIRLOCK_LIBRARY")
        if env:
            candidates.append(env)
        else:
            candidates.append(SONAME)
            found = ctypes.util.find_library("airlock")
            if found and found != SONAME:
                candidates.append(found)
    errors = []
    with _cache_lock:
        for name in candidates:
            lib = _cache.get(name)
            if lib is not None:
                return lib
            try:
                lib = _declare(ctypes.CDLL(name))
            except (OSError, AttributeError) as e:
                errors.append(f"{name}: {e}")
                continue
            _cache[name] = lib
            return lib
    raise LibraryNotFoundError(
        errno.ENOENT,
        "cannot load libairlock (" + "; ".join(errors) + "); install it or set AIRLOCK_LIBRARY",
    )

