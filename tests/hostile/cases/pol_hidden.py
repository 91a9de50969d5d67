# hidden_paths (issue 17): under the profile "hidden" (hidden_paths =
# /usr/bin/true, /usr/share/doc, /etc/alternatives) each path is absent whatever way
# the code looks: stat, lstat, open, O_PATH, openat from its parent, a
# listing of the parent, other spellings of the path, /proc/self/root, the
# merged-/usr link /bin, chdir, exec (directly, through /bin, through ld.so),
# any mount of /proc/self/mountinfo that has the file beneath it, after
# trying to unmount or remount the overlay, and any other name of the same
# file in /usr/bin and /usr/sbin (a hard link or a symlink to it). The
# whiteout layer is nowhere to be seen and mountinfo names no host path for
# it. The control run, without the profile, reaches every one of them (LEAK):
# the case shows what the switch stops.
# args: --profile hidden
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK stdout!~=LAYERSEEN stdout~=^OVERLAY.lowerdir=run/airlock/.layer:usr
# control:
# control-expect: outcome=exited exit_code=0 stdout~=^LEAK stdout!~=^BLOCKED stdout!~=LAYERSEEN
# before: assert all(os.path.exists(p) for p in ("/usr/bin/true", "/usr/share/doc", "/etc/alternatives")), "the host lacks a path this case hides"
# before: st = os.stat("/usr/bin/true"); ctx.subst["TRUE_INO"] = "%d:%d" % (st.st_ino, st.st_size)
import ctypes, errno, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p)
HIDDEN = ["/usr/bin/true", "/usr/share/doc", "/etc/alternatives"]
MNT_DETACH, MS_REMOUNT, MS_BIND, MS_RDONLY = 2, 32, 4096, 1


def route(what, fn):
    """fn() returning normally reached the path: LEAK; an OSError: BLOCKED."""
    try:
        got = fn()
    except OSError as e:
        print("BLOCKED %s %s" % (what, errno.errorcode.get(e.errno, e.errno)))
        return
    print("LEAK %s -> %r" % (what, str(got)[:80]))


def in_listing(d, name):
    if name not in os.listdir(d):
        raise OSError(errno.ENOENT, "not listed")
    return name


def openat(parent, name, flags=os.O_RDONLY):
    dfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = os.open(name, flags, dir_fd=dfd)
        os.close(fd)
        return name
    finally:
        os.close(dfd)


def run(argv):
    p = subprocess.run(argv, capture_output=True)
    if p.returncode != 0:  # ld.so: "cannot open shared object", 127
        raise OSError(errno.ENOENT, p.stderr.decode(errors="replace")[:60])
    return p.returncode


def sys_then_stat(call, args, path):
    """A mount call (failing or not), then whether path is reachable."""
    call(*args)
    return os.stat(path)


def via_mountinfo(path):
    """Every mount whose root holds path: its mount point + the rest."""
    seen = []
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        root, mp = f[3], f[4]
        if path == root or path.startswith(root.rstrip("/") + "/"):
            cand = os.path.join(mp, path[len(root.rstrip("/")):].lstrip("/"))
            try:
                os.stat(cand)
                return cand
            except OSError:
                seen.append(cand)
    raise OSError(errno.ENOENT, "none of %s" % seen)


def same_inode(spec):
    ino, size = (int(x) for x in spec.split(":"))
    for d in ("/usr/bin", "/usr/sbin"):
        for n in os.listdir(d):
            try:
                st = os.stat(os.path.join(d, n))
            except OSError:
                continue
            if st.st_ino == ino and st.st_size == size:
                return os.path.join(d, n)
    raise OSError(errno.ENOENT, "no other name")


for h in HIDDEN:
    parent, base = os.path.split(h)
    route("stat " + h, lambda: os.stat(h))
    route("lstat " + h, lambda: os.lstat(h))
    route("open " + h, lambda: os.close(os.open(h, os.O_RDONLY)) or h)
    route("O_PATH " + h, lambda: os.close(os.open(h, os.O_PATH)) or h)
    route("openat " + h, lambda: openat(parent, base))
    route("listdir " + parent, lambda: in_listing(parent, base))
    route("//" + h, lambda: os.stat("/" + h))
    route("dot " + h, lambda: os.stat(parent + "/./" + base))
    route("dotdot " + h, lambda: os.stat(parent + "/../" + os.path.basename(parent) + "/" + base))
    route("/proc/self/root " + h, lambda: os.stat("/proc/self/root" + h))
    route("mountinfo " + h, lambda: via_mountinfo(h))
    mp = "/usr" if h.startswith("/usr/") else h
    route("umount2 %s then %s" % (mp, h),
          lambda: sys_then_stat(libc.umount2, (mp.encode(), MNT_DETACH), h))
    route("remount %s then %s" % (mp, h),
          lambda: sys_then_stat(libc.mount, (None, mp.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None), h))
    if h.startswith("/usr/bin/"):
        route("/bin link " + h, lambda: os.stat(h[4:]))
    if os.path.basename(parent) != "bin":
        route("chdir " + h, lambda: os.chdir(h) or os.getcwd())
        os.chdir("/")

t = "/usr/bin/true"
route("exec " + t, lambda: run([t]))
route("exec /bin/true", lambda: run(["/bin/true"]))
# The dynamic loader this python runs under, as a program of its own.
ldso = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/ld-" in l})
if ldso:
    route("exec %s %s" % (ldso[0], t), lambda: run([ldso[0], t]))
else:
    print("LEAK no ld.so found to try")
route("same inode as " + t, lambda: same_inode("@TRUE_INO@"))

# The layer is gone from the sandbox; the overlay names no host path.
if os.path.lexists("/run/airlock/.layer"):
    print("LAYERSEEN /run/airlock/.layer")
for line in open("/proc/self/mountinfo"):
    f = line.split()
    if f[4] == "/usr" and "overlay" in line:
        print("OVERLAY " + [o for o in line.split()[-1].split(",") if o.startswith("lowerdir=")][0])
sys.exit(0)
