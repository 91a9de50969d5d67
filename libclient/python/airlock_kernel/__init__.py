"""airlock_kernel: a Jupyter kernel whose cells run in an Airlock interpreter session.

The kernel is the user's own host process: it speaks the Jupyter messaging
protocol (5.3) on the five channels of the connection file Jupyter gives it
and runs no user code itself. Each execute_request becomes a cell of one
interpreter session of airlockd, opened at start-up with the calling user's
credentials (docs/design-jupyter.md, docs/jupyter.md).

    python3 -m airlock_kernel -f CONNECTION_FILE
    python3 -m airlock_kernel install [--user] [--runtime NAME]
"""

from .kernel import AirlockKernel, KernelSettings

__all__ = ["AirlockKernel", "KernelSettings"]
