#!/usr/bin/env python3
"""run_load.py: 2,000+ tiny runs from 32 concurrent clients as three uids
(root, nobody, daemon) through the real `airlock` command against a real
airlockd. Checks that every request got exactly its own correct answer (busy
answers are counted and retried), that nothing leaked in the daemon (fds,
memfds, processes, mounts, sandbox uids, run cgroups) and that the frontend's
RSS after the load is within a small margin of its level after warm-up.

Prints one line per check (`ok ...` / `FAIL ...`), the figures, and exits 1
on any failure.
"""
import argparse
import os
import queue
import shutil
import subprocess
import sys
import threading
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, children, wait_for  # noqa: E402


CLIENTS = 32
RUNS = 2000
WARMUP = 200
RSS_MARGIN_KB = 2048
USERS = ["root", "nobody", "daemon"]


def fds(pid):
    out = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            pass
    return out


def status(pid, key):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return None


class LoadDaemon(Daemon):
    """The daemon, open to the three users, with room for every client."""

    def __init__(self, airlockd):
        super().__init__(airlockd,
                         "[daemon]\nsocket_mode = 0666\nmax_runs = 64\nmax_runs_per_uid = 64\n"
                         "prepared_sandboxes = 0\n"
                         "max_connections_per_uid = 64\n"
                         "[access]\nallow_users = nobody, daemon\n",
                         prefix="airlock-load-")

    def snapshot(self):
        fe = fds(self.frontend)
        sp = fds(self.proc.pid)
        return {
            "frontend_fds": len(fe),
            "frontend_memfds": sum("memfd:" in f for f in fe),
            "spawner_fds": len(sp),
            "spawner_memfds": sum("memfd:" in f for f in sp),
            "daemon_children": len(children(self.proc.pid)),
            "sandbox_uid_procs": len(self.sandbox_procs()),
            "run_cgroups": len(self.run_cgroups()),
            "host_mounts": len(self.daemon_mounts("/proc/self/mountinfo")),
            "spawner_mounts": len(self.daemon_mounts("/proc/%d/mountinfo" % self.proc.pid)),
            "frontend_threads": status(self.frontend, "Threads"),
        }

    def daemon_mounts(self, mountinfo):
        """The lines of mountinfo this daemon can have made: a mount point in
        its directory, or a source it names its mounts by. The host's other
        mounts are not counted: another program on the machine (a network
        namespace pinned by `ip netns add`, a second suite) may add or remove
        one at any time, and that is no leak of this daemon's."""
        out = []
        with open(mountinfo) as f:
            for line in f:
                fields = line.split()
                sep = fields.index("-")
                point, source = fields[4], fields[sep + 2]
                if point == self.dir or point.startswith(self.dir + "/") or source.startswith("airlock"):
                    out.append(line)
        return out

    def settled(self):
        """Whether nothing of a run is left in flight: no sandbox process and
        no run cgroup of this daemon's uid range (a supervisor exits just
        after its answer, so the answer comes before this does)."""
        return not self.sandbox_procs() and not self.run_cgroups()

    def rss_kb(self):
        return status(self.frontend, "VmRSS")


def drive(airlock, sock, n, tag, stats):
    """n runs from CLIENTS threads; each request retried on busy until it has its answer."""
    work = queue.Queue()
    for i in range(n):
        work.put(i)
    lock = threading.Lock()

    def client(k):
        user = USERS[k % len(USERS)]
        while True:
            try:
                i = work.get_nowait()
            except queue.Empty:
                return
            token = "%s-%d-%s" % (tag, i, user)
            for attempt in range(200):
                try:
                    p = subprocess.run(
                        [airlock, "--socket", sock, "run", "--lang", "sh", "-c", "echo %s" % token],
                        capture_output=True, timeout=30, user=user, env={"PATH": "/usr/bin:/bin"})
                except subprocess.TimeoutExpired:
                    with lock:
                        stats["hangs"] += 1
                    continue
                if p.returncode == 69 and b"busy" in p.stderr:
                    with lock:
                        stats["busy"] += 1
                    time.sleep(0.01 * (1 + attempt % 10))
                    continue
                with lock:
                    if p.returncode == 0 and p.stdout == (token + "\n").encode():
                        stats["ok"] += 1
                        stats["per_user"][user] = stats["per_user"].get(user, 0) + 1
                    else:
                        stats["wrong"].append((token, p.returncode, p.stdout[:100], p.stderr[:200]))
                break
            else:
                with lock:
                    stats["gave_up"] += 1

    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--airlockd", required=True)
    ap.add_argument("--airlock", required=True)
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--rss-margin-kb", type=int, default=RSS_MARGIN_KB)
    args = ap.parse_args()
    failures = []

    def check(ok, what):
        print(("ok " if ok else "FAIL ") + what, flush=True)
        if not ok:
            failures.append(what)

    d = LoadDaemon(args.airlockd)
    try:
        d.start()
        warm = {"ok": 0, "busy": 0, "hangs": 0, "gave_up": 0, "wrong": [], "per_user": {}}
        drive(args.airlock, d.sock, WARMUP, "warm", warm)
        check(warm["ok"] == WARMUP, "warm-up: %d/%d runs answered correctly" % (warm["ok"], WARMUP))
        check(wait_for(d.settled, 30), "every warm-up run's processes and cgroup gone within 30 s")
        before = d.snapshot()
        rss_before = d.rss_kb()
        stats = {"ok": 0, "busy": 0, "hangs": 0, "gave_up": 0, "wrong": [], "per_user": {}}
        t0 = time.time()
        drive(args.airlock, d.sock, args.runs, "load", stats)
        elapsed = time.time() - t0
        check(wait_for(d.settled, 30), "every run's processes and cgroup gone within 30 s")
        after = d.snapshot()
        rss_after = d.rss_kb()
        print("# %d runs, %d clients, users %s, %.1f s (%.0f runs/s), busy answers %d, hangs %d"
              % (args.runs, CLIENTS, stats["per_user"], elapsed, args.runs / elapsed, stats["busy"], stats["hangs"]))
        check(stats["ok"] == args.runs, "every request got its own correct answer (%d/%d)" % (stats["ok"], args.runs))
        for w in stats["wrong"][:5]:
            print("#   wrong answer: %r" % (w,))
        check(stats["hangs"] == 0 and stats["gave_up"] == 0,
              "no client hung or gave up (hangs %d, gave up %d)" % (stats["hangs"], stats["gave_up"]))
        check(len(stats["per_user"]) == 3, "runs came from 3 uids: %s" % sorted(stats["per_user"]))
        for k in before:
            check(after[k] == before[k], "no leak: %s %s -> %s" % (k, before[k], after[k]))
        check(rss_after <= rss_before + args.rss_margin_kb,
              "frontend RSS %d KiB after warm-up -> %d KiB after the load (margin %d KiB)"
              % (rss_before, rss_after, args.rss_margin_kb))
        check(d.proc.poll() is None, "airlockd still running")
    finally:
        d.stop()
        if failures:
            d.show_log()
        if os.environ.get("AIRLOCK_TEST_KEEP"):
            print("# kept", d.dir)
        else:
            shutil.rmtree(d.dir, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
