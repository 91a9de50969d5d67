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
log=$tmp/log
"$fake" "$sock" "$ps" "$log" &
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

# A cut ps list (issue 32): the runs left out are counted on stderr, in
# both forms; the JSON stays the list of runs.
printf '17 1000 4321 python running 1500\nmore 300\n' >"$ps"
expect ps-more 0 -- "$airlock" ps
line ps-more-row "$tmp/out" "17 +python +running +1\\.5s +4321"
has ps-more-note "$tmp/err" "airlock: ps: 300 more runs not listed"
expect ps-more-json 0 -- "$airlock" --json ps
line ps-more-json-out "$tmp/out" '\[\{"id":17,.*\}\]'
has ps-more-json-note "$tmp/err" "airlock: ps: 300 more runs not listed"
printf '17 1000 4321 python running 1500\n' >"$ps"
expect ps-whole 0 -- "$airlock" ps
lacks ps-whole-note "$tmp/err" "not listed"

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
has cancel-not-found-reason "$tmp/err" "cancel 99: no run 99 of uid 1000"
expect cancel-bad-id 2 -- "$airlock" cancel 12x
has cancel-bad-id-reason "$tmp/err" "cancel 12x: not a run id"
expect cancel-zero 2 -- "$airlock" cancel 0
expect cancel-too-big 2 -- "$airlock" cancel 4294967296
expect cancel-missing 2 -- "$airlock" cancel
expect cancel-two 2 -- "$airlock" cancel 17 19
expect cancel-unreachable 69 -- "$airlock" --socket "$tmp/none" cancel 17

# Sessions: open prints the id alone; its options reach the daemon.
sid=0123456789abcdef0123456789abcdef
expect session-open 0 -- "$airlock" session open --workspace 64M --idle 30 --lifetime 1.5 \
	--wall 2 --cpu 0.5 --memory 128M --limit processes=7
line session-open-id "$tmp/out" "$sid"
[ "$(wc -l <"$tmp/out")" -eq 1 ] && [ ! -s "$tmp/err" ] && echo "ok session-open-alone" ||
	{ echo "FAIL session-open-alone: more than the id" >&2; fails=$((fails + 1)); }
line session-open-opts "$log" "session_open workspace=67108864 idle=30000 lifetime=1500 wall=2000 cpu=500 memory=134217728 processes=7"
expect session-open-json 0 -- "$airlock" --json session open
line session-open-json-out "$tmp/out" "\\{\"id\":\"$sid\"\\}"
line session-open-defaults "$log" "session_open workspace=0 idle=0 lifetime=0 wall=0 cpu=0 memory=0 processes=0"
# Every limit option of run is one of session open too (the table of limits).
expect session-open-processes 0 -- "$airlock" session open --processes 9 --output 1K
line session-open-processes-opts "$log" "session_open workspace=0 idle=0 lifetime=0 wall=0 cpu=0 memory=0 processes=9"
# --limit NAME=VALUE parses by the limit's kind: a count takes no fraction.
expect limit-count-kind 2 -- "$airlock" run --limit artifacts=1.5 -c exit:0
has limit-count-kind-reason "$tmp/err" "--limit artifacts=1.5: malformed value"
# --mount takes a [mount] name, never a host path; at most 16.
expect mount-path 2 -- "$airlock" run --mount /srv/data -c exit:0
has mount-path-reason "$tmp/err" "--mount /srv/data: not a mount name"
expect mount-many 2 -- "$airlock" run --mount a --mount b --mount c --mount d --mount e \
	--mount f --mount g --mount h --mount i --mount j --mount k --mount l --mount m \
	--mount n --mount o --mount p --mount q -c exit:0
