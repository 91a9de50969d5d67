# Set-uid binaries (su, passwd, newgrp, mount) gain nothing: nosuid + no_new_privs keep uid 1000.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
for b in /usr/bin/su /usr/bin/passwd /usr/bin/newgrp /usr/bin/mount /usr/bin/chfn /usr/bin/gpasswd; do
	[ -e "$b" ] || continue
	out=$(echo | timeout 3 "$b" 2>&1 </dev/null; echo "rc=$?")
	echo "$b: $out" | tr '\n' ' '; echo
done
out=$(echo | timeout 3 /usr/bin/su -c 'id -u' root 2>&1)
case "$out" in *"
0"*|0) echo "LEAK su ran as root: $out" ;; esac
grep -q 'NoNewPrivs:	1' /proc/self/status && echo "BLOCKED no_new_privs set"
grep -E '^Cap(Prm|Eff|Bnd|Amb|Inh):	0000000000000000$' /proc/self/status | wc -l | grep -qx 5 && echo "BLOCKED no capabilities"
grep -q ' /usr .*nosuid' /proc/self/mountinfo && echo "BLOCKED /usr nosuid"
[ "$(id -u)" = 1000 ] && echo "BLOCKED uid still 1000"
exit 0
