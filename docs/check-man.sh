#!/bin/sh
# check-man.sh MANDIR [MAP]: render every page in MANDIR with groff (all
# warnings on) and fail on any warning or error it prints; with MAP (the
# library's version script), also fail unless libairlock.3 names every
# function MAP exports.
set -u
dir=$1
map=${2-}
status=0
command -v groff >/dev/null 2>&1 ||
	{ echo "groff not found: install groff-base (scripts/deps.sh)" >&2; exit 1; }
n=0
for page in "$dir"/*.[1-9]; do
	[ -e "$page" ] || continue
	n=$((n + 1))
	# -t: tbl, as man(1) runs it (the pages with tables say so on line 1).
	out=$(groff -t -man -Tutf8 -ww -z "$page" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
		echo "FAIL $page (groff status $rc):" >&2
		printf '%s\n' "$out" >&2
		status=1
	else
		echo "ok $page"
	fi
done
[ "$n" -gt 0 ] || { echo "no man pages in $dir" >&2; exit 1; }
if [ -n "$map" ]; then
	for sym in $(sed -n 's/^[[:space:]]*\(airlock_[a-z0-9_]*\);.*/\1/p' "$map"); do
		if ! grep -q "[^a-z0-9_]$sym(" "$dir/libairlock.3"; then
			echo "FAIL libairlock.3 does not declare $sym" >&2
			status=1
		fi
	done
	[ "$status" -eq 0 ] && echo "ok libairlock.3 declares every exported function"
fi
exit $status