has mount-many-reason "$tmp/err" "--mount q: more than 16 mounts"
expect mount-session-open 2 -- "$airlock" session open --mount data
expect session-open-bad 2 -- "$airlock" session open --idle soon
has session-open-bad-reason "$tmp/err" "--idle soon"
expect session-open-extra 2 -- "$airlock" session open extra
expect session-bad-sub 2 -- "$airlock" session frob
expect session-ls 0 -- "$airlock" session ls
line session-ls-header "$tmp/out" "ID +AGE +IDLE +RUNS +STATE +INTERPRETER +BACKGROUND"
line session-ls-row "$tmp/out" "$sid +1m05s +1\\.5s +0 +idle +- +-"
expect session-ls-json 0 -- "$airlock" session ls --json
line session-ls-json-out "$tmp/out" "\\[\\{\"id\":\"$sid\",\"age_ms\":65000,\"idle_ms\":1500,\"runs\":0,\"state\":\"idle\"\\}\\]"
# --background (issue 30): sent, and shown by session ls and its --json.
expect session-open-background 0 -- "$airlock" session open --interpreter python --background
expect session-ls-background 0 -- "$airlock" session ls
line session-ls-background-row "$tmp/out" "$sid +1m05s +1\\.5s +0 +idle +- +yes"
expect session-ls-background-json 0 -- "$airlock" session ls --json
has session-ls-background-json-out "$tmp/out" '"background":true'
expect session-open-background-bad 2 -- "$airlock" session open --background=yes
# session ps and session kill of a background session (issue 30).
expect session-ps 0 -- "$airlock" session ps "$sid"
line session-ps-header "$tmp/out" " +PID NAME +CPU +MEMORY"
line session-ps-row "$tmp/out" " +9 python3 +1\\.5s +41943040"
expect session-ps-json 0 -- "$airlock" --json session ps "$sid"
has session-ps-json-out "$tmp/out" '{"pid":7,"name":"sleep","cpu_ms":0,"memory_bytes":1048576}'
expect session-kill 0 -- "$airlock" session kill "$sid" 9
expect session-kill-gone 1 -- "$airlock" session kill "$sid" 8
has session-kill-gone-reason "$tmp/err" "no such process"
expect session-kill-bad-pid 2 -- "$airlock" session kill "$sid" -3
expect session-kill-zero 2 -- "$airlock" session kill "$sid" 0
expect session-ps-bad-id 2 -- "$airlock" session ps nothex
expect session-ps-args 2 -- "$airlock" session ps
expect session-open-plain 0 -- "$airlock" session open
expect session-ps-plain 69 -- "$airlock" session ps "$sid"
has session-ps-plain-reason "$tmp/err" "no background processes"

# put (a file and stdin), get (stdout and an atomic file), files, rm.
printf 'file data' >"$tmp/local"
expect put 0 -- "$airlock" put "$sid" "$tmp/local" f.txt
[ -s "$tmp/out" ] && { echo "FAIL put-quiet" >&2; fails=$((fails + 1)); } || echo "ok put-quiet"
printf 'from stdin' | "$airlock" put "$sid" - in.txt && echo "ok put-stdin" ||
	{ echo "FAIL put-stdin" >&2; fails=$((fails + 1)); }
head -c 200000 /dev/urandom >"$tmp/big"
expect put-big 0 -- "$airlock" put "$sid" "$tmp/big" big
expect put-full 69 -- "$airlock" put "$sid" "$tmp/local" full
has put-full-reason "$tmp/err" "too_large: full: No space left on device"
expect put-escape 69 -- "$airlock" put "$sid" "$tmp/local" ../x
has put-escape-reason "$tmp/err" "bad_request: path leaves the workspace"
expect put-missing-local 66 -- "$airlock" put "$sid" "$tmp/nothing" x
expect put-empty-remote 2 -- "$airlock" put "$sid" "$tmp/local" ""
expect put-bad-id 2 -- "$airlock" put nope "$tmp/local" x
has put-bad-id-reason "$tmp/err" "nope: not a session id"
# Every command whose first operand is a SESSION checks it (the command table).
for cmd in "get nope x -" "files nope" "rm nope x" "session close nope"; do
	what=$(echo "$cmd" | cut -d' ' -f1-2 | tr ' ' -)
	# shellcheck disable=SC2086
	expect "$what-bad-id" 2 -- "$airlock" $cmd
	has "$what-bad-id-reason" "$tmp/err" "nope: not a session id"
done
expect get-stdout 0 -- "$airlock" get "$sid" in.txt -
line get-stdout-data "$tmp/out" "from stdin"
ln -s "$tmp/target" "$tmp/got"
expect get-file 0 -- "$airlock" get "$sid" f.txt "$tmp/got"
if [ ! -L "$tmp/got" ] && [ "$(cat "$tmp/got")" = "file data" ] && [ ! -e "$tmp/target" ]; then
	echo "ok get-file-replaces-link"
else
	echo "FAIL get-file-replaces-link: the link was followed or the data is wrong" >&2
	fails=$((fails + 1))
fi
if ls -A "$tmp" | grep -q '\.tmp$'; then
	echo "FAIL get-no-temp: a temporary file was left" >&2; fails=$((fails + 1))
else
	echo "ok get-no-temp"
fi
expect get-truncated 0 -- "$airlock" get "$sid" big "$tmp/big.out"
has get-truncated-warn "$tmp/err" "big: truncated to 100000 of 200000 bytes"
if [ "$(wc -c <"$tmp/big.out")" -eq 100000 ] && head -c 100000 "$tmp/big" | cmp -s - "$tmp/big.out"; then
	echo "ok get-truncated-data"
