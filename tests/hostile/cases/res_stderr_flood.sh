# Flood both streams at once with a small output limit: both truncated, counted, the run ends.
# expect: outcome=exited exit_code=0 stdout_truncated=true stderr_truncated=true stdout_bytes>=67108864 stderr_bytes>=67108864
# check: len(out) <= 4096 and len(err) <= 4096
# args: --output 4K --wall 20
# within: 20
head -c 67108864 /dev/zero &
head -c 67108864 /dev/zero >&2
wait
