# subprocess = false (issue 17): under the profile "noproc" the code stays one
# process with one thread running one program. Every route to a second
# process, a thread or another program fails with EPERM (clone3: ENOSYS, so
# the C library falls back to clone); the exec fd the daemon used is gone and
# cannot be made again; the run ends as the code says (exit 3, not a process
# limit). Without the profile the same program reports LEAK for nearly all.
# args: --profile noproc
# expect: outcome=exited exit_code=3 stdout~=^BLOCKED stdout!~=LEAK stdout~=^DONE
import ctypes, errno, os, resource, subprocess, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
leaks = 0
# x86_64 numbers; other architectures' hosts skip the raw calls (os.* covers them).
NR = {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "execveat": 322, "io_uring_setup": 425}
RAW = os.uname().machine == "x86_64"
SIGCHLD = 17
AT_EMPTY_PATH = 0x1000
AT_FDCWD = -100


def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return r, ctypes.get_errno()


def raw(what, nr, *a, ok=(errno.EPERM,)):
    """A raw call that must fail with one of ok; a child it made exits at once."""
    global leaks
    if not RAW:
        return
    r, e = sc(nr, *a)
    if r == 0:
        os._exit(0)  # the child of a fork or clone that got through
    if r == -1 and e in ok:
        print("BLOCKED %s %s" % (what, errno.errorcode.get(e, e)))
    else:
        leaks += 1
        print("LEAK %s r=%s errno=%s" % (what, r, e))
        if r > 0:
            os.waitpid(r, 0)


def py(what, fn, ok=(errno.EPERM,)):
    """A Python route that must raise OSError with one of ok."""
    global leaks
    try:
        r = fn()
    except OSError as ex:
        if ex.errno in ok:
            print("BLOCKED %s %s" % (what, errno.errorcode.get(ex.errno, ex.errno)))
            return
        leaks += 1
        print("LEAK %s errno=%s" % (what, ex.errno))
        return
    leaks += 1
    print("LEAK %s succeeded: %r" % (what, r))


def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


raw("fork", NR["fork"])
raw("vfork", NR["vfork"])
raw("clone(SIGCHLD)", NR["clone"], SIGCHLD, 0, 0, 0, 0)
raw("clone(CLONE_VFORK)", NR["clone"], 0x4000 | SIGCHLD, 0, 0, 0, 0)
args = (ctypes.c_uint64 * 11)()
args[4] = SIGCHLD  # exit_signal
raw("clone3", NR["clone3"], ctypes.byref(args), 88, ok=(errno.ENOSYS, errno.EPERM))
py("os.fork", fork)
py("os.posix_spawn", lambda: os.posix_spawn("/bin/true", ["true"], {}))
py("subprocess.run", lambda: subprocess.run(["/bin/true"]))
py("os.execv", lambda: os.execv("/bin/true", ["true"]))
py("os.execv ld.so", lambda: os.execv("/lib64/ld-linux-x86-64.so.2", ["ld.so", "/bin/true"]),
   ok=(errno.EPERM, errno.ENOENT) if not os.path.exists("/lib64/ld-linux-x86-64.so.2") else (errno.EPERM,))
fd = os.open("/bin/true", os.O_RDONLY)
raw("execveat(fd)", NR["execveat"], fd, b"", None, None, AT_EMPTY_PATH)
raw("execveat(/proc/self/fd)", NR["execveat"], AT_FDCWD, b"/proc/self/fd/%d" % fd, None, None, 0)
raw("execveat(4095, no AT_EMPTY_PATH)", NR["execveat"], 4095, b"", None, None, 0)
# The daemon's exec fd is closed; the only exec the filter lets through
# needs it, and no fd of that number can be made again.
raw("execveat(4095)", NR["execveat"], 4095, b"", None, None, AT_EMPTY_PATH, ok=(errno.EBADF,))
py("dup2 to 4095", lambda: os.dup2(fd, 4095), ok=(errno.EBADF,))
py("F_DUPFD 4095", lambda: __import__("fcntl").fcntl(fd, __import__("fcntl").F_DUPFD, 4095), ok=(errno.EINVAL,))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
try:  # Python turns the kernel's EPERM into ValueError
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, 4096))
    leaks += 1
    print("LEAK raise RLIMIT_NOFILE to 4096")
except (ValueError, OSError) as ex:
    print("BLOCKED raise RLIMIT_NOFILE %s" % ex)
raw("io_uring_setup", NR["io_uring_setup"], 8, ctypes.create_string_buffer(120))
try:
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
    leaks += 1
    print("LEAK thread started")
except RuntimeError as ex:
    print("BLOCKED threading.Thread %s" % ex)
print("DONE pid %d, %d leaks, open_files %d" % (os.getpid(), leaks, hard))
sys.exit(3 if leaks == 0 else 1)
