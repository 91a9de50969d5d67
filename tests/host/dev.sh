#!/bin/sh
# dev.sh: a quick loop for developers: boot a stock Debian 12 VM (systemd,
# cgroup v2, kernel 6.1) with a build tree of this machine installed (meson
# install) and run SCRIPT in it as root; its output is printed. Binaries built
# here run there because this machine's userspace is Debian 12.
#
#   sh tests/host/dev.sh BUILD_DIR SCRIPT
#
# DEV_RELEASE=trixie boots Debian 13 instead. The VM roots have none of the
# build's runtime libraries (libevent, inih, jansson, msgpack-c; Debian 13's
# msgpack-c has another soname, libmsgpack-c.so.2): dev_libs copies those the
# root lacks from this machine into its /usr/local/lib/x86_64-linux-gnu.
#
# The hostile suite is in the root at /usr/local/share/airlock-tests: SCRIPT
# tests/host/hostile.sh runs it against airlockd.service. DEV_TIMEOUT: the
# seconds the VM may take (default 900).
#
# The real host test (packages, both releases) is tests/host/run.sh.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/vm.sh"
[ $# -eq 2 ] || die "usage: dev.sh BUILD_DIR SCRIPT"
build=$(cd "$1" && pwd)
script=$2
[ "$(id -u)" = 0 ] || die "run as root"
work="$build/host-dev"
rm -rf "$work/root"
mkdir -p "$work/root"
tarball=$(cached_root "${DEV_RELEASE:-bookworm}" vm "$build/host-cache" "$VM_PKGS")
tar -C "$work/root" -xf "$tarball"
meson install -C "$build" --destdir "$work/root" --no-rebuild --quiet >/dev/null

# dev_libs ROOT FILE...: each shared library FILE needs (ldd, here) that ROOT
# has under no lib directory by its soname, copied to ROOT's
# /usr/local/lib/x86_64-linux-gnu (ldconfig below indexes it).
dev_libs() {
	root=$1
	shift
	dest="$root/usr/local/lib/x86_64-linux-gnu"
	mkdir -p "$dest"
	ldd "$@" 2>/dev/null | sed -n 's/^[[:space:]]*\([^ ]*\) => \(\/[^ ]*\) .*/\1 \2/p' | sort -u |
		while read -r soname path; do
			for d in lib usr/lib lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu \
				usr/local/lib/x86_64-linux-gnu; do
				[ -e "$root/$d/$soname" ] && continue 2
			done
			cp -L "$path" "$dest/$soname" || die "cannot copy $path into the root"
			echo "dev.sh: $soname copied into the root" >&2
		done
}
dev_libs "$work/root" $(find "$work/root/usr/sbin/airlockd" "$work/root/usr/bin/airlock" \
	"$work/root/usr/local/sbin/airlockd" "$work/root/usr/local/bin/airlock" 2>/dev/null)
in_root "$work/root" sh -c 'ldconfig && systemd-sysusers && systemd-tmpfiles --create >/dev/null 2>&1;
	systemctl enable airlockd.socket >/dev/null 2>&1;
	useradd -m -G airlock agent && useradd -m stranger'
vm_add_tests "$work/root" "$here/../.."
vm_prepare "$work/root" "$script"
rc=0
vm_boot "$work/root" "$work/disk.img" "$work/console.log" "${DEV_TIMEOUT:-900}" || rc=$?
tr -d '\r' <"$work/console.log" | grep -v -e '^\x1b' -e 'SeaBIOS' -e '^Booting from'
exit $rc
