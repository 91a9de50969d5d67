# Sleep past the wall limit (also in a detached child): wall_limit, answered soon after 1 s.
# expect: outcome=wall_limit wall_ms<=3000
# args: --wall 1
# within: 5
(setsid sleep 1000 &)
sleep 1000
