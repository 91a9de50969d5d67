#!/bin/sh
# run_venv.sh PYTHON PKGDIR TEST: install the airlock package with pip into a
# fresh venv of PYTHON (offline, no build isolation: setuptools from the
# distribution), check its version metadata, and run TEST with the venv's
# interpreter, which finds the package only because pip installed it. The
# check finds libairlock.so.0 through the loader (LD_LIBRARY_PATH, as for an
# installed library); the tests are given AIRLOCK_LIBRARY and test both ways.
set -eu
python=$1
pkgdir=$2
test=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# pip builds in the tree it is given: build a copy, never the source.
cp -r "$pkgdir" "$tmp/src"
rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
# --system-site-packages: the build uses the distribution's setuptools and
# wheel (python3-setuptools, python3-wheel); nothing comes from PyPI.
"$python" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-index --no-build-isolation "$tmp/src" \
	>"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log" >&2; exit 1; }
libdir=$(dirname "$AIRLOCK_LIBRARY")
unset PYTHONPATH
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$tmp"
env -u AIRLOCK_LIBRARY "$tmp/venv/bin/python" - <<'PY'
import importlib.metadata, sys
import airlock
where = airlock.__file__
assert where.startswith(sys.prefix), f"airlock imported from {where}, not the venv {sys.prefix}"
meta = importlib.metadata.version("airlock")
assert meta == airlock.__version__, (meta, airlock.__version__)
lib = airlock.load_library()
assert lib.airlock_library_version().decode() == airlock.__version__, "library and package versions differ"
print(f"ok: airlock {meta} installed by pip into {sys.prefix}; libairlock {airlock.__version__} from the loader")
PY
exec "$tmp/venv/bin/python" "$test"
