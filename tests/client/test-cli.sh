#!/bin/sh
# test-cli.sh AIRLOCK FAKE_DAEMON: the airlock command end to end against a
# fake daemon that answers from a script (see fake_daemon.c).
set -u
airlock=$1
fake=$2
tmp=$(mktemp -d)
sock=$tmp/airlock.sock
fails=0
ps=$tmp/ps
"$fake" "$sock" "$ps" &
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

# lacks NAME FILE TEXT: FILE does not contain TEXT.
lacks() {
	if grep -qF -- "$3" "$2"; then
		echo "FAIL $1: $2 has '$3':" >&2
		cat "$2" >&2
		fails=$((fails + 1))
	else
		echo "ok $1"
	fi
}

# line NAME FILE REGEX: a whole line of FILE matches the extended REGEX.
line() {
	if grep -qE -- "^$3\$" "$2"; then
		echo "ok $1"
	else
		echo "FAIL $1: no line of $2 matches '$3':" >&2
		cat "$2" >&2
		fails=$((fails + 1))
	fi
}

expect cancelled 124 -- "$airlock" run -c cancelled
has cancelled-reason "$tmp/err" "airlock: cancelled"
has cancelled-stdout "$tmp/out" "out"
expect cancelled-json 124 -- "$airlock" run --json -c cancelled
has cancelled-json-outcome "$tmp/out" '"outcome":"cancelled"'

# ps with no runs: the header only; JSON an empty list.
: >"$ps"
expect ps-empty 0 -- "$airlock" ps
line ps-empty-header "$tmp/out" "ID +RUNTIME +STATE +ELAPSED +PID"
[ "$(wc -l <"$tmp/out")" -eq 1 ] && echo "ok ps-empty-lines" ||
	{ echo "FAIL ps-empty-lines: more than the header" >&2; cat "$tmp/out" >&2; fails=$((fails + 1)); }
expect ps-empty-json 0 -- "$airlock" ps --json
line ps-empty-json-out "$tmp/out" '\[\]'

# ps with the caller's own runs (the fake's info says uid 1000): no UID column.
printf '17 1000 4321 python running 1500\n18 1000 0 sh queued 65000\n' >"$ps"
expect ps 0 -- "$airlock" ps
line ps-header "$tmp/out" "ID +RUNTIME +STATE +ELAPSED +PID"
line ps-running "$tmp/out" "17 +python +running +1\\.5s +4321"
line ps-queued "$tmp/out" "18 +sh +queued +1m05s +-"
lacks ps-no-uid "$tmp/out" "UID"
expect ps-json 0 -- "$airlock" --json ps
line ps-json-out "$tmp/out" '\[\{"id":17,"runtime":"python","state":"running","elapsed_ms":1500,"pid":4321,"uid":1000\},\{"id":18,"runtime":"sh","state":"queued","elapsed_ms":65000,"pid":0,"uid":1000\}\]'
if python3 -c 'import json, sys; l = json.load(open(sys.argv[1])); assert [e["id"] for e in l] == [17, 18]' "$tmp/out" 2>/dev/null; then
	echo "ok ps-json-parses"
else
	echo "FAIL ps-json-parses" >&2; fails=$((fails + 1))
fi

# A run of another uid (as root sees them): the UID column appears.
printf '17 1000 4321 python running 1500\n19 0 99 exec running 3600000\n' >"$ps"
expect ps-uid 0 -- "$airlock" ps
line ps-uid-header "$tmp/out" "ID +UID +RUNTIME +STATE +ELAPSED +PID"
line ps-uid-own "$tmp/out" "17 +1000 +python +running +1\\.5s +4321"
line ps-uid-other "$tmp/out" "19 +0 +exec +running +1h00m +99"
expect ps-extra-arg 2 -- "$airlock" ps 17

# cancel by run id: ok, not_found, bad ids.
expect cancel 0 -- "$airlock" cancel 17
[ -s "$tmp/out" ] && { echo "FAIL cancel-quiet: printed something" >&2; fails=$((fails + 1)); } || echo "ok cancel-quiet"
expect cancel-json 0 -- "$airlock" cancel --json 19
line cancel-json-out "$tmp/out" '\{"id":19,"cancelled":true\}'
expect cancel-not-found 1 -- "$airlock" cancel 99
has cancel-not-found-reason "$tmp/err" "cancel 99: no such run of yours in progress"
expect cancel-bad-id 2 -- "$airlock" cancel 12x
has cancel-bad-id-reason "$tmp/err" "cancel 12x: not a run id"
expect cancel-zero 2 -- "$airlock" cancel 0
expect cancel-too-big 2 -- "$airlock" cancel 4294967296
expect cancel-missing 2 -- "$airlock" cancel
expect cancel-two 2 -- "$airlock" cancel 17 19
expect cancel-unreachable 69 -- "$airlock" --socket "$tmp/none" cancel 17

[ "$fails" -eq 0 ] || { echo "$fails failures" >&2; exit 1; }
echo "all passed"
