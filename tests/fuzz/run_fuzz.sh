#!/bin/sh
# run_fuzz.sh SRCDIR WORKDIR SECONDS: build every libFuzzer harness with clang
# (-fsanitize=fuzzer,address,undefined) into WORKDIR, generate the seed corpus
# with the real encoders (gen_seeds.c), replay every committed regression input
# (tests/fuzz/regress/HARNESS/*), then fuzz each harness for SECONDS seconds.
# Fails (never skips) when clang is missing or any harness crashes, leaks or
# trips a sanitizer. `meson test` runs it briefly; `ninja fuzz` runs it long.
set -eu
src=$1 work=$2 secs=$3
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "FAIL: $cc not found: the fuzz harnesses need clang (scripts/deps.sh installs it)" >&2
	exit 1
fi
mkdir -p "$work"
flags="-std=c17 -D_GNU_SOURCE -DAIRLOCK_VERSION=\"fuzz\" -g -O1 -fno-omit-frame-pointer
 -I$src -I$src/common -I$src/libclient -I$src/daemon -I$src/daemon/spawner
 -I$src/daemon/supervisor -I$src/daemon/keeper -I$src/daemon/ipc -I$src/daemon/config
 -I$src/daemon/frontend -I$src/daemon/frontend/egress
 -fsanitize=address,undefined -fno-sanitize-recover=all"
common="$src/common/log.c $src/common/log_why.c $src/common/fdpass.c $src/common/memfd.c $src/common/proto.c
 $src/common/proto_dec.c $src/common/proto_dec_msg.c $src/common/proto_enc.c $src/common/proto_enc_msg.c
 $src/common/strv.c $src/common/fsm.c
 $src/common/rules.c $src/common/limit.c $src/common/bundle.c $src/common/jsonscan.c"
libs="$(pkg-config --libs msgpack) $(pkg-config --libs inih)"

build() { # name sources...
	name=$1
	shift
	# shellcheck disable=SC2086
	$cc $flags -fsanitize=fuzzer -o "$work/$name" "$@" $common $libs
}
build fuzz_proto "$src/tests/proto/fuzz_proto.c"
build fuzz_config "$src/tests/config/fuzz_config.c" "$src"/daemon/config/config_*.c "$src/daemon/ipc/cgroup_read.c" \
	"$src/daemon/frontend/egress/egress_rules.c" "$src/daemon/ipc/rootspec_read.c" "$src/daemon/ipc/sandbox_fs_root.c"
# plan_parse checks hidden_paths by the root's table (sandbox_fs_root.c, rootspec_read.c)
root_rule="$src/daemon/ipc/sandbox_fs_root.c $src/daemon/ipc/rootspec_read.c"
# shellcheck disable=SC2086
build fuzz_plan "$src/tests/fuzz/fuzz_plan.c" "$src/daemon/ipc/plan_parse.c" $root_rule
build fuzz_egress "$src/tests/fuzz/fuzz_egress.c" "$src/daemon/frontend/egress/egress_rules.c"
build fuzz_bundle "$src/tests/fuzz/fuzz_bundle.c"
build fuzz_jsonscan "$src/tests/fuzz/fuzz_jsonscan.c"
build fuzz_advisory "$src/tests/fuzz/fuzz_advisory.c" "$src/daemon/frontend/advisory.c"
build fuzz_archive "$src/tests/fuzz/fuzz_archive.c" "$src/daemon/frontend/session_archive.c"
build fuzz_record "$src/tests/fuzz/fuzz_record.c" "$src/daemon/frontend/session_record.c"
# shellcheck disable=SC2086
$cc $flags -o "$work/gen_seeds" "$src/tests/fuzz/gen_seeds.c" "$src/daemon/ipc/plan_build.c" "$src/daemon/ipc/plan_parse.c" $root_rule $common $libs
rm -rf "$work/seeds"
"$work/gen_seeds" "$work/seeds"
# The egress head parser's seeds: the heads curl and urllib send.
mkdir -p "$work/seeds/egress"
printf 'CONNECT data.test:443 HTTP/1.1\r\nHost: data.test:443\r\nUser-Agent: curl/8\r\n\r\n' \
	>"$work/seeds/egress/connect"
printf 'GET http://data.test/x?y HTTP/1.1\r\nHost: data.test\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\nbody' \
	>"$work/seeds/egress/get"
# The tool bridge's JSON lines (common/jsonscan.c): a few shapes to start from.
mkdir -p "$work/seeds/jsonscan"
printf '{"id":1,"tool":"search","args":{"q":"x","n":[1,2.5e3,null,true]}}' >"$work/seeds/jsonscan/call"
printf '{"a":"\\ud83d\\ude00\\n","b":[[[]]],"c":-0.5}' >"$work/seeds/jsonscan/value"
printf '"\303\251\342\202\254"' >"$work/seeds/jsonscan/utf8"
# The blocked_imports check (daemon/frontend/advisory.c): Python source with every form.
mkdir -p "$work/seeds/advisory"
printf 'import os.path as p, sys\nfrom a.b import (c,\n  d as e)\nx = __import__("subprocess")\n' \
	>"$work/seeds/advisory/forms"
printf 's = """import os\n"""  # import ctypes\nif x: import importlib; importlib.import_module(r"ctypes")\\\n' \
	>"$work/seeds/advisory/strings"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
# A workspace archive (python's tarfile, ustar) and a kept session's record.
mkdir -p "$work/seeds/archive" "$work/seeds/record"
python3 -c 'import io,tarfile,sys
b=io.BytesIO(); t=tarfile.open(fileobj=b,mode="w",format=tarfile.USTAR_FORMAT)
d=tarfile.TarInfo("d"); d.type=tarfile.DIRTYPE; t.addfile(d)
f=tarfile.TarInfo("d/f.txt"); f.size=5; t.addfile(f, io.BytesIO(b"hello")); t.close()
sys.stdout.buffer.write(b.getvalue())' >"$work/seeds/archive/files"
printf 'version=1\nid=0123456789abcdef0123456789abcdef\nuid=1000\nprofile=default\ninterpreter=python\nworkspace_bytes=67108864\nidle_ms=600000\nlifetime_ms=3600000\nlease_end_ms=1796653927461\ndetached=1\nbackground=0\ngids=1000,27\n' \
	>"$work/seeds/record/good"

for h in proto config plan egress bundle jsonscan advisory archive record; do
	corpus="$work/corpus-$h"
	mkdir -p "$corpus"
	# Regressions first: each committed input runs once and must pass.
	n=0
	for f in "$src/tests/fuzz/regress/$h"/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		if ! "$work/fuzz_$h" "$f" >"$work/regress-$h.log" 2>&1; then
			echo "FAIL fuzz_$h: regression input $f crashes:" >&2
			tail -30 "$work/regress-$h.log" >&2
			status=1
		fi
	done
	echo "fuzz_$h: $n regression inputs replayed"
	log="$work/fuzz-$h.log"
	if "$work/fuzz_$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$work/crash-$h-" -print_final_stats=1 \
		"$corpus" "$work/seeds/$h" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
		echo "ok fuzz_$h: $runs execs in ${secs} s, $cov, corpus $(ls "$corpus" | wc -l)"
	else
		echo "FAIL fuzz_$h: see $log; crash input(s): $(ls "$work"/crash-$h-* 2>/dev/null)" >&2
		grep -A 25 'ERROR\|runtime error' "$log" | head -40 >&2
		echo "  (commit the input under tests/fuzz/regress/$h/ once understood)" >&2
		status=1
	fi
done
exit $status
