# subprocess = false (issue 17): an ordinary single-process program runs as
# without the switch: python starts, prints and exits without a fork or a
# thread.
# args: --profile noproc
# expect: outcome=exited exit_code=0 stderr=
# check: out == "1\n"
print(1)
