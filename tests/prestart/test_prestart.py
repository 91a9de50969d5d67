"""Pre-started single-use interpreters (issue 18 part 1,
docs/design-interpreters.md §1 and §4), against a real airlockd.

Run by meson (suite "prestart") as root with AIRLOCKD and AIRLOCK (the built
daemon and CLI). One daemon whose runtime `python` pre-starts its
interpreters and whose runtime `python-fresh` runs the same argv fresh.

test_prestart_fields is the comparison of design §4: one script prints what
the code can see of its process (sys.argv, __file__, __name__, sys.modules,
sys.path, sys.flags, os.environ, cwd, signals, the blocked mask, rlimits,
ids, umask, fds and their flags, stdio, capabilities, seccomp, cgroup,
hostname, mounts), run once each way; every field must match but those in
ALLOWED, the documented differences (docs/security.md, docs/performance.md).
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, uid_range, wait_for  # noqa: E402

# An audit line: "airlockd[frontend]: audit time=... run=..." on stderr (the
# foreground), "audit run=..." in the journal (docs/security.md).
AUDIT_RE = re.compile(r"(^|: )audit (time=\S+ )?run=")


ARGV = "/usr/bin/python3 -I -S -B {code}"
# python-site: site loaded (the built-in runtime python-site's argv); its
# prestart is the default (yes for a python).
ARGV_SITE = "/usr/bin/python3 -I -B {code}"
CONFIG = """[daemon]
prepared_sandboxes = 1
prestarted_interpreters = 2
[runtime python]
argv = %s
code_name = main.py
prestart = true
[runtime python-fresh]
argv = %s
code_name = main.py
prestart = false
[runtime python-cwd]
argv = %s
code_name = main.py
cwd = /workspace/src
prestart = true
[runtime python-site]
argv = %s
code_name = main.py
[runtime python-site-fresh]
argv = %s
code_name = main.py
prestart = false
""" % (ARGV, ARGV, ARGV, ARGV_SITE, ARGV_SITE)

# The documented differences (docs/design-interpreters.md, "As built"):
# RLIMIT_CPU is what the interpreter used in its start-up (whole seconds,
# rounded up) plus the run's, where a fresh run has the run's alone.
ALLOWED = {"rlimit.RLIMIT_CPU"}

FIELDS = r'''
import json, os, re, signal, sys, resource, fcntl, stat, socket
f = {}
f["argv"] = sys.argv
f["file"] = __file__
f["name"] = __name__
f["modules"] = sorted(sys.modules)
f["path"] = sys.path
f["flags"] = list(sys.flags)
f["orig_argv"] = getattr(sys, "orig_argv", None)
f["executable"] = sys.executable
f["environ"] = dict(os.environ)
f["cwd"] = os.getcwd()
f["pid"] = os.getpid()
f["ppid"] = os.getppid()
f["pgid"] = os.getpgid(0)
f["sid"] = os.getsid(0)
for s in sorted(signal.valid_signals()):
    try:
        f["signal.%d" % s] = repr(signal.getsignal(s))
    except (ValueError, OSError):
        pass
f["blocked"] = sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
for n in sorted(dir(resource)):
    if n.startswith("RLIMIT_"):
        f["rlimit." + n] = list(resource.getrlimit(getattr(resource, n)))
f["resuid"] = list(os.getresuid())
f["resgid"] = list(os.getresgid())
f["groups"] = os.getgroups()
u = os.umask(0o22)
os.umask(u)
f["umask"] = u
fds = {}
for name in sorted(os.listdir("/proc/self/fd"), key=int):
    fd = int(name)
    try:
        fds[name] = [os.readlink("/proc/self/fd/" + name).split(":")[0],
                     fcntl.fcntl(fd, fcntl.F_GETFL), fcntl.fcntl(fd, fcntl.F_GETFD)]
    except OSError as e:
        fds[name] = str(e.errno)
f["fds"] = fds
f["isatty"] = [os.isatty(i) for i in range(3)]
for nm in ("stdin", "stdout", "stderr"):
    s = getattr(sys, nm)
    f["stdio." + nm] = [type(s).__name__, s.encoding, s.errors, s.line_buffering,
                        type(s.buffer).__name__]
with open("/proc/self/status") as st:
    for line in st:
        k, v = line.split(":", 1)
        if k.startswith("Cap") or k in ("NoNewPrivs", "Seccomp", "Seccomp_filters",
                                        "Uid", "Gid", "Groups", "SigBlk", "SigIgn",
                                        "SigCgt", "Threads", "NSpid"):
            f["status." + k] = v.strip()
with open("/proc/self/cgroup") as cg:
    f["cgroup"] = cg.read()
with open("/proc/self/mountinfo") as mi:
    # without the mount ids, parent ids and device numbers (fields 1-3) and
    # the host uid of the run's uid slot in tmpfs options: they differ
    # between any two runs, fresh or not
    f["mounts"] = [re.sub(r"(uid|gid)=\d+", r"\1=N", " ".join(l.split()[3:])) for l in mi]
f["hostname"] = socket.gethostname()
st = os.stat(__file__)
f["file.stat"] = [stat.filemode(st.st_mode), st.st_uid, st.st_gid, st.st_size]
f["file.code"] = open(__file__).read()
f["tmp"] = sorted(os.listdir("/tmp"))
f["workspace"] = sorted(os.listdir("/workspace"))
f["oom_score_adj"] = open("/proc/self/oom_score_adj").read()
f["loaded_encodings"] = sys.getfilesystemencoding()
print(json.dumps(f, sort_keys=True))
'''

_daemon = None

# The last SMALL_UIDS uids of the test's range are SmallRangeTest's daemon's.
SMALL_UIDS = 6


def setUpModule():
    global _daemon
    if os.geteuid() != 0:
        raise unittest.SkipTest("airlockd must start as root")
    base, count = uid_range()
    _daemon = Daemon(os.environ["AIRLOCKD"], CONFIG, prefix="airlock-prestart-", debug=True,
                     uids=(base, count - SMALL_UIDS))
    _daemon.start()


def tearDownModule():
    global _daemon
    if _daemon is not None:
        _daemon.remove()
        _daemon = None


def run(code, *opts, lang="python", daemon=None):
    """One run through the CLI (--json): the result as a dict."""
    sock = (daemon or _daemon).sock
    p = subprocess.run([os.environ["AIRLOCK"], "--socket", sock, "--json", "run",
                        "--lang", lang] + list(opts) + ["-c", code],
                       capture_output=True, text=True, timeout=60)
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise AssertionError("airlock run: rc %d, stdout %r, stderr %r" % (
            p.returncode, p.stdout, p.stderr))


def audit_line(run_id_hint=None):
    """The last audit line of the daemon's log."""
    with open(_daemon.log) as f:
        lines = [l for l in f if AUDIT_RE.search(l)]
    return lines[-1] if lines else ""


