#!/bin/sh
# Static analysis: clang's analyzer over the whole tree (daemon, libraries,
# command, tests) through meson's own scan-build target, in a fresh build
# directory. Fails on any report and prints each one as file:line:
# description [checker kind], so a CI log names what to fix without the HTML.
#
# Checkers: scan-build's default set (core, unix, deadcode, nullability,
# security.insecureAPI's default members), nothing disabled. Every report
# found so far is fixed in the code or the test, not suppressed; each
# verdict and its reason is in docs/static-analysis.md. A report that must
# be suppressed gets its reason there and at the suppression.
#
# Usage: tests/lint/scan_build.sh [BUILD-DIR] (default build-scan; it is
# removed and made again). SCANBUILD_ARGS adds scan-build options.
set -u
cd "$(dirname "$0")/../.." || exit 1
dir=${1:-build-scan}
case $dir in
'' | . | .. | / | */..) # it is removed below
	echo "scan_build.sh: $dir is not a build directory" >&2
	exit 1
	;;
esac
command -v scan-build >/dev/null || {
	echo "scan-build: not found (Debian package clang-tools)" >&2
	exit 1
}
rm -rf "$dir"
meson setup "$dir" >"$dir.setup.log" 2>&1 || {
	cat "$dir.setup.log"
	exit 1
}
# meson's target runs $SCANBUILD (a path; it drops any arguments) as
# "scan-build meson setup" and then "scan-build -o meson-logs/scanbuild
# ninja", building every target in a directory of its own: a wrapper adds
# --status-bugs (exit 1 when there is a report).
wrap=$(cd "$dir" && pwd)/scan-build-status
cat >"$wrap" <<'SH'
#!/bin/sh
# shellcheck disable=SC2086
exec scan-build --status-bugs ${SCANBUILD_ARGS:-} "$@"
SH
chmod +x "$wrap"
start=$(date +%s)
SCANBUILD=$wrap ninja -C "$dir" scan-build >"$dir.scan.log" 2>&1
rc=$?
end=$(date +%s)
reports=$(find "$dir/meson-logs/scanbuild" -name 'report-*.html' 2>/dev/null | sort)
n=0
for r in $reports; do
	n=$((n + 1))
	awk -v r="$r" '
		/^<!-- BUG[A-Z]* .* -->$/ { k = $2; v = $0; sub(/^<!-- BUG[A-Z]* /, "", v);
			sub(/ -->$/, "", v); m[k] = v }
		END {
			# The scan directory sees sources as .../meson-private/tmpX/../../../f.
			f = m["BUGFILE"]; sub(/.*\/\.\.\//, "", f)
			printf "scan-build: %s:%s: %s [%s] (%s)\n", f, m["BUGLINE"], m["BUGDESC"], m["BUGTYPE"], r
		}' "$r"
done
echo "scan-build: $n reports in $((end - start)) s"
if [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
	# The build itself failed (a compile error under the analyzer).
	tail -n 40 "$dir.scan.log"
	exit 1
fi
[ "$n" -eq 0 ] && [ "$rc" -eq 0 ]
