#!/bin/sh
# checklib.sh: the helpers every check script of the host test shares
# (acceptance.sh, persist.sh run alone, upgrade_check.sh, container.sh), so
# that each prints its lines the same way. Sourced, never run. In the VM it
# is /usr/local/share/airlock-tests/host/checklib.sh (CHECKLIB below): put
# there by vm_add_checklib (tests/host/vm.sh), which vm_add_tests (the
# acceptance boot, and a HOST_CHECK= boot) and upgrade_release (the upgrade
# boot) call. CHECKLIB may name another copy (a run outside the VM, the
# host-checklib test).
#
# checklib_init SUMMARY [PREFIX]: counters at 0, a fresh 0755 $tmp; each
# check prints "ok - PREFIXNAME" or "not ok - PREFIXNAME: why", and
# checklib_summary "SUMMARY: N passed, M failed".

checklib_init() {
	checklib_summary_label=$1
	checklib_prefix=${2:-}
	passed=0
	failed=0
	tmp=$(mktemp -d)
	chmod 0755 "$tmp"
}

ok() {
	passed=$((passed + 1))
	echo "ok - $checklib_prefix$1"
}

fail() {
	failed=$((failed + 1))
	echo "not ok - $checklib_prefix$1: $2"
}

# check NAME CMD...: CMD's exit status decides; a failure shows the last
# lines CMD printed.
check() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		fail "$name" "$(printf '%s' "$out" | tail -n 5 | tr '\n' '|')"
	fi
}

# As the user agent (in group airlock), in a directory it may write.
as_agent() {
	(cd "$tmp" && runuser -u agent -- "$@")
}

# wait_for SECONDS CMD...: until CMD succeeds, at most SECONDS (an event
# with a deadline, never a fixed sleep standing for it). 1 when it never did.
wait_for() {
	limit=$1
	shift
	end=$(($(date +%s) + limit))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
}

checklib_summary() {
	echo "$checklib_summary_label: $passed passed, $failed failed"
}