else
	echo "FAIL get-truncated-data" >&2; fails=$((fails + 1))
fi
expect get-missing 1 -- "$airlock" get "$sid" nothing "$tmp/nothing"
has get-missing-reason "$tmp/err" "get: not found: No such file or directory"
[ -e "$tmp/nothing" ] && { echo "FAIL get-missing-created" >&2; fails=$((fails + 1)); } || echo "ok get-missing-created"
expect get-no-dir 73 -- "$airlock" get "$sid" f.txt "$tmp/no/such/dir"
expect files 0 -- "$airlock" files "$sid"
line files-header "$tmp/out" "KIND +SIZE +MTIME +NAME"
line files-file "$tmp/out" "file +9 +2023-11-14T22:13:20Z +f.txt"
line files-dir "$tmp/out" "dir +60 +2023-11-14T22:13:20Z +sub"
line files-link "$tmp/out" "link +4 +1970-01-01T00:00:00Z +lnk"
line files-escaped "$tmp/out" "other +0 +1970-01-01T00:00:00Z +a\\\\x0ab"
expect files-json 0 -- "$airlock" files --json "$sid"
has files-json-out "$tmp/out" '{"kind":"file","size":9,"mtime_ms":1700000000123,"name":"f.txt"}'
has files-json-newline "$tmp/out" '"name":"a\nb"'
expect files-subdir-missing 1 -- "$airlock" files "$sid" nodir
expect files-extra 2 -- "$airlock" files "$sid" a b
# --json answers every command, success included (issue 32): put, get to a
# file and rm print one JSON object; get to stdout prints the bytes.
expect put-json 0 -- "$airlock" --json put "$sid" "$tmp/local" g.txt
line put-json-out "$tmp/out" '\{"session":"'"$sid"'","bytes":9,"name":"g.txt"\}'
expect get-json 0 -- "$airlock" --json get "$sid" g.txt "$tmp/g.out"
line get-json-out "$tmp/out" '\{"session":"'"$sid"'","bytes":9,"size":9,"truncated":false,"name":"g.txt"\}'
expect get-json-stdout 0 -- "$airlock" --json get "$sid" g.txt -
line get-json-stdout-data "$tmp/out" "file data"
expect rm-json 0 -- "$airlock" --json rm "$sid" g.txt
line rm-json-out "$tmp/out" '\{"session":"'"$sid"'","deleted":true,"name":"g.txt"\}'
expect rm 0 -- "$airlock" rm "$sid" f.txt
[ -s "$tmp/out" ] && { echo "FAIL rm-quiet" >&2; fails=$((fails + 1)); } || echo "ok rm-quiet"
expect rm-again 1 -- "$airlock" rm "$sid" f.txt

# run --session and --stream.
expect run-session 0 -- "$airlock" run --session "$sid" --lang exec -- /bin/true
has run-session-sent "$tmp/err" "session=$sid"
expect run-session-bad 2 -- "$airlock" run --session 12 -c exit:0
expect stream 0 -- "$airlock" run --stream -c stream
if [ "$(cat "$tmp/out")" = "$(printf 'one\nthree')" ] && [ "$(cat "$tmp/err")" = "two" ]; then
	echo "ok stream-once"
else
	echo "FAIL stream-once: output printed twice or lost:" >&2; cat "$tmp/out" "$tmp/err" >&2
	fails=$((fails + 1))
fi
expect nostream 0 -- "$airlock" run -c stream
line nostream-out "$tmp/out" "three"
expect stream-exit 7 -- "$airlock" run --stream -c exit:7
# --stream --json: JSON lines, the output as it comes, then the result.
expect stream-json 0 -- "$airlock" run --stream --json -c stream
if python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert [(l["event"], l.get("stream"), l.get("data")) for l in lines[:3]] == [
    ("output", "stdout", "one\n"), ("output", "stderr", "two\n"), ("output", "stdout", "three\n")], lines
assert lines[3]["event"] == "result" and lines[3]["outcome"] == "exited" and len(lines) == 4, lines
' "$tmp/out"; then
	echo "ok stream-json-lines"
else
	echo "FAIL stream-json-lines" >&2; cat "$tmp/out" >&2; fails=$((fails + 1))
fi

