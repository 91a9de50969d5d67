#!/bin/sh
# vm.sh: the pieces of the host test: a cached Debian root, a disk image made
# from it with a payload installed, and a boot under qemu that runs one script
# as a systemd unit and powers off. Sourced by run.sh and dev.sh.
#
# Software emulation (TCG) on purpose: nested KVM on the development machines
# fails with emulation errors; a Debian cloud kernel boots to multi-user in
# about 15 s under TCG.

# The packages every VM root has besides the release's minimal base: systemd
# as pid 1, the release's own cloud kernel, what the acceptance checks use.
VM_PKGS="systemd,systemd-sysv,udev,dbus,linux-image-cloud-amd64,initramfs-tools,kmod,python3,nodejs,procps,iproute2,psmisc,python3-jupyter-client,python3-zmq,python3-ipython"

die() {
	echo "host test: $*" >&2
	exit 1
}

# cached_root RELEASE KIND CACHE_DIR EXTRA_PKGS: the path of a tarball of a
# root of RELEASE, made with mmdebstrap if the cache does not hold it.
cached_root() {
	rel=$1 kind=$2 cache=$3 pkgs=$4
	# The package list is part of the name: a root cached before a package
	# was added is not reused without it.
	tar_path="$cache/$rel-$kind-$(printf '%s' "$pkgs" | md5sum | cut -c1-8).tar"
	if [ ! -s "$tar_path" ]; then
		mkdir -p "$cache"
		echo "host test: making the $rel $kind root (mmdebstrap)" >&2
		variant=minbase
		[ "$kind" = build ] && variant=buildd
		mmdebstrap --quiet --format=tar --variant="$variant" --include="$pkgs" "$rel" \
			"$tar_path.tmp" http://deb.debian.org/debian >&2 ||
			die "mmdebstrap of $rel $kind failed"
		mv "$tar_path.tmp" "$tar_path"
	fi
	echo "$tar_path"
}

# in_root DIR CMD...: run CMD chrooted in DIR with /proc, /dev, /sys and the
# host's resolver, in a private mount namespace (nothing to unmount after).
in_root() {
	dir=$1
	shift
	cp /etc/resolv.conf "$dir/etc/resolv.conf"
	unshare --mount --propagation private sh -c '
		d=$1; shift
		mount -t proc proc "$d/proc" &&
		mount --rbind /dev "$d/dev" &&
		mount --rbind /sys "$d/sys" &&
		exec chroot "$d" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' sh "$dir" "$@"
}

# vm_prepare DIR SCRIPT: make the unpacked root DIR boot to SCRIPT: a oneshot
# unit after multi-user.target writes the script's output to the serial
# console and powers off.
vm_prepare() {
	dir=$1 script=$2
	install -m 0755 "$script" "$dir/usr/local/sbin/airlock-host-check"
	cat >"$dir/etc/systemd/system/airlock-host-check.service" <<'UNIT'
[Unit]
Description=Airlock host test
After=multi-user.target
[Service]
Type=oneshot
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
ExecStart=/usr/local/sbin/airlock-host-check
ExecStopPost=/bin/systemctl --no-block poweroff
TimeoutStartSec=40min
[Install]
WantedBy=multi-user.target
UNIT
	mkdir -p "$dir/etc/systemd/system/multi-user.target.wants"
	ln -sf /etc/systemd/system/airlock-host-check.service \
		"$dir/etc/systemd/system/multi-user.target.wants/airlock-host-check.service"
	# A getty on the console would take it and hang up our output.
	ln -sf /dev/null "$dir/etc/systemd/system/serial-getty@ttyS0.service"
	echo "/dev/vda / ext4 rw,errors=remount-ro 0 1" >"$dir/etc/fstab"
	echo airlock-host >"$dir/etc/hostname"
	rm -f "$dir/etc/resolv.conf"
}

# vm_add_checklib DIR SRC: the check scripts' shared helpers
# (tests/host/checklib.sh of the source tree SRC) in the unpacked root DIR,
# at /usr/local/share/airlock-tests/host/checklib.sh, where acceptance.sh,
# persist.sh, upgrade_check.sh and container.sh source them.
vm_add_checklib() {
	dir=$1 src=$2
	mkdir -p "$dir/usr/local/share/airlock-tests/host"
	install -m 0644 "$src/tests/host/checklib.sh" "$dir/usr/local/share/airlock-tests/host/checklib.sh"
}

# vm_add_tests DIR SRC: the hostile suite (tests/hostile, tests/lib of the
# source tree SRC), tests/jupyter (its host_check.py), the sessions'
# restart check (tests/host/persist.sh), the zygote's check
# (tests/host/zygote.sh) and the checks' helpers
# (vm_add_checklib) in the unpacked root DIR, at
# /usr/local/share/airlock-tests, for tests/host/hostile.sh and
# acceptance.sh (no package ships them).
vm_add_tests() {
	dir=$1 src=$2
	mkdir -p "$dir/usr/local/share/airlock-tests"
	tar -C "$src/tests" --exclude=__pycache__ -cf - hostile lib jupyter host/persist.sh host/zygote.sh |
		tar -C "$dir/usr/local/share/airlock-tests" -xf - || return 1
	vm_add_checklib "$dir" "$src"
}

# vm_boot DIR IMAGE CONSOLE_LOG TIMEOUT_S: make an ext4 image of DIR and boot
# it with DIR's kernel; the console goes to CONSOLE_LOG.
vm_boot() {
	dir=$1 img=$2 log=$3 limit=$4
	kernel=$(ls "$dir"/boot/vmlinuz-* | head -n 1)
	initrd=$(ls "$dir"/boot/initrd.img-* | head -n 1)
	[ -f "$kernel" ] && [ -f "$initrd" ] || die "no kernel or initrd in $dir/boot"
	rm -f "$img"
	mke2fs -q -t ext4 -d "$dir" -L root "$img" 4G || die "mke2fs failed"
	: >"$log"
	timeout --kill-after=10 "$limit" qemu-system-x86_64 -accel tcg,thread=multi -cpu max \
		-m 3072 -smp 2 -nographic -no-reboot -monitor none -nic none \
		-kernel "$kernel" -initrd "$initrd" \
		-append "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0" \
		-drive "file=$img,format=raw,if=virtio" -serial "file:$log" >/dev/null 2>&1
	rc=$?
	[ "$rc" = 124 ] && echo "host test: the VM did not power off within $limit s" >&2
	rm -f "$img"
	return $rc
}