def in_background(code, *opts):
    """Start run(code, *opts) in a thread; returns (thread, result holder)."""
    box = {}

    def go():
        try:
            box["res"] = run(code, *opts)
        except Exception as e:  # noqa: BLE001 (said again by the caller)
            box["err"] = e
    t = threading.Thread(target=go)
    t.start()
    return t, box


def parent(pid):
    """The host pid of pid's parent (an interpreter's: its supervisor)."""
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^PPid:\s+(\d+)", f.read(), re.M).group(1))


def stopped(pids):
    """Whether every pid is in a group stop now (state T in /proc/PID/stat):
    a SIGSTOP sent is not yet a stop taken (a loaded core may not run the
    task for a while, and until then it acts as before: an interpreter
    still counts as its FIFO's reader, a supervisor still watches)."""
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "T":
                    return False
        except OSError:
            return False
    return True


def log_text():
    with open(_daemon.log, encoding="utf-8", errors="replace") as f:
        return f.read()


RETRY_LINE = "pre-started interpreter was gone or refused it"


def waiting_interpreters(daemon=None, argv=ARGV):
    """Host pids of the daemon's pre-started interpreters of argv, waiting or
    running."""
    daemon = daemon or _daemon
    want = [w.encode() for w in argv.replace("{code}", "/run/airlock/main.py").split()]
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().split(b"\0")
            # A python run starts through `-c BOOT` before its code file
            # (the figures' start-up, issue 30): the runtime's argv around it.
            if b"-c" in cmd[:-2]:
                i = cmd.index(b"-c")
                del cmd[i:i + 2]
            with open("/proc/%s/status" % pid) as f:
                uid = int(re.search(r"^Uid:\s+(\d+)", f.read(), re.M).group(1))
        except (OSError, AttributeError):
            continue
        if cmd[:-1] == want and \
                daemon.uid_base <= uid <= daemon.uid_hi:
            out.append(int(pid))
    return out


