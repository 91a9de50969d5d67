#!/bin/sh
# check-symbols.sh LIB MAP: fail unless LIB exports exactly the symbols MAP lists,
# each in version node AIRLOCK_0.1 (and the node itself), nothing else.
set -eu
lib=$1
map=$2
nm=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names in the map's global: section.
sed -n '/global:/,/local:/p' "$map" | sed -n 's/^[[:space:]]*\(airlock_[a-z0-9_]*\);.*/\1/p' |
	sort >"$tmp/want"
[ -s "$tmp/want" ] || { echo "no symbols found in $map" >&2; exit 1; }

# Every defined dynamic symbol, with its version.
"$nm" -D --defined-only "$lib" | awk '{print $NF}' | sort >"$tmp/got"

status=0
while read -r sym; do
	case $sym in
	AIRLOCK_0.1) ;;
	airlock_*@@AIRLOCK_0.1)
		echo "${sym%@@AIRLOCK_0.1}" >>"$tmp/exported" ;;
	*)
		echo "unexpected export: $sym" >&2
		status=1 ;;
	esac
done <"$tmp/got"
touch "$tmp/exported"
sort -o "$tmp/exported" "$tmp/exported"
if ! diff -u "$tmp/want" "$tmp/exported" >"$tmp/diff"; then
	echo "exports differ from $map (- listed only, + exported only):" >&2
	cat "$tmp/diff" >&2
	status=1
fi
n=$(wc -l <"$tmp/exported")
[ "$status" -eq 0 ] && echo "ok: $n symbols, all in AIRLOCK_0.1"
exit $status
