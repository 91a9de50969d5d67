#!/bin/sh
# Install the Debian 12 packages Airlock builds and tests with, if missing
# (mmdebstrap and qemu are for the host test, tests/host; clang-tools has
# scan-build, for tests/lint/scan_build.sh).
set -eu
pkgs="meson ninja-build pkg-config gcc libc6-dev libevent-dev libmsgpack-dev libseccomp-dev
libcap-ng-dev libcmocka-dev libjansson-dev libinih-dev python3 python3-dev iproute2
clang-format clang git groff-base bubblewrap python3-setuptools python3-wheel python3-venv
procps systemd universal-ctags
python3-numpy python3-pandas python3-matplotlib python3-scipy libpython3.11-testsuite
python3-zmq python3-jupyter-client python3-nbclient python3-nbformat python3-ipykernel
python3-ipython python3-matplotlib-inline
clang-tools
mmdebstrap qemu-system-x86 e2fsprogs debian-archive-keyring
python3-yaml podman runc"
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

# node (the sandbox's node runtime, the MCP SDK test) and npm: Debian's, on a
# machine that has neither (a machine with another node, such as NodeSource's,
# keeps it: Debian's npm package would conflict with it).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "installing: nodejs npm"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

# The official MCP TypeScript SDK client, pinned, for tests/mcp/test_mcp_sdk.js.
mcp_sdk=@modelcontextprotocol/sdk@1.32.2
node_modules=${AIRLOCK_NODE_MODULES:-/usr/local/lib/airlock-tests/node_modules}
if [ ! -f "$node_modules/@modelcontextprotocol/sdk/package.json" ] ||
	! grep -q '"version": "1.32.2"' "$node_modules/@modelcontextprotocol/sdk/package.json"; then
	if command -v npm >/dev/null; then
		echo "installing: $mcp_sdk into $node_modules"
		npm install --prefix "$(dirname "$node_modules")" --no-audit --no-fund --save-exact \
			"$mcp_sdk" >/dev/null
	else
		echo "npm not found: tests/mcp's SDK test will fail" >&2
	fi
fi

# kubernetes-models, pinned, for tests/deploy/test_manifests.py (the
# manifests of deploy/kubernetes against the Kubernetes API types), in the
# same place. Its package.json asks for node >= 22 (npm warns EBADENGINE);
# the node 20 of the development machine runs its validators (Debian 12's
# node 18 not tried).
k8s_models=kubernetes-models@5.1.0
if [ ! -f "$node_modules/kubernetes-models/package.json" ] ||
	! grep -q '"version": "5.1.0"' "$node_modules/kubernetes-models/package.json"; then
	if command -v npm >/dev/null; then
		echo "installing: $k8s_models into $node_modules"
		npm install --prefix "$(dirname "$node_modules")" --no-audit --no-fund --save-exact \
			"$k8s_models" >/dev/null 2>&1
	else
		echo "npm not found: tests/deploy's manifest test will fail" >&2
	fi
fi