class PrestartTest(unittest.TestCase):
    def setUp(self):
        # The pre-started interpreters are up (two per runtime with prestart;
        # the pool refills after each run).
        self.assertTrue(wait_for(lambda: len(waiting_interpreters()) >= 4, 10) and
                        wait_for(lambda: len(waiting_interpreters(argv=ARGV_SITE)) >= 2, 10),
                        "no pre-started interpreters: %s" % waiting_interpreters())

    def fields(self, lang):
        res = run(FIELDS, lang=lang)
        self.assertEqual(res["outcome"], "exited", res)
        self.assertEqual(res["exit_code"], 0, res)
        return json.loads(res["stdout"]), audit_line()

    def test_prestart_fields(self):
        pre, pre_audit = self.fields("python")
        self.assertIn(" prestarted=1", pre_audit)
        fresh, fresh_audit = self.fields("python-fresh")
        self.assertNotIn("prestarted=", fresh_audit)
        self.assertEqual(sorted(pre), sorted(fresh))
        diff = {k: (pre[k], fresh[k]) for k in pre if pre[k] != fresh[k]}
        unexpected = {k: v for k, v in diff.items() if k not in ALLOWED}
        self.assertEqual(unexpected, {}, "pre-started vs fresh")
        # What the documented difference is: used start-up seconds on top.
        cpu_pre, cpu_fresh = pre["rlimit.RLIMIT_CPU"], fresh["rlimit.RLIMIT_CPU"]
        self.assertGreaterEqual(cpu_pre[0], cpu_fresh[0])
        self.assertLessEqual(cpu_pre[0], cpu_fresh[0] + 2)
        # The fields that matter most, said again on their own.
        self.assertEqual(pre["argv"], ["/run/airlock/main.py"])
        self.assertEqual(pre["file"], "/run/airlock/main.py")
        self.assertEqual(pre["name"], "__main__")
        self.assertEqual(pre["file.code"], FIELDS)
        self.assertEqual(pre["file.stat"][0], "-r--r--r--")

    def test_prestart_fields_site(self):
        # The same with site loaded (python-site's argv, prestart by default).
        pre, pre_audit = self.fields("python-site")
        self.assertIn(" prestarted=1", pre_audit)
        fresh, fresh_audit = self.fields("python-site-fresh")
        self.assertNotIn("prestarted=", fresh_audit)
        self.assertIn("site", pre["modules"])
        diff = {k: (pre[k], fresh[k]) for k in pre if pre[k] != fresh.get(k)}
        self.assertEqual({k: v for k, v in diff.items() if k not in ALLOWED}, {},
                         "pre-started vs fresh, site loaded")

    def test_idle_memory(self):
        # What a waiting interpreter holds (docs/performance.md says it).
        rss = []
        for pid in waiting_interpreters() + waiting_interpreters(argv=ARGV_SITE):
            with open("/proc/%d/status" % pid) as f:
                rss.append(int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1)))
        print("\nwaiting interpreters' VmRSS (kB): %s" % sorted(rss), file=sys.stderr)
        self.assertTrue(rss)
        self.assertLess(max(rss), 64 << 10)

    def test_runtime_cwd(self):
        # A runtime's cwd is made in phase one, as the code's own.
        self.assertTrue(wait_for(lambda: len(waiting_interpreters()) >= 4, 10))
        res = run("import os; st = os.stat('.'); print(os.getcwd(), st.st_uid == os.getuid())",
                  lang="python-cwd")
        self.assertEqual(res["stdout"], "/workspace/src True\n", res)
        self.assertIn(" prestarted=1", audit_line())

    def test_traceback_reads_the_file(self):
        res = run("x = 1\nraise ValueError('boom %d' % x)\n")
        self.assertEqual(res["exit_code"], 1)
        self.assertIn('File "/run/airlock/main.py", line 2, in <module>', res["stderr"])
        self.assertIn("raise ValueError('boom %d' % x)", res["stderr"])
        self.assertIn(" prestarted=1", audit_line())

    def test_ineligible_requests_run_fresh(self):
        for opts, code, want in (
                (["--env", "K=v"], "import os; print(os.environ['K'])", "v\n"),
                (["--arg", "a1"], "import sys; print(sys.argv[1:])", "['a1']\n"),
                (["--stdin", "-"], "import sys; print(repr(sys.stdin.read()))", "''\n")):
            with self.subTest(opts=opts):
                res = run(code, *opts)
                self.assertEqual(res["outcome"], "exited", res)
                self.assertEqual(res["stdout"], want, res)
                self.assertNotIn("prestarted=", audit_line())

    def test_limits_fire(self):
        res = run("while True: pass", "--wall", "1", "--cpu", "30")
        self.assertEqual(res["outcome"], "wall_limit", res)
        self.assertIn(" prestarted=1", audit_line())
        res = run("while True: pass", "--wall", "20", "--cpu", "1")
        self.assertEqual(res["outcome"], "cpu_limit", res)
        self.assertIn(" prestarted=1", audit_line())
        # The memory limit is the cgroup's where there is one (outcome
        # memory_limit), else RLIMIT_AS (MemoryError): as in a fresh run.
        code = "b = bytearray(300 << 20); b[::4096] = b'x' * len(b[::4096])"
        res = run(code, "--memory", "64M")
        self.assertIn(" prestarted=1", audit_line())
        fresh = run(code, "--memory", "64M", lang="python-fresh")
        self.assertEqual((res["outcome"], res["exit_code"]), (fresh["outcome"], fresh["exit_code"]))
        if res["outcome"] != "memory_limit":
            self.assertIn("MemoryError", res["stderr"], res)
        res = run("import os\nfds = []\ntry:\n    while True: fds.append(os.open('/dev/null', 0))\n"
                  "except OSError as e:\n    print(e.errno, len(fds))\n",
                  "--limit", "open_files=16")
        self.assertEqual(res["outcome"], "exited", res)
        self.assertTrue(res["stdout"].startswith("24 "), res)  # EMFILE
        self.assertLessEqual(int(res["stdout"].split()[1]), 16)
        self.assertIn(" prestarted=1", audit_line())
        # Python ignores SIGXFSZ: the write past the limit fails (EFBIG).
        res = run("open('/workspace/big', 'wb').write(b'x' * (2 << 20))",
                  "--limit", "file_size_bytes=1048576")
        self.assertEqual(res["exit_code"], 1, res)
        self.assertIn("[Errno 27] File too large", res["stderr"])
        self.assertIn(" prestarted=1", audit_line())

    def test_killed_waiting_interpreter(self):
        victims = waiting_interpreters()
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        # The supervisors exit, the pool replaces them: new pids.
        self.assertTrue(wait_for(lambda: len(set(waiting_interpreters()) - set(victims)) >= 4,
                                 10))
        res = run("print('after')")
        self.assertEqual(res["outcome"], "exited", res)
        self.assertEqual(res["stdout"], "after\n")
        self.assertIn(" prestarted=1", audit_line())

    def assert_ran_fresh(self, t, box, retries_before):
        """The run of in_background() printed 'fresh' in a fresh sandbox,
        after one retry, said in the log."""
        t.join(60)
        res = box.get("res")
        self.assertIsNotNone(res, box)
        self.assertEqual((res["outcome"], res["stdout"]), ("exited", "fresh\n"), res)
        self.assertNotIn(" prestarted=1", audit_line())
        self.assertEqual(log_text().count(RETRY_LINE), retries_before + 1)

    def test_run_given_to_a_dead_interpreter(self):
        # Interpreters killed while their supervisors cannot notice
        # (stopped): the run is handed to one of them, the hand-off finds
        # it gone, and the run is run again in a fresh sandbox.
        victims = waiting_interpreters()
        sups = [parent(p) for p in victims]
        before = log_text().count(RETRY_LINE)
        for pid in sups:
            os.kill(pid, signal.SIGSTOP)
        try:
            self.assertTrue(wait_for(lambda: stopped(sups), 30), "supervisors not stopped")
            for pid in victims:
                os.kill(pid, signal.SIGKILL)
            t, box = in_background("print('fresh')")
            time.sleep(0.5)  # the run's start message waits in a stopped supervisor
        finally:
            for pid in sups:
                os.kill(pid, signal.SIGCONT)
        self.assert_ran_fresh(t, box, before)
        # The pool is back, and the next eligible run is pre-started again.
        self.assertTrue(wait_for(lambda: len(set(waiting_interpreters()) - set(victims)) >= 4,
                                 10))
        res = run("print('again')")
        self.assertEqual(res["stdout"], "again\n", res)
        self.assertIn(" prestarted=1", audit_line())

    def test_interpreter_dies_during_its_hand_off(self):
        # Stopped interpreters do not read their FIFO: the supervisor that
        # took the run waits for its reader; the interpreter is killed then
        # (before any of the code reached it): a fresh sandbox runs it.
        victims = waiting_interpreters()
        before = log_text().count(RETRY_LINE)
        for pid in victims:
            os.kill(pid, signal.SIGSTOP)
        try:
            # Stopped, an interpreter has left its FIFO's open() (the
            # kernel undoes its reader count), so the hand-off waits for it;
            # one not yet stopped still counts as the reader and would take
            # the code (seen under load: signaled 9, not run fresh).
            self.assertTrue(wait_for(lambda: stopped(victims), 30), "interpreters not stopped")
            t, box = in_background("print('fresh')")
            time.sleep(0.5)  # the supervisor waits for its reader (or, slower, its run is
            # given after the kill below: it then finds the interpreter gone; fresh either way)
        finally:
            for pid in victims:
                os.kill(pid, signal.SIGKILL)
        self.assert_ran_fresh(t, box, before)

    def test_nothing_of_one_run_in_the_next(self):
        # Each interpreter serves one run: what a run leaves (files in /tmp,
        # /dev/shm and the workspace, its environment, its modules, a
        # process) is in no later run, pre-started before or after it: each
        # sees what a fresh run sees.
        res = run("import os, json\n"
                  "for d in ('/tmp', '/workspace', '/dev/shm'):\n"
                  "    try:\n        open(d + '/left', 'w').write('x')\n"
                  "    except OSError:\n        pass\n"
                  "os.environ['LEFT'] = '1'\n"
                  "if os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(60)\n"
                  "print('one')\n")
        self.assertEqual(res["stdout"], "one\n", res)
        self.assertIn(" prestarted=1", audit_line())
        probe = ("import os, sys\n"
                 "def ls(d):\n    try:\n        return sorted(os.listdir(d))\n"
                 "    except OSError as e:\n        return e.errno\n"
                 "print(ls('/tmp'), ls('/workspace'), ls('/dev/shm'), 'LEFT' in os.environ,\n"
                 "      'json' in sys.modules, sorted(p for p in os.listdir('/proc') if p.isdigit()))\n")
        fresh = run(probe, lang="python-fresh")
        self.assertNotIn("prestarted=", audit_line())
        self.assertNotIn("left", fresh["stdout"], fresh)
        # Three runs: the pool holds two, the third is one started later.
        for i in range(3):
            res = run(probe)
            self.assertEqual(res["stdout"], fresh["stdout"], (i, res))
            self.assertIn(" prestarted=1", audit_line())

    def test_output_is_the_runs(self):
        res = run("import sys\nsys.stdout.write('o' * 100000)\nsys.stderr.write('e')\n")
        self.assertEqual(res["stdout_bytes"], 100000, {k: res[k] for k in res if k != "stdout"})
        self.assertEqual(res["stderr"], "e")
        res = run("print('next')")
        self.assertEqual(res["stdout"], "next\n")


