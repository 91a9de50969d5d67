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
  stalled_frontend  the frontend stopped (SIGSTOP) while a run's code ends:
                    the supervisor, its exit report unread, still exits
                    (SB_LAST_WORD_MS, 1 s) and no process of the run is left
                    within 8 s of the stop; continued, the frontend answers
                    the run, exited 0, within 10 s, and serves on

Prints `ok NAME` / `FAIL NAME: why`, then `N passed, N failed`; exit 1 on
any failure.
"""
import argparse
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, wait_for  # noqa: E402


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


class FaultsDaemon(Daemon):
    """The daemon (a log for each start) and the airlock command."""

    def __init__(self, args):
        super().__init__(args.airlockd,
                         "[daemon]\nmax_runs = 16\nmax_runs_per_uid = 16\nprepared_sandboxes = 0\n",
                         prefix="airlock-faults-", debug=True)
        self.airlock = args.airlock

    def start(self):
        return super().start(log="airlockd-%d.log" % (self.nstart + 1))

    def run_cmd(self, *code, wall="60"):
        return [self.airlock, "--socket", self.sock, "--json", "run", "--wall", wall, "--lang", "sh", "-c"] + list(code)

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
    if not wait_for(d.sandbox_procs, 5):
        why.append("the run never started")
    p.kill()
    p.wait()
    left = not wait_for(lambda: not d.sandbox_procs(), 5)
    if left:
        why.append("sandbox processes still there 5 s after the client died: %s" % d.sandbox_procs())
    if not wait_for(lambda: not d.run_cgroups(), 3):
        why.append("run cgroups left: %s" % d.run_cgroups())
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
    if not wait_for(lambda: len(d.sandbox_procs()) >= 6, 10):
        why.append("the runs never all started (%d sandbox processes)" % len(d.sandbox_procs()))
    old_cgroups = d.run_cgroups()
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
    if not wait_for(lambda: not d.sandbox_procs(), 5):
        why.append("sandbox processes survived the %s's death: %s" % (which, d.sandbox_procs()))
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
    # A run's cgroup goes once its supervisor is reaped, which may be just
    # after its result is sent: a moment for that, as in t_vanished_client.
    if not wait_for(lambda: not d.run_cgroups(), 3):
        why.append("run cgroups left 3 s after the restarted daemon's run: %s (the old runs': %s)"
                   % (d.run_cgroups(), old_cgroups))
    print("#   kill_%s: client exit codes %s, restart answered in %.2f s" % (which, answers, d.ready_s))
    return why


def t_stalled_frontend(d):
    """The supervisor's last word (daemon/supervisor/sandbox.c, SB_LAST_WORD_MS): after
    SUP_EXIT it waits for the frontend to close the lifeline, at most 1 s, so
    a frontend that is stalled cannot keep a finished run's supervisor (and
    its namespaces) alive."""
    why = []
    # The interpreters the daemon pre-starts at its start are waiting first
    # (they are not the run's, and one still starting needs the frontend).
    if not wait_for(lambda: not d.sandbox_procs(), 10):
        why.append("processes before the run: %s" % d.sandbox_procs())
    c = subprocess.Popen(d.run_cmd("sleep 1; echo done", wall="30"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    # The supervisor and the code (sh, then sleep): the code is running.
    if not wait_for(lambda: len(d.sandbox_procs()) >= 2, 10):
        why.append("the run never started (%s)" % d.sandbox_procs())
    frontend = d.frontend
    os.kill(frontend, signal.SIGSTOP)
    t0 = time.time()
    try:
        run = {pid for pid, _ in d.sandbox_procs()}
        left = lambda: sorted(run & {pid for pid, _ in d.sandbox_procs()})
        gone = wait_for(lambda: not left(), 8)
        secs = time.time() - t0
        if not gone:
            why.append("the run's processes outlived a stalled frontend by 8 s: %s" % left())
        if d.proc.poll() is not None:
            why.append("the spawner died while the frontend was stopped (status %s)" % d.proc.returncode)
    finally:
        os.kill(frontend, signal.SIGCONT)
    try:
        out, err = c.communicate(timeout=10)
        if c.returncode != 0 or b'"outcome":"exited"' not in out or b'"stdout":"done\\n"' not in out:
            why.append("the run's answer after SIGCONT: %d %r %r" % (c.returncode, out[:300], err[:200]))
    except subprocess.TimeoutExpired:
        c.kill()
        c.communicate()
        why.append("no answer within 10 s of SIGCONT")
    if not d.ping():
        why.append("daemon does not answer ping after SIGCONT")
    if not wait_for(lambda: not d.run_cgroups(), 3):
        why.append("run cgroups left: %s" % d.run_cgroups())
    print("#   stalled_frontend: the run's processes gone %.2f s after the frontend's stop" % secs)
    return why


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--airlockd", required=True)
    ap.add_argument("--airlock", required=True)
    ap.add_argument("only", nargs="*")
    args = ap.parse_args()
    d = FaultsDaemon(args)
    tests = [("vanished_client", t_vanished_client), ("unread_replies", t_unread_replies),
             ("slow_reader", t_slow_reader), ("kill_spawner", lambda d: t_kill(d, "spawner")),
             ("kill_frontend", lambda d: t_kill(d, "frontend")), ("stalled_frontend", t_stalled_frontend)]
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
        for pid, _ in d.sandbox_procs():  # never leave a sandbox behind, whatever failed
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if failed:
            d.show_log()
        if os.environ.get("AIRLOCK_TEST_KEEP"):
            print("# kept", d.dir)
        else:
            shutil.rmtree(d.dir, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
