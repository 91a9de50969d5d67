#!/bin/sh
# leakcheck.sh AIRLOCKD AIRLOCK: run the hostile suite (a short but wide
# integration run) against an airlockd built with -Dsanitize=address,undefined
# and report what AddressSanitizer, LeakSanitizer and UBSan said, per process.
#
#   meson setup /work/build-fuzz/asan -Dsanitize=address,undefined
#   ninja -C /work/build-fuzz/asan daemon/airlockd libclient/airlock
#   tests/faults/leakcheck.sh /work/build-fuzz/asan/daemon/airlockd \
#       /work/build-fuzz/asan/libclient/airlock
#
# Not in meson test: about 60 s. valgrind cannot be used instead: it does not
# implement seccomp(2) (syscall 317), so airlockd fails at start-up with
# "cannot compile the sandbox seccomp policy".
#
# What this can and cannot see: LeakSanitizer checks at exit() through an
# atexit handler. The spawner exits with exit() on SIGTERM and is checked. The
# frontend ends with _exit() and its seccomp filter refuses the ptrace/clone
# LSan's stop-the-world needs, so the frontend's leaks (the process that
# parses client input) are NOT checked by this run; sandboxes exec (or _exit).
set -u
airlockd=$1 airlock=$2
here=$(cd "$(dirname "$0")" && pwd)
logs=$(mktemp -d /tmp/airlock-leakcheck-XXXXXX)
chmod 777 "$logs"
ASAN_OPTIONS="detect_leaks=1:log_path=$logs/asan:log_exe_name=1" \
UBSAN_OPTIONS="print_stacktrace=1:log_path=$logs/ubsan" \
	python3 "$here/../hostile/run_hostile.py" --airlockd "$airlockd" --airlock "$airlock" | grep -E "^FAIL|passed" | cut -c1-600
echo "sanitizer reports in $logs:"
found=0
for f in "$logs"/*; do
	[ -f "$f" ] || continue
	found=1
	echo "== $f"
	grep -E "ERROR: (Leak|Address)Sanitizer|runtime error|SUMMARY|Direct leak|Indirect leak" "$f" | head -20
done
[ $found = 1 ] || echo "none (no sanitizer output from any checked process)"
[ $found = 0 ]
