"""A python run's matplotlib figures come back as display items (issue 30,
point 2), through the Python binding against a real airlockd; and a run
that draws none is the run it was (its traceback, argv, __main__).

Run by meson (test python-figures) as test_airlock.py is: AIRLOCK_LIBRARY,
AIRLOCKD and PYTHONPATH set. On a failure the daemon's log is printed.
"""

import os
import subprocess
import sys
import unittest

from airlock import AirlockSandbox, SandboxLimits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, uid_range  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"
LIMITS = SandboxLimits(wall_seconds=60, cpu_seconds=60)
_daemon = None


def setUpModule() -> None:
    global _daemon
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    binary = os.environ.get("AIRLOCKD")
    if not binary:
        raise unittest.SkipTest("no airlockd (set AIRLOCKD)")
    # readonly: file_write = false, so /tmp is read-only: no figure can be kept.
    # pyx: a python runtime whose argv has an option with an argument
    # (-X utf8): not of the shape PROGRAM [-FLAGS] {code}, so run as it is.
    _daemon = Daemon(binary, "[profile readonly]\nfile_write = false\n"
                     "[runtime pyx]\nargv = /usr/bin/python3 -X utf8 -I {code}\ncode_name = main.py\n"
                     # -x skips the script's first line: the start-up would not.
                     "[runtime pyskip]\nargv = /usr/bin/python3 -x -I {code}\ncode_name = main.py\n"
                     # a cluster of argument-less options: started through it.
                     "[runtime pyclust]\nargv = /usr/bin/python3 -IBs {code}\ncode_name = main.py\n",
                     prefix="airlock-fig-", debug=True, uids=uid_range())
    _daemon.start()


def tearDownModule() -> None:
    if _daemon is not None:
        _daemon.remove()


def has_matplotlib() -> bool:
    return subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode == 0