class SmallRangeTest(unittest.TestCase):
    """Waiting interpreters that die give their uid slots back: a daemon of
    SMALL_UIDS slots whose two interpreters are killed five times over (ten
    slots' worth) refills its pool each time and still runs pre-started."""

    def test_dead_waiting_interpreters_free_their_slots(self):
        base, count = uid_range()
        d = Daemon(os.environ["AIRLOCKD"],
                   "[daemon]\nprepared_sandboxes = 1\nprestarted_interpreters = 2\n"
                   "[runtime python]\nargv = %s\ncode_name = main.py\nprestart = true\n" % ARGV,
                   prefix="airlock-prestart-small-", debug=True,
                   uids=(base + count - SMALL_UIDS, SMALL_UIDS))
        d.start()
        try:
            seen = set()
            for i in range(5):
                self.assertTrue(wait_for(lambda: len(set(waiting_interpreters(d)) - seen) >= 2,
                                         10), (i, d.log_tail()))
                victims = waiting_interpreters(d)
                sups = [parent(p) for p in victims]
                seen |= set(victims)
                for pid in victims:
                    os.kill(pid, signal.SIGKILL)
                # Noticed while idle: each supervisor exits and is reaped.
                self.assertTrue(wait_for(lambda: not any(os.path.exists("/proc/%d" % s)
                                                         for s in sups), 10), (i, sups))
            self.assertTrue(wait_for(lambda: len(set(waiting_interpreters(d)) - seen) >= 2, 10))
            res = run("print('still')", daemon=d)
            self.assertEqual((res["outcome"], res["stdout"]), ("exited", "still\n"), res)
            with open(d.log) as f:
                self.assertIn(" prestarted=1", [l for l in f if AUDIT_RE.search(l)][-1])
        finally:
            d.remove()


if __name__ == "__main__":
    unittest.main(verbosity=2)
