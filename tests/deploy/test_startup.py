#!/usr/bin/env python3
"""Start-up checks (issue 34, "Bad input"): airlockd started without
something it needs says which, in its own message, and exits non-zero,
within a deadline, never serving. Each condition is made here without a VM:

- a missing capability: the bounding set without CAP_SETPCAP (setpriv);
- a socket directory that is not writable: a read-only tmpfs over it, in a
  mount namespace of the daemon's own;
- a cgroup hierarchy not delegated: resource_control = cgroup2 with an
  empty tmpfs over /sys/fs/cgroup, in a mount namespace of its own;
- no user namespaces for an unprivileged uid: the daemon in a user
  namespace of its own (every uid mapped) whose user.max_user_namespaces
  is 0;
- a masked /proc, as container runtimes make it: a tmpfs over /proc/sys in
  a mount namespace of its own.

A runtime's seccomp profile (sethostname refused) is not made here: the
host test's container check meets it (tests/host/container.sh).

A control start with none of these must answer, so that a check that
fails for an unrelated reason is seen. Run as root with AIRLOCKD set.
"""
import ctypes
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, die_with_runner, wait_for  # noqa: E402

AIRLOCKD = os.environ.get("AIRLOCKD", "")
LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_REC, MS_PRIVATE = 1, 0x4000, 0x40000
EXIT_DEADLINE_S = 20

# test_no_user_namespaces's helper: argv LOG AIRLOCKD-ARGV...
HELPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) != 0:
    sys.exit(126)
sys.stdout.write("unshared\n"); sys.stdout.flush()
if sys.stdin.readline() != "mapped\n":
    sys.exit(126)