class FigureTest(unittest.TestCase):
    def setUp(self) -> None:
        self.sandbox = AirlockSandbox(_daemon.sock)
        self.addCleanup(self.sandbox.close)

    def run(self, result=None):
        # The daemon's log with a failure: what the sandbox said.
        before = len(result.failures) + len(result.errors) if result is not None else 0
        out = super().run(result)
        if result is not None and len(result.failures) + len(result.errors) > before:
            sys.stderr.write("--- airlockd log ---\n%s\n" % _daemon.log_text()[-6000:])
        return out

    def need_matplotlib(self) -> None:
        if not has_matplotlib():
            self.skipTest("no python3-matplotlib on this host")

    def test_show_and_left_open(self) -> None:
        self.need_matplotlib()
        r = self.sandbox.run_sync(
            "import matplotlib.pyplot as plt\n"
            "plt.plot([1, 2, 3]); plt.show(); plt.close('all')\n"
            "plt.figure(); plt.bar([1], [2])\n",
            language="python-site", limits=LIMITS)
        self.assertEqual(r.outcome, "exited", r.stderr)
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual([d.mime for d in r.display], ["image/png", "image/png"])
        self.assertTrue(all(d.data.startswith(PNG) for d in r.display))
        self.assertEqual(r.artifacts, ())  # figures are not workspace files

    def test_agg_chosen_by_the_code(self) -> None:
        # matplotlib.use("Agg") before pyplot: plt.show() still shows.
        self.need_matplotlib()
        r = self.sandbox.run_sync(
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "plt.plot([3, 1]); plt.show()\n",
            language="python-site", limits=LIMITS)
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual([d.mime for d in r.display], ["image/png"])

    def test_svg_when_the_code_asks(self) -> None:
        self.need_matplotlib()
        r = self.sandbox.run_sync(
            "import matplotlib.pyplot as plt\nplt.rcParams['savefig.format'] = 'svg'\n"
            "plt.plot([1, 2])\n",
            language="python-site", limits=LIMITS)
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual([d.mime for d in r.display], ["image/svg+xml"])
        self.assertIn(b"<svg", r.display[0].data)

    def test_svg_when_the_request_asks(self) -> None:
        # figures="svg" (figures_svg); a bad word is the caller's error.
        self.need_matplotlib()
        r = self.sandbox.run_sync("import matplotlib.pyplot as plt\nplt.plot([1, 2]); plt.show()\n",
                                  language="python-site", limits=LIMITS, figures="svg")
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual([d.mime for d in r.display], ["image/svg+xml"])
        with self.assertRaises(ValueError):
            self.sandbox.run_sync("1", figures="gif")

    def test_svg_refused_for_a_shell_run(self) -> None:
        with self.assertRaisesRegex(Exception, "figures_svg is for cells and python runs"):
            self.sandbox.run_sync("true", language="sh", figures="svg")

    def test_session_run(self) -> None:
        # A run in a session (not a cell) returns its figures as well.
        self.need_matplotlib()
        with self.sandbox.session_sync() as s:
            r = s.run("import matplotlib.pyplot as plt\nplt.plot([1])\n", language="python-site", limits=LIMITS)
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual([d.mime for d in r.display], ["image/png"])

    def test_other_argv_shape_runs_unchanged(self) -> None:
        # pyx's argv has "-X utf8": no start-up (its argv is the runtime's),
        # no figures, and figures_svg is refused as for a shell.
        r = self.sandbox.run_sync("import sys\nprint(sys.orig_argv[1:4])\n", language="pyx")
        self.assertEqual(r.stdout, "['-X', 'utf8', '-I']\n", r.stderr)
        with self.assertRaisesRegex(Exception, "figures_svg is for cells and python runs"):
            self.sandbox.run_sync("1", language="pyx", figures="svg")
        r = self.sandbox.run_sync("skipped\nimport sys\nprint('-c' in sys.orig_argv)\n", language="pyskip")
        self.assertEqual(r.stdout, "False\n", r.stderr)
        r = self.sandbox.run_sync("import sys\nprint('-c' in sys.orig_argv, sys.argv)\n", language="pyclust")
        self.assertEqual(r.stdout, "True ['/run/airlock/main.py']\n", r.stderr)

    def test_at_most_eight(self) -> None:
        self.need_matplotlib()
        r = self.sandbox.run_sync(
            "import matplotlib.pyplot as plt\n"
            "for i in range(10):\n    plt.figure(); plt.title(str(i)); plt.show()\n",
            language="python-site", limits=LIMITS)
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertEqual(len(r.display), 8)

    def test_figures_after_an_exception_and_exit(self) -> None:
        # Left open when the code raised, or called sys.exit: still shown.
        self.need_matplotlib()
        for tail, code in (("1/0\n", 1), ("import sys; sys.exit(4)\n", 4)):
            r = self.sandbox.run_sync("import matplotlib.pyplot as plt\nplt.plot([1])\n" + tail,
                                      language="python-site", limits=LIMITS)
            self.assertEqual(r.exit_code, code, r.stderr)
            self.assertEqual([d.mime for d in r.display], ["image/png"])

    def test_read_only_tmp(self) -> None:
        # file_write = false: /tmp is read-only (matplotlib itself cannot
        # start there: it needs a temporary directory); the start-up
        # writes nothing unless a figure is shown.
        r = self.sandbox.run_sync("print('on')\n", limits=SandboxLimits(profile="readonly"))
        self.assertEqual(r.stdout, "on\n", r.stderr)
        self.assertEqual(r.display, ())

    def test_forged_figure_files(self) -> None:
        # The code writes the directory itself: names outside NNN.png and
        # NNN.svg, links, directories are not display items; at most 8.
        code = (
            "import os\nd = '/tmp/.airlock-display'\nos.makedirs(d)\n"
            "open(d + '/000.png', 'wb').write(b'x')\n"
            "open(d + '/001.gif', 'wb').write(b'x')\n"
            "open(d + '/../x.png', 'wb').write(b'x')\n"
            "os.symlink('/etc/passwd', d + '/002.png')\n"
            "os.mkdir(d + '/003.png')\n"
            "for i in range(10, 30):\n    open(d + '/%03d.svg' % i, 'wb').write(b'<svg/>')\n"
        )
        r = self.sandbox.run_sync(code, limits=LIMITS)
        self.assertEqual(r.exit_code, 0, r.stderr)
        # The supervisor sends the first 8 regular files it lists (which
        # 8 is the directory's order); the frontend keeps NNN.png/svg.
        self.assertGreater(len(r.display), 0)
        self.assertLessEqual(len(r.display), 8)
        for d in r.display:
            self.assertEqual(d.data, {"image/png": b"x", "image/svg+xml": b"<svg/>"}[d.mime])

    def test_a_run_without_figures_is_unchanged(self) -> None:
        # argv, __main__, __file__, a traceback of the code's frames only,
        # a syntax error as CPython shows it.
        r = self.sandbox.run_sync(
            "import sys\nprint(sys.argv, __name__, __file__)\n"
            "print(sorted(k for k in globals() if not k.startswith('__') and k != 'sys'))\n",
            args=["a", "b"])
        self.assertEqual(r.stdout, "['/run/airlock/main.py', 'a', 'b'] __main__ /run/airlock/main.py\n[]\n",
                         r.stderr)
        self.assertEqual(r.display, ())
        r = self.sandbox.run_sync("def f():\n    1/0\nf()\n")
        self.assertEqual(r.exit_code, 1)
        self.assertEqual(r.stderr.splitlines()[1:3],
                         ['  File "/run/airlock/main.py", line 3, in <module>', "    f()"], r.stderr)
        self.assertNotIn("airlock run", r.stderr)
        r = self.sandbox.run_sync("x = (\n")
        self.assertEqual(r.exit_code, 1)
        self.assertTrue(r.stderr.startswith('  File "/run/airlock/main.py", line 1'), r.stderr)
        self.assertIn("SyntaxError", r.stderr)


if __name__ == "__main__":
    unittest.main()
