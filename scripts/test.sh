#!/bin/sh
# Run the whole test suite (as root, on Debian 12): unit tests, integration
# tests against a real daemon, then the same under ASan+UBSan, then clang's
# static analyzer (tests/lint/scan_build.sh, one test), then the host
# test (tests/host: the Debian packages installed and checked in a Debian 12
# and a Debian 13 VM under systemd). Ends with the line "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: the tests start airlockd" >&2; exit 1; }
sh scripts/deps.sh || exit 1
passed=0
failed=0
# One build directory and suite; adds its counts to passed/failed.
suite() {
	dir=$1
	shift
	if [ ! -d "$dir" ]; then
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; failed=$((failed + 1)); return; }
	elif [ $# -gt 0 ]; then
		# A directory made before an option was added here gets it too.
		meson configure "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; failed=$((failed + 1)); return; }
	fi
	if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
		cat "$dir.build.log"
		failed=$((failed + 1))
		return
	fi
	meson test -C "$dir" --print-errorlogs --num-processes 2 || true
	set -- $(python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("result") in ("OK", "EXPECTEDFAIL"):
        p += 1
    else:
        f += 1
print(p, f)
PY
)
	passed=$((passed + $1))
	failed=$((failed + $2))
}
# Both suites build with -Dwerror=true: a new compiler warning fails the
# build, and so the run.
suite build -Dwerror=true
# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer. Its
# test daemons use uid band 1 (tests/meson.build: test_uid_offset), build's
# band 0, so the two suites may run at once (here they run one after the
# other).
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 suite build-asan -Dsanitize=address,undefined -Dtest_uid_offset=1 -Dwerror=true
# clang's analyzer over every target (docs/static-analysis.md): any report
# fails it. One test in the count.
if sh tests/lint/scan_build.sh build-scan; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
fi
# The host test: each acceptance check in each release counts.
mkdir -p build
sh tests/host/run.sh build/host | tee build/host.log
set -- $(sed -n 's/^host: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' build/host.log)
if [ $# -eq 2 ]; then
	passed=$((passed + $1))
	failed=$((failed + $2))
else
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