os.setresgid(0, 0, 0); os.setresuid(0, 0, 0)
with open("/proc/sys/user/max_user_namespaces", "w") as f:
    f.write("0\n")
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.dup2(fd, 1); os.dup2(fd, 2); os.close(fd)
os.execv(sys.argv[2], sys.argv[2:])
"""


def _fail(msg):
    os.write(2, msg.encode() + b"\n")
    os._exit(126)


def _own_mounts():
    if LIBC.unshare(CLONE_NEWNS) != 0:
        _fail("unshare(CLONE_NEWNS): %d" % ctypes.get_errno())
    if LIBC.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        _fail("mount private: %d" % ctypes.get_errno())


def _tmpfs(path, flags=0):
    if LIBC.mount(b"tmpfs", path.encode(), b"tmpfs", flags, b"mode=0755") != 0:
        _fail("mount tmpfs on %s: %d" % (path, ctypes.get_errno()))


class StartupChecks(unittest.TestCase):
    def setUp(self):
        self.d = Daemon(AIRLOCKD, prefix="airlock-deploy-")

    def tearDown(self):
        self.d.remove()

    def argv(self, sock=None):
        return [AIRLOCKD, "--foreground", "--user", "nobody", "--socket", sock or self.d.sock,
                "--config", self.d.config]

    def expect_refusal(self, argv, words, preexec=None, pass_fds=()):
        """Start argv; it must exit non-zero within the deadline with every
        one of words in its log, never answering on its socket."""
        def pre():
            die_with_runner()
            if preexec:
                preexec()
        with open(self.d.log, "ab") as logf:
            proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=pre, pass_fds=pass_fds)
        try:
            proc.wait(EXIT_DEADLINE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.fail("airlockd still running after %d s:\n%s" % (EXIT_DEADLINE_S, self.d.log_tail()))
        log = self.d.log_tail()
        self.assertNotEqual(proc.returncode, 0, log)
        self.assertNotEqual(proc.returncode, 126, "the test's own set-up failed:\n" + log)
        for w in words:
            self.assertIn(w, log, log)
        return log

    def test_control_starts(self):
        self.d.start(timeout=EXIT_DEADLINE_S)
        self.assertTrue(self.d.ping(), self.d.log_tail())

    def test_missing_capability(self):
        log = self.expect_refusal(["setpriv", "--bounding-set=-setpcap", "--inh-caps=-all"] + self.argv(),
                                  ["missing capability CAP_SETPCAP", "--cap-add=SETPCAP"])
        self.assertNotIn("cannot drop", log)

    def test_missing_chown_for_socket_group(self):
        # A socket given a group not root's needs CAP_CHOWN; root's does not.
        self.d.write_config("[daemon]\nsocket_group = daemon\n")
        self.expect_refusal(["setpriv", "--bounding-set=-chown", "--inh-caps=-all"] + self.argv(),
                            ["missing capability CAP_CHOWN"])
        self.d.write_config("[daemon]\nsocket_group = root\n")
        with open(self.d.log, "ab") as logf:
            proc = subprocess.Popen(["setpriv", "--bounding-set=-chown", "--inh-caps=-all"] + self.argv(),
                                    stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, preexec_fn=die_with_runner)
        try:
            self.assertTrue(wait_for(lambda: proc.poll() is not None or self.d.ping(), EXIT_DEADLINE_S),
                            self.d.log_tail())
            self.assertIsNone(proc.poll(), self.d.log_tail())
        finally:
            proc.terminate()
            proc.wait(20)

    def test_socket_dir_not_writable(self):
        sockdir = os.path.join(self.d.dir, "ro")
        os.mkdir(sockdir)

        def pre():
            _own_mounts()
            _tmpfs(sockdir, MS_RDONLY)
        self.expect_refusal(self.argv(os.path.join(sockdir, "airlock.sock")),
                            ["socket directory %s is not writable" % sockdir,
                             "Read-only file system"], pre)

    def test_cgroup_not_delegated(self):
        self.d.write_config("[sandbox]\nresource_control = cgroup2\n")

        def pre():
            _own_mounts()
            _tmpfs("/sys/fs/cgroup")
        self.expect_refusal(self.argv(), ["resource_control = cgroup2",
                                          "not delegated to airlockd"], pre)

    def test_proc_masked(self):
        # A container's /proc: a mount over a non-empty directory of it
        # (here a tmpfs over /proc/sys) makes the kernel refuse a new proc
        # mount in a user namespace (mount_too_revealing).
        def pre():
            _own_mounts()
            _tmpfs("/proc/sys")
        self.expect_refusal(self.argv(), ["a sandbox cannot mount its own /proc",
                                          "unmask=/proc/*"], pre)

    def test_no_user_namespaces(self):
        # HELPER makes its user namespace and waits; the runner (root in the
        # parent namespace) writes maps of every uid, so the daemon is root
        # there with its run range; HELPER then sets the namespace's
        # user.max_user_namespaces to 0 and execs the daemon.
        with open(self.d.log, "ab") as logf:
            proc = subprocess.Popen([sys.executable, "-c", HELPER, self.d.log] + self.argv(),
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=logf, start_new_session=True,
                                    preexec_fn=die_with_runner)
        try:
            self.assertEqual(proc.stdout.readline(), b"unshared\n", self.d.log_tail())
            for name in ("uid_map", "gid_map"):
                with open("/proc/%d/%s" % (proc.pid, name), "w") as f:
                    f.write("0 0 4294967295\n")
            proc.stdin.write(b"mapped\n")
            proc.stdin.close()
            proc.wait(EXIT_DEADLINE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.fail("airlockd still running after %d s:\n%s" % (EXIT_DEADLINE_S, self.d.log_tail()))
        finally:
            proc.stdout.close()
        log = self.d.log_tail()
        self.assertNotIn(proc.returncode, (0, 126), log)
        self.assertIn("does not let an unprivileged process create a user namespace", log, log)
        self.assertIn("No space left on device", log, log)

if __name__ == "__main__":
    if os.geteuid() != 0 or not AIRLOCKD:
        print("run as root with AIRLOCKD set", file=sys.stderr)
        sys.exit(1)
    unittest.main(verbosity=2)
