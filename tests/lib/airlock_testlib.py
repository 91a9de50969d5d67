"""What the python test runners share (tests/hostile, load, faults, compat,
bench, python, mcp): each puts tests/lib on sys.path and imports from here.

Daemon is the one way a runner starts airlockd: a private directory with
its config, socket and log; sandboxes as user nobody on the host uid range
meson hands the test (uid_range()); the daemon dies with the runner
(die_with_runner()); start() returns once it answers a hello on its socket.
"""
import ctypes
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

# Every airlockd a runner starts dies with it (issue 13, finding 8: daemons
# outlived killed test runs). PR_SET_PDEATHSIG is set between fork and exec
# and fires when the thread that forked ends: runners start daemons from their
# main thread. A runner gone before the prctl is caught by getppid(). libc is
# loaded here, at import, not in the child. SIGKILL reaches the spawner
# (airlockd's main process); its frontend and sandboxes die with it by their
# own.
_LIBC = ctypes.CDLL(None, use_errno=True)
_RUNNER_PID = os.getpid()

# Outside meson (a runner started by hand) there is no range handed out:
# this one, which meson's table (tests/meson.build) leaves free in every
# build directory's band (uid-ranges checks it for every test_uid_offset).
_UID_BASE_BY_HAND = 2000000
_UID_COUNT_BY_HAND = 2048

# A hello of protocol version 1, id 1, in msgpack: {"type": 1, "id": 1,
# "version": 1} (docs/protocol.md).
_HELLO = b"\x83\xa4type\x01\xa2id\x01\xa7version\x01"


def die_with_runner():
    """preexec_fn for subprocess.Popen of a daemon the runner starts."""
    pr_set_pdeathsig = 1
    if _LIBC.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0) != 0:
        os._exit(126)
    if os.getppid() != _RUNNER_PID:
        os._exit(126)


def private_mounts():
    """preexec_fn part: a mount namespace of the daemon's own, private from
    the host's, so that its mount table holds what the daemon (and anything
    a run did to it) made, and no mount another program makes on the host
    meanwhile (a VM root being built, a network namespace pinned)."""
    clone_newns, ms_rec, ms_private = 0x00020000, 0x4000, 0x40000
    if _LIBC.unshare(clone_newns) != 0:
        os._exit(126)
    if _LIBC.mount(None, b"/", None, ms_rec | ms_private, None) != 0:
        os._exit(126)


def uid_range():
    """(base, count) of the host uids this test's daemons may use: handed out
    by meson (AIRLOCK_TEST_UID_BASE, AIRLOCK_TEST_UID_COUNT; see the table in
    tests/meson.build), so that no two tests running at once share one."""
    base = os.environ.get("AIRLOCK_TEST_UID_BASE")
    if base is None:
        return _UID_BASE_BY_HAND, _UID_COUNT_BY_HAND
    return int(base), int(os.environ["AIRLOCK_TEST_UID_COUNT"])


def _stat_fields(pid):
    """(comm, fields after comm) of /proc/pid/stat; raises OSError."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    return st[st.find("(") + 1:st.rfind(")")], st[st.rfind(")") + 2:].split()


def children(pid):
    """The pids whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if int(_stat_fields(int(d))[1][1]) == pid:
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                continue
    return out


def foreign(pid, mine):
    """Is pid below an airlockd other than ours (another test's daemon that
    happens to use an overlapping uid range)? A process of ours that escaped
    would be reparented away from every airlockd, so it still counts."""
    seen, other = 0, False
    while pid > 1 and seen < 64:
        seen += 1
        try:
            comm, fields = _stat_fields(pid)
        except OSError:
            return other
        if pid in mine:
            return False
        other = other or comm == "airlockd"
        pid = int(fields[1])
    return other


