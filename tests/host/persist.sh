#!/bin/sh
# persist.sh: sessions outlive `systemctl restart airlockd` (issue 30,
# point 5; docs/design-sessions.md), in the host-test VM under the packaged
# unit (StateDirectory=airlock). acceptance.sh sources it and calls
# persist_checks; booted alone (HOST_CHECK=tests/host/persist.sh in run.sh)
# it sources the same helpers (tests/host/checklib.sh) and prints the same
# summary line.
store=/var/lib/airlock/sessions

# persist_wait_idle SID: until `airlock session ls` lists SID idle (a
# restored session is listed running while its files go back), at most 30 s.
persist_wait_idle() {
	wait_for 30 persist_is_idle "$1"
}
persist_is_idle() {
	as_agent airlock --json session ls 2>/dev/null |
		python3 -c 'import json,sys; sys.exit(not any(s["id"] == sys.argv[1] and s["state"] == "idle" for s in json.load(sys.stdin)))' "$1"
}

persist_checks() {
	sid=$(as_agent airlock --json session open --lifetime 900 2>"$tmp/persist.err" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>/dev/null)
	if [ -z "$sid" ]; then
		fail "a session opens for the restart" "$(head -c 300 "$tmp/persist.err")"
		return
	fi
	ok "a session opens for the restart"
	printf 'kept across a restart\n' | as_agent airlock put "$sid" - notes/kept.txt >/dev/null
	as_agent airlock run --session "$sid" -c "open('/workspace/by_run', 'w').write('run\n')" >/dev/null
	# Its snapshot follows each step: wait until the kept archive has the run's file.
	wait_for 30 sh -c "tar -tf '$store/$sid.tar' | grep -qx by_run"
	check "the kept archive has the session's files" sh -c "tar -tf $store/$sid.tar | grep -qx notes/kept.txt"
	check "sessions/ is 0700, the service user's" sh -c "[ \"\$(stat -c '%a %U' $store)\" = '700 airlock' ]"
	check "systemctl restart airlockd" systemctl restart airlockd.service
	persist_wait_idle "$sid"
	check "the session is back after the restart" sh -c "cd $tmp && runuser -u agent -- airlock --json session ls | grep -q $sid"
	check "a restart keeps a file put" sh -c "cd $tmp && runuser -u agent -- airlock get $sid notes/kept.txt - | grep -qx 'kept across a restart'"
	check "a restart keeps a file a run wrote" sh -c "cd $tmp && runuser -u agent -- airlock get $sid by_run - | grep -qx run"
	check "the restored session takes runs" sh -c "cd $tmp && runuser -u agent -- airlock run --session $sid -c \"print(open('/workspace/by_run').read(), end='')\" | grep -qx run"
	check "another user does not find it" sh -c "cd $tmp && ! runuser -u stranger -- airlock get $sid by_run - 2>/dev/null"
	as_agent airlock session close "$sid" >/dev/null 2>&1
	check "a closed session leaves nothing kept" sh -c "! ls $store/$sid.* 2>/dev/null"
}

if [ -z "${PERSIST_SOURCED:-}" ]; then
	set -u
	export LC_ALL=C.UTF-8
	# shellcheck source-path=SCRIPTDIR source=checklib.sh
	. "${CHECKLIB:-/usr/local/share/airlock-tests/host/checklib.sh}"
	checklib_init acceptance
	persist_checks
	journalctl -u airlockd.service --no-pager | grep -e session -e 'kept in' | tail -n 20
	rm -rf "$tmp"
	checklib_summary
fi
