#!/usr/bin/env python3
"""run_hostile.py: run every hostile program in cases/ through a real airlockd
with the real `airlock` command and check what each one says it expects.

A case is cases/NAME.py (runtime python) or cases/NAME.sh (runtime sh). Its
leading comment lines are its machine-checked expectation:

  # expect: TOKEN...    each TOKEN is FIELD=VALUE, FIELD!=VALUE, FIELD~=REGEX,
                        FIELD!~=REGEX, FIELD<=NUMBER or FIELD>=NUMBER over the
                        `airlock --json run` object (REGEX has no spaces: \\s)
  # expect-cgroup2: TOKEN...  another result that passes (as expect:) when the
                        daemon's resource control is cgroup2 (ctx.backend):
                        there a fork refused at the process limit ends the
                        run, process_limit (docs/security.md), unless the code
                        exits 0 first; one line per result
  # check: EXPR         a Python expression over r (the JSON result; r["_role"]:
                        the role of a pair's run), out
                        (stdout), err (stderr), ctx (this runner's Ctx;
                        ctx.backend: cgroup2, cgroup1 or rlimit)
  # args: ARGS          extra `airlock run` options (shell words)
  # within: SECONDS     the run must answer within this many seconds (default 20)
  # pair: ROLE ROLE     run two copies at once, each told its role: @ROLE@ in
                        its text replaced by it if the text has it (the run
                        stays eligible for a pre-started interpreter), else
                        --env ROLE=it; the expectations hold for both results
  # before: STATEMENT    Python run (with ctx) before the case is sent
  # after: EXPR         a Python expression over ctx checked after the run
  # control: ARGS       the control run: the same program again with these
                        `airlock run` options instead of args: (a policy
                        switch off), so that the case shows what it stops
  # control-expect: TOKENS  what the control run must give (as expect:)

Before a case is sent, @NAME@ in its text (and in its expect tokens) is
replaced by ctx.subst[NAME] (host ports, socket paths, pids, FLOOD_BYTES).
After every case the runner checks the daemon answers `airlock ping`, both
daemon processes are alive, no process of the daemon's uid range is left, no
u<uid> memory cgroup of that range is left (but those of pre-started
interpreters waiting for a run: see airlock_testlib.prestarted_waiting(); the
self-test leftover-check-self-test runs first and shows a real leftover beside
them is still caught), the host's mount table, hostname and clock are
unchanged, the host listeners received nothing, and the secret never appears
in any output.
"""
import argparse
import base64
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, wait_for  # noqa: E402


HERE = os.path.dirname(os.path.abspath(__file__))
SECRET_VAR = "AIRLOCK_HOSTILE_SECRET"


class Listener:
    """Host-side bait: a TCP and a UDP socket on 127.0.0.1 and an abstract
    unix socket; every contact is recorded (a sandbox must reach none)."""

    def __init__(self, abstract_name):
        self.hits = []
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + abstract_name)
        self.unix.listen(16)
        for s, kind in ((self.tcp, "tcp"), (self.udp, "udp"), (self.unix, "abstract")):
            t = threading.Thread(target=self._serve, args=(s, kind), daemon=True)
            t.start()

    def _serve(self, s, kind):
        while True:
            try:
                if kind == "udp":
                    data, addr = s.recvfrom(65536)
                    self.hits.append((kind, data[:64]))
                else:
                    c, _ = s.accept()
                    self.hits.append((kind, b"connect"))
                    c.close()
            except OSError:
                return


# --prestart yes|no: the built-in python runtimes again, with prestart
# given (default: as the daemon's default has it).
PRESTART_RUNTIMES = """[runtime python]
argv = /usr/bin/python3 -I -S -B {code}
code_name = main.py
prestart = %s
[runtime python-site]
argv = /usr/bin/python3 -I -B {code}
code_name = main.py
prestart = %s
"""

