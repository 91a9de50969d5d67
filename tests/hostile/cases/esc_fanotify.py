# fanotify_init and fanotify_mark: EPERM (unprivileged fanotify, Linux 5.13+, would watch the host's inodes under /usr).
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

FAN_CLOEXEC, FAN_CLASS_NOTIF, FAN_REPORT_DFID_NAME = 0x1, 0x0, 0xc00
FAN_MARK_ADD, FAN_OPEN, FAN_EVENT_ON_CHILD, AT_FDCWD = 0x1, 0x20, 0x08000000, -100
# What an unprivileged caller may ask for: a notification group reporting
# directory handles and names (the kernel refuses the rest with EPERM itself).
fd, e = sc(300, FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_REPORT_DFID_NAME, os.O_RDONLY)
verdict("fanotify_init", fd, e)
if fd >= 0:
    r, e = sc(301, fd, FAN_MARK_ADD, FAN_OPEN | FAN_EVENT_ON_CHILD, AT_FDCWD,
              ctypes.c_char_p(b"/usr/bin"))
    print("LEAK fanotify_mark on /usr/bin r=%s errno=%s" % (r, e))
    os.close(fd)
# Without the filter: EBADF for the group fd -1.
verdict("fanotify_mark", *sc(301, -1, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, ctypes.c_char_p(b"/")))
sys.exit(0)
