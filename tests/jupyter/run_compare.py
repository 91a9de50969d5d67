"""Notebooks run with nbclient on the Airlock kernel and on Debian's ipykernel,
compared cell by cell (issue 31's Done-when): the same cells complete, their
streams and text results agree, figures come back as PNG on both.

What differs by design and is not compared: the colours of IPython's
tracebacks (only ename and evalue are), object addresses in reprs, the text/plain that
ipykernel adds beside a display's rich representation (the driver sends the
richest one), timings (%timeit's figures), and how a dead interpreter is
said: ipykernel's process dies (nbclient raises DeadKernelError), the Airlock
kernel lives on and answers the cell with a DeadKernelError error.
"""

import base64
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from airlock_testlib import Daemon  # noqa: E402

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import DeadKernelError  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

CELLS = [
    "x = 6 * 7\nprint('x is', x)",
    "x",
    "import sys\nprint('to stderr', file=sys.stderr)",
    "import numpy as np\na = np.arange(12).reshape(3, 4)\nprint(a.sum(axis=0))\na.mean()",
    "import pandas as pd\ndf = pd.DataFrame({'n': [1, 2, 3], 's': ['a', 'b', 'c']})\nprint(df.describe().loc['mean', 'n'])\nlen(df)",
    "import matplotlib\nimport matplotlib.pyplot as plt\nfig = plt.figure()\nplt.plot([1, 4, 9])\nplt.show()",
    "def f(n):\n    return 10 // n\nf(0)",
    "[i * i for i in range(5)]",
    # IPython in the sandbox (issue 31 point 2): magics, !cmd, rich reprs.
    "%matplotlib inline\nplt.plot([3, 1, 2]);",
    "!echo from the shell",
    "%%bash\necho $((6 * 7))",
    "%timeit -n 2 -r 1 sum(range(10))",
    "from IPython.display import HTML, display\ndisplay(HTML('<b>bold</b>'))\n{'k': list(range(3))}",
    "%who_ls int",
    "a.shape;",
    "df",
    "from IPython.display import Math, JSON\nMath('x^2')",
    "JSON({'a': [1, 2]})",
    # Interrupted (nbclient's timeout interrupts it): the state is kept.
    "import time\ntime.sleep(60)",
    "x",
    # Last: a cell that kills its interpreter (nbclient stops at it on ipykernel).
    "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
]
# The cells nbclient interrupts after INTERRUPT_S (interrupt_on_timeout).
INTERRUPT_S = 5

_ADDR = re.compile(r" at 0x[0-9a-f]+")
_TIMES = re.compile(r"[0-9.]+ (ns|\u00b5s|us|ms|s)\b")


def summary(cell):
    """What is compared of a code cell's outputs."""
    out = []
    for o in cell.get("outputs", []):
        t = o["output_type"]
        if t == "stream":
            # ipykernel runs !cmd on a pty (pexpect): its lines end "\r\n".
            out.append(("stream", o["name"], _TIMES.sub("T", o["text"].replace("\r\n", "\n"))))
        elif t == "execute_result":
            # The whole bundle's mime types: a DataFrame's text/html too.
            out.append(("result", _ADDR.sub(" at ADDR", o["data"].get("text/plain", "")), sorted(o["data"])))
        elif t == "display_data":
            png = o["data"].get("image/png")
            rich = sorted(m for m in o["data"] if m != "text/plain") or ["text/plain"]
            out.append(("display", "image/png" if png and base64.b64decode(png).startswith(b"\x89PNG") else rich))
        elif t == "error" and o["ename"] == "DeadKernelError":
            out.append(("dead",))
        elif t == "error":
            out.append(("error", o["ename"], o["evalue"]))
    # Streams of one name may come in pieces: join neighbours.
    joined = []
    for item in out:
        if joined and item[0] == "stream" and joined[-1][0] == "stream" and joined[-1][1] == item[1]:
            joined[-1] = ("stream", item[1], joined[-1][2] + item[2])
        else:
            joined.append(item)
    return joined


def run(kernel, specs, env):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    client = NotebookClient(nb, kernel_name=kernel, allow_errors=True, interrupt_on_timeout=True,
                            timeout_func=lambda cell: INTERRUPT_S if "sleep" in cell.source else 120,
                            kernel_manager_class="jupyter_client.manager.KernelManager")
    client.km = client.create_kernel_manager()
    client.km.kernel_spec_manager = KernelSpecManager(kernel_dirs=specs)
    old = dict(os.environ)
    os.environ.update(env)
    try:
        client.execute()
    except DeadKernelError:
        # ipykernel's process died with its interpreter: nbclient stops
        # there. The Airlock kernel lives on and says so in the cell (an
        # error DeadKernelError, then status restarting): the same to a user.
        for cell in nb.cells:
            if "execution_count" in cell and not cell.get("outputs") and "SIGKILL" in cell.source:
                cell.outputs = [nbformat.v4.new_output("error", ename="DeadKernelError", evalue="", traceback=[])]
    finally:
        os.environ.clear()
        os.environ.update(old)
    return nb


class Compare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("airlockd must start as root")
        cls.daemon = Daemon(os.environ["AIRLOCKD"], "", prefix="airlock-nb-")
        cls.daemon.start()
        cls.specs = tempfile.mkdtemp(prefix="airlock-kernels-")
        d = os.path.join(cls.specs, "airlock-test")
        os.mkdir(d)
        from airlock_kernel.cli import spec

        with open(os.path.join(d, "kernel.json"), "w") as f:
            json.dump(spec(None, None, sys.executable), f)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.daemon.remove()
        shutil.rmtree(cls.specs, ignore_errors=True)

    def test_cells_agree(self):
        ours = run("airlock-test", [self.specs], {"AIRLOCK_SOCKET": self.daemon.sock})
        theirs = run("python3", ["/usr/share/jupyter/kernels"], {})
        try:
            for i, (a, b) in enumerate(zip(ours.cells, theirs.cells)):
                with self.subTest(cell=i, code=CELLS[i]):
                    self.assertEqual(summary(a), summary(b))
                    if "SIGKILL" not in CELLS[i]:  # nbclient leaves ipykernel's unset
                        self.assertEqual(a.get("execution_count"), b.get("execution_count"))
            self.assertEqual(len(ours.cells), len(theirs.cells))
            # Figures as PNG on both, interactive magic or not.
            for nb in (ours, theirs):
                self.assertEqual(summary(nb.cells[CELLS.index("%matplotlib inline\nplt.plot([3, 1, 2]);")]),
                                 [("display", "image/png")])
        except AssertionError:
            self.daemon.show_log()
            raise


if __name__ == "__main__":
    unittest.main(verbosity=2)
