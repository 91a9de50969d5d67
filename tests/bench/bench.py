#!/usr/bin/env python3
"""Airlock benchmark: starts its own airlockd and drives airlock-bench.

  tests/bench/bench.py --airlockd BUILD/daemon/airlockd \\
      --airlock BUILD/libclient/airlock \\
      --lib-bench BUILD/tests/bench/airlock-bench [--quick] [--phases N]

Runs as root. Measures, interleaved round-robin over the variants:
latency (lib, cli, bare, ns, bwrap) of four payloads, throughput at 1/2/8/32
clients (lib, bare, ns, bwrap), the daemon's RSS idle and per concurrent run,
what a network namespace costs, and a run with 500 input files against one
with 1. --phases N also straces the daemon
during N runs of /bin/true and prints a per-phase breakdown (medians): the
request's path through a sandbox prepared ahead, and beside it the
preparation and the teardown (--only phases: that table alone). --only
cpu (with --base-airlockd) measures the CPU per run of both daemons in 3 s
slices of 8 clients, alternating, 6 each (--quick: 3 of 1 s).
--base-airlockd PATH starts a second airlockd (another build, the one a
change is measured against) and adds its lib runs as variant "base" to the
latency and throughput rounds, interleaved with the others, and its cells
to the cell loop (alternating with ours). --nostop makes the base
airlockd-nostop, built beside --lib-bench from the same objects with kill(2)
wrapped so that no interpreter is stopped between cells (tests/bench/nostop.c):
with --only cell, what the stop costs a cell, in one run
(docs/performance.md).
--prestart configures runtime python with prestart = yes (on both daemons).
--zygote adds zygote = yes to it on our daemon only (implies --prestart): with
--base-airlockd (the same build will do) "lib / base" is the key on against
off in one run (docs/performance.md, issue 33); it also prints how many of
our daemon's python runs went through the zygote (its audit's zygote=ran).
--mode back-to-back runs each (variant, payload) of a latency round CHUNK
(10) times in a row with no pause, instead of once (interleaved, the
default); --mode both measures and prints both tables. The full run also
measures python print(1) throughput with 8 clients (lib, bare python with 8
workers, and base): --only throughput measures only the two throughput
tables.
Prints markdown tables; --smoke checks that every variant produced numbers.
See docs/performance.md.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from bench_phases import report_phases, trace_phases


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, children, uid_range  # noqa: E402


VARIANTS = ["lib", "cli", "bare", "ns", "bwrap"]
TPUT_VARIANTS = ["lib", "bare", "ns", "bwrap"]
PAYLOADS = ["true", "sh-c-true", "py-pass", "py-print"]
PAYLOAD_LABEL = {"true": "exec /bin/true", "sh-c-true": "sh -c true",
                 "py-pass": "python pass", "py-print": "python print(1)"}
CLIENTS = [1, 2, 8, 32]
PY_CLIENTS = [8]                 # the python throughput table (issue 33)
PY_PAYLOAD = 3                   # airlock-bench's payload index of python print(1)
B2B_CHUNK = 10                   # runs of a pair in a row in back-to-back mode
MANY_FILES = 500                 # the "500 input files in one request"
FILE_SIZES = [100, 4096]         # bytes per file
CONFIG = "[daemon]\nmax_runs = 64\nmax_runs_per_uid = 64\nmax_connections_per_uid = 64\n"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def find_bwrap(allow_install):
    path = shutil.which("bwrap")
    if path is None and allow_install and os.geteuid() == 0:
        log("bench: bwrap missing, installing bubblewrap")
        subprocess.run(["apt-get", "install", "-y", "-qq", "bubblewrap"],
                       stdout=subprocess.DEVNULL, check=False)
        path = shutil.which("bwrap")
    return path


def run_bench(args, *cmd, daemon=None):
    """airlock-bench CMD against our daemon (or daemon: the base's, alone)."""
    full = [args.lib_bench, "--socket", (daemon or args.daemon).sock, "--cli", args.airlock,
            "--bwrap", args.bwrap, "--ns-uid", str(args.ns_uid)]
    if args.base_daemon is not None and daemon is None:
        full += ["--base-socket", args.base_daemon.sock]
    for i in range(args.ask_mounts):
        full += ["--mount", "m%d" % i]
    full += [str(c) for c in cmd]
    res = subprocess.run(full, capture_output=True, text=True)
    if res.stderr:
        log(res.stderr.rstrip())
    return res.stdout


def parse_kv(line):
    return {k: v for k, v in re.findall(r"(\w+)=([^\s]+)", line)}


def ratio(a, b):
    return "%.2f" % (a / b) if a and b else "n/a"


# ---- where the CPU goes (perf record -a -g during lib throughput) ----------

PERF_CLONE = ("copy_net_ns", "dup_mmap", "copy_mnt_ns", "copy_ipcs", "create_user_ns")


def perf_samples(path):
    """[(pid, [frame symbol, innermost first])] of the samples of processes
    named airlockd in `perf script` of path."""
    res = subprocess.run(["perf", "script", "-i", path, "--comms", "airlockd", "-F",
                          "comm,pid,ip,sym"], capture_output=True, text=True)
    out, cur = [], None
    for line in res.stdout.splitlines():
        if not line.strip():
            cur = None
            continue
        if not line[0].isspace():
            f = line.split()
            cur = (int(f[1]) if len(f) > 1 and f[1].isdigit() else 0, [])
            out.append(cur)
        elif cur is not None:
            f = line.split(None, 1)
            cur[1].append(f[1].split("+")[0].strip() if len(f) > 1 else "?")
    return out


def perf_profile(args, seconds):
    """perf record -a -g for `seconds` while 8 lib clients run /bin/true:
    shares of the airlockd-named samples by syscall (outermost), page faults
    and user space; the clone's parts; the spawner's and frontend's shares.
    Other airlockd processes on the host are counted too (named alike)."""
    if shutil.which("perf") is None:
        return None
    data = os.path.join(args.daemon.dir, "perf.data")
    load = subprocess.Popen([args.lib_bench, "--socket", args.daemon.sock, "--variants", "lib",
                             "throughput", str(seconds + 3), "1", "8"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    subprocess.run(["perf", "record", "-a", "-g", "-o", data, "--", "sleep", str(seconds)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    load.wait()
    samples = perf_samples(data)
    if not samples:
        return None
    rows, clone = {}, {}
    for _, frames in samples:
        calls = [f for f in frames if f.startswith(("__x64_sys_", "__do_sys_"))]
        if calls:
            key = calls[-1].replace("__x64_sys_", "").replace("__do_sys_", "")
        elif "exc_page_fault" in frames:
            key = "page faults"
        else:
            key = "user space and the rest"
        rows[key] = rows.get(key, 0) + 1
        if key == "clone":
            part = next((c for c in PERF_CLONE if c in frames), "the rest of clone")
            clone[part] = clone.get(part, 0) + 1
    by_pid = {}
    for pid, _ in samples:
        by_pid[pid] = by_pid.get(pid, 0) + 1
    return {"n": len(samples), "rows": rows, "clone": clone,
            "spawner": by_pid.get(args.daemon.proc.pid, 0),
            "frontend": by_pid.get(args.daemon.frontend, 0)}


def report_perf(prof, seconds):
    n = prof["n"]
    print("## Where the CPU goes (perf record -a -g, %d s of 8 lib clients running /bin/true; "
          "%d samples of processes named airlockd)\n" % (seconds, n))
    print("| where (outermost syscall, or) | share |")
    print("|---|---|")
    for k, v in sorted(prof["rows"].items(), key=lambda kv: -kv[1])[:14]:
        print("| %s | %.1f%% |" % (k, 100.0 * v / n))
    for k, v in sorted(prof["clone"].items(), key=lambda kv: -kv[1]):
        print("| clone: %s | %.1f%% |" % (k, 100.0 * v / n))
    print("| the spawner (all its syscalls) | %.1f%% |" % (100.0 * prof["spawner"] / n))
    print("| the frontend | %.1f%% |" % (100.0 * prof["frontend"] / n))
    print()


# ---- main ------------------------------------------------------------------

def measure_latency(args, variants, iters, chunk=1):
    """airlock-bench's latency loop: {(variant, payload): fields}; chunk > 1
    runs each pair chunk times back to back in every round."""
    lat = {}
    for line in run_bench(args, "--variants", ",".join(variants), "latency", iters,
                          2 if not args.quick else 1, chunk).splitlines():
        p = line.split()
        if len(p) >= 3 and p[0] == "latency":
            lat[(p[1], p[2])] = {k: float(v) for k, v in parse_kv(line).items()}
    return lat


def measure_throughput(args, variants, secs, rounds, clients, payload=0):
    """airlock-bench's throughput loop: {(variant, clients): fields}."""
    tput = {}
    out = run_bench(args, "--variants", ",".join(variants), "--payload", payload,
                    "throughput", secs, rounds, *clients)
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 3 and p[0] == "throughput":
            kv = parse_kv(line)
            tput[(p[1], int(kv["clients"]))] = kv
    return tput


def report_throughput(tput, variants, clients, title, problems, base):
    """A throughput table with the ratios to bare, ns, bwrap and base (those
    measured)."""
    print(title + "\n")
    refs = [r for r in ("bare", "ns", "bwrap") if r in variants]
    cols = ["lib / " + r for r in refs] + (["lib / base"] if base else []) + (
        ["base / bwrap"] if base and "bwrap" in variants else [])
    print("| clients | " + " | ".join(variants) + " | " + " | ".join(cols) + " |")
    print("|---" * (len(variants) + len(cols) + 1) + "|")
    for c in clients:
        rates = {}
        for v in variants:
            kv = tput.get((v, c))
            rates[v] = float(kv["rate"]) if kv else 0.0
            if not rates[v]:
                problems.append("%s %s %d clients: no numbers" % (title, v, c))
            if kv and int(kv.get("errors", 0)):
                problems.append("%s %s %d clients: %s errors" % (title, v, c, kv["errors"]))
        vals = [ratio(rates["lib"], rates[r]) for r in refs]
        if base:
            vals += [ratio(rates["lib"], rates["base"])]
            if "bwrap" in variants:
                vals += [ratio(rates["base"], rates["bwrap"])]
        print("| %d | %s | %s |" % (c, " | ".join("%.0f" % rates[v] for v in variants),
                                    " | ".join(vals)))
    print()


def report_latency(lat, variants, problems, chunk=1):
    """The latency table: every payload by every variant, with the ratios."""
    if chunk > 1:
        print("## Latency, back to back (ms; each pair %d times in a row, no pause, "
              "the pairs round-robin)\n" % chunk)
    else:
        print("## Latency (ms; one run at a time, round-robin over variants and payloads)\n")
    print("| payload | variant | median | p90 | p99 | min | max | n | median / bare "
          "| / ns | / bwrap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for pl in PAYLOADS:
        for v in variants:
            s = lat.get((v, pl))
            if not s or not s.get("n"):
                problems.append("latency %s %s: no numbers" % (v, pl))
                print("| %s | %s | - | - | - | - | - | 0 | | | |" % (PAYLOAD_LABEL[pl], v))
                continue
            med = s["median"]
            base = {b: (lat.get((b, pl)) or {}).get("median") for b in ("bare", "ns", "bwrap")}
            print("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %s | %s | %s |" % (
                PAYLOAD_LABEL[pl], v, med / 1e3, s["p90"] / 1e3, s["p99"] / 1e3,
                s["min"] / 1e3, s["max"] / 1e3, s["n"], ratio(med, base["bare"]),
                ratio(med, base["ns"]), ratio(med, base["bwrap"])))
    print()


def measure_files(args):
    """Runs airlock-bench's files loop for each size; {(n, size): fields}."""
    files = {}
    for size in FILE_SIZES:
        for line in run_bench(args, "files", 5 if args.quick else 40, MANY_FILES,
                              size).splitlines():
            kv = parse_kv(line)
            if line.startswith("files ") and "median" in kv:
                files[(int(kv["n"]), size)] = kv
    return files


def measure_cell(args):
    """airlock-bench's cell loop: {"cell": fields, "session-run": fields,
    "cancel": fields (cellcancel)}, and
    with --base-airlockd "base-cell" (the same cell through the base daemon,
    alternating with ours in the same rounds)."""
    out = {}
    cmd = (["--variants", "lib,base"] if args.base_daemon is not None else []) + [
        "cell", 100 if args.quick else 1000]
    for line in run_bench(args, *cmd).splitlines():
        kv = parse_kv(line)
        if line.startswith("cell ") and "median" in kv:
            out[kv["kind"]] = kv
    # The cancel of a running cell (issue 30): cancel sent -> `cancelled`.
    for line in run_bench(args, "cellcancel", 20 if args.quick else 200).splitlines():
        kv = parse_kv(line)
        if line.startswith("cellcancel ") and "median" in kv:
            out["cancel"] = kv
    # The interpreter's stop between cells alone, no daemon (stopcont).
    for line in run_bench(args, "stopcont", 2000 if args.quick else 20000).splitlines():
        kv = parse_kv(line)
        if line.startswith("stopcont ") and "median" in kv:
            out["stopcont-" + kv["kind"]] = kv
    return out


def report_cell(cell, problems, base=False, nostop=False):
    """The table of the interpreter-session section; with nostop (the base is
    airlockd-nostop) also what the stop between cells adds to a cell."""
    print("## A stateful cell (interpreter session, python; ms from the call to the result)\n")
    print("| request | runs | median | p90 | min | median / cell |")
    print("|---|---|---|---|---|---|")
    rows = [("cell", "cell `x += 1`"),
            ("base-cell", "cell `x += 1`, " + ("no stop (airlockd-nostop)" if nostop
                                               else "base daemon")),
            ("session-run", "session run `pass`"),
            ("cancel", "cancel of a running cell: airlock_cancel() to its `cancelled` result")]
    ours = cell.get("cell")
    for kind, label in rows:
        kv = cell.get(kind)
        if not kv:
            if kind != "base-cell" or base:
                problems.append("cell %s: no numbers" % kind)
            continue
        print("| %s | %s | %.3f | %.3f | %.3f | %s |" % (
            label, kv["iters"], float(kv["median"]) / 1e3, float(kv["p90"]) / 1e3,
            float(kv["min"]) / 1e3,
            ratio(float(kv["median"]), float(ours["median"])) if ours else "n/a"))
    print()
    nost = cell.get("base-cell")
    if nostop and ours and nost:
        d = float(ours["median"]) - float(nost["median"])
        print("The stop between cells adds %.1f µs to a cell's median: %.1f µs with it, "
              "%.1f without (%.1f%% of the cell); minima %.1f and %.1f µs\n" % (
                  d, float(ours["median"]), float(nost["median"]),
                  100.0 * d / float(ours["median"]), float(ours["min"]), float(nost["min"])))
    print("The stop between cells alone (airlock-bench stopcont: three processes in the "
          "roles of frontend, supervisor and driver, no daemon; µs from BEGIN to END, "
          "the kinds alternating cell by cell)\n")
    print("| kind | cells | median | p90 | min | median / none |")
    print("|---|---|---|---|---|---|")
    none = cell.get("stopcont-none")
    for kind, label in (("none", "no signal"), ("stop", "SIGCONT at BEGIN, SIGSTOP at FINISH")):
        kv = cell.get("stopcont-" + kind)
        if not kv:
            problems.append("stopcont %s: no numbers" % kind)
            continue
        print("| %s | %s | %.1f | %.1f | %.1f | %s |" % (
            label, kv["iters"], float(kv["median"]), float(kv["p90"]), float(kv["min"]),
            ratio(float(kv["median"]), float(none["median"])) if none else "n/a"))
    print()
    stop = cell.get("stopcont-stop")
    if ours and none and stop:
        d = float(stop["median"]) - float(none["median"])
        print("The two signals alone add %.1f µs to the round trip: %.1f%% of the cell's "
              "median through the daemon (%.1f µs)\n" % (
                  d, 100.0 * d / float(ours["median"]), float(ours["median"])))


def modes(args):
    """The latency loop's chunk per --mode: 1 interleaved, B2B_CHUNK back to back."""
    return {"interleaved": [1], "back-to-back": [B2B_CHUNK], "both": [1, B2B_CHUNK]}[args.mode]


def report_only(files, problems, args, t_start, cell=None, lat=None, tput=None):
    """--only files, cell, latency or throughput: that table alone, with the
    load average around it."""
    if lat is not None:
        for chunk, table in lat[0]:
            report_latency(table, lat[1], problems, chunk)
    elif tput is not None:
        report_tputs(tput, args, problems)
    elif cell is not None:
        report_cell(cell, problems, args.base_daemon is not None, args.nostop)
    else:
        report_files(files, problems)
    print("(total time %.0f s; load average after: %.2f %.2f %.2f)" % (
        (time.time() - t_start,) + os.getloadavg()))
    for p in problems:
        log("bench: " + p)
    return 1 if problems and args.smoke else 0


def measure_memory(args, daemon):
    """airlock-bench memory of one daemon: {"idle"|"8"|"32"|"after": fields}."""
    mem = {}
    for line in run_bench(args, "memory", daemon.proc.pid, 65534, 8, 32,
                          daemon=daemon).splitlines():
        kv = parse_kv(line)
        key = "idle" if " idle " in line else "after" if " after " in line else kv.get("runs")
        mem[key] = kv
    return mem


def measure_tputs(args, tput_variants, secs, rounds):
    """Both throughput tables: /bin/true at CLIENTS (tput_variants), python
    print(1) at PY_CLIENTS (lib, bare: python with that many workers, base)."""
    py_variants = [v for v in tput_variants if v in ("lib", "bare", "base")]
    return {"true": (measure_throughput(args, tput_variants, secs, rounds, CLIENTS),
                     tput_variants, secs, rounds),
            "py": (measure_throughput(args, py_variants, secs, rounds, PY_CLIENTS, PY_PAYLOAD),
                   py_variants, secs, rounds)}


def report_tputs(tputs, args, problems):
    base = args.base_daemon is not None
    t, v, secs, rounds = tputs["true"]
    report_throughput(t, v, CLIENTS, "## Throughput (runs/s of exec /bin/true, %.1f s per "
                      "point, %d round(s))" % (secs, rounds), problems, base)
    t, v, secs, rounds = tputs["py"]
    report_throughput(t, v, PY_CLIENTS, "## Python throughput (runs/s of python print(1), "
                      "%.1f s per point, %d round(s); bare: python with as many workers as "
                      "clients)" % (secs, rounds), problems, base)
    if args.zygote:
        zygote, python = zygote_counts(args.daemon)
        print("runs through the zygote (ours, audit zygote=ran): %d of %d python runs so far\n"
              % (zygote, python))


def zygote_counts(daemon):
    """(runs through the zygote, python runs) in daemon's audit lines."""
    zygote = python = 0
    with open(daemon.log, errors="replace") as f:
        for line in f:
            if " audit " in line and " runtime=python " in line:
                python += 1
                zygote += " zygote=ran" in line
    return zygote, python


CPU_CLIENTS = 8                  # --only cpu: clients of exec /bin/true per slice


def daemon_cpu_s(daemon):
    """CPU s of a daemon (/proc/PID/stat): the spawner with its reaped
    children (supervisors, their code) and the frontend; no kernel workers."""
    total = 0
    for pid, kids in ((daemon.proc.pid, True), (daemon.frontend, False)):
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:15 if kids else 13])
    return total / os.sysconf("SC_CLK_TCK")


def measure_cpu(args, slices, secs):
    """[(variant, runs, cpu_s, rate)] of slices of secs of exec /bin/true,
    alternating between our daemon and the base (steadier than rates)."""
    out = []
    for _ in range(slices):
        for name, d in (("lib", args.daemon), ("base", args.base_daemon)):
            c0 = daemon_cpu_s(d)
            res = run_bench(args, "--variants", "lib", "throughput", secs, 1, CPU_CLIENTS,
                            daemon=d)
            kv = next((parse_kv(l) for l in res.splitlines() if l.startswith("throughput")), {})
            time.sleep(0.3)   # the last supervisors reaped: their CPU in cutime
            out.append((name, int(kv.get("runs", 0)), daemon_cpu_s(d) - c0,
                        float(kv.get("rate", 0))))
    return out


def report_cpu(cpu, problems):
    print("## CPU per run (exec /bin/true, %d clients, slices alternating; ms of "
          "spawner + supervisors + code + frontend)\n" % CPU_CLIENTS)
    print("| variant | ms per run, median (min-max) | runs/s median |")
    print("|---|---|---|")
    med = {}
    for v in ("lib", "base"):
        per = [(1e3 * c / r, rt) for n, r, c, rt in cpu if n == v and r]
        if per:
            med[v] = statistics.median(p[0] for p in per)
            print("| %s | %.2f (%.2f-%.2f) | %.0f |" % (v, med[v], min(per)[0], max(per)[0],
                                                       statistics.median(p[1] for p in per)))
    if len(med) < 2:
        problems.append("cpu: no runs")
    else:
        print("\nlib / base: %.2fx CPU per run\n" % (med["lib"] / med["base"]))


def report_files(files, problems):
    """The table of the files section: 1 input file against MANY_FILES."""
    print("## Many input files (exec /bin/true; ms from the call to the result)\n")
    print("| files x size | median | p90 | min | median / 1 file | µs per added file |")
    print("|---|---|---|---|---|---|")
    for size in FILE_SIZES:
        one, many = files.get((1, size)), files.get((MANY_FILES, size))
        if not one or not many:
            problems.append("files %d x %d B: no numbers" % (MANY_FILES, size))
            continue
        for n, kv in ((1, one), (MANY_FILES, many)):
            extra = ("%.1f" % ((float(kv["median"]) - float(one["median"])) / (n - 1))
                     if n > 1 else "")
            print("| %d x %d B | %.2f | %.2f | %.2f | %s | %s |" % (
                n, size, float(kv["median"]) / 1e3, float(kv["p90"]) / 1e3,
                float(kv["min"]) / 1e3, ratio(float(kv["median"]), float(one["median"])), extra))
    print()


def parse_args():
    """The command line, checked, with the defaults that depend on --quick
    filled in (iters, seconds, rounds) and bwrap found."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--airlockd", required=True)
    ap.add_argument("--airlock", required=True)
    ap.add_argument("--lib-bench", required=True)
    ap.add_argument("--bwrap", default=None)
    ap.add_argument("--quick", action="store_true", help="finish in under a minute")
    ap.add_argument("--smoke", action="store_true",
                    help="exit 1 unless every variant produced numbers")
    ap.add_argument("--iters", type=int, default=None, help="latency rounds")
    ap.add_argument("--seconds", type=float, default=None, help="throughput time per point")
    ap.add_argument("--phases", type=int, default=0, help="strace N runs for a breakdown")
    ap.add_argument("--perf", type=int, default=0,
                    help="perf record -a -g for N s of 8 lib clients: where the CPU goes")
    ap.add_argument("--mounts", type=int, default=0,
                    help="configure N [mount] sections (directories of /usr/share, read-only)")
    ap.add_argument("--ask-mounts", type=int, default=0,
                    help="the lib variant's requests ask for the first N of them")
    ap.add_argument("--base-airlockd", default=None,
                    help="a second airlockd (another build): variant base, side by side with lib")
    ap.add_argument("--nostop", action="store_true",
                    help="the base is airlockd-nostop beside --lib-bench (no stop between cells)")
    ap.add_argument("--zygote", action="store_true",
                    help="our daemon's runtime python with zygote = yes (implies --prestart; "
                    "the base daemon's without)")
    ap.add_argument("--prestart", action="store_true",
                    help="runtime python with prestart = yes (both daemons, with --base-airlockd)")
    ap.add_argument("--mode", choices=["interleaved", "back-to-back", "both"],
                    default="interleaved",
                    help="latency: each pair once per round, %d times in a row, or both"
                    % B2B_CHUNK)
    ap.add_argument("--only", choices=["files", "cell", "latency", "throughput", "perf", "phases",
                                       "cpu"],
                    default=None,
                    help="measure and print only this section (files: 500 input files vs 1)")
    args = ap.parse_args()
    if args.nostop:
        if args.base_airlockd:
            raise SystemExit("bench: --nostop is a --base-airlockd of its own")
        args.base_airlockd = os.path.join(os.path.dirname(args.lib_bench), "airlockd-nostop")
    if os.geteuid() != 0:
        raise SystemExit("bench: must run as root")
    args.bwrap = args.bwrap or find_bwrap(True)
    if args.bwrap is None:
        raise SystemExit("bench: no bwrap (apt-get install -y bubblewrap)")
    args.iters = args.iters or (8 if args.quick else 200)
    args.seconds = args.seconds or (1.0 if args.quick else 5.0)
    args.rounds = 1 if args.quick else 2
    return args


def report_machine(args):
    """The report's title and the machine it ran on."""
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    print("# Airlock benchmark\n")
    print("machine: nproc %d, kernel %s, cpu %s; %s; load average before: %.2f %.2f %.2f\n" % (
        (os.cpu_count(), os.uname().release, cpu, "quick" if args.quick else "full")
        + os.getloadavg()))


def make_config(args, zygote=False):
    """The daemons' config: CONFIG, with --prestart's runtime and --mounts'
    sections; each addition is named in the report. zygote: our daemon's,
    with --zygote's key."""
    config = CONFIG
    if zygote:
        # The key on: its burst runs fork from the caller's zygote (the
        # bench's runs are all root's: one zygote).
        config += ("[runtime python]\nargv = /usr/bin/python3 -I -S -B {code}\n"
                   "code_name = main.py\nprestart = yes\nzygote = yes\n")
        print("config (ours): runtime python with prestart = yes, zygote = yes\n")
    elif args.prestart:
        # The python runtime as built in, with its interpreters started ahead
        # (docs/performance.md, "Pre-started interpreters").
        config += ("[runtime python]\nargv = /usr/bin/python3 -I -S -B {code}\n"
                   "code_name = main.py\nprestart = yes\n")
        print("config: runtime python with prestart = yes\n")
    if args.mounts:
        # Sources only root can change, as the daemon wants: /usr/share's
        # own directories. Every prepared sandbox opens them all (phase
        # one); a run attaches those it asks for (phase two).
        dirs = sorted(d for d in os.listdir("/usr/share")
                      if os.path.isdir("/usr/share/" + d) and not os.path.islink("/usr/share/" + d))
        if len(dirs) < args.mounts:
            raise SystemExit("bench: /usr/share has only %d directories" % len(dirs))
        names = ", ".join("m%d" % i for i in range(args.mounts))
        config += "[profile default-m]\nallow_mounts = %s\n[access]\ndefault_profile = default-m\n" % names
        for i in range(args.mounts):
            config += "[mount m%d]\nsource = /usr/share/%s\ntarget = /data/m%d\n" % (i, dirs[i], i)
        print("config: %d [mount] sections, the lib requests ask for %d\n" % (args.mounts, args.ask_mounts))
    return config


def start_daemons(args, config, base_config):
    """Start our daemon (args.daemon, with config) and with --base-airlockd
    the base (args.base_daemon, else None, with base_config); the latency and
    throughput variants."""
    # The ns program's root gets the last uid of this test's range (meson's
    # test_uid_env, moved by test_uid_offset), never a uid of the host's or
    # another worktree's suites; the daemons the uids before it, an even
    # count (two per run). With --base-airlockd two daemons run at once:
    # each gets half (sharing uids, their sandboxes would share cgroups too).
    ubase, ucount = uid_range()
    args.ns_uid = ubase + ucount - 1
    ucount = (ucount - 1) // 4 * 4 if args.base_airlockd else (ucount - 1) // 2 * 2
    args.daemon = Daemon(args.airlockd, config, prefix="airlock-bench-",
                         uids=(ubase, ucount // 2 if args.base_airlockd else ucount))
    print("uids: daemon %d..%d, the ns program's root %d\n"
          % (ubase, ubase + (ucount // 2 if args.base_airlockd else ucount) - 1, args.ns_uid))
    args.base_daemon = None
    try:
        args.daemon.start()
    except RuntimeError as e:
        args.daemon.remove()
        raise SystemExit("bench: %s" % e)
    if not args.base_airlockd:
        return VARIANTS, TPUT_VARIANTS
    # Its own half of the uid range, its own directory, the same config.
    args.base_daemon = Daemon(args.base_airlockd, base_config, prefix="airlock-bench-base-",
                              uids=(ubase + ucount // 2, ucount // 2))
    try:
        args.base_daemon.start()
    except RuntimeError as e:
        args.daemon.remove()
        args.base_daemon.remove()
        raise SystemExit("bench: base: %s" % e)
    print("base: %s\n" % args.base_airlockd)
    return VARIANTS + ["base"], TPUT_VARIANTS + ["base"]


def run_only(args, variants, tput_variants, problems, t_start):
    """--only SECTION: measure and print that section alone; the exit code."""
    if args.only == "files":
        files = measure_files(args)
        return report_only(files, problems, args, t_start)
    if args.only == "cell":
        return report_only(None, problems, args, t_start, measure_cell(args))
    if args.only == "latency":
        return report_only(None, problems, args, t_start, lat=(
            [(c, measure_latency(args, variants, args.iters, c)) for c in modes(args)],
            variants))
    if args.only == "cpu":
        if args.base_daemon is None:
            raise SystemExit("bench: --only cpu compares with --base-airlockd")
        report_cpu(measure_cpu(args, args.rounds * 3, 1.0 if args.quick else 3.0), problems)
        return report_only(None, problems, args, t_start, lat=([], variants))
    if args.only == "phases":
        phases = trace_phases(args, args.phases or 20, run_bench)
        if phases is None:
            log("bench: no strace: no phases (skipped)")
            return 77
        if phases[1]:
            report_phases(phases)
        else:
            problems.append("phases: no traced run was cut into phases")
        return report_only(None, problems, args, t_start, lat=([], variants))
    if args.only == "perf":
        prof = perf_profile(args, args.perf or 5)
        if prof:
            report_perf(prof, args.perf or 5)
        else:
            problems.append("perf: no samples (is perf installed?)")
        return report_only(None, problems, args, t_start, lat=([], variants))
    return report_only(None, problems, args, t_start,
                       tput=measure_tputs(args, tput_variants, args.seconds, args.rounds))


def measure_netns(args):
    """airlock-bench's netns loop: {0 (without CLONE_NEWNET), 1 (with): fields}."""
    netns = {}
    for line in run_bench(args, "netns", 30 if args.quick else 200,
                          1 if args.quick else 3).splitlines():
        kv = parse_kv(line)
        if "newnet" in kv:
            netns[int(kv["newnet"])] = kv
    return netns


def measure_all(args, variants, tput_variants):
    """The full run, every section in turn: what report_all prints."""
    res = {"mem": measure_memory(args, args.daemon)}
    res["mem_base"] = measure_memory(args, args.base_daemon) if args.base_daemon else {}
    res["lats"] = [(c, measure_latency(args, variants, args.iters, c)) for c in modes(args)]
    res["tputs"] = measure_tputs(args, tput_variants, args.seconds, args.rounds)
    res["netns"] = measure_netns(args)
    res["files"] = measure_files(args)
    res["cell"] = measure_cell(args)
    res["phases"] = trace_phases(args, args.phases, run_bench) if args.phases else None
    res["prof"] = perf_profile(args, args.perf) if args.perf else None
    return res


def report_memory(mem, mem_base, problems):
    """The daemon memory table: idle, with 8 and 32 runs live, idle after
    (and the base daemon's idle rows)."""
    print("## Daemon memory (VmRSS, KiB)\n")
    idle = mem.get("idle")
    if not idle:
        problems.append("memory: no numbers")
        print()
        return
    fi, si = int(idle["frontend_kib"]), int(idle["spawner_kib"])
    print("| state | frontend | spawner | total | per run (daemon) | sandboxes (sum) |")
    print("|---|---|---|---|---|---|")
    print("| idle (fresh) | %d | %d | %d | | |" % (fi, si, fi + si))
    for n in ("8", "32"):
        kv = mem.get(n)
        if not kv:
            problems.append("memory at %s runs: no numbers" % n)
            continue
        f, s = int(kv["frontend_kib"]), int(kv["spawner_kib"])
        print("| %s runs of sleep 1 | %d | %d | %d | %.1f | %s |" % (
            n, f, s, f + s, ((f + s) - (fi + si)) / int(n), kv["sandboxes_kib"]))
    if mem.get("after"):
        a = mem["after"]
        print("| idle (after) | %s | %s | %d | | |" % (
            a["frontend_kib"], a["spawner_kib"],
            int(a["frontend_kib"]) + int(a["spawner_kib"])))
    for key, name in (("idle", "base: idle (fresh)"), ("after", "base: idle (after)")):
        b = mem_base.get(key)
        if b:
            print("| %s | %s | %s | %d | | |" % (
                name, b["frontend_kib"], b["spawner_kib"],
                int(b["frontend_kib"]) + int(b["spawner_kib"])))
    print()


def report_netns(netns, problems):
    """The network namespace table: the ns program with and without it."""
    print("## Network namespace (ns program, exec /bin/true)\n")
    if 0 in netns and 1 in netns:
        f = {k: [float(netns[w][k]) for w in (0, 1)] for k in
             ("wall_us_per_run", "child_cpu_us_per_run", "kworker_cpu_us_per_run")}
        print("| | wall µs/run | CPU of the run's processes µs/run "
              "| kernel workers' CPU µs/run (deferred teardown) |")
        print("|---|---|---|---|")
        for w, name in ((0, "without CLONE_NEWNET"), (1, "with CLONE_NEWNET")):
            print("| %s | %.0f | %.0f | %.0f |" % (name, f["wall_us_per_run"][w],
                  f["child_cpu_us_per_run"][w], f["kworker_cpu_us_per_run"][w]))
        print("| cost of the netns | %.0f | %.0f | %.0f |" % tuple(
            f[k][1] - f[k][0] for k in ("wall_us_per_run", "child_cpu_us_per_run",
                                        "kworker_cpu_us_per_run")))
    else:
        problems.append("netns: no numbers")
    print()


def report_targets(res):
    """The targets table (docs/performance.md): each target whose numbers
    were measured, its figure and whether it is met."""
    lat = dict(res["lats"]).get(1, {})
    b2b = dict(res["lats"]).get(B2B_CHUNK, {})
    tput, pyt = res["tputs"]["true"][0], res["tputs"]["py"][0]
    cell, idle = res["cell"], res["mem"].get("idle")

    def med(v, pl, table=None):
        return ((lat if table is None else table).get((v, pl)) or {}).get("median")

    def rate(v, c, table=None):
        kv = (tput if table is None else table).get((v, c))
        return float(kv["rate"]) if kv else None

    print("## Targets\n")
    print("| target | measured | met |")
    print("|---|---|---|")
    rows = []
    if med("lib", "true") and med("ns", "true"):
        r = med("lib", "true") / med("ns", "true")
        rows.append(("lib /bin/true <= 1.2x ns program", "%.2fx" % r, r <= 1.2))
    if med("lib", "true") and med("bwrap", "true"):
        r = med("lib", "true") / med("bwrap", "true")
        rows.append(("lib /bin/true <= 0.5x bwrap", "%.2fx" % r, r <= 0.5))
    if med("lib", "py-print") and med("bare", "py-print"):
        r = med("lib", "py-print") / med("bare", "py-print")
        rows.append(("lib python print(1) <= 1.15x bare", "%.2fx" % r, r <= 1.15))
    if med("lib", "py-print", b2b) and med("bare", "py-print", b2b):
        r = med("lib", "py-print", b2b) / med("bare", "py-print", b2b)
        rows.append(("lib python print(1) back to back <= 0.3x bare", "%.2fx" % r, r <= 0.3))
    if rate("lib", 8) and rate("bwrap", 8):
        r = rate("lib", 8) / rate("bwrap", 8)
        rows.append(("throughput 8 clients >= 2.5x bwrap", "%.2fx" % r, r >= 2.5))
    if rate("lib", 8, pyt) and rate("bare", 8, pyt):
        r = rate("lib", 8, pyt) / rate("bare", 8, pyt)
        rows.append(("python throughput 8 clients >= 3x bare (8 workers)", "%.2fx" % r,
                     r >= 3.0))
    if cell.get("cell"):
        m = float(cell["cell"]["median"]) / 1e3
        rows.append(("cell median <= 0.25 ms", "%.3f ms" % m, m <= 0.25))
    if med("lib", "true") and med("base", "true"):
        r = med("lib", "true") / med("base", "true")
        rows.append(("lib /bin/true latency: no regression against base", "%.2fx" % r, r <= 1.05))
    if idle:
        mib = (int(idle["frontend_kib"]) + int(idle["spawner_kib"])) / 1024
        rows.append(("daemon idle RSS < 8 MiB", "%.1f MiB" % mib, mib < 8))
    for name, val, ok in rows:
        print("| %s | %s | %s |" % (name, val, "yes" if ok else "NO"))
    print()


def report_all(res, args, variants, problems, t_start):
    """The full run's report, every table in the order measured, then the
    targets; the exit code (1 with --smoke when a table missed numbers)."""
    for chunk, table in res["lats"]:
        report_latency(table, variants, problems, chunk)
    report_tputs(res["tputs"], args, problems)
    report_memory(res["mem"], res["mem_base"], problems)
    report_netns(res["netns"], problems)
    report_files(res["files"], problems)
    report_cell(res["cell"], problems, args.base_daemon is not None, args.nostop)
    if res["prof"]:
        report_perf(res["prof"], args.perf)
    elif args.perf:
        problems.append("perf: no samples (is perf installed?)")
    if res["phases"] and res["phases"][1]:
        report_phases(res["phases"])
    elif args.phases:
        problems.append("phases: no traced run was cut into phases (is strace installed?)")
    report_targets(res)
    print("(total time %.0f s)" % (time.time() - t_start))
    sys.stdout.flush()
    if problems:
        for p in problems:
            log("bench: " + p)
        if args.smoke:
            return 1
    return 0


def check_ns_uid(args, problems):
    """--smoke: the ns program's root runs as the host uid it was given, of
    this test's range (a fixed uid was the same in every worktree's suite
    and every test_uid_offset): the first uid other than root seen among
    airlock-bench's children while it loops python runs in the ns program."""
    loop = subprocess.Popen([args.lib_bench, "--variants", "ns", "--ns-uid", str(args.ns_uid),
                             "loop", "ns", "3", "200", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen, deadline = None, time.monotonic() + 20
    try:
        while seen is None and loop.poll() is None and time.monotonic() < deadline:
            for kid in children(loop.pid):
                try:
                    with open("/proc/%d/status" % kid) as f:
                        uid = int(next(ln for ln in f if ln.startswith("Uid:")).split()[1])
                except (OSError, StopIteration, ValueError):
                    continue
                if uid != 0:  # root until its setresuid in the namespace
                    seen = uid
    finally:
        loop.kill()
        loop.wait()
    print("ns program's root: host uid %s (given %d)\n" % (seen, args.ns_uid))
    if seen != args.ns_uid:
        problems.append("the ns program ran as host uid %s, not %d" % (seen, args.ns_uid))


def main():
    args = parse_args()
    problems = []
    report_machine(args)
    t_start = time.time()
    if args.zygote:
        args.prestart = True
    config = make_config(args)
    variants, tput_variants = start_daemons(args, make_config(args, True) if args.zygote else config,
                                            config)
    try:
        if args.only is not None:
            return run_only(args, variants, tput_variants, problems, t_start)
        res = measure_all(args, variants, tput_variants)
        if args.smoke:
            check_ns_uid(args, problems)
    finally:
        args.daemon.remove()
        if args.base_daemon is not None:
            args.base_daemon.remove()
    return report_all(res, args, variants, problems, t_start)


if __name__ == "__main__":
    sys.exit(main())
