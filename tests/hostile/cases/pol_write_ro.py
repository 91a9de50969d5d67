# file_write = false (issue 17): under the profile "readonly" every route to a
# new or changed file fails, in the workspace, the cwd, /tmp, HOME, /dev/shm
# and the rest of the root: EROFS (a read-only mount) or EACCES (/dev, root's).
# Reading still works; a memfd (memory under the memory limit, not a file) is
# allowed and says so; the run leaves no artifact. Without the profile the
# same program reports LEAK for the workspace and /tmp routes.
# args: --profile readonly --file in/data.txt=/etc/passwd
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK stdout~=^READ stdout~=^ALLOWED.memfd
# check: not r.get("artifacts")
import ctypes, errno, os, socket, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
leaks = 0
OK = (errno.EROFS, errno.EACCES)


def verdict(what, fn, ok_errnos=OK):
    """An attempt that raised OSError with one of ok_errnos is BLOCKED."""
    global leaks
    try:
        fn()
    except OSError as e:
        if e.errno in ok_errnos:
            print("BLOCKED %s %s" % (what, errno.errorcode.get(e.errno, e.errno)))
            return
        leaks += 1
        print("LEAK %s errno=%s" % (what, errno.errorcode.get(e.errno, e.errno)))
        return
    leaks += 1
    print("LEAK %s succeeded" % what)


def bind_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(path)
    finally:
        s.close()


def tmpfile(d):
    os.close(os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o600))


home = os.environ.get("HOME", "/tmp/home")
dirs = ["/workspace", os.getcwd(), "/tmp", "/dev/shm", home, "/workspace/in", "/", "/run/airlock",
        "/etc", "/usr", "/dev"]
for d in dirs:
    n = os.path.join(d, "new-")  # one name per route: each is tried on its own
    verdict("%s open(O_CREAT)" % d, lambda: os.close(os.open(n + "file", os.O_CREAT | os.O_WRONLY, 0o644)))
    verdict("%s open(O_TMPFILE)" % d, lambda: tmpfile(d))
    verdict("%s mkdir" % d, lambda: os.mkdir(n + "dir"))
    verdict("%s mkfifo" % d, lambda: os.mkfifo(n + "fifo"))
    verdict("%s mknod(S_IFREG)" % d, lambda: os.mknod(n + "node", stat.S_IFREG | 0o644))
    verdict("%s symlink" % d, lambda: os.symlink("/etc/passwd", n + "link"))
    verdict("%s bind(AF_UNIX)" % d, lambda: bind_unix(n + "sock"))

# What exists already: the input file and its directory, HOME, /tmp itself.
f = "/workspace/in/data.txt"
routes = [
    ("open(O_WRONLY)", lambda: os.open(f, os.O_WRONLY)),
    ("open(O_RDWR)", lambda: os.open(f, os.O_RDWR)),
    ("open(O_APPEND)", lambda: os.open(f, os.O_WRONLY | os.O_APPEND)),
    ("open(O_TRUNC)", lambda: os.open(f, os.O_RDONLY | os.O_TRUNC)),
    ("truncate", lambda: os.truncate(f, 0)),
    ("rename", lambda: os.rename(f, "/workspace/in/moved.txt")),
    ("rename dir", lambda: os.rename("/workspace/in", "/workspace/out")),
    ("rename HOME", lambda: os.rename(home, "/tmp/h2")),
    ("link", lambda: os.link(f, "/workspace/in/hard.txt")),
    ("unlink", lambda: os.unlink(f)),
    ("rmdir HOME", lambda: os.rmdir(home)),
    ("chmod", lambda: os.chmod(f, 0o777)),
    ("chmod /tmp", lambda: os.chmod("/tmp", 0o777)),
    ("utime", lambda: os.utime(f, (0, 0))),
    ("setxattr", lambda: os.setxattr(f, "user.x", b"1")),
]
for what, fn in routes:
    verdict(what, fn)
verdict("chown", lambda: os.chown(f, 1000, 1000), OK + (errno.EPERM,))

# Reading is what such a run is for.
with open(f) as fh:
    print("READ %d bytes of %s; workspace: %s" % (len(fh.read()), f, sorted(os.listdir("/workspace"))))
# Not a file: in memory, under the memory limit, gone with the run.
fd = os.memfd_create("scratch")
os.write(fd, b"x" * 4096)
print("ALLOWED memfd %d bytes" % os.fstat(fd).st_size)
os.close(fd)
sys.exit(0)
