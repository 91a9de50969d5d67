# subprocess = false (issue 17): a shell under it runs its builtins, but a
# command it would fork for fails (EPERM) and the shell says so; the run
# ends with the shell's own status (dash gives up with 2 on a failed fork).
# args: --profile noproc
# expect: outcome=exited exit_code!=0 stdout~=^builtin stdout!~=external stderr~=[Ff]ork
echo builtin
/bin/echo external
exit 7
