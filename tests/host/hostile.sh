#!/bin/sh
# hostile.sh: runs as root inside a dev VM (tests/host/dev.sh BUILD_DIR
# tests/host/hostile.sh): the hostile suite (tests/hostile, copied into the
# root by vm_add_tests) against the installed airlockd under its systemd unit
# (run_hostile.py --unit: the runner's config and secret in the unit while
# it runs), with the python runtimes' prestart as the daemon's default (on)
# and off. --slow: software emulation is several times slower than the
# machines the cases' default limits were set on (res_output_flood takes
# 15 to 60 s of cpu there). The acceptance check
# (acceptance.sh) runs the first of the two.
set -u
export LC_ALL=C.UTF-8
tests=/usr/local/share/airlock-tests
echo "hostile: $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r), $(systemctl --version | head -n 1), cgroup $(stat -f -c %T /sys/fs/cgroup), $(python3 --version)"
for prestart in default no; do
	t0=$(date +%s)
	python3 "$tests/hostile/run_hostile.py" --airlockd /usr/sbin/airlockd --airlock /usr/bin/airlock \
		--unit airlockd.service --slow 10 --prestart "$prestart" 2>&1
	echo "hostile: --prestart $prestart: exit $?, $(($(date +%s) - t0)) s"
done
