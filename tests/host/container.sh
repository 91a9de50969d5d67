#!/bin/sh
# container.sh: the container image in the host test (issue 34). Two halves:
#
# - sourced by run.sh (host side, before the boot): container_prepare ROOT
#   DEBS CACHE puts into the VM root what the check needs and the VM cannot
#   fetch (it boots with no network): podman and runc, installed with apt
#   like the rest of the root; the project's packages; a Debian 12 base
#   root for the image (mmdebstrap, cached in CACHE); deploy/.
# - run inside the VM (acceptance.sh calls it, or HOST_CHECK= it alone):
#   builds the image with podman from those packages with --network=none,
#   runs it with the flags docs/scale-out.md documents, and runs code
#   through the shared socket from outside the container, expecting what
#   the host's daemon gives: limits (memory_limit on cgroup v2, wall, cpu),
#   no network, output. Prints "ok - container: ..." / "not ok - ..." lines
#   and "container: N passed, M failed"; exits non-zero on a failure.

CONTAINER_SHARE=/usr/local/share/airlock-tests/container

container_prepare() {
	root=$1 debs=$2 cache=$3
	here_c=$(cd "$(dirname "$0")" && pwd)
	src_c=$(cd "$here_c/../.." && pwd)
	rel_c=$(. "$root/etc/os-release" && echo "$VERSION_CODENAME")
	# The base image's packages, as deploy/build-image.sh lists them; the
	# cached root is named by their list, so a changed list makes a new one.
	pkgs_c=$(sed -n 's/^BASE_PKGS=//p' "$src_c/deploy/build-image.sh")
	base_c="$cache/bookworm-container-base-$(echo "$pkgs_c" | cksum | cut -d' ' -f1).tar"
	if [ ! -s "$base_c" ]; then
		echo "host test: making the container base root (mmdebstrap)" >&2
		mmdebstrap --quiet --format=tar --variant=minbase --include="$pkgs_c" \
			bookworm "$base_c.tmp" http://deb.debian.org/debian >&2 || return 1
		mv "$base_c.tmp" "$base_c"
	fi
	echo "host test ($rel_c): podman into the VM root" >&2
	in_root "$root" sh -c 'apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends podman runc crun uidmap \
			containernetworking-plugins >/dev/null && rm -rf /var/lib/apt/lists/*' || return 1
	mkdir -p "$root$CONTAINER_SHARE/debs"
	cp "$debs"/airlockd_*.deb "$debs"/libairlock0_*.deb "$debs"/airlock_*.deb "$root$CONTAINER_SHARE/debs/"
	cp "$base_c" "$root$CONTAINER_SHARE/base.tar"
	cp -r "$src_c/deploy" "$root$CONTAINER_SHARE/deploy"
	install -m 0755 "$here_c/container.sh" "$root$CONTAINER_SHARE/container.sh"
}

