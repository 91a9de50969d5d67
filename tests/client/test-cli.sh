#!/bin/sh
# test-cli.sh AIRLOCK FAKE_DAEMON: the airlock command end to end against a
# fake daemon that answers from a script (see fake_daemon.c).
set -u
airlock=$1
fake=$2
tmp=$(mktemp -d)
sock=$tmp/airlock.sock
fails=0
"$fake" "$sock" &
fpid=$!
trap 'kill $fpid 2>/dev/null; rm -rf "$tmp" /tmp/airlock-fake-abs' EXIT
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
export AIRLOCK_SOCKET=$sock

# expect NAME WANT_STATUS -- CMD...: run CMD, check its status.
expect() {
	name=$1 want=$2
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL $name: status $got, want $want; stderr:" >&2
		cat "$tmp/err" >&2
		fails=$((fails + 1))
	else
		echo "ok $name"
	fi
}

# has NAME FILE TEXT: FILE contains TEXT.
has() {
	if grep -qF -- "$3" "$2"; then
		echo "ok $1"
	else
		echo "FAIL $1: $2 lacks '$3':" >&2
		cat "$2" >&2
		fails=$((fails + 1))
	fi
}

expect ping 0 -- "$airlock" ping
has ping-out "$tmp/out" "pong "
expect ping-json 0 -- "$airlock" ping --json
has ping-json-out "$tmp/out" '"pong":true'
expect info 0 -- "$airlock" info
has info-runtimes "$tmp/out" "runtimes: python sh exec"
has info-wall "$tmp/out" "wall_ms"
expect info-json 0 -- "$airlock" --json info
has info-json-out "$tmp/out" '"wall_ms":{"default":10000,"ceiling":60000}'

expect exit-0 0 -- "$airlock" run -c exit:0
has exit-0-stdout "$tmp/out" "out"
has exit-0-stderr "$tmp/err" "err"
expect exit-7 7 -- "$airlock" run -c exit:7
expect signal 137 -- "$airlock" run -c signal:9
expect wall 120 -- "$airlock" run -c wall
has wall-reason "$tmp/err" "wall-clock limit"
expect cpu 121 -- "$airlock" run -c cpu
expect memory 122 -- "$airlock" run -c memory
expect error 123 -- "$airlock" run -c error
has error-reason "$tmp/err" "mount workspace: ENOSPC"
expect busy 69 -- "$airlock" run -c busy
has busy-reason "$tmp/err" "busy: uid 1000 has 4 runs"
expect unreachable 69 -- "$airlock" --socket "$tmp/none" ping
has unreachable-reason "$tmp/err" "$tmp/none"
expect usage 2 -- "$airlock" run --memory 12Q -c exit:0
has usage-reason "$tmp/err" "--memory 12Q"
expect no-code 2 -- "$airlock" run
expect missing-file 66 -- "$airlock" run "$tmp/missing.py"

expect json 3 -- "$airlock" run --json -c exit:3
has json-outcome "$tmp/out" '"outcome":"exited","exit_code":3'
has json-stdout "$tmp/out" '"stdout":"out\n"'
has json-artifacts "$tmp/out" '"artifacts":[]'
expect json-binary 0 -- "$airlock" run -c binary --json
has json-b64 "$tmp/out" '"stdout_base64":"b2v//gA="'

printf 'hello stdin' >"$tmp/in"
printf 'data' >"$tmp/data.csv"
expect exec 0 -- "$airlock" run --lang exec --stdin "$tmp/in" --env A=1 --wall 1.5 \
	--file "$tmp/data.csv" --file x/y="$tmp/in" --arg --extra -- /bin/echo hi
has exec-stdin "$tmp/out" "hello stdin"
has exec-argv "$tmp/err" "--extra /bin/echo hi A=1 wall_ms=1500 files=2"

mkdir "$tmp/arts"
ln -s /tmp "$tmp/arts/sub"
expect artifacts 73 -- "$airlock" run -c artifacts --artifacts "$tmp/arts"
has artifacts-ok "$tmp/arts/ok.txt" "ok"
has artifacts-evil "$tmp/err" "artifact ../evil: not written"
has artifacts-abs "$tmp/err" "artifact /tmp/airlock-fake-abs: not written"
has artifacts-symlink "$tmp/err" "artifact sub/dir/x: not written"
if [ -e /tmp/airlock-fake-abs ] || [ -e "$tmp/evil" ] || [ -e /tmp/dir/x ]; then
	echo "FAIL artifacts-escaped: a file was written outside DIR" >&2
	fails=$((fails + 1))
fi

[ "$fails" -eq 0 ] || { echo "$fails failures" >&2; exit 1; }
echo "all passed"
