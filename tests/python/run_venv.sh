#!/bin/sh
# run_venv.sh PYTHON WHEEL TEST: install the built airlock wheel with pip into
# a fresh venv of PYTHON (offline, no build step: no setuptools, no
# --system-site-packages), check its version metadata and py.typed, and run
# TEST with the venv's interpreter, which finds the package only because pip
# installed it. The check finds libairlock.so.0 through the loader
# (LD_LIBRARY_PATH, as for an installed library); the tests are given
# AIRLOCK_LIBRARY and test both ways.
set -eu
python=$1
wheel=$2
test=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-index "$wheel" >"$tmp/pip.log" 2>&1 || {
	cat "$tmp/pip.log" >&2
	exit 1
}
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
import os
assert os.path.isfile(os.path.join(os.path.dirname(where), "py.typed")), "no py.typed"
print(f"ok: airlock {meta} installed by pip into {sys.prefix}; libairlock {airlock.__version__} from the loader")
PY
exec "$tmp/venv/bin/python" "$test"
