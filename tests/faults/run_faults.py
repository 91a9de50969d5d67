#!/usr/bin/env python3
"""run_faults.py: faults around a real airlockd, every wait bounded.

  vanished_client   a client killed mid-run: its sandbox is gone within 5 s
  unread_replies    a client floods pings and never reads: another client's
                    10 quick runs still finish within 15 s; the daemon lives
  slow_reader       a client with a deep backlog reads one packet per second:
                    the same 10 quick runs finish within 15 s
  kill_spawner      kill -9 of the daemon's main pid (the spawner) with 6 runs
                    in flight: no sandbox process survives, every client gets
                    an error or EOF within 10 s, a daemon restarted on the same
                    socket serves at once, no run cgroup of the old runs is left
  kill_frontend     the same with kill -9 of the frontend (the child, nobody)

Prints `ok NAME` / `FAIL NAME: why`, then `N passed, N failed`; exit 1 on
any failure.
"""
import argparse
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import die_with_runner  # noqa: E402


UID_BASE = 900000 + 4096 * 32  # k large: small k are common in other tests
UID_COUNT = 256
MINE = set()  # pids of our own daemon(s)


def foreign(pid, mine):
    """Is pid below an airlockd other than ours (another test's daemon that
    happens to use an overlapping uid range)? A process of ours that escaped
    would be reparented away from every airlockd, so it still counts."""
    seen, other = 0, False
    while pid > 1 and seen < 64:
        seen += 1
        try:
            st = open("/proc/%d/stat" % pid).read()
        except OSError:
            return other
        if pid in mine:
            return False
        other = other or st[st.find("(") + 1:st.rfind(")")] == "airlockd"
        pid = int(st[st.rfind(")") + 2:].split()[1])
    return other


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open("/proc/%s/stat" % d).read()
            except OSError:
                continue
            if int(st[st.rfind(")") + 2:].split()[1]) == pid:
                out.append(int(d))
    return out


def uid_procs():
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                for line in open("/proc/%s/status" % d):
                    if line.startswith("Uid:"):
                        if (UID_BASE <= int(line.split()[1]) < UID_BASE + UID_COUNT
                                and not foreign(int(d), MINE)):
                            found.append(int(d))
                        break
            except OSError:
                pass
    return found


def wait_for(pred, timeout, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


# A minimal msgpack encoder for the few messages sent here by hand.
def mp_str(s):
    b = s.encode()
    return bytes([0xA0 | len(b)]) + b


def mp_uint(n):
    return bytes([n]) if n < 128 else b"\xce" + struct.pack(">I", n)


def mp_msg(**kv):
    out = bytes([0x80 | len(kv)])
    for k, v in kv.items():
        out += mp_str(k) + mp_uint(v)
    return out


class Daemon:
    def __init__(self, args):
        self.airlockd, self.airlock = args.airlockd, args.airlock
        self.dir = tempfile.mkdtemp(prefix="airlock-faults-")
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "airlock.sock")
        self.config = os.path.join(self.dir, "airlockd.conf")
        with open(self.config, "w") as f:
            f.write("[daemon]\nmax_runs = 16\nmax_runs_per_uid = 16\nprepared_sandboxes = 0\n"
                    "[sandbox]\nuid_base = %d\nuid_count = %d\n" % (UID_BASE, UID_COUNT))
        os.chmod(self.config, 0o644)
        self.proc = None
        self.nstart = 0

    def start(self):
        self.nstart += 1
        self.log = os.path.join(self.dir, "airlockd-%d.log" % self.nstart)
        t0 = time.time()
        self.proc = subprocess.Popen(
            [self.airlockd, "--foreground", "--debug", "--user", "nobody", "--socket", self.sock,
             "--config", self.config],
            stdout=open(self.log, "wb"), stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=die_with_runner)
        if not wait_for(lambda: self.proc.poll() is not None or self.ping(), 10):
            raise RuntimeError("airlockd did not answer within 10 s")
        if self.proc.poll() is not None:
            raise RuntimeError("airlockd exited: " + open(self.log).read()[-2000:])
        self.ready_s = time.time() - t0
        m = re.search(r"cgroup v1 memory controller at (\S+)", open(self.log).read())
        self.cgroup = m.group(1) if m else None
        self.frontend = wait_for(lambda: children(self.proc.pid), 2)[0]
        MINE.update([self.proc.pid, self.frontend])

    def ping(self):
        try:
            return subprocess.run([self.airlock, "--socket", self.sock, "ping"],
                                  capture_output=True, timeout=5).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def run_cmd(self, *code, wall="60"):
        return [self.airlock, "--socket", self.sock, "--json", "run", "--wall", wall, "--lang", "sh", "-c"] + list(code)

    def cgroups(self):
        if not self.cgroup or not os.path.isdir(self.cgroup):
            return []
        return [d for d in os.listdir(self.cgroup)
                if re.match(r"^u\d+$", d) and UID_BASE <= int(d[1:]) < UID_BASE + UID_COUNT]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        s.connect(self.sock)
        s.send(mp_msg(type=1, id=1, version=1))
        s.recv(65536)
        return s


def quick_runs(d, n=10):
    """n sequential tiny runs; returns (seconds, failures)."""
    t0 = time.time()
    bad = 0
    for i in range(n):
        try:
            p = subprocess.run([d.airlock, "--socket", d.sock, "run", "--lang", "exec", "--", "/bin/echo", str(i)],
                               capture_output=True, timeout=15)
            bad += p.returncode != 0 or p.stdout != b"%d\n" % i
        except subprocess.TimeoutExpired:
            bad += 1
    return time.time() - t0, bad


