#!/bin/sh
# build-image.sh: airlockd's container image from the project's own Debian
# packages, the build itself with no network (docs/scale-out.md).
#
#   sh deploy/build-image.sh DEBS_DIR [TAG] [BASE_TAR]
#
# DEBS_DIR holds the packages (airlockd, libairlock0, airlock; as
# dpkg-buildpackage or tests/host/run.sh make them). The base image,
# localhost/airlock-base:bookworm, is imported with `podman import` from
# BASE_TAR if given, else from a Debian 12 root made here with mmdebstrap
# (the one step that reads a mirror) holding the packages' run-time
# dependencies. Then `podman build --network=none` installs the packages
# with dpkg. Prints the image's tag. PODMAN (default podman) may carry
# options, e.g. PODMAN="podman --runtime runc".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
debs=${1:?usage: build-image.sh DEBS_DIR [TAG] [BASE_TAR]}
tag=${2:-localhost/airlockd:latest}
base_tar=${3:-}
podman=${PODMAN:-podman}
base=localhost/airlock-base:bookworm
# What airlockd and airlock link and need (dpkg -I's Depends:
# systemd-standalone-sysusers for the package's sysusers file, where a host
# has systemd), and python3 for the python runtime: a run sees the image's /usr, so the runtimes are those
# of the image.
BASE_PKGS=libevent-2.1-7,libmsgpackc2,libseccomp2,libcap-ng0,libjansson4,libinih1,libsystemd0,systemd-standalone-sysusers,python3

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
if ! $podman image exists "$base"; then
	if [ -z "$base_tar" ]; then
		base_tar="$ctx/base.tar"
		mmdebstrap --quiet --format=tar --variant=minbase --include="$BASE_PKGS" \
			bookworm "$base_tar" http://deb.debian.org/debian >&2
	fi
	$podman import "$base_tar" "$base" >&2
fi
cp "$debs"/airlockd_*.deb "$debs"/libairlock0_*.deb "$debs"/airlock_*.deb "$ctx/"
cp "$here/airlockd.conf" "$ctx/"
$podman build --network=none --pull=never -f "$here/Containerfile" --build-arg BASE="$base" \
	-t "$tag" "$ctx" >&2
echo "$tag"
