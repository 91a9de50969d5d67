"""Request timeouts: the bound of the call being made, for the code that
talks to libairlock.

Every blocking call and every await of the binding takes `timeout=` (seconds;
None: the sandbox's default, AirlockSandbox(timeout=...), itself None for no
bound; math.inf: no bound for this call even with a default). The public
method sets it here for its duration (a context variable, so threads and
tasks each see their own), and the code that reaches libairlock reads it:
the pooled connection gets airlock_conn_set_timeout() (libairlock bounds
each blocking call with it, cancels a run that times out on the daemon, and
keeps the connection usable), an await gets asyncio.wait_for() (its
cancellation cancels the run on the daemon).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from typing import Iterator, Optional

__all__ = ["check", "current", "given", "to_ms"]

# The timeout the running public call was given (None: not given).
_CALL: contextvars.ContextVar[Optional[float]] = contextvars.ContextVar("airlock_call_timeout", default=None)


def check(name: str, value: object) -> Optional[float]:
    """value as a timeout in seconds: None, or a number above 0 (math.inf
    for none); TypeError or ValueError otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds or None, not {type(value).__name__}")
    if math.isnan(value) or value <= 0:
        raise ValueError(f"{name} must be above 0 seconds (math.inf for no bound), not {value!r}")
    return float(value)


@contextlib.contextmanager
def given(timeout: object) -> Iterator[None]:
    """For the duration of a public call: its timeout= (checked). None keeps
    what an enclosing call of the binding gave (run_sync's own file writes
    of a run with many files are bounded by run_sync's timeout)."""
    seconds = check("timeout", timeout)
    if seconds is None:
        yield
        return
    token = _CALL.set(seconds)
    try:
        yield
    finally:
        _CALL.reset(token)


def current(default: Optional[float]) -> Optional[float]:
    """The bound of the call being made: its own timeout=, else default;
    None (or math.inf) for no bound."""
    value = _CALL.get()
    return default if value is None else value


def to_ms(seconds: Optional[float]) -> int:
    """seconds as libairlock's timeout_ms: 0 (no bound) for None or math.inf,
    else at least 1."""
    if seconds is None or math.isinf(seconds):
        return 0
    return max(1, int(math.ceil(seconds * 1000)))
