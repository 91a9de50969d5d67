# /proc shows only the run's own processes; no airlockd, no host pid.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
import ctypes, errno, os, socket, sys
leaks = 0


def verdict(what, r, e, ok_errnos):
    global leaks
    if r == -1 and e in ok_errnos:
        print("BLOCKED %s %s" % (what, errno.errorcode.get(e, e)))
    else:
        leaks += 1
        print("LEAK %s r=%s errno=%s" % (what, r, e))


def try_open(path, flags=os.O_RDONLY, ok=(errno.ENOENT, errno.EACCES, errno.EPERM, errno.EROFS)):
    try:
        fd = os.open(path, flags, 0o644)
        data = os.read(fd, 200) if not flags & (os.O_WRONLY | os.O_RDWR) else b""
        verdict("open %s %r" % (path, data[:60]), fd, 0, ok)
    except OSError as e:
        verdict("open " + path, -1, e.errno, ok)

names = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            names.append((int(pid), open("/proc/%s/comm" % pid).read().strip()))
        except OSError:
            pass
print(sorted(names))
# pid 1 is the supervisor (a clone of airlockd), the rest is this run's own
if [p for p, n in names if p != 1 and p != os.getpid()] or names[0][0] != 1:
    print("LEAK host processes visible")
try_open("/proc/@DAEMON_PID@/cmdline")
try_open("/proc/sysrq-trigger", os.O_WRONLY)
try_open("/proc/kcore")
try_open("/proc/kmsg")
sys.exit(0)
