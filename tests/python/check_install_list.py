#!/usr/bin/env python3
"""Every module of the airlock package is in libclient/python/meson.build's
install list (a module left out installs a package that cannot import: the
Debian package shipped without airlock/_bridge.py once)."""
import os
import re
import sys

build_file, pkg_dir = sys.argv[1], sys.argv[2]
listed = set(re.findall(r"'airlock/([A-Za-z0-9_]+\.py)'", open(build_file).read()))
present = {f for f in os.listdir(pkg_dir) if f.endswith(".py")}
missing, extra = sorted(present - listed), sorted(listed - present)
for f in missing:
    print(f"not installed: airlock/{f}")
for f in extra:
    print(f"listed but absent: airlock/{f}")
sys.exit(1 if missing or extra else 0)
