"""airlock: run untrusted code in airlockd's single-use sandboxes.

A Python binding of libairlock (loaded with ctypes; no dependency outside the
standard library) and the run_python model tool. See docs/python.md.

    from airlock import AirlockSandbox
    result = AirlockSandbox().run_sync("print(6 * 7)")
    result.stdout  # '42\\n'

Sessions (a workspace that outlives each run) and streamed output need
libairlock 0.3: `async with sandbox.session() as s: await s.run(...)`.
"""

from ._lib import LibraryNotFoundError, load_library
from ._sandbox import AirlockSandbox
from ._session import AirlockSession, AirlockSessionSync, ProcessInfo, SessionInfo, SessionList
from . import _types
from ._tool import SandboxTool, sandbox_tool
from ._types import (
    FileContent,
    FileInfo,
    FileList,
    SandboxArtifact,
    SandboxError,
    SandboxLimits,
    SandboxMemoryError,
    SandboxNetwork,
    SandboxNotFoundError,
    SandboxPathError,
    SandboxProcessLimitError,
    SandboxResult,
    SandboxSessionClosedError,
    SandboxTimeoutError,
    SandboxDisplay,
    SandboxToolCall,
    SandboxUnavailableError,
)

__version__ = "0.9.0"  # the libairlock release it belongs to

# The binding's own names, then every public type of _types (its __all__ is
# the one list of them).
__all__ = [
    "AirlockSandbox",
    "AirlockSession",
    "AirlockSessionSync",
    "ProcessInfo",
    "SessionInfo",
    "SessionList",
    "SandboxTool",
    "sandbox_tool",
    "load_library",
    "LibraryNotFoundError",
] + _types.__all__
