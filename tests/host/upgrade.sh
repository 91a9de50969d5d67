#!/bin/sh
# upgrade.sh: the host test's upgrade check, sourced by run.sh after the
# acceptance boot of each release. It installs the previous release's
# packages into a stock root, boots it with the new release's packages in
# /var/cache/airlock-upgrade, and runs tests/host/upgrade_check.sh there
# (use, change the configuration, apt upgrade, check).
#
# The previous release is a commit of this repository's history:
# UPGRADE_FROM (0.1.0, the last commit before the release version moved to
# 0.10.0). A plain clone has it (CI clones the whole history); a shallow
# clone does not, and the check then fails saying so. Its packages are
# built once per Debian release from `git archive` of that commit, in the
# same cached build root as the new ones, and kept in OUT_DIR/cache/prev-*
# (a later run reuses them: only the first run pays for the build).
UPGRADE_FROM=f053ed8d4f2039077392c93675ac70e5ff6ed4b1
UPGRADE_FROM_VERSION=0.1.0

# upgrade_prev_debs RELEASE WORK: the previous release's .debs for RELEASE
# in $cache/prev-RELEASE-VERSION, built if not cached.
upgrade_prev_debs() {
	rel=$1 work=$2
	prev="$cache/prev-$rel-$UPGRADE_FROM_VERSION"
	if ls "$prev/"airlockd_*.deb >/dev/null 2>&1; then
		echo "$prev"
		return 0
	fi
	git -C "$src" cat-file -e "$UPGRADE_FROM^{commit}" 2>/dev/null || {
		echo "host $rel: upgrade: commit $UPGRADE_FROM ($UPGRADE_FROM_VERSION) is not in this clone (shallow?)" >&2
		return 1
	}
	tarball=$(cached_root "$rel" build "$cache" "ca-certificates,git") || return 1
	root="$work/prev-build-root"
	rm -rf "$root"
	mkdir -p "$root"
	tar -C "$root" -xf "$tarball" || return 1
	mkdir -p "$root/src/airlock"
	git -C "$src" archive "$UPGRADE_FROM" | tar -C "$root/src/airlock" -xf - || return 1
	echo "host $rel: upgrade: building the $UPGRADE_FROM_VERSION packages ($UPGRADE_FROM)" >&2
	start=$(date +%s)
	in_root "$root" sh -c '
		apt-get update -qq && apt-get build-dep -y -qq /src/airlock >/dev/null &&
		cd /src/airlock && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -b -us -uc' \
		>"$work/prev-build.log" 2>&1 || {
		tail -n 30 "$work/prev-build.log" >&2
		echo "host $rel: upgrade: the $UPGRADE_FROM_VERSION package build failed (log: $work/prev-build.log)" >&2
		rm -rf "$root"
		return 1
	}
	mkdir -p "$prev.tmp"
	for deb in "$root/src/"*.deb; do
		case $deb in *-dbgsym_*) ;; *) cp "$deb" "$prev.tmp/" ;; esac
	done
	rm -rf "$root" "$prev"
	mv "$prev.tmp" "$prev"
	echo "host $rel: upgrade: built the $UPGRADE_FROM_VERSION packages in $(($(date +%s) - start)) s" >&2
	echo "$prev"
}

# upgrade_release RELEASE WORK: the upgrade check for RELEASE, the new
# packages in WORK/debs; sets up_p and up_f (checks passed and failed; a
# step that cannot be done counts as one failure).
upgrade_release() {
	rel=$1 work=$2
	up_p=0
	up_f=1
	start=$(date +%s)
	prev=$(upgrade_prev_debs "$rel" "$work") || return 0
	tarball=$(cached_root "$rel" vm "$cache" "$VM_PKGS") || return 0
	root="$work/upgrade-root"
	rm -rf "$root"
	mkdir -p "$root/tmp/debs" "$root/var/cache/airlock-upgrade"
	tar -C "$root" -xf "$tarball" || return 0
	cp "$prev/"*.deb "$root/tmp/debs/"
	cp "$work/debs/"*.deb "$root/var/cache/airlock-upgrade/"
	echo "host $rel: upgrade: installing the $UPGRADE_FROM_VERSION packages" >&2
	in_root "$root" sh -c '
		apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends /tmp/debs/*.deb &&
		useradd -m -G airlock agent &&
		rm -rf /tmp/debs /var/lib/apt/lists/*' >"$work/upgrade-install.log" 2>&1 || {
		tail -n 30 "$work/upgrade-install.log" >&2
		echo "host $rel: upgrade: installing the $UPGRADE_FROM_VERSION packages failed" >&2
		rm -rf "$root"
		return 0
	}
	# upgrade_check.sh sources tests/host/checklib.sh from the root.
	vm_add_checklib "$root" "$src"
	vm_prepare "$root" "$here/upgrade_check.sh"
	echo "host $rel: upgrade: booting (console: $work/upgrade-console.log)" >&2
	vm_boot "$root" "$work/upgrade-disk.img" "$work/upgrade-console.log" 900
	rm -rf "$root"
	log=$(tr -d '\r' <"$work/upgrade-console.log")
	printf '%s\n' "$log" | grep -a -e '^ok - ' -e '^not ok - ' -e '^upgrade: ' | sed "s/^/$rel: /"
	up_p=$(printf '%s\n' "$log" | grep -a -c '^ok - ')
	up_f=$(printf '%s\n' "$log" | grep -a -c '^not ok - ')
	if ! printf '%s\n' "$log" | grep -a -q '^upgrade: [0-9]* passed, [0-9]* failed'; then
		echo "host $rel: upgrade: the check did not finish (console: $work/upgrade-console.log)" >&2
		printf '%s\n' "$log" | tail -n 30 >&2
		up_f=$((up_f + 1))
	fi
	echo "host $rel: upgrade: $up_p passed, $up_f failed in $(($(date +%s) - start)) s" >&2
}
