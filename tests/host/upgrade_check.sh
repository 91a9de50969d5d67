#!/bin/sh
# upgrade_check.sh: runs as root inside the host-test VM at boot
# (tests/host/upgrade.sh). The previous release's packages are installed,
# airlockd.socket enabled as they left it; the new release's packages wait in
# /var/cache/airlock-upgrade; user "agent" is in group airlock. As an
# administrator would: use the service, open a session, change the
# configuration, upgrade with apt, then check the service, the kept
# configuration (and that the upgrade said so) and what became of the
# session. Each check prints "ok - upgrade: NAME" or "not ok - upgrade:
# NAME: why"; the last line is "upgrade: N passed, M failed".
#
# The session: the previous release (0.1.0) keeps sessions in the daemon's
# memory only, so the upgrade, which restarts the daemon, ends it. What is
# checked is that it ends cleanly: the client holding it is told (an error,
# not a hang), its id is no longer listed, and a new session works.
set -u
export LC_ALL=C.UTF-8
# ok, fail, check, as_agent, wait_for: tests/host/checklib.sh (upgrade.sh
# puts it into this root).
# shellcheck source-path=SCRIPTDIR source=checklib.sh
. "${CHECKLIB:-/usr/local/share/airlock-tests/host/checklib.sh}"
checklib_init upgrade "upgrade: "
debs=/var/cache/airlock-upgrade
conf=/etc/airlock/airlockd.conf

old=$(dpkg-query -W -f '${Version}' airlockd)
new=$(dpkg-deb -f "$(ls $debs/airlockd_*.deb | head -n 1)" Version)
echo "upgrade: $(. /etc/os-release && echo "$PRETTY_NAME"): airlockd $old to $new"
check "the previous release is installed ($old)" sh -c "[ -n '$old' ] && [ '$old' != '$new' ]"
check "the previous daemon answers" as_agent airlock ping

# The administrator's configuration: the example, one setting changed, one
# that info shows (max_runs_per_uid, default 8), and a comment of their own.
cp /usr/share/doc/airlockd/examples/airlockd.conf "$conf"
sed -i 's/^#max_runs_per_uid = 8$/max_runs_per_uid = 3\n# changed by the administrator before the upgrade/' "$conf"
chmod 0644 "$conf"
systemctl restart airlockd.service
check "the changed configuration is in force before the upgrade" sh -c \
	"runuser -u agent -- airlock --json info | grep -Eq '\"max_runs_per_uid\": *3([^0-9]|$)'"
sum_before=$(sha256sum "$conf" | cut -d' ' -f1)

# A session held open by a client of the previous release (its Python
# binding, as an agent would), with a file in its workspace. The holder
# waits on a fifo for the go after the upgrade, then reads the file.
mkfifo "$tmp/go"
chmod 0666 "$tmp/go"
cat >"$tmp/hold.py" <<'PY'
import sys
import airlock

s = airlock.AirlockSandbox().session_sync(idle_timeout=600)
s.open()
s.write_file("kept.txt", b"before")
print("open", s.id, flush=True)
open(sys.argv[1]).read()  # the go, once the upgrade is done
try:
    print("read", s.read_file("kept.txt").decode(), flush=True)
except airlock.SandboxError as e:
    print("error", type(e).__name__, getattr(e, "code", ""), flush=True)
PY
chmod 0644 "$tmp/hold.py"
(cd "$tmp" && runuser -u agent -- python3 hold.py "$tmp/go" >"$tmp/hold.out" 2>&1) &
holder=$!
if wait_for 60 grep -q '^open ' "$tmp/hold.out"; then
	sid=$(sed -n 's/^open //p' "$tmp/hold.out")
	ok "a session is open with a file in it ($sid)"
else
	sid=none
	fail "a session is open with a file in it" "$(tr '\n' '|' <"$tmp/hold.out")"
fi
check "the session is listed before the upgrade" sh -c "runuser -u agent -- airlock session ls | grep -q '$sid'"

# --- the upgrade, as an administrator does it: apt with the new packages
# (no network: their dependencies are those already installed).
start=$(date +%s)
if DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $debs/*.deb >"$tmp/apt.log" 2>&1; then
	ok "apt upgraded the packages ($(($(date +%s) - start)) s)"
else
	fail "apt upgraded the packages" "$(tail -n 8 "$tmp/apt.log" | tr '\n' '|')"
fi
grep -e '^Setting up' -e '^airlockd: ' -e 'onfig' "$tmp/apt.log" | sed 's/^/upgrade: apt: /'

for p in airlockd airlock libairlock0 python3-airlock; do
	check "$p is $new" sh -c "[ \"\$(dpkg-query -W -f '\${Version}' $p)\" = '$new' ]"
done

# --- the configuration: kept byte for byte, and the upgrade said so.
check "the changed configuration is kept" sh -c "[ \"\$(sha256sum $conf | cut -d' ' -f1)\" = '$sum_before' ]"
check "the upgrade said the configuration was kept" grep -q "airlockd: keeping $conf" "$tmp/apt.log"
check "no package copy was put beside it" sh -c "! ls $conf.dpkg-* 2>/dev/null | grep -q ."

# --- the service
check "the socket unit is enabled and listening" sh -c \
	'systemctl -q is-enabled airlockd.socket && systemctl -q is-active airlockd.socket && test -S /run/airlock/airlock.sock'
check "the new daemon answers" as_agent airlock ping
check "the running daemon is the new one ($new)" sh -c \
	"runuser -u agent -- airlock --json info | grep -Eq '\"daemon\": *\"airlockd $new\"'"
check "airlockd --version says $new" sh -c "airlockd --version | grep -q '^airlockd $new '"
check "the kept configuration is in force after the upgrade" sh -c \
	"runuser -u agent -- airlock --json info | grep -Eq '\"max_runs_per_uid\": *3([^0-9]|$)'"
check "a run works after the upgrade" sh -c "[ \"\$(cd $tmp && runuser -u agent -- airlock run -c 'print(6*7)')\" = 42 ]"
check "the Python package says $new" sh -c \
	"[ \"\$(python3 -c 'import importlib.metadata as m; print(m.version(\"airlock\"))')\" = '$new' ]"

# --- the session of the previous daemon
echo go >"$tmp/go"
if wait_for 30 grep -q -e '^read ' -e '^error ' "$tmp/hold.out"; then
	echo "upgrade: the holder says: $(tail -n 1 "$tmp/hold.out")"
	check "the client holding the session is told it ended" grep -q \
		-e '^error SandboxUnavailableError' -e '^error SandboxSessionClosedError' -e '^error SandboxNotFoundError' "$tmp/hold.out"
else
	fail "the client holding the session is told it ended" "no answer within 30 s: $(tr '\n' '|' <"$tmp/hold.out")"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
check "the ended session is not listed" sh -c "! runuser -u agent -- airlock session ls | grep -q '$sid'"
nsid=$(as_agent airlock session open 2>"$tmp/nsession.err")
check "a new session works after the upgrade" sh -c \
	"echo '$nsid' | grep -qE '^[0-9a-f]{32}$' && printf x >$tmp/x.txt && chmod 0644 $tmp/x.txt &&
	 runuser -u agent -- airlock put '$nsid' $tmp/x.txt x.txt &&
	 [ \"\$(cd $tmp && runuser -u agent -- airlock get '$nsid' x.txt -)\" = x ]"
as_agent airlock session close "$nsid" >/dev/null 2>&1

rm -f "$conf"
checklib_summary
