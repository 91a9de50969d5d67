"""The daemon's lists of the caller's things, blocking on a pooled
connection of an AirlockSandbox: its open sessions (list_sessions()) and its
runs in progress and queued (ps(), as `airlock ps`)."""

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, List

from ._types import SandboxError

__all__ = ["RunInfo", "RunList"]


@dataclass(frozen=True)
class RunInfo:
    """One of the caller's runs in progress or queued, as AirlockSandbox.ps()
    reports it (`airlock ps`).

    run_id: the daemon-wide run id (what `airlock cancel` takes); uid: its
    owner; pid: the client process that asked for it; runtime: its runtime
    (a cell's: its interpreter's); state: "queued" or "running" (a newer
    daemon may say more); elapsed: seconds since the daemon got the request.
    """

    run_id: int
    uid: int
    pid: int
    runtime: str
    state: str
    elapsed: float


class RunList(List[RunInfo]):
    """The list ps() returns, plus more: how many of the caller's runs it
    leaves out (the daemon lists at most 256; 0 when it holds them all, or
    when the library or daemon is older and cannot say)."""

    more: int = 0


def _text(raw: Any) -> str:
    return (raw or b"").decode("utf-8", "replace")


def fetch_call(run: Callable[[Callable[[Any], int]], None], get: Callable[[Any, Any], int],
               free: Callable[[Any], None], read: Callable[[Any], None]) -> None:
    """run(call) (sandbox._call, or a session's _file_call) with a call that
    gets a library object (get(conn, byref(obj))), read(obj)s it and
    free(obj)s it whatever read() does."""

    def call(conn: Any) -> int:
        obj = ctypes.c_void_p()
        rc = get(conn, ctypes.byref(obj))
        if rc < 0:
            return rc
        try:
            read(obj)
        finally:
            free(obj)
        return 0

    run(call)


def ps_blocking(sandbox: Any) -> RunList:
    """The caller's runs (sandbox._call: the pooled connection, its errors)."""
    lib = sandbox._lib
    if not hasattr(lib, "airlock_ps"):
        raise SandboxError("ps needs libairlock 0.2 or later")
    out = RunList()

    def read(lst: Any) -> None:
        for i in range(lib.airlock_ps_count(lst)):
            out.append(
                RunInfo(
                    run_id=int(lib.airlock_ps_run_id(lst, i)),
                    uid=int(lib.airlock_ps_uid(lst, i)),
                    pid=int(lib.airlock_ps_pid(lst, i)),
                    runtime=_text(lib.airlock_ps_runtime(lst, i)),
                    state=_text(lib.airlock_ps_state(lst, i)),
                    elapsed=lib.airlock_ps_elapsed_ms(lst, i) / 1000.0,
                )
            )
        if hasattr(lib, "airlock_ps_more"):  # a library before 0.10 cannot say
            out.more = int(lib.airlock_ps_more(lst))

    fetch_call(sandbox._call, lambda conn, ref: lib.airlock_ps(conn.ptr, ref), lib.airlock_ps_free, read)
    return out


def session_list_blocking(sandbox: Any) -> Any:
    """The caller's open sessions, a SessionList (sandbox._call as ps_blocking)."""
    from ._session import SessionList, session_list_read

    lib = sandbox._lib
    out = SessionList()
    fetch_call(sandbox._call, lambda conn, ref: lib.airlock_session_list(conn.ptr, ref),
               lib.airlock_session_list_free,
               lambda lst: session_list_read(lib, lst, out))
    return out
