# The code has no capability in any set, no_new_privs, seccomp mode 2, uid/gid 1000, no supplementary groups.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
grep -E '^(Cap|NoNewPrivs|Seccomp|Uid|Gid|Groups)' /proc/self/status
st=$(grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status | grep -vc '0000000000000000$')
[ "$st" = 0 ] && echo "BLOCKED caps empty" || echo "LEAK caps"
grep -qE '^Seccomp:	2$' /proc/self/status && echo "BLOCKED seccomp filter" || echo "LEAK no seccomp"
grep -qE '^Uid:	1000	1000	1000	1000$' /proc/self/status && echo "BLOCKED uid 1000" || echo "LEAK uid"
grep -qE '^Groups:[[:space:]]*$' /proc/self/status && echo "BLOCKED no groups" || echo "LEAK groups $(grep Groups /proc/self/status)"
cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups
grep -q deny /proc/self/setgroups && echo "BLOCKED setgroups deny" || echo "LEAK setgroups allowed"
