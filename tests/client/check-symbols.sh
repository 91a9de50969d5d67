#!/bin/sh
# check-symbols.sh LIB MAP: fail unless LIB exports exactly the symbols MAP lists,
# each in the version node MAP lists it in (and the nodes themselves), nothing else,
# and calls no exit or abort.
set -eu
lib=$1
map=$2
nm=${NM:-nm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "name@@NODE" for every name in a global: section, by the node it is in;
# the node names on their own.
awk '
	/^[[:space:]]*AIRLOCK_[0-9.]+[[:space:]]*\{/ { node = $1; sub(/\{.*/, "", node); print node > nodes; next }
	/^[[:space:]]*global:/ { global = 1; next }
	/^[[:space:]]*local:/ { global = 0; next }
	/^[[:space:]]*\}/ { node = ""; global = 0; next }
	global && node != "" && /^[[:space:]]*airlock_[a-z0-9_]*;/ {
		name = $1; sub(/;.*/, "", name); print name "@@" node
	}
' nodes="$tmp/nodes" "$map" | sort >"$tmp/want"
[ -s "$tmp/want" ] || { echo "no symbols found in $map" >&2; exit 1; }
[ -s "$tmp/nodes" ] || { echo "no version nodes found in $map" >&2; exit 1; }
if [ "$(sort "$tmp/want" | sed 's/@@.*//' | uniq -d)" != "" ]; then
	echo "a symbol is listed in two nodes of $map" >&2
	exit 1
fi

# Every defined dynamic symbol, with its version.
"$nm" -D --defined-only "$lib" | awk '{print $NF}' | sort >"$tmp/got"

status=0
while read -r sym; do
	if grep -qxF "$sym" "$tmp/nodes"; then
		echo "$sym" >>"$tmp/seen-nodes"
		continue
	fi
	case $sym in
	airlock_*@@AIRLOCK_*) echo "$sym" >>"$tmp/exported" ;;
	*)
		echo "unexpected export: $sym" >&2
		status=1 ;;
	esac
done <"$tmp/got"
touch "$tmp/exported" "$tmp/seen-nodes"
sort -o "$tmp/exported" "$tmp/exported"
if ! diff -u "$tmp/want" "$tmp/exported" >"$tmp/diff"; then
	echo "exports differ from $map (- listed only, + exported only; name@@node):" >&2
	cat "$tmp/diff" >&2
	status=1
fi
sort -o "$tmp/nodes" "$tmp/nodes"
sort -o "$tmp/seen-nodes" "$tmp/seen-nodes"
if ! cmp -s "$tmp/nodes" "$tmp/seen-nodes"; then
	echo "version nodes differ from $map: want $(tr '\n' ' ' <"$tmp/nodes"), got $(tr '\n' ' ' <"$tmp/seen-nodes")" >&2
	status=1
fi
# libclient returns -errno and never exits (conventions.md): it calls no
# exit, _exit or abort (lintian's exit-in-shared-library found exit, from
# log.c's fatal() linked in for log_whyf(); common/log_why.c).
"$nm" -D --undefined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' >"$tmp/imports"
for f in exit _exit _Exit abort quick_exit; do
	if grep -qxF "$f" "$tmp/imports"; then
		echo "the library calls $f: libclient never exits" >&2
		status=1
	fi
done
n=$(wc -l <"$tmp/exported")
[ "$status" -eq 0 ] && echo "ok: $n symbols, each in its node of $(tr '\n' ' ' <"$tmp/nodes")"
exit $status
