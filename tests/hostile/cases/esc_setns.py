# setns into any namespace is refused; the supervisor's ns files are not ours to open.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
leaks = 0


def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return r, ctypes.get_errno()


def verdict(what, r, e, ok_errnos=(errno.EPERM,)):
    """An attempt whose call failed with one of ok_errnos is BLOCKED."""
    global leaks
    if r == -1 and e in ok_errnos:
        print("BLOCKED %s %s" % (what, errno.errorcode.get(e, e)))
    else:
        leaks += 1
        print("LEAK %s r=%s errno=%s" % (what, r, e))

for ns in ("user", "mnt", "net", "pid", "ipc", "uts"):
    try:
        fd = os.open("/proc/self/ns/" + ns, os.O_RDONLY)
    except OSError as e:
        verdict("open self ns " + ns, -1, e.errno, (errno.EACCES, errno.EPERM))
        continue
    verdict("setns " + ns, *sc(308, fd, 0))
    os.close(fd)
try:
    os.open("/proc/1/ns/mnt", os.O_RDONLY)
    verdict("open /proc/1/ns/mnt", 0, 0)
except OSError as e:
    verdict("open /proc/1/ns/mnt", -1, e.errno, (errno.EACCES, errno.EPERM))
sys.exit(0)
