#!/bin/sh
# check_subjects.sh SRCDIR BASE: every commit after BASE has a subject of 72
# characters or fewer (the measurements go in the body). BASE is the first
# commit the rule is checked from; older history is left as it is. Prints
# each long subject with its length. Exit 77 (skip) only when SRCDIR is not
# a git checkout holding BASE (a release tarball).
set -eu
src=$1
base=$2
if ! git -C "$src" rev-parse -q --verify "$base^{commit}" >/dev/null 2>&1; then
	echo "skip: $src is not a git checkout with $base"
	exit 77
fi
bad=$(git -C "$src" log --no-merges --format='%h %s' "$base..HEAD" |
	awk '{ s = substr($0, index($0, " ") + 1); if (length(s) > 72) printf "  %s (%d)\n", $0, length(s) }')
n=$(git -C "$src" log --no-merges --format=%h "$base..HEAD" | wc -l)
if [ -n "$bad" ]; then
	echo "FAIL: subjects over 72 characters (of $n commits after $base):"
	echo "$bad"
	exit 1
fi
echo "ok: $n commits after $base, every subject 72 characters or fewer"
