#!/bin/sh
# run.sh: the host test. For each Debian release: build Airlock's Debian
# packages inside a root of that release (chroot), install them into a stock
# root of the release the way a user would (apt, as the packages enable the
# socket unit), boot it under qemu with the release's own cloud kernel and
# systemd as pid 1, and run tests/host/acceptance.sh in it. The console log
# of each boot is kept as OUT/RELEASE/console.log.
#
#   sh tests/host/run.sh [OUT_DIR [RELEASE...]]     (default: build/host bookworm trixie)
#
# Roots are cached as tarballs in OUT_DIR/cache; a missing cache is made
# (mmdebstrap). Prints "host RELEASE: N passed, M failed" per release and
# ends with "host: N passed, M failed"; a release that cannot build, install
# or boot counts as one failure, never a skip. Exit status 0 only if all pass.
#
# For a developer's loop: HOST_CHECK=SCRIPT boots SCRIPT instead of the
# acceptance check, HOST_REUSE_DEBS=1 reuses the packages built last time.
# After the acceptance boot, a second boot checks the upgrade from the
# previous release (tests/host/upgrade.sh); HOST_UPGRADE=0 leaves it out,
# HOST_UPGRADE=only runs it alone.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/vm.sh"
. "$here/container.sh"
. "$here/upgrade.sh"
[ "$(id -u)" = 0 ] || die "run as root"
out=${1:-$src/build/host}
[ $# -gt 0 ] && shift
releases=${*:-bookworm trixie}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cache="$out/cache"
for tool in mmdebstrap qemu-system-x86_64 mke2fs; do
	command -v "$tool" >/dev/null || die "$tool is missing (scripts/deps.sh installs it)"
done

# The packages of the source tree: what git tracks (and any new file next to
# it), without build directories.
copy_source() {
	dest=$1
	mkdir -p "$dest"
	(cd "$src" && { git ls-files --cached --others --exclude-standard 2>/dev/null || find . -type f; }) |
		grep -v -e '^build' -e '/\.git/' |
		(cd "$src" && tar -cf - --no-recursion -T -) | tar -C "$dest" -xf -
}

# build_debs RELEASE WORK: the .debs in WORK/debs, built in a root of RELEASE.
build_debs() {
	rel=$1 work=$2
	tarball=$(cached_root "$rel" build "$cache" "ca-certificates,git") || return 1
	rm -rf "$work/build-root" "$work/debs"
	mkdir -p "$work/build-root" "$work/debs"
	tar -C "$work/build-root" -xf "$tarball" || return 1
	copy_source "$work/build-root/src/airlock"
	echo "host $rel: building the packages" >&2
	in_root "$work/build-root" sh -c '
		apt-get update -qq && apt-get build-dep -y -qq /src/airlock >/dev/null &&
		cd /src/airlock && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -b -us -uc' \
		>"$work/build.log" 2>&1 || {
		tail -n 30 "$work/build.log" >&2
		echo "host $rel: the package build failed (log: $work/build.log)" >&2
		return 1
	}
	for deb in "$work/build-root/src/"*.deb; do
		case $deb in *-dbgsym_*) ;; *) cp "$deb" "$work/debs/" ;; esac
	done
	rm -rf "$work/build-root"
	ls "$work/debs" >&2
}

# install_vm RELEASE WORK: WORK/root, a stock root of RELEASE with the
# packages installed by apt and the acceptance check set to run at boot.
install_vm() {
	rel=$1 work=$2
	tarball=$(cached_root "$rel" vm "$cache" "$VM_PKGS") || return 1
	rm -rf "$work/root"
	mkdir -p "$work/root/tmp/debs"
	tar -C "$work/root" -xf "$tarball" || return 1
	cp "$work/debs/"*.deb "$work/root/tmp/debs/"
	echo "host $rel: installing the packages" >&2
	in_root "$work/root" sh -c '
		apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends /tmp/debs/*.deb &&
		useradd -m -G airlock agent && useradd -m stranger &&
		rm -rf /tmp/debs /var/lib/apt/lists/*' >"$work/install.log" 2>&1 || {
		tail -n 30 "$work/install.log" >&2
		echo "host $rel: installing the packages failed (log: $work/install.log)" >&2
		return 1
	}
	vm_add_tests "$work/root" "$src"
	# The container image's check (tests/host/container.sh): podman, the
	# packages and a base root into the VM, which has no network. On the
	# image's own release only (its base is Debian 12): it costs minutes
	# of emulated time per boot.
	if [ "$rel" = bookworm ]; then
		container_prepare "$work/root" "$work/debs" "$cache" >"$work/container-prepare.log" 2>&1 || {
			tail -n 20 "$work/container-prepare.log" >&2
			echo "host $rel: preparing the container check failed" >&2
			return 1
		}
	fi
	vm_prepare "$work/root" "${HOST_CHECK:-$here/acceptance.sh}"
}

total_p=0
total_f=0
for rel in $releases; do
	work="$out/$rel"
	mkdir -p "$work"
	p=0
	f=0
	if [ "${HOST_REUSE_DEBS:-0}" = 1 ] && ls "$work/debs/"*.deb >/dev/null 2>&1; then
		echo "host $rel: reusing the packages in $work/debs" >&2
		built=true
	elif build_debs "$rel" "$work"; then
		built=true
	else
		built=false
	fi
	if ! $built; then
		f=1
	elif [ "${HOST_UPGRADE:-1}" = only ]; then
		:
	elif ! install_vm "$rel" "$work"; then
		f=1
	else
		echo "host $rel: booting (console: $work/console.log)" >&2
		vm_boot "$work/root" "$work/disk.img" "$work/console.log" 2400
		rm -rf "$work/root"
		if [ -n "${HOST_CHECK:-}" ]; then
			tr -d '\r' <"$work/console.log"
		else
			tr -d '\r' <"$work/console.log" | grep -a -e '^ok - ' -e '^not ok - ' -e '^acceptance: ' | sed "s/^/$rel: /"
		fi
		p=$(tr -d '\r' <"$work/console.log" | grep -a -c '^ok - ')
		f=$(tr -d '\r' <"$work/console.log" | grep -a -c '^not ok - ')
		if ! tr -d '\r' <"$work/console.log" | grep -a -q '^acceptance: [0-9]* passed, [0-9]* failed'; then
			echo "host $rel: the acceptance check did not finish (console: $work/console.log)" >&2
			tail -n 30 "$work/console.log" >&2
			f=$((f + 1))
		fi
	fi
	if $built && [ "${HOST_UPGRADE:-1}" != 0 ] && [ -z "${HOST_CHECK:-}" ]; then
		upgrade_release "$rel" "$work"
		p=$((p + up_p))
		f=$((f + up_f))
	fi
	echo "host $rel: $p passed, $f failed"
	total_p=$((total_p + p))
	total_f=$((total_f + f))
done
echo "host: $total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
