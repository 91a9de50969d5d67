#!/usr/bin/env python3
"""check_wheel.py PYTHON WHEEL VERSION PKGDIR: the built wheel installs, with
nothing but the standard library, into a venv of PYTHON made without pip
(python -m venv --without-pip: no pip, no setuptools, no network), the way
an installer unpacks a pure-Python wheel (RECORD's hashes checked, files
into the venv's purelib); then, in that venv:

  - airlock imports from the venv, __version__ and
    importlib.metadata.version("airlock") are VERSION, py.typed is there;
  - the same package in a Python that says it is 3.8 raises ImportError
    naming the Python it needs (sys.version_info is what the check reads);
  - every module parses with Python 3.9's grammar (__init__.py with 3.4's);
  - with pyenv's Pythons where the machine has them (not Debian's builds):
    pip installs it offline into venvs of 3.9 and 3.11, which
    import it; 3.8's pip refuses it, and forced in, the import says why;
  - the source package directory PKGDIR got nothing from the build
    (no _version.py, no *.egg-info, no build/ beside it).

Prints one "ok"/"not ok" line per check; exits 1 if any fails.
"""
import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

python, wheel, version, pkgdir = sys.argv[1:5]
wheel, pkgdir = os.path.abspath(wheel), os.path.abspath(pkgdir)
failed = 0


def check(what, ok, detail=""):
    global failed
    failed += not ok
    print(f"{'ok' if ok else 'not ok'} - {what}" + (f": {detail}" if detail else ""))


def install(wheel, purelib):
    """Unpack a pure wheel into purelib after checking every RECORD hash."""
    with zipfile.ZipFile(wheel) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        rows = [line.split(",") for line in z.read(record).decode().splitlines() if line]
        for path, digest, size in rows:
            if path == record:
                continue
            data = z.read(path)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if digest != want or int(size) != len(data):
                raise ValueError(f"{path}: RECORD says {digest} {size}, the file is {want} {len(data)}")
        listed = {r[0] for r in rows}
        extra = [n for n in z.namelist() if n not in listed]
        if extra:
            raise ValueError(f"not in RECORD: {extra}")
        z.extractall(purelib)


with tempfile.TemporaryDirectory() as tmp:
    venv = os.path.join(tmp, "venv")
    subprocess.run([python, "-m", "venv", "--without-pip", venv], check=True)
    vpy = os.path.join(venv, "bin", "python")
    purelib = subprocess.run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    nopip = subprocess.run([vpy, "-c", "import pip"], capture_output=True).returncode != 0
    check("the venv has no pip", nopip)
    try:
        install(wheel, purelib)
        check("the wheel's RECORD matches its files; unpacked into the venv", True, purelib)
    except (ValueError, KeyError, StopIteration) as e:
        check("the wheel's RECORD matches its files; unpacked into the venv", False, str(e))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AIRLOCK_LIBRARY")}
    code = ("import airlock, importlib.metadata as m, os, sys; "
            "print(airlock.__file__.startswith(sys.prefix), airlock.__version__, m.version('airlock'), "
            "os.path.isfile(os.path.join(os.path.dirname(airlock.__file__), 'py.typed')))")
    r = subprocess.run([vpy, "-c", code], capture_output=True, text=True, env=env, cwd=tmp)
    out = r.stdout.split()
    check("imported from the venv", out[:1] == ["True"], r.stdout.strip() or r.stderr.strip()[-300:])
    check("airlock.__version__", out[1:2] == [version], str(out[1:2]))
    check('importlib.metadata.version("airlock")', out[2:3] == [version], str(out[2:3]))
    check("py.typed installed", out[3:4] == ["True"], str(out[3:4]))
    old = "import sys; sys.version_info = (3, 8, 18, 'final', 0); import airlock"
    r = subprocess.run([vpy, "-c", old], capture_output=True, text=True, env=env, cwd=tmp)
    said = r.stderr.strip().splitlines()[-1:] or [""]
    check("Python 3.8 refused at import", r.returncode != 0 and "ImportError: airlock needs Python 3.9 or later; this is Python 3.8" in said[0], said[0])

# What can be shown without an older interpreter: every module parses with
# Python 3.9's grammar, and __init__.py (which must reach its version check)
# with 3.4's.
import ast

