# The code holds only fds 0, 1, 2: no lifeline, plan memfd, daemon socket or host fd leaks in; no memfd mapped.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
import os
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[int(fd)] = os.readlink("/proc/self/fd/" + fd)
    except OSError:
        pass
print(fds)
extra = [f for f in fds if f > 2 and not fds[f].startswith("/proc/")]
print(("LEAK fds %s" if extra else "BLOCKED only %s") % (extra or sorted(fds)))
maps = open("/proc/self/maps").read()
print("LEAK memfd mapped" if "memfd:" in maps else "BLOCKED no memfd mapped")
try:
    print("LEAK /proc/1/fd:", os.listdir("/proc/1/fd"))
except OSError as e:
    print("BLOCKED /proc/1/fd", e)
