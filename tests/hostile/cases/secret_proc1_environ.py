# /proc/1/environ (the supervisor's, another uid) is not readable.
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

try_open("/proc/1/environ", ok=(errno.EACCES, errno.EPERM))
try_open("/proc/1/mem", ok=(errno.EACCES, errno.EPERM))
try_open("/proc/1/root/etc/passwd", ok=(errno.EACCES, errno.EPERM))
try_open("/proc/1/cwd/x", ok=(errno.EACCES, errno.EPERM))
sys.exit(0)
