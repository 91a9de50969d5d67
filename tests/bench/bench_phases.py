"""bench.py's phase breakdown: strace of both daemon processes during runs
of exec /bin/true, cut at the syscalls that mark each phase of the path
through a sandbox prepared ahead (--phases N, --only phases; see
docs/performance.md). In a file of its own to keep bench.py under the
tree's 1,000 lines."""
import os
import re
import shutil
import signal
import statistics
import subprocess
import time


PREPARED = 2                     # prepared_sandboxes' default: made before the trace


def trace_phases(args, nruns, run_bench):
    """strace -f both daemon processes during nruns of /bin/true (lib, one at a
    time, 100 ms apart) and cut each run at syscalls that mark phase edges.
    The first PREPARED runs go to sandboxes prepared before strace attached
    (not traced): PREPARED more runs are made, so that nruns are cut.
    run_bench: bench.py's, to drive airlock-bench."""
    if shutil.which("strace") is None:
        return None
    d = args.daemon
    out = os.path.join(d.dir, "strace.txt")
    st = subprocess.Popen(["strace", "-f", "-ttt", "-T", "-o", out, "-p", str(d.proc.pid),
                           "-p", str(d.frontend)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    run_bench(args, "--variants", "lib", "loop", "lib", 0, nruns + PREPARED, 100)
    time.sleep(0.5)
    st.send_signal(signal.SIGINT)
    st.wait()
    shutil.copy(out, "/tmp/airlock-bench-strace.txt")
    return parse_strace(out, d.proc.pid, d.frontend)


def read_strace(path):
    """(t, pid, call, dur) per syscall, <unfinished ...> and resumed merged."""
    events, pending = [], {}
    with open(path) as f:
        for raw in f:
            m = re.match(r"^(\d+)\s+(\d+\.\d+)\s+(.*)$", raw.rstrip())
            if not m:
                continue
            pid, t, rest = int(m.group(1)), float(m.group(2)), m.group(3)
            if rest.endswith("<unfinished ...>"):
                pending[pid] = (t, rest[:-len("<unfinished ...>")])
                continue
            r = re.match(r"<\.\.\. \w+ resumed>(.*)$", rest)
            if r and pid in pending:
                t, head = pending.pop(pid)
                rest = head + r.group(1)
            d = re.search(r"<(\d+\.\d+)>$", rest)
            events.append((t, pid, rest, float(d.group(1)) if d else 0.0))
    events.sort(key=lambda e: e[0])
    return events


def _first(events, pred, after=None, before=None):
    """The first event matching pred in [after, before) (start times)."""
    for e in events:
        if (after is None or e[0] >= after) and (before is None or e[0] < before) and pred(e):
            return e
    return None


def _last(events, pred, before):
    """The last event matching pred that ended before `before`."""
    found = None
    for e in events:
        if e[0] + e[3] > before:
            break
        if pred(e):
            found = e
    return found


def _end(e):
    return e[0] + e[3]


# Message heads as strace prints them (the first bytes of the iov): the
# spawner channel's SPAWN_REQ (1), SPAWN_DONE (4), SPAWN_PREPARE (8)
# (daemon/ipc/spawn_msg.h), the supervisor's hand-off "STRT" and its
# SUP_EXIT (3, daemon/ipc/sup_msg.h).
_SPAWN_REQ, _SPAWN_DONE, _SPAWN_PREPARE = r'"\1\0\0\0', r'"\4\0\0\0', r'"\10\0\0\0'
_STRT, _SUP_EXIT = '"STRT', r'"\3\0\0\0'


def parse_strace(path, spawner, frontend):
    """Cut each traced run at the syscalls that mark its phases. A run is
    handed to a sandbox prepared ahead (SPAWN_PREPARE, docs/design-bursts.md):
    the request's path is the hand-off ("STRT" from the spawner to the
    waiting supervisor) to the reply; the preparation (the supervisor's
    clone to its wait for a run) and the teardown are off that path, in
    the table's second part."""
    events = read_strace(path)
    F = [e for e in events if e[1] == frontend]
    S = [e for e in events if e[1] == spawner]
    by_pid = {}
    for e in events:
        by_pid.setdefault(e[1], []).append(e)
    phases = {}

    def add(name, v):
        if v is not None and v >= 0:
            phases.setdefault(name, []).append(v * 1e3)

    # The spawner's clones of prepared sandboxes: pid -> (clone event, the
    # SPAWN_PREPARE it answered).
    prepared = {}
    for e in S:
        m = re.match(r"clone3?\(.*CLONE_NEWUSER.*= (\d+)", e[2])
        if m:
            prep = _last(S, lambda x: x[2].startswith("recvmsg(") and _SPAWN_PREPARE in x[2],
                         e[0])
            prepared[int(m.group(1))] = (e, prep)
    for handoff in (e for e in S if e[2].startswith("sendmsg(") and _STRT in e[2]):
        t_strt = handoff[0]
        # The waiting supervisor's recvmsg that returned the hand-off.
        got = next((e for e in events if e[1] not in (spawner, frontend) and
                    e[2].startswith("recvmsg(") and _STRT in e[2] and
                    abs(_end(e) - _end(handoff)) < 0.05), None)
        if got is None:
            continue
        sup = got[1]
        supev = by_pid.get(sup, [])
        f_req = _last(F, lambda x: x[2].startswith("recvmsg(") and "type\\7" in x[2], t_strt)
        f_send = _last(F, lambda x: x[2].startswith("sendmsg(") and _SPAWN_REQ in x[2], t_strt)
        s_recv = _last(S, lambda x: x[2].startswith("recvmsg(") and _SPAWN_REQ in x[2], t_strt)
        code_clone = _first(supev, lambda x: re.match(r"clone3?\(", x[2]), after=_end(got))
        if not (f_req and f_send and s_recv and code_clone):
            continue
        execve = _first(events, lambda x: x[1] not in (spawner, frontend, sup) and
                        x[2].startswith("execve("), after=code_clone[0])
        if execve is None:
            continue
        codeev = by_pid.get(execve[1], [])
        cexit = _first(codeev, lambda x: x[2].startswith("exit_group("))
        sup_exit_msg = cexit and _first(supev, lambda x: x[2].startswith("sendto(") and
                                        _SUP_EXIT in x[2], after=cexit[0])
        if not sup_exit_msg:
            continue
        f_reply = _first(F, lambda x: x[2].startswith("sendmsg(") and "type\\10" in x[2],
                         after=sup_exit_msg[0])
        if f_reply is None:
            continue
        t_req = _end(f_req)
        add("01 frontend: request received to SPAWN_REQ sent (decode, checks, plan)",
            _end(f_send) - t_req)
        add("02 spawner: SPAWN_REQ received to the hand-off sent (limits, fds)",
            _end(handoff) - _end(s_recv))
        add("03 supervisor: hand-off received to the code's clone (plan, the run's mounts)",
            code_clone[0] - _end(got))
        add("04 code: clone to execve returned (fds, signals, limits, seccomp, exec)",
            _end(execve) - code_clone[0])
        add("05 code runs /bin/true (execve end to exit_group)", cexit[0] - _end(execve))
        add("06 supervisor: code exit to SUP_EXIT sent (reap, /proc and workspace walks)",
            _end(sup_exit_msg) - cexit[0])
        add("07 frontend: SUP_EXIT to the reply sent", _end(f_reply) - _end(sup_exit_msg))
        add("total: request received to reply sent", _end(f_reply) - t_req)
        # Off the request's path: the supervisor's end and its preparation.
        sexit = _first(supev, lambda x: x[2].startswith("exit_group("), after=sup_exit_msg[0])
        s_done = sexit and _first(S, lambda x: x[2].startswith("sendmsg(") and
                                  _SPAWN_DONE in x[2], after=sexit[0])
        if s_done:
            add("off 1 supervisor exit to SPAWN_DONE sent (teardown, reap, cgroup)",
                _end(s_done) - sexit[0])
        clone, prep = prepared.get(sup, (None, None))
        if clone is not None:
            if prep is not None:
                add("off 2 prepare: SPAWN_PREPARE received to clone (cgroup, seals)",
                    clone[0] - _end(prep))
            add("off 3 prepare: clone(NEWUSER|NS|PID|NET|IPC|UTS) syscall", clone[3])
            add("off 4 prepare: clone end to waiting for a run (maps, root, lo)",
                got[0] - _end(clone))
    return {k: statistics.median(v) for k, v in sorted(phases.items())}, len(phases.get(
        "total: request received to reply sent", []))


def report_phases(phases):
    """The per-phase breakdown of the traced runs (--phases)."""
    ph, nr = phases
    print("## Phases of one run of exec /bin/true (ms, median of %d traced runs; "
          "strace inflates every syscall)\n" % nr)
    print("Each run goes to a sandbox prepared ahead: 01-07 are the request's path, "
          "the \"off\" rows happen beside it (the supervisor's end, the next "
          "sandbox's preparation).\n")
    print("| phase | ms |")
    print("|---|---|")
    for k in ph:
        print("| %s | %.3f |" % (k, ph[k]))
    print()
