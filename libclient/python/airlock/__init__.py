"""airlock: run untrusted code in airlockd's single-use sandboxes.

A Python binding of libairlock (loaded with ctypes; no dependency outside the
standard library) and the run_python model tool. See docs/python.md.

    from airlock import AirlockSandbox
    result = AirlockSandbox().run_sync("print(6 * 7)")
    result.stdout  # '42\\n'

Sessions (a workspace that outlives each run) and streamed output need
libairlock 0.3: `async with sandbox.session() as s: await s.run(...)`.
"""

# Checked before anything else is imported, in syntax every Python 3 parses:
# the modules use 3.9's typing and asyncio, and a wheel forced into an older
# Python (pip --ignore-requires-python, a copied directory) should say why it
# cannot work rather than fail on some later line.
import sys as _sys

if _sys.version_info < (3, 9):
    raise ImportError(
        "airlock needs Python 3.9 or later; this is Python %d.%d (%s)"
        % (_sys.version_info[0], _sys.version_info[1], _sys.executable)
    )

from ._lib import LibraryNotFoundError, load_library
from ._lists import RunInfo, RunList
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
    SandboxRequestTimeoutError,
)

try:
    # Written by the build (mkwheel.py) from the project version, the release's.
    from ._version import __version__
except ImportError:  # the source tree itself, not built: no release number
    __version__ = "0+unknown"

# The binding's own names, then every public type of _types (its __all__ is
# the one list of them).
__all__ = [
    "AirlockSandbox",
    "AirlockSession",
    "AirlockSessionSync",
    "ProcessInfo",
    "RunInfo",
    "RunList",
    "SessionInfo",
    "SessionList",
    "SandboxTool",
    "sandbox_tool",
    "load_library",
    "LibraryNotFoundError",
] + _types.__all__
