#!/usr/bin/env python3
"""check_version.py VERSION AIRLOCKD AIRLOCK LIBAIRLOCK PKGCONFIG_DIR WHEEL SRCDIR:
every program and package of the build says the release's version, VERSION
(meson's project version, the one place it is written):

  airlockd --version, airlock --version (its own and the library's it runs
  with), LIBAIRLOCK_VERSION in airlock.h, the library's file name
  (libairlock.so.VERSION, soname libairlock.so.0), pkg-config --modversion,
  the wheel's file name and METADATA, airlock.__version__ and
  importlib.metadata.version("airlock") of the installed wheel, the Python
  package's _version.py and METADATA that meson installs, debian/changelog's
  latest entry, NEWS's latest heading and the man pages' .TH lines.

Prints one "ok"/"not ok" line per check; exits 1 when any differ.
"""
import os
import re
import subprocess
import sys
import tempfile
import zipfile

version, airlockd, airlock, libairlock, pcdir, wheel, srcdir = sys.argv[1:8]
failed = 0


def check(what, got):
    global failed
    ok = got == version
    failed += not ok
    print(f"{'ok' if ok else 'not ok'} - {what}: {got!r}" + ("" if ok else f" (want {version!r})"))


def first(pattern, text, what):
    m = re.search(pattern, text, re.M)
    return m.group(1) if m else f"<no {what} in {text[:80]!r}>"


def run(*argv, env=None):
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=30).stdout


check("airlockd --version", first(r"^airlockd (\S+) ", run(airlockd, "--version"), "version"))
env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(libairlock))
out = run(airlock, "--version", env=env)
check("airlock --version", first(r"^airlock (\S+) ", out, "version"))
check("airlock --version's libairlock", first(r"\(libairlock (\S+)\)", out, "library version"))
header = open(os.path.join(srcdir, "libclient", "airlock.h")).read()
check("LIBAIRLOCK_VERSION", first(r'^#define LIBAIRLOCK_VERSION "([^"]*)"', header, "LIBAIRLOCK_VERSION"))
parts = [first(rf"^#define LIBAIRLOCK_VERSION_{p} (\d+)", header, p) for p in ("MAJOR", "MINOR", "MICRO")]
check("LIBAIRLOCK_VERSION_MAJOR.MINOR.MICRO", ".".join(parts))
real = os.path.basename(os.path.realpath(libairlock))
check("libairlock's file name", first(r"^libairlock\.so\.(.+)$", real, "file name"))
# The soname is the ABI's, not the release's: 0 while the ABI only grows.
soname = first(r"\(SONAME\)\s+Library soname: \[(\S+)\]", run("readelf", "-d", libairlock), "soname")
failed += soname != "libairlock.so.0"
print(f"{'ok' if soname == 'libairlock.so.0' else 'not ok'} - libairlock's soname: {soname!r}")
check("pkg-config --modversion libairlock",
      run("pkg-config", "--modversion", "libairlock", env=dict(os.environ, PKG_CONFIG_PATH=pcdir)).strip())
check("the wheel's file name", first(r"^airlock-(.+)-py3-none-any\.whl$", os.path.basename(wheel), "version"))
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    meta = [n for n in names if n.endswith(".dist-info/METADATA")]
    check("the wheel's METADATA", first(r"^Version: (\S+)$", z.read(meta[0]).decode(), "Version") if meta else "<none>")
    ok = "airlock/py.typed" in names
    failed += not ok
    print(f"{'ok' if ok else 'not ok'} - the wheel has airlock/py.typed")
    with tempfile.TemporaryDirectory() as d:
        z.extractall(d)
        # The unpacked wheel as a plain directory on sys.path: what pip
        # installs, without pip.
        code = "import airlock, importlib.metadata as m; print(airlock.__version__, m.version('airlock'))"
        out = run(sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {d!r}); {code}").split()
        check("airlock.__version__ (wheel)", out[0] if out else "<import failed>")
        check('importlib.metadata.version("airlock") (wheel)', out[1] if len(out) > 1 else "<import failed>")
built = os.path.dirname(wheel)
check("airlock/_version.py meson installs", first(r'^__version__ = "([^"]*)"', open(os.path.join(built, "_version.py")).read(), "__version__"))
check("the dist-info METADATA meson installs", first(r"^Version: (\S+)$", open(os.path.join(built, "METADATA")).read(), "Version"))
check("debian/changelog", first(r"^airlock \(([^)]*)\)", open(os.path.join(srcdir, "debian", "changelog")).read(), "entry"))
check("NEWS", first(r"^Airlock (\S+) \(", open(os.path.join(srcdir, "NEWS")).read(), "heading"))
mandir = os.path.join(srcdir, "docs", "man")
for page in sorted(os.listdir(mandir)):
    text = open(os.path.join(mandir, page)).read()
    check(f"docs/man/{page}'s .TH", first(r'^\.TH .*"airlock ([^"]*)"', text, ".TH version"))
sys.exit(1 if failed else 0)
