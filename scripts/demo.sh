#!/bin/sh
# Build Airlock, start airlockd on a private socket, run Python in a sandbox
# through the `airlock` command, and stop the daemon.
set -eu
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: airlockd starts as root and drops privileges" >&2; exit 1; }
sh scripts/deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
dir=$(mktemp -d /tmp/airlock-demo.XXXXXX)
chmod 755 "$dir"
build/daemon/airlockd --foreground --user nobody --socket "$dir/airlock.sock" 2>"$dir/airlockd.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
i=0
until [ -S "$dir/airlock.sock" ] || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
cli="build/libclient/airlock --socket $dir/airlock.sock"
echo "\$ airlock run -c '...'"
$cli run -c '
import os, socket
print("hello from the sandbox")
print("uid", os.getuid(), "in", os.getcwd(), "on host", socket.gethostname())
print("network interfaces:", sorted(n for _, n in socket.if_nameindex()))
open("result.txt", "w").write("an artifact\n")
'
echo "\$ airlock run --json --wall 1 -c 'while True: pass'"
$cli run --json --wall 1 -c 'while True: pass' || echo "(exit status $?: the wall limit)"
echo "--- airlockd's log"
cat "$dir/airlockd.log"
