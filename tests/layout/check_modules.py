#!/usr/bin/env python3
"""check_modules.py SRCDIR: every source file of the product (daemon/,
common/, libclient/: .c, .h, .py) is named in docs/architecture.md, on a
line that names its folder too (e.g. "daemon/ipc/plan.h, plan_build.c").
Prints one line per file the page does not name; exit 1 if any.
(Issue 29: architecture.md names every module; suite docs.)"""
import os
import re
import subprocess
import sys

def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = sys.argv[1]
    page = open(os.path.join(src, "docs", "architecture.md"), encoding="utf-8").read().splitlines()
    files = []
    for top in ("daemon", "common", "libclient"):
        for root, dirs, names in os.walk(os.path.join(src, top)):
            dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
            for n in names:
                if n.endswith((".c", ".h", ".py")):
                    files.append(os.path.relpath(os.path.join(root, n), src))
    missing = []
    for f in sorted(files):
        folder = os.path.dirname(f) + "/"
        stem = os.path.splitext(os.path.basename(f))[0]
        word = re.compile(r"(?<![\w.-])" + re.escape(stem) + r"(?![\w-])")
        if not any(line.startswith("| ") and folder in line and word.search(line) for line in page):
            missing.append(f)
    for f in missing:
        print(f"docs/architecture.md does not name {f} (on a line naming {os.path.dirname(f)}/)")
    if missing:
        return 1
    print(f"ok: {len(files)} source files, each named in docs/architecture.md")
    return 0

sys.exit(main())
