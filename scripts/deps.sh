#!/bin/sh
# Install the Debian 12 packages Airlock builds and tests with, if missing
# (mmdebstrap and qemu are for the host test, tests/host).
set -eu
pkgs="meson ninja-build pkg-config gcc libc6-dev libevent-dev libmsgpack-dev libseccomp-dev
libcap-ng-dev libcmocka-dev libjansson-dev libinih-dev libsystemd-dev python3 iproute2
clang-format clang git groff-base bubblewrap
procps systemd
mmdebstrap qemu-system-x86 e2fsprogs debian-archive-keyring"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
