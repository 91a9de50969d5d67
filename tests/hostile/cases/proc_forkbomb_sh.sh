# The shell classic :(){ :|:& };: -- bounded by processes, ended by the wall, nothing survives.
# check: r["outcome"] in ("wall_limit", "exited", "signaled") and r["wall_ms"] <= 5000
# args: --wall 2
# within: 8
b() { b | b & }
b
sleep 100