# --zygote yes: the python runtimes pre-start and fork their runs from the
# caller's zygote (docs/design-bursts.md §3.6). Its idle end is 1 s, so that
# the zygote and the sandbox it keeps prepared are gone within the
# invariants' 10 s wait (they would count as leftovers: nothing tells them
# apart by what the kernel shows yet). The first run of a burst goes the
# ordinary way and asks for the zygote: a python case is preceded by a
# warm-up run (zygote_warm), so that the case's own runs go through it.
ZYGOTE_RUNTIMES = """[daemon]
zygote_idle_s = 1
[runtime python]
argv = /usr/bin/python3 -I -S -B {code}
code_name = main.py
prestart = yes
zygote = yes
[runtime python-site]
argv = /usr/bin/python3 -I -B {code}
code_name = main.py
prestart = yes
zygote = yes
"""


class Ctx(Daemon):
    """The daemon (its environment and config hold the host secret), the
    host-side bait, and the substitutions the cases' text may use."""

    def __init__(self, args):
        self.secret = "s3cr3t-" + secrets.token_hex(12)
        env = dict(os.environ)
        env[SECRET_VAR] = self.secret
        env.pop("AIRLOCK_SOCKET", None)
        # Sandboxes prepared ahead would count as leftovers in the checks
        # (plain ones have nothing to tell them apart by; pre-started
        # interpreters waiting for a run do: airlock_testlib's
        # prestarted_waiting()). The profiles whose kernel-enforced switches
        # the pol_* cases try to get around (issue 17).
        runtimes = "" if args.prestart == "default" else PRESTART_RUNTIMES % (args.prestart, args.prestart)
        if args.zygote == "yes":
            runtimes = ZYGOTE_RUNTIMES
        # --slow: the default cpu and wall limits (5 s, 10 s) scaled, so that
        # a case that needs neither still fits on an emulated machine.
        if args.slow != 1:
            runtimes += "[limits]\ncpu_ms = %d\nwall_ms = %d\n" % (5000 * args.slow, 10000 * args.slow)
        super().__init__(args.airlockd,
                         "# %s = %s\n[daemon]\nmax_runs = 8\nprepared_sandboxes = 0\n"
                         "[profile readonly]\nfile_write = false\n"
                         "[profile noproc]\nsubprocess = false\n"
                         "[profile hidden]\nhidden_paths = /usr/bin/true, /usr/share/doc, /etc/alternatives\n%s"
                         % (SECRET_VAR, self.secret, runtimes),
                         prefix="airlock-hostile-", debug=True, env=env, unit=args.unit,
                         own_mounts=True)
        self.airlock = args.airlock
        self.prestart = args.prestart
        self.slow = args.slow
        self.abstract = "airlock-hostile-" + secrets.token_hex(4)
        self.listener = Listener(self.abstract)
        self.subst = {}
        self.backend = None

    @property
    def daemon(self):
        """The daemon's process (the cases' checks name it so)."""
        return self.proc

    @property
    def frontend_pid(self):
        return self.frontend

    def start(self, timeout=10, log=None):
        super().start(timeout, log)
        # The daemon's resource control as its log names it: cgroup2,
        # cgroup1 or rlimit.
        m = re.search(r"resource control: (cgroup2|cgroup1)", self.log_text())
        self.backend = m.group(1) if m else "rlimit"
        self.subst = {
            "TCP_PORT": str(self.listener.tcp.getsockname()[1]),
            "UDP_PORT": str(self.listener.udp.getsockname()[1]),
            "ABSTRACT": self.abstract,
            "SOCK": self.sock,
            "CONFIG": self.unit.CONFIG if self.unit else self.config,
            "TMPDIR": self.dir,
            "DAEMON_PID": str(self.proc.pid),
            "FRONTEND_PID": str(self.frontend or 0),
            "SECRET_VAR": SECRET_VAR,
            "RUNNER_PID": str(os.getpid()),
            "ART": os.path.join(self.dir, "art"),
            # res_output_flood's volume: 1 GiB, scaled down with --slow
            # (under emulation a GiB through a pipe took 15 to 60 s of cpu).
            "FLOOD_BYTES": str(int((1 << 30) / self.slow) >> 20 << 20),
        }
        return self

    def airlock_ping(self):
        """Whether `airlock ping` succeeds."""
        try:
            p = subprocess.run([self.airlock, "--socket", self.sock, "ping"],
                               capture_output=True, timeout=5, env=self.env)
            return p.returncode == 0
        except subprocess.TimeoutExpired:
            return False


def clock_offset():
    return time.time() - time.monotonic()


