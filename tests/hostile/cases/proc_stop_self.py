# The code stops itself with SIGSTOP (and its children): the wall limit still ends it.
# expect: outcome=wall_limit
# args: --wall 1
# within: 6
import os, signal
os.fork()
os.kill(os.getpid(), signal.SIGSTOP)