# --- inside the VM
container_check() {
	set -u
	# ok, fail ($tmp, the counters): tests/host/checklib.sh, sourced here
	# and not at the top: run.sh sources this file on the host too.
	# shellcheck source-path=SCRIPTDIR source=checklib.sh
	. "${CHECKLIB:-/usr/local/share/airlock-tests/host/checklib.sh}"
	checklib_init container "container: "
	sockdir=/run/airlock-container
	sock=$sockdir/airlock.sock
	tag=localhost/airlockd:test
	podman=${PODMAN:-podman}

	t0=$(date +%s)
	if PODMAN=$podman sh "$CONTAINER_SHARE/deploy/build-image.sh" "$CONTAINER_SHARE/debs" "$tag" \
		"$CONTAINER_SHARE/base.tar" >"$tmp/build.log" 2>&1; then
		ok "image built offline ($(($(date +%s) - t0)) s)"
	else
		fail "image built offline" "$(tail -n 8 "$tmp/build.log" | tr '\n' '|')"
		checklib_summary
		return 1
	fi
	# The image's config, moved to a uid range of its own: the host's
	# airlockd (600000-602047) runs beside it in this VM.
	sed 's/^resource_control = cgroup2$/resource_control = cgroup2\nuid_base = 700000\nuid_count = 256/' \
		"$CONTAINER_SHARE/deploy/airlockd.conf" >"$tmp/airlockd.conf"
	mkdir -p "$sockdir"
	# The documented flags (docs/scale-out.md, "The privileges it needs").
	# The unmask as two options: podman 4.3 left /sys/fs/cgroup read-only
	# with "unmask=/proc/*:/sys/fs/cgroup" in one (seen in this VM).
	flags_common="--cap-drop=all --cap-add=SETUID,SETGID,SETPCAP --security-opt seccomp=unconfined --security-opt apparmor=unconfined --cgroupns=private --network=none"
	answered=""
	for unmask in "--security-opt unmask=/proc/* --security-opt unmask=/sys/fs/cgroup"; do
		$podman rm -f airlockd-test >/dev/null 2>&1
		# shellcheck disable=SC2086
		$podman run -d --name airlockd-test $flags_common $unmask \
			-v "$sockdir:/run/airlock" -v "$tmp/airlockd.conf:/etc/airlock/airlockd.conf:ro" \
			"$tag" >"$tmp/run.log" 2>&1
		i=0
		until airlock --socket "$sock" ping >/dev/null 2>&1 || [ $i -ge 90 ]; do
			sleep 1
			i=$((i + 1))
		done
		if airlock --socket "$sock" ping >/dev/null 2>&1; then
			answered=$unmask
			break
		fi
		echo "# container: with $unmask the daemon did not answer:"
		$podman logs airlockd-test 2>&1 | tail -n 3 | sed 's/^/#   /'
		$podman stop -t 5 airlockd-test >/dev/null 2>&1
	done
	if [ -n "$answered" ]; then
		ok "the daemon in the container answers on the shared socket ($i s; $answered)"
	else
		fail "the daemon in the container answers" "$($podman logs airlockd-test 2>&1 | tail -n 8 | tr '\n' '|')"
	fi
	# Runs from outside the container, as root (always admitted).
	cmp_outcome() {
		name=$1 want=$2
		shift 2
		got=$(airlock --socket "$sock" run --json "$@" 2>"$tmp/err" |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["outcome"])' 2>/dev/null)
		if [ "$got" = "$want" ]; then
			ok "$name: $want"
		else
			fail "$name" "outcome ${got:-none}, want $want; $(head -c 300 "$tmp/err" | tr '\n' '|')"
		fi
	}
	cmp_outcome "exit code" exited --lang sh -c 'echo hi; exit 0'
	out=$(airlock --socket "$sock" run --lang python -c 'print(6*7)' 2>&1)
	[ "$out" = 42 ] && ok "python output" || fail "python output" "$out"
	cmp_outcome "memory limit" memory_limit --memory 64M --lang python -c 'x = bytearray(512 << 20)'
	cmp_outcome "wall limit" wall_limit --wall 2 --lang sh -c 'sleep 30'
	cmp_outcome "cpu limit" cpu_limit --cpu 1 --lang sh -c 'while :; do :; done'
	out=$(airlock --socket "$sock" run --lang python -c '
import socket
try:
    socket.create_connection(("10.0.2.2", 80), timeout=2); print("connected")
except OSError as e:
    print("refused", e.errno)' 2>&1)
	case $out in "refused"*) ok "no network ($out)" ;; *) fail "no network" "$out" ;; esac
	rc=$(airlock --socket "$sock" --json info 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin).get("resource_control"))' 2>/dev/null)
	[ "$rc" = cgroup2 ] && ok "resource control cgroup2" || fail "resource control cgroup2" "info says ${rc:-nothing}"
	# The same on the host's own daemon, for the comparison.
	hout=$(airlock run --json --memory 64M --lang python -c 'x = bytearray(512 << 20)' 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["outcome"])' 2>/dev/null)
	[ "$hout" = memory_limit ] && ok "the host's daemon agrees (memory_limit)" ||
		fail "the host's daemon agrees" "host outcome ${hout:-none}"
	# Missing a capability: the container says which and stops.
	$podman run --name airlockd-nocap --network=none --cap-drop=all --cap-add=SETUID,SETGID \
		--security-opt seccomp=unconfined --security-opt apparmor=unconfined \
		--security-opt 'unmask=/proc/*' --security-opt unmask=/sys/fs/cgroup \
		-v "$tmp:/run/airlock" "$tag" >"$tmp/nocap.log" 2>&1
	nrc=$?
	if [ $nrc -ne 0 ] && grep -q "missing capability CAP_SETPCAP" "$tmp/nocap.log"; then
		ok "without CAP_SETPCAP: exit $nrc, named"
	else
		fail "without CAP_SETPCAP" "exit $nrc; $(tail -n 3 "$tmp/nocap.log" | tr '\n' '|')"
	fi
	$podman rm -f airlockd-nocap >/dev/null 2>&1
	# SIGTERM: a clean stop within the grace.
	t0=$(date +%s)
	$podman stop -t 75 airlockd-test >/dev/null 2>&1
	st=$($podman inspect -f '{{.State.ExitCode}}' airlockd-test 2>/dev/null)
	[ "$st" = 0 ] && ok "stopped cleanly ($(($(date +%s) - t0)) s)" ||
		fail "stopped cleanly" "exit ${st:-?}; $($podman logs airlockd-test 2>&1 | tail -n 5 | tr '\n' '|')"
	echo "--- container log"
	$podman logs airlockd-test 2>&1 | grep -v 'audit .*run=' | tail -n 20
	$podman rm -f airlockd-test >/dev/null 2>&1
	rm -rf "$tmp"
	checklib_summary
	[ "$failed" -eq 0 ]
}

# Run (not sourced): sh container.sh check
if [ "${0##*/}" = container.sh ] && [ "${1:-}" = check ]; then
	container_check
fi
