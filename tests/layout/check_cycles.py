#!/usr/bin/env python3
"""check_cycles.py BUILDROOT ARCHIVE... [options]: no group of more than 4
daemon files calling each other in a circle (docs/design-reshape.md
sections 1.5 and 6, step 12; suite layout).

It reads the build's objects, which is exact: file A calls file B when an
undefined symbol of A.o (nm -u) is a text symbol B.o defines (nm
--defined-only: T or W). The ARCHIVEs are the daemon's static libraries
(meson passes their paths; thin archives work, nm reads their members);
a file is named by its library's folder under BUILDROOT and its object,
e.g. daemon/frontend/run.c. The strongly connected components of that
graph (Tarjan, iterative) are the circles: the check fails when one has
more than 4 files, and prints each component of more than one file with
its members and the edges that close it (caller -> callee: symbols).

A known exception (KNOWN below: a component over the limit today, with its
files) passes while the component found is within it. The list can only
shrink: a known component that no longer has a component over the limit
within it fails, so whoever cuts it deletes its line.

Options, for the negative test (tests/layout/cycle_*.c): --max N;
--known FILE,FILE,... (repeatable; any --known, even --known none, replaces
KNOWN); --expect TEXT (repeatable: the check must fail and print every
TEXT; then exit 0). Exit 0 ok, 1 a component too large, 2 usage or tool
error.
"""

import os
import subprocess
import sys

MAX_COMPONENT = 4

# None over the limit since issue 29 cut config/'s 6 files (the value
# parsers and error helpers moved to the leaf config_value.c).
KNOWN = []


def usage(msg):
    print(f"check_cycles.py: {msg}", file=sys.stderr)
    print(__doc__.split("\n\n")[0], file=sys.stderr)
    sys.exit(2)


def file_name(buildroot, archive, member):
    """daemon/frontend/run.c for .../daemon/frontend/libairlockd-frontend.a
    and its member .../libairlockd-frontend.a.p/run.c.o."""
    folder = os.path.relpath(os.path.dirname(os.path.abspath(archive)), buildroot)
    obj = os.path.basename(member)
    if obj.endswith(".o"):
        obj = obj[:-2]
    return obj if folder == "." else f"{folder}/{obj}"


def read_symbols(buildroot, archives):
    """{file: set(undefined)}, {symbol: set(files defining it)}."""
    undef, defs = {}, {}
    for ar in archives:
        if not os.access(ar, os.R_OK):
            print(f"FAIL: cannot read {ar}")
            sys.exit(2)
        res = subprocess.run(["nm", "-A", ar], capture_output=True, text=True, check=False,
                             env=dict(os.environ, LC_ALL="C"))
        if res.returncode != 0:
            print(f"FAIL: nm -A {ar} exited {res.returncode}: {res.stderr.strip()}")
            sys.exit(2)
        for line in res.stdout.splitlines():
            # "archive:member:value T symbol" or "archive:member:   U symbol"
            parts = line.split(":", 2)
            if len(parts) != 3:
                continue
            member, f = parts[1], parts[2].split()
            if len(f) < 2:
                continue
            name = file_name(buildroot, ar, member)
            kind, sym = f[-2], f[-1]
            undef.setdefault(name, set())
            if kind == "U":
                undef[name].add(sym)
            elif kind in ("T", "W"):
                defs.setdefault(sym, set()).add(name)
    return undef, defs


def call_graph(undef, defs):
    """{caller: {callee: sorted symbols}}, no self edges."""
    graph = {f: {} for f in undef}
    for caller, syms in undef.items():
        for sym in syms:
            for callee in defs.get(sym, ()):
                if callee != caller:
                    graph[caller].setdefault(callee, []).append(sym)
    for edges in graph.values():
        for syms in edges.values():
            syms.sort()
    return graph


def tarjan(graph):
    """Strongly connected components, iteratively (no recursion limit)."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def parse_args(argv):
    opts = {"max": MAX_COMPONENT, "known": None, "expect": [], "pos": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--max", "--known", "--expect"):
            if i + 1 >= len(argv):
                usage(f"{a} needs a value")
            v = argv[i + 1]
            i += 2
            if a == "--max":
                if not v.isdigit():
                    usage(f"--max {v}: not a number")
                opts["max"] = int(v)
            elif a == "--known":
                if opts["known"] is None:
                    opts["known"] = []
                if v != "none":
                    opts["known"].append(frozenset(v.split(",")))
            else:
                opts["expect"].append(v)
            continue
        if a.startswith("-"):
            usage(f"unknown option {a}")
        opts["pos"].append(a)
        i += 1
    if len(opts["pos"]) < 2:
        usage("BUILDROOT and at least one ARCHIVE")
    return opts


def describe(comp, graph):
    lines = [f"{len(comp)} files: {' '.join(comp)}"]
    members = set(comp)
    for caller in comp:
        for callee in sorted(graph[caller]):
            if callee in members:
                syms = graph[caller][callee]
                shown = ", ".join(syms[:4]) + (f", +{len(syms) - 4}" if len(syms) > 4 else "")
                lines.append(f"    {caller} -> {callee}: {shown}")
    return lines


def main(argv):
    opts = parse_args(argv)
    buildroot = os.path.abspath(opts["pos"][0])
    archives = opts["pos"][1:]
    limit = opts["max"]
    known = opts["known"] if opts["known"] is not None else KNOWN

    undef, defs = read_symbols(buildroot, archives)
    graph = call_graph(undef, defs)
    nedges = sum(len(e) for e in graph.values())
    comps = [c for c in tarjan(graph) if len(c) > 1]
    comps.sort(key=lambda c: (-len(c), c))

    out, bad = [], []
    matched = set()
    for comp in comps:
        text = describe(comp, graph)
        if len(comp) <= limit:
            out += ["  " + t for t in text]
            continue
        within = [k for k in known if set(comp) <= k]
        if within:
            matched.update(within)
            out += [f"  known exception, {text[0]}"] + ["  " + t for t in text[1:]]
            continue
        bad.append(f"over {limit}: {text[0]}")
        bad += text[1:]
    for k in known:
        if k not in matched:
            bad.append(f"known exception of {len(k)} files no longer has a component over "
                       f"{limit} within it: delete its line from KNOWN in check_cycles.py: "
                       f"{' '.join(sorted(k))}")
    largest = len(comps[0]) if comps else 1
    summary = (f"{len(graph)} files, {nedges} edges, {len(comps)} components of more than "
               f"one file, the largest {largest}")

    if opts["expect"]:
        allout = bad + out
        missing = [e for e in opts["expect"] if not any(e in t for t in allout)]
        for t in bad:
            print(f"  {t}")
        if not bad:
            print(f"FAIL: expected the check to fail ({summary})")
            return 1
        if missing:
            for e in missing:
                print(f"FAIL: expected a line naming {e!r}, none did")
            return 1
        print(f"ok: the check fails as expected ({summary})")
        return 0
    if bad:
        print(f"FAIL: daemon files calling each other in a circle ({summary}):")
        for t in bad:
            print(f"  {t}")
        if out:
            print("the other components:")
            for t in out:
                print(t)
        return 1
    print(f"ok: {summary}; none over {limit} but the {len(known)} known")
    for t in out:
        print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
