#!/bin/sh
# zygote.sh: python runs through a caller's zygote (issue 33,
# docs/design-bursts.md §3.5-3.6) on a host users run: the packaged unit,
# systemd, cgroup v2 only, where the supervisor moves the zygote's child
# into the run's code cgroup through its cgroup.procs (the development
# machine has cgroup v1: nothing else runs that path). acceptance.sh
# sources it and calls zygote_checks; booted alone
# (HOST_CHECK=tests/host/zygote.sh in run.sh) it sources the same helpers
# (tests/host/checklib.sh) and prints the same summary line.
#
# zygote = yes for the python runtime goes in /etc/airlock/airlockd.conf
# (the daemon reads one file, no drop-in directory) and comes out at the
# end, so the checks after these see the default.
zygote_conf=/etc/airlock/airlockd.conf
zygote_dir=/usr/libexec/airlock
zygote_svc=/sys/fs/cgroup/system.slice/airlockd.service

# The journal's text of the unit.
zygote_journal() {
	journalctl -u airlockd.service --no-pager -o cat
}
# How many audit lines, and how many that say zygote=ran.
zygote_audits() {
	zygote_journal | grep -c 'audit run='
}
zygote_ran() {
	zygote_journal | grep 'audit run=' | grep -c ' zygote=ran'
}
zygote_more() {
	[ "$($1)" -ge "$2" ]
}
# The last audit line has every word given (a run's line, once it came).
zygote_last_says() {
	last=$(zygote_journal | grep 'audit run=' | tail -n 1)
	for w in "$@"; do
		case " $last " in *" $w "*) ;; *) return 1 ;; esac
	done
}
# The pid of agent's live zygote, from its last "started" line.
zygote_pid() {
	p=$(zygote_journal | sed -n "s/.*zygote uid $zygote_agent python: started, pid \([0-9][0-9]*\)\$/\1/p" | tail -n 1)
	[ -n "$p" ] && [ -d "/proc/$p" ] && echo "$p"
}
# A field of /proc/PID/status, tabs as blanks.
zygote_status() {
	sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" | tr '\t' ' '
}
# The cgroup v2 path of PID.
zygote_cgroup() {
	sed -n 's/^0:://p' "/proc/$1/cgroup"
}
# One python run as agent; its stdout.
zygote_run() {
	(cd "$tmp" && runuser -u agent -- airlock run "$@")
}

