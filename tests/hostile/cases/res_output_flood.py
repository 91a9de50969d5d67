# Write 1 GiB to stdout (a tenth of it with --slow 10): the run completes, kept output is capped and truncated, the total is counted.
# expect: outcome=exited exit_code=0 stdout_truncated=true stdout_bytes=@FLOOD_BYTES@
# check: len(out) <= 1048576
# args: --wall 30
# within: 30
import os
buf = b"A" * (1 << 20)
for i in range(@FLOOD_BYTES@ >> 20):
    os.write(1, buf)
