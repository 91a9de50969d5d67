#!/bin/sh
# check_bindnow.sh EXE: EXE is linked with full RELRO (-z relro -z now).
# airlockd's every process is a clone of the spawner: with lazy binding each
# supervisor resolved the library functions it called in its own copy (the
# dynamic linker's lookups and a copy-on-write fault of the GOT page), and
# the GOT stayed writable. Bound at start, the GOT is read-only before the
# first run (docs/performance.md, issue 33; docs/security.md).
set -eu
exe=$1
dyn=$(readelf -d "$exe")
if ! printf '%s\n' "$dyn" | grep -Eq '\(BIND_NOW\)|\(FLAGS_1\).*[[:space:]]NOW([[:space:]]|$)'; then
	echo "FAIL: $exe is not linked with -z now (no BIND_NOW, no DF_1_NOW)" >&2
	exit 1
fi
if ! readelf -lW "$exe" | grep -q 'GNU_RELRO'; then
	echo "FAIL: $exe has no GNU_RELRO segment (-z relro)" >&2
	exit 1
fi
echo "ok: $exe: BIND_NOW and GNU_RELRO"