# Issue 16: options end at the program (docker, bwrap, systemd-run).
printf 'print(1)\n' >"$tmp/prog.py"
expect opts-end 0 -- "$airlock" run --lang exec /bin/prog --wall 1 x
has opts-end-argv "$tmp/err" "/bin/prog --wall 1 x wall_ms=0"
expect opts-end-file 0 -- "$airlock" run --lang exec -- /bin/prog -c y
has opts-end-file-argv "$tmp/err" "/bin/prog -c y wall_ms=0"
# Per-command help, --version, mcp in the usage.
expect help-run 0 -- "$airlock" run --help
has help-run-out "$tmp/out" "--force"
lacks help-run-only "$tmp/out" "session close"
expect help-session 0 -- "$airlock" session --help
has help-session-out "$tmp/out" "session open"
expect help-session-open 0 -- "$airlock" session open --help
expect help-files 0 -- "$airlock" files --help
has help-files-out "$tmp/out" "files SESSION [DIR]"
expect help-global 0 -- "$airlock" --help
has help-global-mcp "$tmp/out" " mcp "

# A usage error prints a short usage (issue 32): the command's synopsis and
# where the help is, not the whole help.
expect usage-short-ps 2 -- "$airlock" ps extra
has usage-short-ps-synopsis "$tmp/err" "usage: airlock [--socket PATH] [--json] ps"
has usage-short-ps-more "$tmp/err" "Try 'airlock ps --help' for more."
lacks usage-short-ps-only "$tmp/err" "session close"
expect usage-short-run 2 -- "$airlock" run --no-such-option -c exit:0
has usage-short-run-more "$tmp/err" "Try 'airlock run --help' for more."
lacks usage-short-run-no-help "$tmp/err" "--force"
expect usage-short-none 2 -- "$airlock"
has usage-short-none-commands "$tmp/err" "commands: ping info ps cancel run session"
[ "$(wc -l <"$tmp/err")" -le 5 ] && echo "ok usage-short-none-lines" ||
	{ echo "FAIL usage-short-none-lines: $(wc -l <"$tmp/err") lines" >&2; cat "$tmp/err" >&2; fails=$((fails + 1)); }
expect usage-short-unknown 2 -- "$airlock" frob
has usage-short-unknown-more "$tmp/err" "Try 'airlock --help' for more."
expect version 0 -- "$airlock" --version
has version-out "$tmp/out" "(libairlock 0.10"
# --json errors are JSON on stdout.
expect json-error 69 -- "$airlock" --json --socket "$tmp/none" ping
has json-error-out "$tmp/out" '{"error":{"code":"unreachable","message":"connect to '
expect json-error-refused 69 -- "$airlock" run --json -c busy
has json-error-refused-out "$tmp/out" '"code":"busy"'
expect json-error-usage 2 -- "$airlock" run --json --memory 12Q -c exit:0
has json-error-usage-out "$tmp/out" '"status":2'
# --force: artifacts replace files in an existing directory.
mkdir -p "$tmp/arts2"
echo old >"$tmp/arts2/ok.txt"
expect artifacts-exists 73 -- "$airlock" run -c artifacts --artifacts "$tmp/arts2"
has artifacts-exists-why "$tmp/err" "artifact ok.txt: not written below $tmp/arts2: a file is there (--force replaces it)"
has artifacts-exists-kept "$tmp/arts2/ok.txt" "old"
expect artifacts-force 73 -- "$airlock" run -c artifacts --artifacts "$tmp/arts2" --force
has artifacts-force-ok "$tmp/arts2/ok.txt" "ok"
lacks artifacts-force-evil "$tmp/err" "artifact ok.txt"
expect force-alone 2 -- "$airlock" run --force -c exit:0

# Closing ends it: every later use is not_found, a run 125.
expect session-close 0 -- "$airlock" --json session close "$sid"
line session-close-json-out "$tmp/out" '\{"id":"'"$sid"'","closed":true\}'
expect session-close-again 1 -- "$airlock" session close "$sid"
has session-close-again-reason "$tmp/err" "session close: not found: no such session"
expect session-close-bad 2 -- "$airlock" session close xyz
expect session-close-missing 2 -- "$airlock" session close
expect put-closed 1 -- "$airlock" put "$sid" "$tmp/local" x
expect get-closed 1 -- "$airlock" get "$sid" x -
expect files-closed 1 -- "$airlock" files "$sid"
expect run-closed 125 -- "$airlock" run --session "$sid" -c exit:0
has run-closed-reason "$tmp/err" "not_found: no such session"
expect session-ls-empty 0 -- "$airlock" session ls
[ "$(wc -l <"$tmp/out")" -eq 1 ] && echo "ok session-ls-empty-lines" ||
	{ echo "FAIL session-ls-empty-lines" >&2; fails=$((fails + 1)); }
expect session-unreachable 69 -- "$airlock" --socket "$tmp/none" session ls

[ "$fails" -eq 0 ] || { echo "$fails failures" >&2; exit 1; }
echo "all passed"