with zipfile.ZipFile(wheel) as z:
    for name in sorted(n for n in z.namelist() if n.endswith(".py")):
        grammar = (3, 4) if name.endswith("/__init__.py") else (3, 9)
        try:
            ast.parse(z.read(name), filename=name, feature_version=grammar)
            check(f"{name} parses as Python {grammar[0]}.{grammar[1]}", True)
        except SyntaxError as e:
            check(f"{name} parses as Python {grammar[0]}.{grammar[1]}", False, str(e))

# Pythons that are not Debian's: pyenv's builds, where this machine has them
# ($PYENV_ROOT or ~/.pyenv). The oldest supported (3.9) and 3.11 get a venv with pip and `pip install --no-index` of the wheel with the
# network cut off (a network namespace of its own: unshare -n); 3.8 must be
# refused, by pip (Requires-Python) and, forced in, at import.
def pyenv_pythons():
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = {}
    try:
        names = os.listdir(os.path.join(root, "versions"))
    except OSError:
        return found
    for name in names:
        exe = os.path.join(root, "versions", name, "bin", "python3")
        parts = name.split(".")
        if os.access(exe, os.X_OK) and len(parts) >= 2 and parts[0] == "3" and parts[1].isdigit():
            found.setdefault((3, int(parts[1])), exe)
    return found


def offline(argv, **kw):
    return subprocess.run(["unshare", "-n", "--"] + argv, capture_output=True, text=True, **kw)


others = pyenv_pythons()
picked = sorted(v for v in others if v >= (3, 9))
picked = sorted({picked[0]} | ({(3, 11)} & set(picked))) if picked else []
if not others:
    print("ok - # no pyenv Python on this machine: only the system Python was tested")
with tempfile.TemporaryDirectory() as tmp:
    # pip with no configuration of this machine's (no find-links): the wheel alone.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "AIRLOCK_LIBRARY", "PYENV_VERSION") and not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_NO_INDEX"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    for ver in picked + ([(3, 8)] if (3, 8) in others else []):
        exe = others[ver]
        name = f"pyenv Python {ver[0]}.{ver[1]} ({os.path.realpath(exe)})"
        venv = os.path.join(tmp, f"venv{ver[0]}{ver[1]}")
        r = subprocess.run([exe, "-m", "venv", venv], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            check(f"{name}: a venv with pip", False, r.stderr.strip()[-300:])
            continue
        vpy = os.path.join(venv, "bin", "python")
        r = offline([vpy, "-m", "pip", "install", "--no-index", wheel], env=env, cwd=tmp)
        if ver < (3, 9):
            check(f"{name}: pip refuses the wheel (Requires-Python)", r.returncode != 0 and "requires a different Python" in r.stdout + r.stderr,
                  (r.stdout + r.stderr).strip().splitlines()[-1:][0] if (r.stdout + r.stderr).strip() else "")
            r = offline([vpy, "-m", "pip", "install", "--no-index", "--ignore-requires-python", wheel], env=env, cwd=tmp)
            r = subprocess.run([vpy, "-c", "import airlock"], capture_output=True, text=True, env=env, cwd=tmp)
            said = (r.stderr.strip().splitlines() or [""])[-1]
            check(f"{name}: forced in, the import says it needs 3.9", r.returncode != 0 and "airlock needs Python 3.9 or later; this is Python 3.8" in said, said)
            continue
        check(f"{name}: pip install --no-index of the wheel, network off", r.returncode == 0, (r.stdout + r.stderr).strip()[-300:])
        r = subprocess.run([vpy, "-c", code], capture_output=True, text=True, env=env, cwd=tmp)
        out = r.stdout.split()
        check(f"{name}: imports from its venv with version {version} and py.typed",
              out == ["True", version, version, "True"], r.stdout.strip() or r.stderr.strip()[-300:])

left = [n for n in os.listdir(pkgdir) if n == "_version.py" or n.endswith(".egg-info")]
left += [n for n in os.listdir(os.path.dirname(pkgdir.rstrip("/"))) if n == "build" or n.endswith(".egg-info")]
check("nothing written into the source package", not left, str(left))
sys.exit(1 if failed else 0)
