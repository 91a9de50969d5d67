# Host directories do not exist in the run: /work, /home, /root, /var, /sys, the runner dir, /proc/1/root.
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

for p in ("/work", "/work/main", "/home", "/root", "/var", "/srv", "/boot", "/sys", "@TMPDIR@", "/run/systemd", "/var/run/docker.sock", "/dev/vda", "/dev/sda", "/dev/mem", "/dev/kmsg", "/dev/kvm", "/dev/fuse", "/dev/net/tun"):
    try:
        os.stat(p)
        verdict("stat " + p, 0, 0, ())
    except OSError as e:
        verdict("stat " + p, -1, e.errno, (errno.ENOENT, errno.EACCES))
import glob
print(glob.glob("/tmp/airlock-*"))
if glob.glob("/tmp/airlock-*"):
    print("LEAK host /tmp")
sys.exit(0)