def parse_case(path):
    meta = {"expect": [], "expect-cgroup2": [], "check": [], "args": [], "within": 20.0, "pair": None,
            "after": [], "before": [], "control": None, "control-expect": []}
    with open(path) as f:
        text = f.read()
    for line in text.splitlines():
        if line.startswith("#!"):
            continue
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*(expect|expect-cgroup2|check|args|within|pair|after|before|control|control-expect):"
                     r"\s*(.*)$", line)
        if not m:
            continue
        key, val = m.group(1), m.group(2).strip()
        if key == "expect":
            meta["expect"] += val.split()
        elif key == "expect-cgroup2":
            meta["expect-cgroup2"].append(val.split())
        elif key in ("check", "after", "before"):
            meta[key].append(val)
        elif key == "args":
            meta["args"] += shlex.split(val)
        elif key == "control":
            meta["control"] = shlex.split(val)
        elif key == "control-expect":
            meta["control-expect"] += val.split()
        elif key == "within":
            meta["within"] = float(val)
        elif key == "pair":
            meta["pair"] = val.split()
    if not meta["expect"] and not meta["check"]:
        raise ValueError("no '# expect:' or '# check:' header")
    if (meta["control"] is None) != (not meta["control-expect"]):
        raise ValueError("'# control:' and '# control-expect:' go together")
    return text, meta


def field(r, name):
    v = r
    for part in name.split("."):
        if isinstance(v, list):
            v = v[int(part)]
        else:
            v = v.get(part)
    return v


def as_text(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    return str(v)


def check_token(r, tok):
    m = re.match(r"^([A-Za-z0-9_.]+)(!~=|~=|!=|<=|>=|=)(.*)$", tok)
    if not m:
        return "bad expectation token %r" % tok
    name, op, want = m.groups()
    have = field(r, name)
    if op == "=" and as_text(have) != want:
        return "%s is %r, expected %s" % (name, have, want)
    if op == "!=" and as_text(have) == want:
        return "%s is %r, expected anything else" % (name, have)
    if op == "~=" and not re.search(want, as_text(have), re.M):
        return "%s %r does not match /%s/" % (name, short(have), want)
    if op == "!~=" and re.search(want, as_text(have), re.M):
        return "%s %r matches /%s/" % (name, short(have), want)
    if op in ("<=", ">="):
        try:
            h = float(have)
        except (TypeError, ValueError):
            return "%s is %r, not a number" % (name, have)
        if (op == "<=" and h > float(want)) or (op == ">=" and h < float(want)):
            return "%s is %s, expected %s %s" % (name, have, op, want)
    return None


def short(v, n=300):
    s = as_text(v)
    return s if len(s) <= n else s[:n] + "..."


def subst(ctx, text):
    for k, v in ctx.subst.items():
        text = text.replace("@%s@" % k, v)
    return text


def audit_tally(ctx):
    """How many runs took a pre-started interpreter, went through a zygote."""
    log = ctx.log_tail(1 << 30)
    n = [len(re.findall(r"^(.*: )?audit (time=\S+ )?run=.* %s" % w, log, re.M))
         for w in ("prestarted=1", "zygote=ran")]
    return "%d runs took a pre-started interpreter, %d went through a zygote" % tuple(n)


def zygote_warm(ctx):
    """--zygote: one run of runtime python, then the caller's zygote live
    (the log says so) within 5 s; a failure to warm is the case's."""
    pos = len(ctx.log_text())
    subprocess.run([ctx.airlock, "--socket", ctx.sock, "--json", "run", "--lang", "python",
                    "-c", "pass"], capture_output=True, timeout=30, env=ctx.env)
    if wait_for(lambda: re.search(r" zygote=ran|-> live \(started\)", ctx.log_text()[pos:]), 5):
        return []
    return ["zygote warm-up: no live zygote within 5 s"]


def run_one(ctx, path, text, meta, role=None):
    """Send one run; return (result dict or None, why, elapsed)."""
    text = subst(ctx, text)
    env_role = role
    if role and "@ROLE@" in text:
        text, env_role = text.replace("@ROLE@", role), None
    lang = "python" if path.endswith(".py") else "sh"
    fd, code = tempfile.mkstemp(prefix="case-", suffix=os.path.splitext(path)[1], dir=ctx.dir)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    cmd = [ctx.airlock, "--socket", ctx.sock, "--json", "run", "--lang", lang]
    cmd += [subst(ctx, a) for a in meta["args"]]
    if env_role:
        cmd += ["--env", "ROLE=" + env_role]
    cmd += [code]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=meta["within"] + 10, env=ctx.env)
    except subprocess.TimeoutExpired:
        return None, "no answer within %.0f s" % (meta["within"] + 10), time.time() - t0
    finally:
        os.unlink(code)
    elapsed = time.time() - t0
    try:
        r = json.loads(p.stdout)
    except ValueError:
        return None, "airlock exit %d, not JSON: %s %s" % (
            p.returncode, short(p.stdout, 200), short(p.stderr, 300)), elapsed
    for k in ("stdout", "stderr"):
        if r.get(k) is None and r.get(k + "_base64"):
            r[k] = base64.b64decode(r[k + "_base64"]).decode("utf-8", "replace")
        if r.get(k) is None:
            r[k] = ""
    r["_rc"] = p.returncode
    r["_elapsed"] = elapsed
    r["_role"] = role
    return r, None, elapsed


