# The run's own limits hold for the code, whether its interpreter was started for it or pre-started at the ceilings and lowered at the hand-off: open files, file size and processes.
# args: --processes 8 --limit open_files=24 --limit file_size_bytes=65536 --wall 20
# expect: outcome=exited exit_code=0 stdout~=^DONE stdout!~=LEAK
# expect-cgroup2: outcome=process_limit stdout~=^RLIMIT_NOFILE.\(24, stdout~=^RLIMIT_FSIZE.\(65536, stdout~=^fds.below stdout~=^file.of stdout!~=LEAK
import errno, functools, os, resource, threading, time

# Each line out at once: with cgroup2 the refused thread ends the run.
print = functools.partial(print, flush=True)


def rl(name, want):
    have = resource.getrlimit(getattr(resource, name))
    if have == (want, want):
        print("%s %s" % (name, have))
    else:
        print("LEAK %s %s, wanted %s" % (name, have, (want, want)))


rl("RLIMIT_NOFILE", 24)
rl("RLIMIT_FSIZE", 65536)

fds = []
try:
    for _ in range(64):
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    print("open stopped: %s after %d" % (errno.errorcode.get(e.errno), len(fds)))
top = max(fds) if fds else -1
print(("LEAK fd %d open past 24" if top >= 24 else "fds below 24 (highest %d)") % top)
for fd in fds:
    os.close(fd)

try:
    with open("/tmp/big", "wb") as f:
        f.write(b"x" * 100000)
except OSError as e:
    print("write stopped: %s" % errno.errorcode.get(e.errno))
size = os.stat("/tmp/big").st_size
print(("LEAK file of %d bytes past 65536" if size > 65536 else "file of %d bytes") % size)

stop = threading.Event()
started = 0
try:
    for _ in range(32):
        threading.Thread(target=stop.wait, daemon=True).start()
        started += 1
except RuntimeError as e:
    print("threads stopped: %s" % e)
print(("LEAK %d threads besides the main one, processes 8" if started >= 8 else "%d threads besides the main one") % started)
stop.set()
print("DONE")