# The package's files, and the zygote running them (the path airlockd was
# built with, not a --zygote-dir).
zygote_files() {
	check "zygote: the package ships zygote.py and its extension in $zygote_dir" sh -c "
		dpkg -L airlockd | grep -qx $zygote_dir/zygote.py &&
		dpkg -L airlockd | grep -q '^$zygote_dir/_airlock_zygote\..*\.so\$' &&
		[ \"\$(find $zygote_dir/zygote.py $zygote_dir/_airlock_zygote.*.so -user root ! -perm /022 | wc -l)\" = 2 ]"
}

# Runs until one went through the zygote (a caller's first run asks for
# its zygote and goes the ordinary way), at most 40.
zygote_warm() {
	n0=$(zygote_ran)
	i=0
	while [ $i -lt 40 ]; do
		i=$((i + 1))
		zygote_run -c 'print(1)' >/dev/null 2>&1
		wait_for 2 zygote_more zygote_ran $((n0 + 1)) && break
	done
	check "zygote: agent's runs go through its zygote after $i runs" zygote_more zygote_ran $((n0 + 1))
}

# Five runs back to back: each one's audit line says zygote=ran.
zygote_burst() {
	a0=$(zygote_audits)
	n0=$(zygote_ran)
	outs=""
	for i in 1 2 3 4 5; do
		outs="$outs$(zygote_run -c "print($i * 7)" 2>&1)."
	done
	wait_for 20 zygote_more zygote_audits $((a0 + 5))
	a1=$(zygote_audits)
	n1=$(zygote_ran)
	check "zygote: 5 runs back to back, each zygote=ran in the journal ($((n1 - n0)) of $((a1 - a0)); output $outs)" \
		sh -c "[ '$outs' = '7.14.21.28.35.' ] && [ $((a1 - a0)) = 5 ] && [ $((n1 - n0)) = 5 ]"
}

# The zygote process: the installed files, its own uid in the per-run
# range (not the service user's, not root), no group, no capability
# (inheritable, permitted, effective, ambient), no_new_privs.
zygote_process() {
	z=$1
	cmd=$(tr '\0' ' ' <"/proc/$z/cmdline")
	script=$(readlink "/proc/$z/fd/5")
	check "zygote: its process runs the installed files ($cmd; fd 5 $script)" sh -c "
		echo '$cmd' | grep -q ' $zygote_dir/_airlock_zygote\..*\.so 3 4 \$' &&
		[ '$script' = $zygote_dir/zygote.py ]"
	uids=$(zygote_status "$z" Uid)
	gids=$(zygote_status "$z" Gid)
	groups=$(zygote_status "$z" Groups)
	# The bounding set is shown, not required empty: the spawner clears
	# the other four (spawner_zygote_nocaps()), and under no_new_privs as
	# a uid that is not 0 no exec can raise a capability from it.
	caps=$(for c in CapInh CapPrm CapEff CapAmb; do zygote_status "$z" $c; done | sort -u | tr '\n' ' ')
	bnd=$(zygote_status "$z" CapBnd)
	nnp=$(zygote_status "$z" NoNewPrivs)
	zuid=${uids%% *}
	check "zygote: its own uid in the per-run range, no group, no capability (uid $uids, gid $gids, groups '$groups', inh/prm/eff/amb $caps, bounding $bnd, no_new_privs $nnp)" sh -c "
		[ \"\$(echo $uids | tr ' ' '\n' | sort -u)\" = $zuid ] &&
		[ \"\$(echo $gids | tr ' ' '\n' | sort -u)\" = $zuid ] &&
		[ $zuid -ge 600000 ] && [ $zuid -lt 602048 ] &&
		[ $zuid != \"\$(id -u airlock)\" ] && [ -z '$groups' ] &&
		[ '$caps' = '0000000000000000 ' ] && [ '$nnp' = 1 ]"
}

# A zygote run's code, seen from the host while it waits: its cgroup is
# the run's code/ (its parent, the run's pid 1, in the same run's sup/),
# under airlockd's subtree, not the zygote's or the spawner's; its uid is
# the run's, not the zygote's. Then it is let go and ends as a run.
zygote_cgroup_check() {
	z=$1
	cat >"$tmp/zygote_wait.py" <<'PY'
import ctypes, signal
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
ctypes.CDLL(None).prctl(15, b"airlockzyg", 0, 0, 0)
print("went" if signal.sigtimedwait([signal.SIGUSR1], 90) else "timed out")
PY
	chmod 0644 "$tmp/zygote_wait.py"
	a0=$(zygote_audits)
	(cd "$tmp" && runuser -u agent -- airlock run --json --wall 120 zygote_wait.py >"$tmp/zygote_wait.json" 2>&1 &)
	c=""
	wait_for 60 pgrep -x airlockzyg && c=$(pgrep -x airlockzyg | head -n 1)
	if [ -z "$c" ]; then
		fail "zygote: the code's cgroup is its run's" "no process airlockzyg within 60 s: $(head -c 300 "$tmp/zygote_wait.json")"
	else
		s=$(zygote_status "$c" PPid)
		code_cg=$(zygote_cgroup "$c")
		sup_cg=$(zygote_cgroup "$s")
		z_cg=$(zygote_cgroup "$z")
		main=$(systemctl show -p MainPID --value airlockd.service)
		main_cg=$(zygote_cgroup "$main")
		check "zygote: the code's cgroup is its run's (code $code_cg, its pid 1 $sup_cg, zygote $z_cg, airlockd $main_cg)" sh -c "
			echo '$code_cg' | grep -qx '/system.slice/airlockd.service/runs/u[0-9]*/code' &&
			[ '$sup_cg' = '${code_cg%/code}/sup' ] &&
			[ '$code_cg' != '$z_cg' ] && [ '$code_cg' != '$main_cg' ] &&
			grep -qx $c /sys/fs/cgroup$code_cg/cgroup.procs"
		cuid=$(zygote_status "$c" Uid)
		zuid=$(zygote_status "$z" Uid)
		check "zygote: the code runs as its run's uid, not the zygote's (code ${cuid%% *}, zygote ${zuid%% *}; code caps $(zygote_status "$c" CapEff))" sh -c "
			[ ${cuid%% *} -ge 600000 ] && [ ${cuid%% *} -lt 602048 ] && [ ${cuid%% *} != ${zuid%% *} ] &&
			[ \"\$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/$c/status)\" = 0000000000000000 ]"
		# Let it go (it waits for SIGUSR1, blocked before its name is set).
		kill -USR1 "$c"
	fi
	wait_for 60 zygote_more zygote_audits $((a0 + 1))
	check "zygote: that run ends as a run, through the zygote ($(head -c 300 "$tmp/zygote_wait.json" | tr '\n' ' '))" \
		zygote_result "$tmp/zygote_wait.json" exited '"stdout":"went'
}

# zygote_result JSON OUTCOME TEXT: the run's JSON has OUTCOME and TEXT, and
# the last audit line says zygote=ran with that outcome.
zygote_result() {
	grep -q "\"outcome\":\"$2\"" "$1" && grep -qF "$3" "$1" &&
		zygote_last_says zygote=ran "outcome=$2"
}

# A zygote run past its memory limit: the code cgroup's memory.max holds
# it (oom outcome) and the zygote lives on.
zygote_memory() {
	z=$1
	a0=$(zygote_audits)
	zygote_run --json --memory 64M -c 'b = bytearray(300 << 20)
for i in range(0, len(b), 4096): b[i] = 1
print("not held")' >"$tmp/zygote_mem.json" 2>&1
	wait_for 20 zygote_more zygote_audits $((a0 + 1))
	check "zygote: 300 MiB in a 64 MiB zygote run ends memory_limit ($(head -c 200 "$tmp/zygote_mem.json" | tr '\n' ' '); audit: $(zygote_journal | grep 'audit run=' | tail -n 1 | grep -o -e 'outcome=[a-z_]*' -e 'zygote=[a-z_]*' | tr '\n' ' '))" \
		zygote_result "$tmp/zygote_mem.json" memory_limit '"outcome":"memory_limit"'
	znow=$(zygote_pid)
	check "zygote: it outlives its run's oom kill (pid $z, now ${znow:-none})" [ "$znow" = "$z" ]
}

# After systemctl stop: no zygote, no process of the per-run range, no run
# cgroup.
zygote_stop() {
	z=$1
	check "zygote: systemctl stop airlockd" systemctl stop airlockd.service
	wait_for 10 sh -c "[ ! -d /proc/$z ] && ! ps -e -o uid= | awk '\$1 >= 600000 && \$1 < 602048' | grep -q ."
	procs=$(ps -e -o uid=,pid=,args= | awk '$1 >= 600000 && $1 < 602048')
	cgs=$(find "$zygote_svc" -mindepth 1 -type d 2>/dev/null | grep -v -e '/daemon$' || true)
	check "zygote: nothing of it left after the stop (zygote pid $z; left: $(echo "$procs" "$cgs" | tr '\n' '|'))" sh -c "
		[ ! -d /proc/$z ] && [ -z '$procs' ] && [ -z '$cgs' ]"
}

zygote_checks() {
	zygote_agent=$(id -u agent)
	zygote_files
	cat >"$zygote_conf" <<'CONF'
[daemon]
zygote_idle_s = 600
[runtime python]
argv = /usr/bin/python3 -I -S -B {code}
code_name = main.py
prestart = true
zygote = yes
CONF
	chmod 0644 "$zygote_conf"
	check "zygote: systemctl restart with zygote = yes for python" systemctl restart airlockd.service
	zygote_warm
	zygote_burst
	z=$(zygote_pid)
	if [ -z "$z" ]; then
		fail "zygote: agent's zygote is running" "no live pid in its 'started' lines: $(zygote_journal | grep 'zygote uid' | tail -n 5 | tr '\n' '|')"
	else
		ok "zygote: agent's zygote is running (pid $z)"
		zygote_process "$z"
		zygote_cgroup_check "$z"
		zygote_memory "$z"
		zygote_stop "$z"
	fi
	rm -f "$zygote_conf"
	systemctl start airlockd.service
	a0=$(zygote_audits)
	out=$(zygote_run -c 'print(6 * 7)' 2>&1)
	wait_for 20 zygote_more zygote_audits $((a0 + 1))
	check "zygote: the default again: a python run, no zygote= in its audit line ($out)" sh -c "
		[ '$out' = 42 ] && ! journalctl -u airlockd.service --no-pager -o cat | grep 'audit run=' | tail -n 1 | grep -q ' zygote='"
}

if [ -z "${ZYGOTE_SOURCED:-}" ]; then
	set -u
	export LC_ALL=C.UTF-8
	# shellcheck source-path=SCRIPTDIR source=checklib.sh
	. "${CHECKLIB:-/usr/local/share/airlock-tests/host/checklib.sh}"
	checklib_init acceptance
	zygote_checks
	journalctl -u airlockd.service --no-pager -o cat | grep -e zygote -e 'audit run=' | tail -n 30
	rm -rf "$tmp"
	checklib_summary
fi