def check_result(ctx, r, meta):
    why = []
    for tok in meta["expect"]:
        w = check_token(r, subst(ctx, tok))
        if w:
            why.append(w)
    for alt in meta.get("expect-also", []):
        alt_why = [w for w in (check_token(r, subst(ctx, tok)) for tok in alt) if w]
        if not why or not alt_why:
            why = []
            break
        why.append("nor " + ", ".join(alt_why))
    for expr in meta["check"]:
        try:
            ok = eval(expr, {"re": re, "os": os}, {"r": r, "out": r["stdout"], "err": r["stderr"], "ctx": ctx})
        except Exception as e:  # a broken predicate is a failure, not a pass
            ok = False
            expr += " (raised %r)" % e
        if not ok:
            why.append("check failed: %s" % expr)
    if r["_elapsed"] > meta["within"]:
        why.append("took %.1f s, more than %.1f s" % (r["_elapsed"], meta["within"]))
    blob = r["stdout"] + r["stderr"] + json.dumps(r.get("artifacts"))
    if ctx.secret in blob:
        why.append("the host secret leaked into the output")
    if why:
        why.append("stdout=%r stderr=%r outcome=%s cpu_ms=%s wall_ms=%s" % (
            short(r["stdout"], 200), short(r["stderr"], 200), r.get("outcome"), r.get("cpu_ms"), r.get("wall_ms")))
    return why


def invariants(ctx, before):
    """What must hold after every case."""
    why = []
    if ctx.daemon.poll() is not None:
        why.append("airlockd exited with %s" % ctx.daemon.returncode)
        return why
    if ctx.frontend_pid and not os.path.exists("/proc/%d" % ctx.frontend_pid):
        why.append("the frontend (pid %d) is gone" % ctx.frontend_pid)
    if not ctx.airlock_ping():
        why.append("airlock ping failed")
    left = stale = []
    # The answer may come before the reap: the supervisor exits once the
    # frontend has answered, and the spawner removes the run's cgroup at
    # its reap. Wait for both, to a deadline (20 tries of 0.1 s were short
    # on a loaded machine: each try itself reads /proc).
    deadline = time.monotonic() + 10
    while True:
        left = ctx.sandbox_procs()
        stale = ctx.run_cgroups()
        if (not left and not stale) or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    if left:
        why.append("sandbox processes left: %s" % left[:8])
    if stale:
        why.append("run cgroups left: %s" % stale)
    # The daemon's own mount namespace (own_mounts: private from the
    # host's, so another program's mounts are not counted; a unit's daemon
    # has its unit's): a mount a run makes that reaches the daemon lands
    # there, whatever its path.
    now = ctx.mount_table()
    if now != before["mounts"]:
        added = sorted(now - before["mounts"])
        if added:
            why.append("the daemon's mount table gained: %s" % added[:4])
        before["mounts"] = now
    if socket.gethostname() != before["hostname"]:
        why.append("host hostname changed to %r" % socket.gethostname())
    if abs(clock_offset() - before["clock"]) > 2.0:
        why.append("host clock moved by %.1f s" % (clock_offset() - before["clock"]))
    if len(ctx.listener.hits) != before["hits"]:
        why.append("host listener was reached: %s" % ctx.listener.hits[before["hits"]:])
        before["hits"] = len(ctx.listener.hits)
    return why


