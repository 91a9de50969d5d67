"""Python runs through a caller's zygote (issue 33 point 1,
docs/design-bursts.md §3.6), against a real airlockd started as root.

Run by meson (suite "zygote") with AIRLOCKD and AIRLOCK (the built daemon
and CLI) and AIRLOCK_TEST_ZYGOTE_DIR (the build tree's zygote.py and
extension, given to the daemon as --zygote-dir).

One daemon whose runtime `python` has zygote = yes and whose runtime
`python-plain` runs the same argv with prestart only. Every run of a
zygote runtime is checked in the audit line (zygote=ran).
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, uid_range, wait_for  # noqa: E402

ARGV = "/usr/bin/python3 -I -S -B {code}"
CONFIG = """[daemon]
socket_mode = 0666
prepared_sandboxes = 1
prestarted_interpreters = 1
max_runs = 8
max_runs_per_uid = 4
zygote_idle_s = 60
[access]
allow_all = yes
[runtime python]
argv = %s
code_name = main.py
prestart = true
zygote = yes
[runtime python-plain]
argv = %s
code_name = main.py
prestart = true
""" % (ARGV, ARGV)

_daemon = None
IGNORED_AT_START = (signal.SIGINT, signal.SIGQUIT)

# What a run's code sees of its own process that it did not choose: the
# zygote's child must show what a fresh interpreter shows.
PROCESS_STATE = r"""import os
st = dict(l.split(':', 1) for l in open('/proc/self/status').read().splitlines())
for k in ('SigIgn', 'SigBlk', 'SigCgt', 'SigPnd', 'ShdPnd', 'CapInh', 'CapPrm', 'CapEff',
          'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp', 'Threads', 'Umask', 'Uid', 'Gid',
          'Groups'):
    print(k, st.get(k, '-').strip())
