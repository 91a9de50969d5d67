#!/usr/bin/env python3
"""check_sizes.py SRCDIR [options]: no function over 100 lines and no
source file (.c, .h, .py) over 1,000 lines in SRCDIR's daemon/, common/,
libclient/ (docs/design-reshape.md, issue 29's Done-when) and tests/
(issue 31's review: the tests are read as often as the code; suite
layout).

Function lengths come from universal-ctags, which knows where a function
ends (the plan's command, section 1.3):

    ctags -x --_xformat='%N %F %n %e %K' --kinds-C=f --kinds-Python=fm \\
      --fields=+ne -R daemon common libclient tests

Known exceptions (KNOWN_FUNCTIONS, KNOWN_FILES below) are over the limit
today, in files being split; each is listed with its size today. The list
can only shrink: a listed one that grows, or that is no longer over the
limit (or is gone), is a failure too, so whoever brings it under the limit
deletes its line. Every violation is printed on its own line.

Options, for the negative test (tests/layout/oversize): --max-function N,
--max-file N, --known FILE:NAME=LINES or --known FILE=LINES (repeatable;
any --known, even --known none, replaces the lists below), --expect TEXT
(repeatable: the check must fail and print every TEXT; then exit 0).
Exit 0 ok, 1 violations, 2 usage or tool error.
"""

import os
import re
import shutil
import subprocess
import sys

TREES = ("daemon", "common", "libclient", "tests")
# Not measured: the negative test's own oversize tree (its files are over
# on purpose, checked with small limits by size-check-negative).
EXCLUDED = ("tests/layout/oversize",)
EXTENSIONS = (".c", ".h", ".py")
MAX_FUNCTION = 100
MAX_FILE = 1000

# Files kept whole over MAX_FILE lines, by rule rather than as debt: the one
# public header (docs/conventions: one public header, each prototype
# documented) and pure data tables (none today). Path: lines are not
# checked for these.
KEPT_WHOLE = {
    "libclient/airlock.h": "the one public header",
}

# Debt, each with its size on main at 2026-12-07 (track F splits them).
# The tests' entries came with the check's extension to tests/ (issue 31's
# review): none is over by design, each is a file or function that grew
# test by test and is not split yet; whoever splits one deletes its line.
KNOWN_FUNCTIONS = {
    # Tests that walk one long scenario (every key, every field) in order.
    "tests/config/test_config.c:test_defaults": 112,
    "tests/config/test_config.c:test_every_key": 139,
    "tests/proto/test_proto.c:test_profiles": 164,
    "tests/integration/sandbox/test_cli.c:test_cells": 185,
    "tests/integration/sandbox/test_cli.c:test_cell_cancel": 136,
    "tests/integration/sandbox/test_cli.c:test_tools": 109,
}
KNOWN_FILES = {
    # One cmocka executable per module (docs/conventions), each grown with
    # its module; to become several sources of the same executable.
    "tests/proto/test_proto.c": 3055,
    "tests/client/test_client.c": 2261,
    "tests/daemon/test_cgroup.c": 1585,
    "tests/config/test_config.c": 1550,
    "tests/daemon/test_plan.c": 1299,
    "tests/seccomp/test_seccomp.c": 1270,
    # The binding's suite and the CLI's: one file per surface, not split
    # by subject yet.
    "tests/python/test_airlock.py": 1296,
    "tests/integration/sandbox/test_cli.c": 1211,
}


def usage(msg):
    print(f"check_sizes.py: {msg}", file=sys.stderr)
    print(__doc__.split("\n\n")[0], file=sys.stderr)
    sys.exit(2)


def find_ctags():
    """universal-ctags, under its Debian name or as ctags; None if absent
    (exuberant ctags has no end lines and no --_xformat)."""
    for name in ("ctags-universal", "universal-ctags", "ctags"):
        path = shutil.which(name)
        if not path:
            continue
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 check=False).stdout
        except OSError:
            continue
        if "Universal Ctags" in out:
            return path
    return None


