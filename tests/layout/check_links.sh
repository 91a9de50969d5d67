#!/bin/sh
# check_links.sh EXE FORBIDDEN... [-- PRIVILEGED...]: EXE links the
# privileged libraries whole (priv-link); it fails when EXE holds a function
# defined by a FORBIDDEN archive (ARCHIVE, or ARCHIVE:member.o,member.o for
# some of its members) or imports one from a parser's or libevent's shared
# library (inih, msgpack, jansson, libevent). For each such symbol it names
# the forbidden member that defines it and the PRIVILEGED members that want
# it (nm -A). docs/design-reshape.md section 2.2; suite layout.
set -eu
export LC_ALL=C
if [ $# -lt 2 ]; then
	echo "usage: check_links.sh EXE FORBIDDEN... [-- PRIVILEGED...]" >&2
	exit 2
fi
exe=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/forbidden"
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	ar=${1%%:*}
	members=
	case $1 in *:*) members=${1#*:} ;; esac
	[ -r "$ar" ] || {
		echo "FAIL: cannot read $ar" >&2
		exit 2
	}
	# "archive:member:value T symbol": keep "symbol member" of the members asked
	nm -A --defined-only --extern-only "$ar" | awk -v members="$members" '
		NF >= 3 {
			n = split($1, f, ":"); m = f[n - 1]; sub(".*/", "", m)
			if (members != "" && index("," members ",", "," m ",") == 0) next
			print $NF, m
		}' >>"$tmp/forbidden"
	shift
done
[ $# -gt 0 ] && shift
sort -u -k1,1 "$tmp/forbidden" >"$tmp/forbidden.s"
# all defined symbols, local ones too: the common libraries are built with
# hidden visibility, so what they define is local to the executable
nm --defined-only "$exe" | awk '{print $NF}' | sort -u >"$tmp/defined"
join "$tmp/defined" "$tmp/forbidden.s" >"$tmp/bad"
nm -D --undefined-only "$exe" | awk '{sub("@.*", "", $NF); print $NF}' |
	grep -E '^(ini_|msgpack_|json_|event_|evbuffer_|bufferevent_|evdns_|evhttp_|evutil_)' |
	sed 's/$/ a-shared-library/' >>"$tmp/bad" || true
if [ ! -s "$tmp/bad" ]; then
	echo "ok: $(wc -l <"$tmp/defined") symbols in the privileged set, none a parser's or the frontend's"
	exit 0
fi
echo "FAIL: the privileged libraries link a parser or frontend code:"
# "symbol member" for every undefined symbol of the privileged archives, read
# once (nm per symbol took half a minute on a loaded machine)
for ar in "$@"; do
	nm -A --undefined-only "$ar" 2>/dev/null
done | awk '{ n = split($1, f, ":"); m = f[n - 1]; sub(".*/", "", m); print $NF, m }' |
	sort -u >"$tmp/wants"
while read -r sym from; do
	wanted=$(awk -v s="$sym" '$1 == s { print $2 }' "$tmp/wants" | tr '\n' ' ')
	wanted=$(echo $wanted)
	echo "  $sym (in $from), wanted by: ${wanted:-the libraries it pulls in}"
done <"$tmp/bad"
exit 1