print('cwd', os.getcwd())
print('fds', sorted(os.listdir('/proc/self/fd')))
print('oom', open('/proc/self/oom_score_adj').read().strip())
print('session', os.getsid(0) == os.getpid(), os.getpgrp() == os.getpid())
# (not the cpu time: a pre-started interpreter's is raised by what its
# start-up used, a whole second more at times)
print([l for l in open('/proc/self/limits') if not l.startswith('Max cpu time')])
"""


def setUpModule():
    global _daemon
    if os.geteuid() != 0:
        raise unittest.SkipTest("needs root")
    # The build tree's zygote.py and extension, given to the daemon by
    # Daemon (--zygote-dir): without them every run would go the ordinary
    # way and the checks of zygote=ran would fail, so say why first.
    zdir = os.environ.get("AIRLOCK_TEST_ZYGOTE_DIR", "")
    if not os.path.exists(os.path.join(zdir, "zygote.py")):
        raise RuntimeError("no zygote.py in AIRLOCK_TEST_ZYGOTE_DIR (%r)" % zdir)
    base, count = uid_range()
    _daemon = Daemon(os.environ["AIRLOCKD"], config=CONFIG, debug=True, uids=(base, count // 2))
    # A second caller (nobody) reaches the socket.
    os.chmod(_daemon.dir, 0o755)
    # Started as `airlockd &` from a script starts it: SIGINT and SIGQUIT
    # ignored, which an exec keeps (sandbox_code.c resets them for a fresh
    # run's code; test_process_state checks a zygote run's are the same).
    old = [signal.signal(s, signal.SIG_IGN) for s in IGNORED_AT_START]
    try:
        _daemon.start()
    finally:
        for s, h in zip(IGNORED_AT_START, old):
            signal.signal(s, h)


def tearDownModule():
    global _daemon
    if _daemon is not None:
        _daemon.remove()
        _daemon = None


def run(code, *opts, lang="python", user=None):
    """One run through the CLI (--json): the result as a dict; as user (a
    uid) if given."""
    pre = None
    if user is not None:
        def pre():
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)
    p = subprocess.run([os.environ["AIRLOCK"], "--socket", _daemon.sock, "--json", "run",
                        "--lang", lang] + list(opts) + ["-c", code],
                       capture_output=True, text=True, timeout=60, preexec_fn=pre)
    try:
        res = json.loads(p.stdout)
        if p.returncode not in (0, 1) and not res.get("outcome"):
            raise ValueError
        return res
    except ValueError:
        raise AssertionError("airlock run: rc %d, stdout %r, stderr %r\n%s" % (
            p.returncode, p.stdout, p.stderr, _daemon.log_tail()))


def audits():
    with open(_daemon.log) as f:
        return [l for l in f if re.search(r"(^|: )audit (time=\S+ )?run=", l)]


def zygote_runs():
    return sum(1 for l in audits() if " zygote=ran" in l)


def warm(lang="python", user=None):
    """Runs until one went through the zygote (the first of a caller asks for
    its zygote and goes the ordinary way); the last result."""
    n0 = zygote_runs()
    for _ in range(40):
        res = run("print(1)", lang=lang, user=user)
        if zygote_runs() > n0:
            return res
        time.sleep(0.05)
    raise AssertionError("no run went through a zygote:\n" + _daemon.log_tail())


class ZygoteTest(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self.addCleanup(self.dump_on_failure)

    def dump_on_failure(self):
        outcome = getattr(self, "_outcome", None)
        errors = getattr(getattr(outcome, "result", None), "errors", []) + \
            getattr(getattr(outcome, "result", None), "failures", [])
        if any(t is self for t, _ in errors):
            sys.stderr.write(_daemon.log_tail(6000))

    def same(self, code, *opts):
        """code run through the zygote and through python-plain: the parts
        of the result that must agree."""
        warm()
        n0 = zygote_runs()
        a = run(code, *opts)
        self.assertEqual(zygote_runs(), n0 + 1, _daemon.log_tail())
        b = run(code, *opts, lang="python-plain")
        keys = ("outcome", "exit_code", "signal", "stdout", "stderr", "error")
        self.assertEqual({k: a.get(k) for k in keys}, {k: b.get(k) for k in keys})
        return a

    def test_result_output_exit(self):
        a = self.same("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)")
        self.assertEqual((a["exit_code"], a["stdout"], a["stderr"]), (3, "out\n", "err\n"))
        a = self.same("raise ValueError('boom')")
        self.assertEqual(a["exit_code"], 1)
        self.assertIn("ValueError: boom", a["stderr"])

    def test_environment_is_the_runs(self):
        # The run's environment, not the zygote's: the same names as
        # without the key, none of the start-up's own (AIRLOCK_BOOT, which
        # the start-up takes out), in the code and in its child.
        code = ("import os, subprocess\n"
                "print(sorted(os.environ))\n"
                "print(subprocess.run(['/usr/bin/env'], capture_output=True, text=True)"
                ".stdout.count('AIRLOCK_BOOT'), os.environ.get('PATH'))")
        a = self.same(code)
        self.assertNotIn("AIRLOCK_BOOT", a["stdout"].splitlines()[0])
        self.assertTrue(a["stdout"].splitlines()[1].startswith("0 /"), a["stdout"])

    def test_request_env_args_stdin_figures(self):
        # A request's env, args, stdin and figures_svg (an environment
        # variable) are the child's to honour (zygote.py takes the plan's
        # argv and environment, the order carries stdin): such runs go
        # through the zygote too, with a plain run's results.
        code = ("import os, sys\n"
                "print(sys.argv[1:], os.environ.get('GREETING'))\n"
                "print(repr(sys.stdin.read()))\n"
                "print(sorted(k for k in os.environ if k.startswith('AIRLOCK')))")
        path = os.path.join(_daemon.dir, "stdin.txt")
        with open(path, "w") as f:
            f.write("line one\nline two\n")
        a = self.same(code, "--env", "GREETING=hello", "--arg", "x y", "--arg", "-z",
                      "--stdin", path)
        self.assertEqual(a["stdout"].splitlines()[:2],
                         ["['x y', '-z'] hello", repr("line one\nline two\n")])
        self.same("import os\nprint(sorted(os.environ))", "--figures", "svg")
        self.same("import sys\nprint(sys.argv)", "--arg", "only")

    def test_request_env_read_at_start(self):
        # Variables the interpreter, the loader or the C library read only
        # at the start: a fork would ignore them, so the run goes the
        # ordinary way (no zygote=ran) with a plain run's results.
        warm()
        for kv in ("LC_ALL=C", "PYTHONHASHSEED=7", "LD_BIND_NOW=1", "TZ=UTC"):
            n0 = zygote_runs()
            a = run("import os\nprint(os.environ.get(%r))" % kv.split("=")[0], "--env", kv)
            self.assertEqual(zygote_runs(), n0, kv + "\n" + _daemon.log_tail())
            self.assertEqual((a["exit_code"], a["stdout"]), (0, kv.split("=")[1] + "\n"))

    def test_limits(self):
        # memory: a 400 MiB allocation under a 64 MiB limit
        a = self.same("b = bytearray(400 << 20)\nprint('no')", "--memory", "64M")
        self.assertNotEqual(a["outcome"], "exited")
        # wall
        a = self.same("import time\ntime.sleep(30)", "--wall", "0.5")
        self.assertEqual(a["outcome"], "wall_limit")
        # processes: a fork refused beyond the limit
        a = self.same("import os, time\n"
                      "out = 'forked'\n"
                      "for _ in range(8):\n"
                      "    try:\n"
                      "        if os.fork() == 0:\n"
                      "            time.sleep(2)\n"
                      "            os._exit(0)\n"
                      "    except OSError:\n"
                      "        out = 'refused'\n"
                      "        break\n"
                      "print(out)", "--processes", "2")
        self.assertIn("refused", a["stdout"])

    def test_process_state(self):
        # signal dispositions (the daemon's start ignored SIGINT and
        # SIGQUIT), mask, pending, capabilities, rlimits, umask, cwd, fds,
        # session: as a fresh interpreter's
        a = self.same(PROCESS_STATE)
        self.assertIn("SigBlk 0000000000000000", a["stdout"])

    def test_no_network(self):
        a = self.same("import socket\n"
                      "s = socket.socket()\n"
                      "s.settimeout(2)\n"
                      "try:\n"
                      "    s.connect(('1.1.1.1', 53))\n"
                      "    print('connected')\n"
                      "except OSError as e:\n"
                      "    print('refused')\n"
                      "print(sorted(n for _, n in socket.if_nameindex()))")
        self.assertEqual(a["stdout"], "refused\n['lo']\n")

    def test_runs_isolated(self):
        warm()
        n0 = zygote_runs()
        a = run("import os, builtins\n"
                "open('/tmp/mark', 'w').write('x')\n"
                "os.environ['MARK'] = '1'\n"
                "builtins.MARK = 1\n"
                "print(os.readlink('/proc/self/ns/pid'))")
        b = run("import os, builtins\n"
                "print(os.path.exists('/tmp/mark'), 'MARK' in os.environ,\n"
                "      hasattr(builtins, 'MARK'))\n"
                "print(os.readlink('/proc/self/ns/pid'))")
        self.assertEqual(zygote_runs(), n0 + 2, _daemon.log_tail())
        self.assertEqual(b["stdout"].splitlines()[0], "False False False")
        self.assertNotEqual(a["stdout"].strip(), b["stdout"].splitlines()[1])

    def test_two_callers_two_zygotes(self):
        warm()
        warm(user=65534)
        starts = re.findall(r"zygote uid (\d+) python: started, pid (\d+)", _daemon.log_text())
        uids = {u for u, _ in starts}
        self.assertIn("0", uids)
        self.assertIn("65534", uids)
        pids = {}
        for u, p in starts:
            pids[u] = p
        self.assertNotEqual(pids["0"], pids["65534"])

    def test_zygote_killed_mid_burst(self):
        warm()
        m = re.findall(r"zygote uid 0 python: started, pid (\d+)", _daemon.log_text())
        pid = int(m[-1])
        results = []
        for i in range(12):
            if i == 3:
                os.kill(pid, signal.SIGKILL)
            results.append(run("print(%d)" % i))
        self.assertEqual([r["stdout"] for r in results], ["%d\n" % i for i in range(12)])
        self.assertTrue(all(r["exit_code"] == 0 for r in results))
        self.assertTrue(wait_for(lambda: re.search(r"zygote uid 0 python: pid %d died of signal 9"
                                                   % pid, _daemon.log_text()), 10),
                        _daemon.log_tail())
        self.assertIn("zygote uid 0 python: next start in", _daemon.log_text())
        # a new one after the back-off, and runs through it again
        self.assertTrue(wait_for(lambda: len(re.findall(
            r"zygote uid 0 python: started, pid (\d+)", _daemon.log_text())) > len(m), 15),
            _daemon.log_tail())
        warm()

    def test_stopped_zygote_runs_once(self):
        # A zygote that does not fork in time (stopped here) has its run
        # go the ordinary way after the supervisor's deadline
        # (SB_ZYGOTE_ENTER_MS, 5 s), and the order it takes once let go
        # runs nothing: its child's report finds the pipe closed and the
        # code emptied (sandbox_zygote_run.c), while the run's fall-back is
        # still running in the very sandbox it enters.
        warm()
        pid = int(re.findall(r"zygote uid 0 python: started, pid (\d+)",
                             _daemon.log_text())[-1])
        os.kill(pid, signal.SIGSTOP)
        def cont():
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass  # stopped by the daemon since: it failed a run
        self.addCleanup(cont)
        p = subprocess.Popen([os.environ["AIRLOCK"], "--socket", _daemon.sock, "run", "--stream",
                              "--lang", "python", "-c",
                              "import time\nprint('ran', flush=True)\ntime.sleep(3)\n"
                              "print('end')"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            first = p.stdout.readline()  # the fall-back's code started
            os.kill(pid, signal.SIGCONT)
            rest, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual((first + rest, p.returncode), ("ran\nend\n", 0),
                         err + _daemon.log_tail())
        self.assertTrue(wait_for(lambda: re.search(
            r"a run went the ordinary way: Connection timed out", _daemon.log_text()), 10),
            _daemon.log_tail())
        self.assertTrue(wait_for(lambda: re.search(
            r"zygote uid 0 python: stopping: it failed a run", _daemon.log_text()), 10),
            _daemon.log_tail())


LIFE_CONFIG = """[daemon]
prepared_sandboxes = 0
prestarted_interpreters = 1
max_runs = 8
max_runs_per_uid = 4
zygote_forks = 3
zygote_idle_s = 1
[runtime python]
argv = %s
code_name = main.py
prestart = true
zygote = yes
""" % ARGV


class ZygoteLifeTest(unittest.TestCase):
    """A daemon of its own: replaced after zygote_forks runs, ended when
    idle, stopped by a reload that drops the key. Uses the upper half of
    the module's uid range (the module's daemon holds the lower)."""

    def setUp(self):
        base, count = uid_range()
        self.d = Daemon(os.environ["AIRLOCKD"], config=LIFE_CONFIG, debug=True,
                        uids=(base + count // 2, count // 2))
        self.addCleanup(self.d.remove)
        self.d.start()

    def run_here(self, code):
        p = subprocess.run([os.environ["AIRLOCK"], "--socket", self.d.sock, "--json", "run",
                            "--lang", "python", "-c", code], capture_output=True, text=True,
                           timeout=60)
        res = json.loads(p.stdout)
        self.assertEqual(res.get("exit_code"), 0, self.d.log_tail())
        return res

    def count(self, pattern):
        return len(re.findall(pattern, self.d.log_text()))

    def burst_until(self, pattern, n, runs=40):
        """Runs back to back until pattern is in the log n times."""
        for _ in range(runs):
            if self.count(pattern) >= n:
                return True
            self.run_here("print(1)")
        return self.count(pattern) >= n

    def test_replaced_after_forks(self):
        # Idle for a minute here: the stop is the forks', not the idle end's.
        self.d.stop()
        self.d.write_config(LIFE_CONFIG.replace("zygote_idle_s = 1", "zygote_idle_s = 60"))
        self.d.start()
        # three runs through one zygote, then it is replaced
        self.assertTrue(self.burst_until(r" zygote=ran", 3), self.d.log_tail())
        self.assertTrue(wait_for(lambda: self.count(
            r"stopping: its runs are done \(zygote_forks\), replaced"), 5), self.d.log_tail())
        self.assertTrue(self.burst_until(r"zygote uid 0 python: started, pid", 2),
                        self.d.log_tail())
        self.assertTrue(self.burst_until(r" zygote=ran", 4), self.d.log_tail())

    def test_idle_end(self):
        self.assertTrue(self.burst_until(r" zygote=ran", 1), self.d.log_tail())
        self.assertTrue(wait_for(lambda: self.count(r"zygote uid 0 python: stopping: idle") and
                                 self.count(r"zygote uid 0 python: pid \d+ ended"), 10),
                        self.d.log_tail())

    def test_reload_drops_key(self):
        self.assertTrue(self.burst_until(r"-> live \(started\)", 1), self.d.log_tail())
        self.d.write_config(LIFE_CONFIG.replace("zygote = yes", "zygote = no")
                            .replace("zygote_idle_s = 1", "zygote_idle_s = 60"))
        os.kill(self.d.proc.pid, signal.SIGHUP)
        self.assertTrue(wait_for(lambda: self.count(
            r"stopping: the reload dropped its zygote = yes"), 10), self.d.log_tail())
        self.assertTrue(wait_for(lambda: self.count(r"zygote uid 0 python: pid \d+ ended"), 10),
                        self.d.log_tail())
        n = self.count(r" zygote=ran")
        for _ in range(3):
            self.run_here("print(1)")
        self.assertEqual(self.count(r" zygote=ran"), n)

    def test_reload_changes_python(self):
        # A reload that names another python for the runtime: its runs are
        # the new python's, as a pre-started interpreter's are (run_pool
        # ends those at every reload), not forks of the old zygote. The
        # other python is a start-up runtime's, so that the spawner may
        # start a zygote of it (spawner_zygote.c).
        other = "/usr/bin/python3.11"
        if not os.path.exists(other):
            self.skipTest("no %s" % other)
        conf = LIFE_CONFIG.replace("zygote_idle_s = 1", "zygote_idle_s = 60") + \
            "[runtime python-other]\nargv = %s -I -S -B {code}\ncode_name = main.py\n" % other
        self.d.stop()
        self.d.write_config(conf)
        self.d.start()
        self.assertTrue(self.burst_until(r" zygote=ran", 1), self.d.log_tail())
        self.d.write_config(conf.replace("argv = /usr/bin/python3 ", "argv = %s " % other, 1))
        n = self.count(r"reloaded: ")
        os.kill(self.d.proc.pid, signal.SIGHUP)
        self.assertTrue(wait_for(lambda: self.count(r"reloaded: ") > n, 10),
                        self.d.log_tail())
        exes = {self.run_here("import sys\nprint(sys.executable)")["stdout"].strip()
                for _ in range(6)}
        self.assertEqual(exes, {other}, self.d.log_tail())

    def test_unstartable_zygote_ends(self):
        # A zygote that cannot start (here: an LD_ variable in the
        # runtime's env, which the spawner refuses for a zygote) is
        # retried after its back-off while its caller asks for it, and
        # ends once not asked for during zygote_idle_s: the registry
        # keeps nothing for a caller gone, and asks the spawner nothing.
        self.d.stop()
        self.d.write_config(LIFE_CONFIG.replace("zygote = yes",
                                                "zygote = yes\nenv = LD_LIBRARY_PATH=/nonexistent"))
        self.d.start()
        self.run_here("print(1)")
        self.assertTrue(wait_for(lambda: self.count(r"zygote uid 0 python: waiting -> ended"),
                                 10), self.d.log_tail())
        n = self.count(r"-> starting \(retry\)")
        time.sleep(1)
        self.assertEqual(self.count(r"-> starting \(retry\)"), n, self.d.log_tail())
        # asked for again by the next run
        self.run_here("print(1)")
        self.assertTrue(wait_for(lambda: self.count(r"zygote uid 0 python: waiting -> ended") == 2,
                                 10), self.d.log_tail())

    def test_idle_zygotes_give_way(self):
        # Two other callers' zygotes, idle, hold two of max_runs = 4 run
        # slots (ADMIT_ZYGOTE) for zygote_idle_s: four runs of one second
        # sent at once must not wait behind them (they did: queued 0, 1.0,
        # 2.0 and 3.0 s); a waiting run has an idle zygote stopped
        # instead. The caller's own zygote, asked for by the first of the
        # four and serving the next, keeps its slot: one of the four may
        # wait for another's end.
        self.d.stop()
        self.d.write_config(LIFE_CONFIG.replace("zygote_idle_s = 1", "zygote_idle_s = 60")
                            .replace("max_runs = 8\nmax_runs_per_uid = 4",
                                     "max_runs = 4\nmax_runs_per_uid = 4\nsocket_mode = 0666")
                            + "[access]\nallow_all = yes\n")
        self.d.start()
        os.chmod(self.d.dir, 0o755)
        for user in (65534, 1):
            pre = (lambda u: lambda: (os.setgroups([]), os.setgid(u), os.setuid(u)))(user)
            for _ in range(2):
                subprocess.run([os.environ["AIRLOCK"], "--socket", self.d.sock, "run", "--lang",
                                "python", "-c", "print(1)"], capture_output=True, timeout=60,
                               preexec_fn=pre, check=True)
        self.assertTrue(wait_for(lambda: self.count(r"-> live \(started\)") >= 2, 10),
                        self.d.log_tail())
        ps = [subprocess.Popen([os.environ["AIRLOCK"], "--socket", self.d.sock, "--json", "run",
                                "--lang", "python", "-c", "import time\ntime.sleep(1)"],
                               stdout=subprocess.PIPE, text=True) for _ in range(4)]
        res = [json.loads(p.communicate(timeout=60)[0]) for p in ps]
        self.assertEqual([r.get("exit_code") for r in res], [0] * 4, self.d.log_tail())
        queued = [int(m) for m in re.findall(r"uid=0 .* queued_ms=(\d+)", self.d.log_text())]
        for user in (65534, 1):
            self.assertTrue(self.count(r"zygote uid %d python: stopping: a queued run waits for "
                                       r"the run slot it holds" % user), self.d.log_tail())
        self.assertLess(max(sorted(queued[-4:])[:3]), 1000, queued)


class ZygoteDirTest(unittest.TestCase):
    """airlockd --zygote-dir: a directory or file another user could change
    stops the start with a message naming it (daemon/main.c)."""

    def start_with(self, zdir):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="airlock-zydir-") as home:
            conf = os.path.join(home, "airlockd.conf")
            base, count = uid_range()
            with open(conf, "w") as f:
                f.write("[sandbox]\nuid_base = %d\nuid_count = %d\n"
                        % (base + count // 2, count // 2))
            p = subprocess.run([os.environ["AIRLOCKD"], "--foreground", "--socket",
                                os.path.join(home, "s"), "--config", conf,
                                "--zygote-dir", zdir],
                               capture_output=True, text=True, timeout=30)
        return p.returncode, p.stderr

    def copy_of_build_dir(self, root, mode):
        import shutil
        src = os.environ["AIRLOCK_TEST_ZYGOTE_DIR"]
        d = os.path.join(root, "z")
        os.mkdir(d)
        for n in os.listdir(src):
            if n == "zygote.py" or n.endswith(".so"):
                shutil.copy(os.path.join(src, n), d)
        os.chmod(d, mode)
        return d

    def test_refused_when_not_roots_alone(self):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="airlock-zydir-") as root:
            d = self.copy_of_build_dir(root, 0o777)
            rc, err = self.start_with(d)
            self.assertNotEqual(rc, 0, err)
            self.assertIn("--zygote-dir: %s: not root's alone" % d, err)
            os.chmod(d, 0o755)
            os.chmod(os.path.join(d, "zygote.py"), 0o666)
            rc, err = self.start_with(d)
            self.assertNotEqual(rc, 0, err)
            self.assertIn("zygote.py: not root's alone", err)
            rc, err = self.start_with(os.path.join(root, "missing"))
            self.assertNotEqual(rc, 0, err)
            self.assertIn("No such file or directory", err)

if __name__ == "__main__":
    unittest.main(verbosity=2)