def functions(ctags, src, trees):
    """(path, name, first, last) of every C function and Python function or
    method under trees."""
    cmd = [ctags, "-x", "--_xformat=%N %F %n %e %K", "--kinds-C=f", "--kinds-Python=fm",
           "--fields=+ne", "-R"] + [f"--exclude={e}" for e in EXCLUDED] + list(trees)
    res = subprocess.run(cmd, cwd=src, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {res.returncode}: {res.stderr.strip()}")
        sys.exit(2)
    out = []
    for line in res.stdout.splitlines():
        f = line.split()
        if len(f) != 5 or f[4] not in ("function", "member"):
            continue
        name, path, first, last = f[0], f[1], f[2], f[3]
        if not first.isdigit() or not last.isdigit():
            # no end line: the length cannot be measured, which must not pass
            out.append((path, name, int(first) if first.isdigit() else 0, None))
            continue
        out.append((path, name, int(first), int(last)))
    return out


def source_files(src, trees):
    for tree in trees:
        for root, dirs, files in os.walk(os.path.join(src, tree)):
            dirs[:] = sorted(d for d in dirs
                             if os.path.relpath(os.path.join(root, d), src) not in EXCLUDED)
            for fn in sorted(files):
                if fn.endswith(EXTENSIONS):
                    full = os.path.join(root, fn)
                    yield os.path.relpath(full, src), full


def count_lines(path):
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def parse_args(argv):
    opts = {"src": None, "max_function": MAX_FUNCTION, "max_file": MAX_FILE,
            "known": None, "expect": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--max-function", "--max-file", "--known", "--expect"):
            if i + 1 >= len(argv):
                usage(f"{a} needs a value")
            v = argv[i + 1]
            i += 2
            if a == "--expect":
                opts["expect"].append(v)
            elif a == "--known":
                if opts["known"] is None:
                    opts["known"] = ({}, {})
                if v == "none":
                    continue
                m = re.fullmatch(r"([^:=]+)(?::([^=]+))?=(\d+)", v)
                if not m:
                    usage(f"--known {v}: want FILE:NAME=LINES or FILE=LINES")
                if m.group(2):
                    opts["known"][0][f"{m.group(1)}:{m.group(2)}"] = int(m.group(3))
                else:
                    opts["known"][1][m.group(1)] = int(m.group(3))
            else:
                if not v.isdigit():
                    usage(f"{a} {v}: not a number")
                opts["max_function" if a == "--max-function" else "max_file"] = int(v)
            continue
        if a.startswith("-"):
            usage(f"unknown option {a}")
        if opts["src"] is not None:
            usage("one SRCDIR")
        opts["src"] = a
        i += 1
    if opts["src"] is None:
        usage("SRCDIR missing")
    return opts


def main(argv):
    opts = parse_args(argv)
    src = opts["src"]
    max_fn, max_file = opts["max_function"], opts["max_file"]
    known_fn, known_file = opts["known"] if opts["known"] is not None else (
        KNOWN_FUNCTIONS, KNOWN_FILES)
    trees = [t for t in TREES if os.path.isdir(os.path.join(src, t))]
    if not trees:
        usage(f"{src} has none of {', '.join(TREES)}")
    ctags = find_ctags()
    if ctags is None:
        print("FAIL: universal-ctags not found (Debian package universal-ctags; "
              "scripts/deps.sh installs it)")
        return 2

    bad = []
    seen_fn = {}
    fns = functions(ctags, src, trees)
    for path, name, first, last in fns:
        if last is None:
            bad.append(f"{path}:{first}: {name}: ctags gives no end line, length unknown")
            continue
        n = last - first + 1
        if n <= max_fn:
            continue
        key = f"{path}:{name}"
        if key in known_fn:
            seen_fn[key] = max(seen_fn.get(key, 0), n)
            if n > known_fn[key]:
                bad.append(f"{path}:{first}: {name}: {n} lines, listed at {known_fn[key]}: "
                           "a known exception may shrink, not grow")
            continue
        bad.append(f"{path}:{first}: {name}: {n} lines (over {max_fn})")
    for key, was in sorted(known_fn.items()):
        if key not in seen_fn:
            bad.append(f"{key}: listed at {was} lines but no longer over {max_fn} (or gone): "
                       "delete its line from KNOWN_FUNCTIONS in check_sizes.py")

    nfiles = 0
    seen_file = set()
    for rel, full in source_files(src, trees):
        nfiles += 1
        n = count_lines(full)
        if rel in known_file:
            if n > max_file:
                seen_file.add(rel)
                if n > known_file[rel]:
                    bad.append(f"{rel}: {n} lines, listed at {known_file[rel]}: "
                               "a known exception may shrink, not grow")
            continue
        if n > max_file and rel not in KEPT_WHOLE:
            bad.append(f"{rel}: {n} lines (over {max_file})")
    for rel, was in sorted(known_file.items()):
        if rel not in seen_file:
            bad.append(f"{rel}: listed at {was} lines but no longer over {max_file} (or gone): "
                       "delete its line from KNOWN_FILES in check_sizes.py")

    if opts["expect"]:
        missing = [e for e in opts["expect"] if not any(e in b for b in bad)]
        for b in bad:
            print(f"  {b}")
        if missing:
            for e in missing:
                print(f"FAIL: expected a violation naming {e!r}, none did")
            return 1
        print(f"ok: the check fails as expected ({len(bad)} violations)")
        return 0
    if bad:
        print(f"FAIL: functions over {max_fn} lines or files over {max_file} "
              f"({len(fns)} functions, {nfiles} files):")
        for b in bad:
            print(f"  {b}")
        return 1
    print(f"ok: {len(fns)} functions, none over {max_fn} lines but the "
          f"{len(known_fn)} known; {nfiles} files, none over {max_file} lines but the "
          f"{len(known_file)} known and {len(KEPT_WHOLE)} kept whole")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
