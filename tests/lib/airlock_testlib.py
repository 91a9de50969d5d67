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
import subprocess
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
# this one, which meson's table (tests/meson.build) leaves free.
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


def wait_for(pred, timeout, step=0.05):
    """pred()'s first true value within timeout seconds, else its last."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


class Daemon:
    """One airlockd of a test runner (see the module's comment).

    config: the runner's config text, without a [sandbox] uid range (the
    daemon's is added). debug: --debug. env: the daemon's environment
    (default: the runner's, without AIRLOCK_SOCKET). prefix: of the
    temporary directory, which stop() leaves and remove() deletes.
    """

    def __init__(self, airlockd, config="", prefix="airlock-test-", debug=False, env=None, uids=None):
        self.airlockd = airlockd
        self.debug = debug
        self.env = env
        self.dir = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "airlock.sock")
        self.config = os.path.join(self.dir, "airlockd.conf")
        self.log = os.path.join(self.dir, "airlockd.log")
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
        env = dict(os.environ if self.env is None else self.env)
        env.pop("AIRLOCK_SOCKET", None)
        argv = [self.airlockd, "--foreground", "--user", "nobody", "--socket", self.sock,
                "--config", self.config]
        if self.debug:
            argv.insert(2, "--debug")
        t0 = time.time()
        with open(self.log, "ab") as logf:
            self.proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env,
                                         start_new_session=True, preexec_fn=die_with_runner)
        if not wait_for(lambda: self.proc.poll() is not None or self.ping(), timeout):
            self.stop()
            raise RuntimeError("airlockd did not answer within %d s:\n%s" % (timeout, self.log_tail()))
        if self.proc.poll() is not None:
            raise RuntimeError("airlockd exited with %d:\n%s" % (self.proc.returncode, self.log_tail()))
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
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def remove(self):
        """Stop, and delete the directory (config, socket, logs)."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, n=4000):
        """The last n characters of the log."""
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def sandbox_procs(self):
        """[(pid, uid)] of processes in the daemon's uid range (leftovers
        once no run is in flight)."""
        return uid_procs(self.uid_base, self.uid_hi, self.mine)

    def run_cgroup_dir(self):
        """The directory holding the runs' cgroups, as the log names it, or None."""
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return None
        m = re.search(r"resource control: cgroup2 at ([^:\s]+):", text)
        if m:
            return os.path.join(m.group(1), "runs")
        m = re.search(r"resource control: cgroup1 memory controller at (\S+)", text)
        return m.group(1) if m else None

    def run_cgroups(self):
        """Names (u<uid>) of the run cgroups of this daemon's uid range."""
        base = self.run_cgroup_dir()
        if base is None or not os.path.isdir(base):
            return []
        return [d for d in os.listdir(base)
                if re.match(r"^u\d+$", d) and self.uid_base <= int(d[1:]) <= self.uid_hi]
