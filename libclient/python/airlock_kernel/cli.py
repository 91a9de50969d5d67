"""The kernel's command line: run it for a connection file, or install a kernelspec."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from typing import List, Optional

NAME = "airlock-python"


def spec(runtime: Optional[str], profile: Optional[str], python: str) -> dict:
    """The kernel.json of a kernel for RUNTIME (None: the kernel picks) and PROFILE: Jupyter starts python -m airlock_kernel."""
    env = {}
    if runtime:
        env["AIRLOCK_KERNEL_RUNTIME"] = runtime
    if profile:
        env["AIRLOCK_KERNEL_PROFILE"] = profile
    label = "Python (Airlock%s%s)" % (", " + runtime if runtime else "",
                                      ", " + profile if profile else "")
    return {
        "argv": [python, "-m", "airlock_kernel", "-f", "{connection_file}"],
        "display_name": label,
        "language": "python",
        # An interrupt is a message (the cell's cancel on the daemon), never a
        # signal to this host process.
        "interrupt_mode": "message",
        "env": env,
        "metadata": {"debugger": False},
    }


def install(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="python3 -m airlock_kernel install",
                                description="Install a kernelspec that runs cells in Airlock.")
    p.add_argument("--runtime", help="the daemon's interpreter runtime (default: the kernel picks the python "
                   "runtime with the most data-science packages)")
    p.add_argument("--profile", help="the daemon profile of the kernel's session")
    p.add_argument("--name", help="the kernelspec's name (default airlock-RUNTIME[-PROFILE])")
    p.add_argument("--user", action="store_true", help="install for the current user")
    p.add_argument("--prefix", help="install under PREFIX/share/jupyter/kernels")
    p.add_argument("--python", default="python3", help="the interpreter Jupyter starts (default python3)")
    a = p.parse_args(argv)
    from jupyter_client.kernelspec import KernelSpecManager

    name = a.name or "airlock-%s%s" % (a.runtime or "python", "-" + a.profile if a.profile else "")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "kernel.json"), "w", encoding="utf-8") as f:
            json.dump(spec(a.runtime, a.profile, a.python), f, indent=1)
        dest = KernelSpecManager().install_kernel_spec(d, name, user=a.user, prefix=a.prefix, replace=True)
    print(dest)
    return 0


def main(argv: List[str]) -> int:
    if argv[:1] == ["install"]:
        return install(argv[1:])
    p = argparse.ArgumentParser(prog="python3 -m airlock_kernel",
                                description="A Jupyter kernel whose cells run in an Airlock sandbox.")
    p.add_argument("-f", dest="connection_file", required=True, help="the connection file Jupyter gives")
    a = p.parse_args(argv)
    from .kernel import AirlockKernel, KernelSettings, load_connection, _log

    import airlock

    kernel = AirlockKernel(load_connection(a.connection_file), KernelSettings.from_env(os.environ))
    try:
        kernel.open_session()
    except (airlock.SandboxError, airlock.LibraryNotFoundError) as e:
        _log("cannot open a session: %s" % e)
        return 1
    kernel.bind()
    return kernel.serve()