def uid_procs(lo, hi, mine):
    """[(pid, uid)] of the processes whose real uid is in [lo, hi] and that
    are not another test's (foreign())."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/status" % d) as f:
                for line in f:
                    if line.startswith("Uid:"):
                        uid = int(line.split()[1])
                        if lo <= uid <= hi and not foreign(int(d), mine):
                            found.append((int(d), uid))
                        break
        except (OSError, ValueError):
            continue
    return found


def _status(pid):
    """{key: value} of /proc/pid/status; raises OSError."""
    with open("/proc/%d/status" % pid) as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def _cgroup_pids(path):
    """Every pid in the cgroup directory path and below it."""
    pids = set()
    for dirpath, _, files in os.walk(path):
        if "cgroup.procs" in files:
            try:
                with open(os.path.join(dirpath, "cgroup.procs")) as f:
                    pids.update(int(x) for x in f.read().split())
            except (OSError, ValueError):
                continue
    return pids


def prestarted_waiting(found, spawner):
    """The sandboxes among found ([(pid, uid)], uid_procs()) that hold a
    pre-started interpreter the daemon has not handed a run yet, as
    [(supervisor pid, interpreter pid, supervisor uid)].

    A waiting pre-started interpreter (docs/design-interpreters.md §1) is a
    live process of the uid range that is no run's leftover; the checks that
    count leftovers must not count it, and must not let anything else pass
    for one. So the criterion is what the kernel shows, never a name or a
    uid alone; a sandbox counts as waiting only if all of these hold:
      - its pid namespace holds exactly two processes of the range: the
        supervisor, pid 1 there, whose parent is this daemon's spawner, and
        the interpreter, whose parent is the supervisor, at the supervisor's
        uid + 1 (the code's uid of the same slot). Any third process there
        (a run's child, something joined from outside) makes the whole
        sandbox count;
      - the interpreter is blocked opening a FIFO (wchan wait_for_partner),
        and the one /run/airlock/ path of its argv is, in its own root, a
        FIFO. The hand-off renames a regular file over that FIFO and
        remounts /run/airlock read-only before any code runs, and the code's
        uid cannot write there anyway: no process that was handed a run,
        nor anything it started, can show this again.
    What is not verifiable here (wchan hidden, /proc unreadable) counts as a
    leftover: an unclear case fails the check, never passes it.
    """
    by_ns = {}
    for pid, uid in found:
        try:
            by_ns.setdefault(os.readlink("/proc/%d/ns/pid" % pid), []).append((pid, uid))
        except OSError:
            continue
    out = []
    for members in by_ns.values():
        if len(members) != 2:
            continue
        (sup, sup_uid), (itp, itp_uid) = sorted(members, key=lambda m: m[1])
        try:
            st_sup, st_itp = _status(sup), _status(itp)
            if itp_uid != sup_uid + 1 or int(st_sup["PPid"]) != spawner or \
                    st_sup["NSpid"].split()[-1] != "1" or int(st_itp["PPid"]) != sup:
                continue
            with open("/proc/%d/wchan" % itp) as f:
                if f.read().strip() != "wait_for_partner":
                    continue
            with open("/proc/%d/cmdline" % itp, "rb") as f:
                code = [w for w in f.read().split(b"\0") if w.startswith(b"/run/airlock/")]
            if len(code) != 1 or not stat.S_ISFIFO(os.stat(b"/proc/%d/root" % itp + code[0]).st_mode):
                continue
        except (OSError, KeyError, ValueError):
            continue
        out.append((sup, itp, sup_uid))
    return out


def wait_for(pred, timeout, step=0.05):
    """pred()'s first true value within timeout seconds, else its last."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


class _UnitProcess:
    """The main process of a started unit, as much of subprocess.Popen as the
    runners use (pid, poll(), returncode)."""

    def __init__(self, unit, pid):
        self.unit = unit
        self.pid = pid
        self.returncode = None

    def poll(self):
        """None while the unit runs with this main pid; else the exit
        status systemd recorded (-1 when it names none)."""
        if self.returncode is None and self.unit.main_pid() != self.pid:
            status = self.unit.show("ExecMainStatus")
            self.returncode = int(status) if status.isdigit() and status != "0" else -1
        return self.returncode


class SystemUnit:
    """An installed airlockd under its own systemd unit (tests/host: the
    Debian VM) in place of one the runner starts: start() installs the
    runner's config as the unit's (the host's own put aside) and a runtime
    drop-in with the runner's environment additions and airlockd argv, and
    restarts the unit; stop() stops it and puts the host's config and unit
    back. The socket is the unit's; the log is its journal. Only for a
    machine that is there to be tested: the service is the runner's while it
    runs."""

    RUNTIME_DIR = "/run/airlock"
    SOCKET = RUNTIME_DIR + "/airlock.sock"
    CONFIG = "/etc/airlock/airlockd.conf"
    DROPIN_DIR = "/run/systemd/system/%s.d"

    def __init__(self, name, daemon):
        self.name = name
        self.daemon = daemon
        self.dropin = os.path.join(self.DROPIN_DIR % name, "50-airlock-test.conf")
        self.saved = self.CONFIG + ".airlock-test-saved"
        self.cursor = None
        self.installed = False
        # What the runner's environment for the daemon adds to its own (the
        # hostile runner's secret): the unit's environment gets it.
        env = daemon.env or {}
        self.env_add = {k: v for k, v in env.items() if os.environ.get(k) != v and k != "AIRLOCK_SOCKET"}

    def systemctl(self, *args):
        subprocess.run(["systemctl"] + list(args), check=True, stdout=subprocess.DEVNULL)

    def show(self, prop):
        p = subprocess.run(["systemctl", "show", "-p", prop, "--value", self.name],
                           capture_output=True, text=True)
        return p.stdout.strip()

    def main_pid(self):
        pid = self.show("MainPID")
        return int(pid) if pid.isdigit() else 0

    def install(self):
        if not self.installed:
            if os.path.exists(self.CONFIG) and not os.path.exists(self.saved):
                os.rename(self.CONFIG, self.saved)
            shutil.copyfile(self.daemon.config, self.CONFIG)
            os.chmod(self.CONFIG, 0o600)
            os.makedirs(os.path.dirname(self.dropin), exist_ok=True)
            argv = [self.daemon.airlockd, "--foreground"] + (["--debug"] if self.daemon.debug else [])
            with open(self.dropin, "w") as f:
                f.write("[Service]\nExecStart=\nExecStart=%s\n" % " ".join(argv))
                for k, v in sorted(self.env_add.items()):
                    f.write('Environment="%s=%s"\n' % (k, v))
            self.installed = True
        self.systemctl("daemon-reload")

    def uninstall(self):
        if not self.installed:
            return
        try:
            os.unlink(self.dropin)
        except FileNotFoundError:
            pass
        if os.path.exists(self.saved):
            os.replace(self.saved, self.CONFIG)
        else:
            os.unlink(self.CONFIG)
        self.installed = False
        self.systemctl("daemon-reload")

    def start(self, timeout):
        d = self.daemon
        if self.cursor is None:
            p = subprocess.run(["journalctl", "--show-cursor", "-n", "0", "-q"],
                               capture_output=True, text=True)
            m = re.search(r"-- cursor: (\S+)", p.stdout)
            self.cursor = m.group(1) if m else ""
        self.install()
        t0 = time.time()
        self.systemctl("restart", self.name)
        if not wait_for(d.ping, timeout):
            self.stop()
            raise RuntimeError("%s did not answer within %d s:\n%s" % (self.name, timeout, d.log_tail()))
        d.proc = _UnitProcess(self, self.main_pid())
        return d.started(t0)

    def stop(self):
        if self.installed:
            subprocess.run(["systemctl", "stop", self.name], stdout=subprocess.DEVNULL)
        self.uninstall()

    def journal(self):
        argv = ["journalctl", "-u", self.name, "-o", "cat", "--no-pager", "-q"]
        if self.cursor:
            argv.append("--after-cursor=" + self.cursor)
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace")
        return p.stdout


class Daemon:
    """One airlockd of a test runner (see the module's comment).

    config: the runner's config text, without a [sandbox] uid range (the
    daemon's is added). debug: --debug. env: the daemon's environment
    (default: the runner's, without AIRLOCK_SOCKET). prefix: of the
    temporary directory, which stop() leaves and remove() deletes.
    """

    def __init__(self, airlockd, config="", prefix="airlock-test-", debug=False, env=None, uids=None,
                 unit=None, own_mounts=False):
        self.airlockd = airlockd
        # own_mounts: started in a mount namespace of its own
        # (private_mounts()); a unit's daemon has its unit's.
        self.own_mounts = own_mounts
        self.debug = debug
        self.env = env
        # Under a unit (PrivateTmp=yes, ProtectSystem=strict) the daemon does
        # not see the host's /tmp: a directory there would be absent from a
        # sandbox however weak it were, and the hostile cases that must not
        # reach the runner's directory (write_host_tmp, secret_host_paths)
        # could not fail. /run/airlock is the unit's RuntimeDirectory, which
        # its daemon sees and may write.
        if unit:
            os.makedirs(SystemUnit.RUNTIME_DIR, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix=prefix, dir=SystemUnit.RUNTIME_DIR if unit else None)
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "airlock.sock")
        self.config = os.path.join(self.dir, "airlockd.conf")
        self.log = os.path.join(self.dir, "airlockd.log")
        # unit: the installed systemd service to run instead (SystemUnit).
        self.unit = SystemUnit(unit, self) if unit else None
        self._cg_dir = None
        if self.unit:
            self.sock = SystemUnit.SOCKET
        # uids: (base, count) within this test's range, for a test that
        # runs two daemons at once (two daemons must never share a uid).
        self.uid_base, self.uid_count = uids if uids is not None else uid_range()
        self.proc = None
        self.frontend = None
        self.ready_s = None
        self.mine = set()  # pids of this daemon, each time it was started
        self.nstart = 0
        self.write_config(config)

    @property
    def uid_hi(self):
        """The last uid of the range."""
        return self.uid_base + self.uid_count - 1

    def write_config(self, text):
        """Write the config (the next start() reads it)."""
        with open(self.config, "w") as f:
            f.write(text)
            f.write("\n[sandbox]\nuid_base = %d\nuid_count = %d\n" % (self.uid_base, self.uid_count))
        os.chmod(self.config, 0o600)

    def start(self, timeout=10, log=None):
        """Start airlockd and wait until it answers; log: the log's name in
        dir (default airlockd.log, appended to)."""
        self.nstart += 1
        if log is not None:
            self.log = os.path.join(self.dir, log)
        if self.unit:
            return self.unit.start(timeout)
        env = dict(os.environ if self.env is None else self.env)
        env.pop("AIRLOCK_SOCKET", None)
        argv = [self.airlockd, "--foreground", "--user", "nobody", "--socket", self.sock,
                "--config", self.config]
        if self.debug:
            argv.insert(2, "--debug")
        # The build tree's zygote.py and extension (tests/meson.build).
        if env.get("AIRLOCK_TEST_ZYGOTE_DIR"):
            argv += ["--zygote-dir", env["AIRLOCK_TEST_ZYGOTE_DIR"]]
        t0 = time.time()
        with open(self.log, "ab") as logf:
            self.proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env,
                                         start_new_session=True, preexec_fn=self._preexec)
        if not wait_for(lambda: self.proc.poll() is not None or self.ping(), timeout):
            self.stop()
            raise RuntimeError("airlockd did not answer within %d s:\n%s" % (timeout, self.log_tail()))
        if self.proc.poll() is not None:
            raise RuntimeError("airlockd exited with %d:\n%s" % (self.proc.returncode, self.log_tail()))
        return self.started(t0)

    def _preexec(self):
        die_with_runner()
        if self.own_mounts:
            private_mounts()

    def mount_table(self):
        """The lines of the daemon's (its spawner's) mount table, a set; an
        empty one when it is not running."""
        pid = self.unit.main_pid() if self.unit else (self.proc.pid if self.proc else 0)
        try:
            with open("/proc/%d/mountinfo" % pid) as f:
                return set(f.read().splitlines())
        except (OSError, ValueError):
            return set()

    def started(self, t0):
        """Note a start that answered (begun at t0): its time, its frontend
        and its pids."""
        self.ready_s = time.time() - t0
        kids = wait_for(lambda: children(self.proc.pid), 2)
        self.frontend = kids[0] if kids else None
        self.mine.update([self.proc.pid] + kids)
        return self

    def ping(self):
        """Whether the daemon answers a hello on its socket."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.settimeout(5)
            s.connect(self.sock)
            s.send(_HELLO)
            return len(s.recv(65536)) > 0
        except OSError:
            return False
        finally:
            s.close()

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s; nothing when not running."""
        if self.unit:
            self.unit.stop()
            return
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def remove(self):
        """Stop, show the log's tail on stderr (meson shows a test's stderr
        when it fails, so a failure comes with what its daemon said), and
        delete the directory (config, socket, logs)."""
        self.stop()
        self.show_log()
        shutil.rmtree(self.dir, ignore_errors=True)

    def show_log(self, n=8000):
        """The log's last n characters on stderr, between markers."""
        sys.stderr.write("--- %s (last %d characters) ---\n%s\n--- end of log ---\n"
                         % (self.log, n, self.log_tail(n)))
        sys.stderr.flush()

    def log_tail(self, n=4000):
        """The last n characters of the log."""
        return self.log_text()[-n:]

    def log_text(self):
        """The whole log (a unit's: its journal since the first start)."""
        if self.unit:
            return self.unit.journal()
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def prestart_max(self):
        """The most pre-started interpreters this daemon's config lets wait
        at once: prestarted_interpreters (default 2) for each runtime that
        may pre-start, counted as the two built-in pythons plus every
        [runtime] section of the config (an upper bound: which ones do is
        the daemon's default, not read here)."""
        with open(self.config) as f:
            text = f.read()
        m = re.search(r"^\s*prestarted_interpreters\s*=\s*(\d+)", text, re.M)
        per = int(m.group(1)) if m else 2
        return per * (2 + len(re.findall(r"^\s*\[runtime\s", text, re.M)))

    def prestarted_waiting(self):
        """[(supervisor, interpreter, uid)] of this daemon's pre-started
        interpreters waiting for a run (prestarted_waiting())."""
        if self.proc is None:
            return []
        return prestarted_waiting(uid_procs(self.uid_base, self.uid_hi, self.mine), self.proc.pid)

    def sandbox_procs(self):
        """[(pid, uid)] of processes in the daemon's uid range that are no
        pre-started interpreter waiting for a run (prestarted_waiting()):
        leftovers once no run is in flight. More waiting ones than the
        config allows (prestart_max()) are a leak: then they all count."""
        found = uid_procs(self.uid_base, self.uid_hi, self.mine)
        waiting = prestarted_waiting(found, self.proc.pid) if self.proc is not None else []
        if len(waiting) > self.prestart_max():
            return found
        skip = {pid for sup, itp, _ in waiting for pid in (sup, itp)}
        return [(pid, uid) for pid, uid in found if pid not in skip]

    def run_cgroup_dir(self):
        """The directory holding the runs' cgroups, as the log names it, or None."""
        if self.unit and self._cg_dir:
            return self._cg_dir
        text = self.log_text()
        m = re.search(r"resource control: cgroup2 at ([^:\s]+):", text)
        if m:
            self._cg_dir = os.path.join(m.group(1), "runs")
            return self._cg_dir
        m = re.search(r"resource control: cgroup1 memory controller at (\S+)", text)
        return m.group(1) if m else None

    def run_cgroups(self):
        """Names (u<uid>) of the run cgroups of this daemon's uid range, but
        those of pre-started interpreters waiting for a run whose cgroup
        holds nothing else (leftovers once no run is in flight)."""
        base = self.run_cgroup_dir()
        if base is None or not os.path.isdir(base):
            return []
        waiting = self.prestarted_waiting()
        if len(waiting) > self.prestart_max():
            waiting = []
        skip = {"u%d" % uid for sup, itp, uid in waiting
                if _cgroup_pids(os.path.join(base, "u%d" % uid)) <= {sup, itp}}
        return [d for d in os.listdir(base)
                if re.match(r"^u\d+$", d) and self.uid_base <= int(d[1:]) <= self.uid_hi and d not in skip]