def leftover_check_self_test(ctx):
    """The leftover checks (sandbox_procs, run_cgroups) still see a real
    leftover beside waiting pre-started interpreters; returns why not
    (empty: they do). A process of the uid range outside any sandbox must
    count; one joined to a waiting interpreter's pid namespace at its code's
    uid (what a run's leftover there would be) must count, and with it that
    sandbox's supervisor, interpreter and cgroup; once it is gone, the
    waiting sandbox must count as waiting again (the exclusion is not
    vacuous)."""
    why = []
    if not wait_for(lambda: not ctx.sandbox_procs() and not ctx.run_cgroups(), 10):
        return ["before any run: sandbox processes %s, run cgroups %s"
                % (ctx.sandbox_procs(), ctx.run_cgroups())]
    fake_uid = ctx.uid_hi  # the code's uid of the last slot: no sandbox there yet
    p = subprocess.Popen(["setpriv", "--reuid=%d" % fake_uid, "--regid=%d" % fake_uid, "--clear-groups",
                          "sleep", "60"])
    try:
        if not wait_for(lambda: any(pid == p.pid for pid, _ in ctx.sandbox_procs()), 5):
            why.append("a process of uid %d outside any sandbox was not counted: %s"
                       % (fake_uid, ctx.sandbox_procs()))
    finally:
        p.kill()
        p.wait()
    # Pre-started interpreters wait unless prestart is off (the daemon's
    # default is on for the pythons): none then is a failure, as is one
    # waiting with prestart off.
    if ctx.prestart == "no":
        time.sleep(0.5)
        if ctx.prestarted_waiting():
            why.append("pre-started interpreters wait with prestart = no: %s" % ctx.prestarted_waiting())
        return why
    waiting = wait_for(ctx.prestarted_waiting, 10)
    if not waiting:
        return why + ["no pre-started interpreter waits (prestart %s)" % ctx.prestart]
    sup, itp, uid = waiting[0]
    # nsenter forks the sleep into the namespace: its own process group,
    # ended as one.
    p = subprocess.Popen(["nsenter", "--target", str(itp), "--pid", "--setuid", str(uid + 1),
                          "--setgid", str(uid + 1), "sleep", "60"], start_new_session=True)
    try:
        def counted():
            pids = {pid for pid, _ in ctx.sandbox_procs()}
            return {sup, itp} <= pids and len(pids) >= 3 and "u%d" % uid in ctx.run_cgroups()
        if not wait_for(counted, 5):
            why.append("a process joined to waiting interpreter %d's pid namespace was not counted "
                       "with its sandbox: %s, cgroups %s" % (itp, ctx.sandbox_procs(), ctx.run_cgroups()))
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    if not wait_for(lambda: not ctx.sandbox_procs() and not ctx.run_cgroups(), 5):
        why.append("the waiting sandbox of interpreter %d still counted once the joined process was gone: %s"
                   % (itp, ctx.sandbox_procs()))
    return why


