# The shell classic :(){ :|:& };: -- bounded by processes, ended by the wall, nothing survives.
# check: r["outcome"] in ("wall_limit", "exited", "signaled") + (("process_limit",) if ctx.backend == "cgroup2" else ()) and r["wall_ms"] <= 5000
# args: --wall 2
# within: 8
b() { b | b & }
b
sleep 100
