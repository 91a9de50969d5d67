#!/bin/sh
# check_host_scripts.sh SRCDIR: the host test's scripts (tests/host/*.sh),
# which only the lead's VM boot runs, at least parse (sh -n), their shared
# helpers (tests/host/checklib.sh) print what the checks' readers expect
# (run.sh and upgrade.sh count "ok - " and "not ok - " lines), and every
# script that sources the helpers finds them in the VM: the path each names
# is the one vm_add_checklib (vm.sh) writes, which both the acceptance boot
# (vm_add_tests) and the upgrade boot (upgrade_release) call; and every
# check script a host script sources from the tests' tree in the VM
# (persist.sh, zygote.sh) is where vm_add_tests puts it. Suite layout.
set -u
src=$1
host=$src/tests/host
bad=0
say_bad() {
	echo "FAIL: $*"
	bad=1
}

for f in "$host"/*.sh; do
	sh -n "$f" || say_bad "$f does not parse"
done

# The helpers, in a subshell of their own.
want='ok - demo: passes
not ok - demo: fails: why
ok - demo: by hand
not ok - demo: by hand too: because
waited
gave up
demo: 2 passed, 2 failed'
got=$(
	# shellcheck source=tests/host/checklib.sh
	. "$host/checklib.sh"
	checklib_init demo "demo: "
	[ -d "${tmp:-}" ] || echo "no tmp"
	check "passes" true
	check "fails" sh -c 'echo why; false'
	ok "by hand"
	fail "by hand too" "because"
	wait_for 5 true && echo waited
	wait_for 1 false || echo "gave up"
	checklib_summary
	rm -rf "$tmp"
)
[ "$got" = "$want" ] || say_bad "checklib.sh printed:
$got
--- instead of:
$want"

# Where the VM has them: vm_add_tests into an empty root.
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
(. "$host/vm.sh" && vm_add_tests "$root" "$src") || say_bad "vm_add_tests failed"
for f in "$host"/*.sh; do
	path=$(sed -n 's/^[[:space:]]*\. "\${CHECKLIB:-\(.*\)}"$/\1/p' "$f")
	[ -n "$path" ] || continue
	for p in $path; do
		[ -f "$root$p" ] || say_bad "${f#"$src"/} sources $p, which vm_add_tests does not put there"
	done
done
# And every check script a host script sources from the tests' tree in the
# VM (persist.sh, zygote.sh: ". /usr/local/share/airlock-tests/...").
for f in "$host"/*.sh; do
	for p in $(sed -n 's|^[[:space:]]*\. \(/usr/local/share/airlock-tests/[^[:space:]]*\)$|\1|p' "$f"); do
		[ -f "$root$p" ] || say_bad "${f#"$src"/} sources $p, which vm_add_tests does not put there"
	done
done
# The upgrade boot's root is not made by vm_add_tests: upgrade_release puts
# the helpers in before vm_prepare installs upgrade_check.sh.
sed -n '/^upgrade_release()/,/^}/p' "$host/upgrade.sh" |
	awk '/vm_add_checklib "\$root"/ { c = NR } /vm_prepare "\$root" "\$here\/upgrade_check.sh"/ { p = NR } END { exit !(c && p && c < p) }' ||
	say_bad "upgrade_release does not vm_add_checklib its root before vm_prepare (upgrade_check.sh sources it)"
n=$(grep -l 'CHECKLIB:-' "$host"/*.sh | wc -l)
[ "$n" -ge 4 ] || say_bad "only $n scripts source checklib.sh (acceptance, persist, upgrade_check, container)"
[ $bad = 0 ] && echo "ok: $(ls "$host"/*.sh | wc -l) host scripts parse; checklib.sh prints as expected; $n scripts find it in the VM"
exit $bad
