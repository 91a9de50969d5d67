# Host secret files are not there: /etc/shadow, /etc/gshadow, /root, ssh host keys.
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

for p in ("/etc/shadow", "/etc/gshadow", "/root/.ssh/id_rsa", "/etc/ssh/ssh_host_ed25519_key", "/etc/sudoers", "/var/log/auth.log"):
    try_open(p)
sys.exit(0)
