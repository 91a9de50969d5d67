# The main process exits at once; a detached grandchild keeps stdout/stderr open and sleeps. The run must end promptly with the main process's status, not at the wall.
# expect: outcome=exited exit_code=7 wall_ms<=3000
# args: --wall 20
# within: 5
(setsid sh -c 'trap "" HUP TERM; sleep 1000' &)
echo started
exit 7
