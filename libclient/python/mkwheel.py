#!/usr/bin/env python3
"""mkwheel.py VERSION PKGDIR OUTDIR: the airlock package as a wheel, with the
standard library only (no setuptools, no build backend: the build runs it,
and `pip install` of the result has nothing to build).

Writes into OUTDIR (never into PKGDIR, the source tree):
  airlock-VERSION-py3-none-any.whl   the wheel (pure Python, any Python 3.9+)
  _version.py                        airlock/_version.py, installed by meson
  METADATA                           the dist-info's METADATA, installed by
                                     meson so that importlib.metadata knows
                                     the package installed without pip

The version is meson's project version (the release's, one place). The
wheel is reproducible: entries sorted, times fixed to SOURCE_DATE_EPOCH (or
1980-01-01 when unset).
"""

import base64
import hashlib
import os
import re
import sys
import time
import zipfile

NAME = "airlock"
REQUIRES_PYTHON = ">=3.9"
SUMMARY = "Run untrusted code in airlockd's single-use sandboxes (ctypes binding of libairlock)"


def metadata(version: str) -> str:
    """The METADATA file (core metadata 2.1) of this version."""
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {version}\n"
        f"Summary: {SUMMARY}\n"
        "License: MIT\n"
        f"Requires-Python: {REQUIRES_PYTHON}\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Programming Language :: Python :: 3\n"
        "Classifier: Typing :: Typed\n"
        "\n"
        "A ctypes binding of libairlock, the client library of airlockd. It\n"
        "loads libairlock.so.0 at run time (the loader's path, or\n"
        "$AIRLOCK_LIBRARY); install libairlock separately. See docs/python.md.\n"
    )


def version_py(version: str) -> str:
    """airlock/_version.py of this version."""
    return f'"""Written by the build (libclient/python/mkwheel.py): the release\'s version."""\n\n__version__ = "{version}"\n'


WHEEL = "Wheel-Version: 1.0\nGenerator: airlock mkwheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def record_line(path: str, data: bytes) -> str:
    """One RECORD row: path, sha256 (urlsafe base64, unpadded), size."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def main(argv: list) -> int:
    if len(argv) != 4:
        print("usage: mkwheel.py VERSION PKGDIR OUTDIR", file=sys.stderr)
        return 2
    version, pkgdir, outdir = argv[1], argv[2], argv[3]
    # A wheel's file name and the metadata take a PEP 440 version; meson's
    # project version is plain major.minor.micro.
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version):
        print(f"mkwheel.py: {version!r} is not a release version (N.N.N)", file=sys.stderr)
        return 2
    files = {}
    for name in sorted(os.listdir(pkgdir)):
        # The modules and the PEP 561 marker; never a stale _version.py or
        # __pycache__ of the source tree.
        if (name.endswith(".py") and name != "_version.py") or name == "py.typed":
            with open(os.path.join(pkgdir, name), "rb") as f:
                files[f"{NAME}/{name}"] = f.read()
    if f"{NAME}/__init__.py" not in files or f"{NAME}/py.typed" not in files:
        print(f"mkwheel.py: {pkgdir} has no __init__.py or py.typed", file=sys.stderr)
        return 1
    files[f"{NAME}/_version.py"] = version_py(version).encode()
    info = f"{NAME}-{version}.dist-info"
    files[f"{info}/METADATA"] = metadata(version).encode()
    files[f"{info}/WHEEL"] = WHEEL.encode()
    files[f"{info}/top_level.txt"] = f"{NAME}\n".encode()
    record = "".join(record_line(p, d) for p, d in sorted(files.items())) + f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record.encode()

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    stamp = time.gmtime(max(epoch, 315532800))[:6]
    wheel = os.path.join(outdir, f"{NAME}-{version}-py3-none-any.whl")
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        # RECORD last, as the wheel format recommends.
        for path in sorted(files, key=lambda p: (p.endswith("/RECORD"), p)):
            entry = zipfile.ZipInfo(path, date_time=stamp)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, files[path])
    os.replace(tmp, wheel)
    for name, text in (("_version.py", version_py(version)), ("METADATA", metadata(version))):
        with open(os.path.join(outdir, name), "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