def parse_args():
    """The runner's arguments."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--airlockd", required=True)
    ap.add_argument("--airlock", required=True)
    ap.add_argument("--cases", default=os.path.join(HERE, "cases"))
    ap.add_argument("--prestart", choices=("default", "yes", "no"), default="default",
                    help="the python runtimes' prestart (default: the daemon's, which is on)")
    ap.add_argument("--zygote", choices=("no", "yes"), default="no", help="zygote = yes")
    ap.add_argument("--slow", type=float, default=1, metavar="FACTOR",
                    help="a machine FACTOR times slower than the ones the cases were written on "
                    "(software emulation): the default cpu and wall limits and each case's "
                    "within: scaled by it, res_output_flood's volume divided by it; the limits a "
                    "case sets itself are kept (at most 12)")
    ap.add_argument("--unit", metavar="NAME",
                    help="run the installed daemon as this systemd unit (airlockd.service) with "
                    "the runner's config and environment instead of starting one (the unit's "
                    "config is the runner's while it runs: a test machine only)")
    ap.add_argument("only", nargs="*", help="case names to run (default: all; 'none': only the "
                    "leftover check's self-test)")
    args = ap.parse_args()
    if not 1 <= args.slow <= 12:
        ap.error("--slow: from 1 to 12 (the cpu_ms ceiling is 60 s)")
    return args


def main():
    args = parse_args()
    ctx = Ctx(args)
    os.environ[SECRET_VAR] = ctx.secret  # the client's environment holds it too
    names = sorted(n for n in os.listdir(args.cases) if n.endswith((".py", ".sh")))
    if args.only:
        names = [n for n in names if os.path.splitext(n)[0] in args.only]
    passed = failed = 0
    t_start = time.time()
    try:
        ctx.start()
        print("# resource control: %s%s" % (ctx.backend, " (%s)" % args.unit if args.unit else ""), flush=True)
        before = {"mounts": ctx.mount_table(), "hostname": socket.gethostname(),
                  "clock": clock_offset(), "hits": 0}
        why = leftover_check_self_test(ctx)
        if why:
            failed += 1
            print("FAIL leftover-check-self-test: %s" % "; ".join(why), flush=True)
        else:
            passed += 1
            print("ok leftover-check-self-test", flush=True)
        for n in names:
            name = os.path.splitext(n)[0]
            path = os.path.join(args.cases, n)
            try:
                text, meta = parse_case(path)
            except (OSError, ValueError) as e:
                print("FAIL %s: %s" % (name, e), flush=True)
                failed += 1
                continue
            meta["expect-also"] = meta["expect-cgroup2"] if ctx.backend == "cgroup2" else []
            meta["within"] *= args.slow
            why = []
            try:
                for stmt in meta["before"]:
                    exec(stmt, {"os": os}, {"ctx": ctx})
            except Exception as e:
                # A case that cannot be set up fails alone; the others still run.
                print("FAIL %s: before: %r" % (name, e), flush=True)
                failed += 1
                continue
            why += zygote_warm(ctx) if args.zygote == "yes" and path.endswith(".py") else []
            if meta["pair"]:
                results = [None] * len(meta["pair"])

                def go(i, role):
                    results[i] = run_one(ctx, path, text, meta, role)

                ts = [threading.Thread(target=go, args=(i, role)) for i, role in enumerate(meta["pair"])]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
            else:
                results = [run_one(ctx, path, text, meta)]
            for role_i, (r, err, _) in enumerate(results):
                tag = ("[%s] " % meta["pair"][role_i]) if meta["pair"] else ""
                if r is None:
                    why.append(tag + err)
                else:
                    why += [tag + w for w in check_result(ctx, r, meta)]
            if meta["control"] is not None:
                cmeta = dict(meta, args=meta["control"], expect=meta["control-expect"], check=[],
                             **{"expect-also": []})
                r, err, _ = run_one(ctx, path, text, cmeta)
                if r is None:
                    why.append("control run: " + err)
                else:
                    why += ["control run: " + w for w in check_result(ctx, r, cmeta)]
            for expr in meta["after"]:
                try:
                    ok = eval(expr, {"re": re, "os": os, "socket": socket}, {"ctx": ctx})
                except Exception as e:
                    ok = False
                    expr += " (raised %r)" % e
                if not ok:
                    why.append("after-check failed: %s" % expr)
            why += invariants(ctx, before)
            if why:
                failed += 1
                print("FAIL %s: %s" % (name, "; ".join(why)), flush=True)
                if ctx.daemon.poll() is not None:
                    print("# airlockd died; restarting it for the remaining cases", flush=True)
                    ctx.start()
                    before["mounts"] = ctx.mount_table()
            else:
                passed += 1
                print("ok %s" % name, flush=True)
    finally:
        ctx.stop()
        tally = audit_tally(ctx)
        if failed:
            print("# the daemon's log, last 8000 characters:\n%s" % ctx.log_tail(8000), flush=True)
        if os.environ.get("AIRLOCK_TEST_KEEP"):
            print("# kept %s" % ctx.dir)
        else:
            shutil.rmtree(ctx.dir, ignore_errors=True)
    print("# %.1f s; %s" % (time.time() - t_start, tally))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