def t_vanished_client(d):
    why = []
    p = subprocess.Popen(d.run_cmd("sleep 60"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not wait_for(uid_procs, 5):
        why.append("the run never started")
    p.kill()
    p.wait()
    left = not wait_for(lambda: not uid_procs(), 5)
    if left:
        why.append("sandbox processes still there 5 s after the client died: %s" % uid_procs())
    if not wait_for(lambda: not d.cgroups(), 3):
        why.append("run cgroups left: %s" % d.cgroups())
    return why


def t_unread_replies(d):
    why = []
    s = d.connect()
    s.setblocking(False)
    sent = 0
    t0 = time.time()
    try:
        while sent < 200000 and time.time() - t0 < 5:
            s.send(mp_msg(type=3, id=2 + sent))
            sent += 1
    except (BlockingIOError, BrokenPipeError, ConnectionResetError):
        pass
    secs, bad = quick_runs(d)
    if bad or secs > 15:
        why.append("another client's 10 quick runs: %d failed, %.1f s (bound 15 s)" % (bad, secs))
    # The daemon must have dropped the flooding connection (bounded queue) or
    # still be serving it; either way it answers others.
    if not d.ping():
        why.append("daemon does not answer ping")
    s.close()
    print("#   unread_replies: %d pings sent unread, 10 runs by another client in %.2f s" % (sent, secs))
    return why


def t_slow_reader(d):
    why = []
    s = d.connect()
    for i in range(2000):
        s.send(mp_msg(type=3, id=2 + i))
    stop = time.time() + 6
    import threading

    got = [0]

    def reader():
        while time.time() < stop:
            try:
                if s.recv(65536):
                    got[0] += 1
            except OSError:
                return
            time.sleep(1)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    secs, bad = quick_runs(d)
    if bad or secs > 15:
        why.append("another client's 10 quick runs: %d failed, %.1f s (bound 15 s)" % (bad, secs))
    t.join(10)
    s.close()
    print("#   slow_reader: read %d packets at 1/s, 10 runs by another client in %.2f s" % (got[0], secs))
    return why


def t_kill(d, which):
    why = []
    clients = [subprocess.Popen(d.run_cmd("sleep 60"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for _ in range(6)]
    if not wait_for(lambda: len(uid_procs()) >= 6, 10):
        why.append("the runs never all started (%d sandbox processes)" % len(uid_procs()))
    old_cgroups = d.cgroups()
    victim = d.proc.pid if which == "spawner" else d.frontend
    spawner = d.proc.pid
    os.kill(victim, signal.SIGKILL)
    t0 = time.time()
    answers = []
    for c in clients:
        try:
            out, err = c.communicate(timeout=max(0.1, 10 - (time.time() - t0)))
            answers.append(c.returncode)
        except subprocess.TimeoutExpired:
            c.kill()
            c.communicate()
            answers.append("hang")
    if "hang" in answers or 0 in answers:
        why.append("client answers after the kill: %s (want an error or EOF within 10 s each)" % answers)
    if not wait_for(lambda: not uid_procs(), 5):
        why.append("sandbox processes survived the %s's death: %s" % (which, uid_procs()))
    if which == "frontend":
        try:
            d.proc.wait(5)
        except subprocess.TimeoutExpired:
            why.append("the spawner outlived its frontend by 5 s")
            d.proc.kill()
            d.proc.wait()
    else:
        d.proc.wait(5)
        if not wait_for(lambda: not os.path.exists("/proc/%d" % d.frontend), 5):
            why.append("the frontend outlived the spawner by 5 s")
    del spawner
    d.start()
    if d.ready_s > 3:
        why.append("the restarted daemon took %.1f s to answer" % d.ready_s)
    p = subprocess.run(d.run_cmd("echo again", wall="5"), capture_output=True, timeout=20)
    if p.returncode != 0 or b'"stdout":"again\\n"' not in p.stdout:
        why.append("the restarted daemon's first run failed: %d %r %r" % (p.returncode, p.stdout[:200], p.stderr[:200]))
    left = d.cgroups()
    if left:
        why.append("run cgroups of the old runs left after restart: %s (were %s)" % (left, old_cgroups))
    print("#   kill_%s: client exit codes %s, restart answered in %.2f s" % (which, answers, d.ready_s))
    return why


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--airlockd", required=True)
    ap.add_argument("--airlock", required=True)
    ap.add_argument("only", nargs="*")
    args = ap.parse_args()
    d = Daemon(args)
    tests = [("vanished_client", t_vanished_client), ("unread_replies", t_unread_replies),
             ("slow_reader", t_slow_reader), ("kill_spawner", lambda d: t_kill(d, "spawner")),
             ("kill_frontend", lambda d: t_kill(d, "frontend"))]
    passed = failed = 0
    try:
        d.start()
        for name, fn in tests:
            if args.only and name not in args.only:
                continue
            try:
                why = fn(d)
            except Exception as e:  # a broken step is a failure with its reason
                why = ["raised %r" % e]
            if d.proc.poll() is not None and not name.startswith("kill"):
                why.append("airlockd died (status %s)" % d.proc.returncode)
            if d.proc.poll() is not None:
                d.start()
            if why:
                failed += 1
                print("FAIL %s: %s" % (name, "; ".join(why)), flush=True)
            else:
                passed += 1
                print("ok %s" % name, flush=True)
    finally:
        d.stop()
        for pid in uid_procs():  # never leave a sandbox behind, whatever failed
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if os.environ.get("AIRLOCK_TEST_KEEP"):
            print("# kept", d.dir)
        else:
            shutil.rmtree(d.dir, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
