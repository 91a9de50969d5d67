# System calls newer than libseccomp 2.5.4 names, denied by number (ENOSYS), and calls above the reviewed table (Linux 6.18's, 470): the filter answers them itself.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
import ctypes, errno, fcntl, os, select, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
leaks = 0


def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return r, ctypes.get_errno()


def verdict(what, r, e, ok_errnos=(errno.ENOSYS,)):
    """An attempt whose call failed with one of ok_errnos is BLOCKED."""
    global leaks
    if r == -1 and e in ok_errnos:
        print("BLOCKED %s %s" % (what, errno.errorcode.get(e, e)))
    else:
        leaks += 1
        print("LEAK %s r=%s errno=%s" % (what, r, e))

# Without the filter each of these reaches the kernel (6.18 has them all) and
# fails on its arguments (EFAULT, EBADF, EINVAL), or succeeds: never ENOSYS
# (memfd_secret: unless secret memory is off on the host).
p = ctypes.c_char_p(b"")
verdict("memfd_secret", *sc(447, 0))
verdict("cachestat", *sc(451, 0, 0, 0, 0))
verdict("statmount", *sc(457, 0, 0, 0, 0))
verdict("listmount", *sc(458, 0, 0, 0, 0))
verdict("lsm_set_self_attr", *sc(460, 0, 0, 0, 0))
verdict("setxattrat", *sc(463, -1, p, 0, 0, 0, 0))
verdict("getxattrat", *sc(464, -1, p, 0, 0, 0, 0))
verdict("listxattrat", *sc(465, -1, p, 0, 0, 0))
verdict("removexattrat", *sc(466, -1, p, 0, 0))
verdict("open_tree_attr", *sc(467, -1, p, 0, 0, 0))
verdict("file_getattr", *sc(468, -1, p, 0, 0, 0))
verdict("file_setattr", *sc(469, -1, p, 0, 0, 0))
verdict("listns", *sc(470, 0, 0, 0, 0))

# Above the table the kernel says ENOSYS too, so whether the filter answered
# is shown by a second filter of our own that sends the call to a notifier
# (a child that answers 4242): the kernel takes the action of highest
# precedence, and the sandbox filter's ERRNO ranks above USER_NOTIF.
for nr in (471, 500):
    prog = struct.pack("HBBI" * 4,
                       0x20, 0, 0, 0,                 # ld [nr]
                       0x15, 0, 1, nr,                # jeq nr
                       0x06, 0, 0, 0x7fc00000,        # ret USER_NOTIF
                       0x06, 0, 0, 0x7fff0000)        # ret ALLOW
    insns = ctypes.create_string_buffer(prog, len(prog))
    fprog = struct.pack("HxxxxxxQ", 4, ctypes.addressof(insns))
    fprog_buf = ctypes.create_string_buffer(fprog, len(fprog))
    # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog)
    listener, e = sc(317, 1, 8, fprog_buf)
    if listener < 0:
        print("LEAK cannot set up the notifier: errno %s" % e)
        leaks += 1
        break
    helper = os.fork()
    if helper == 0:
        if select.select([listener], [], [], 10)[0]:
            req = bytearray(80)                    # struct seccomp_notif
            fcntl.ioctl(listener, 0xC0502100, req)  # SECCOMP_IOCTL_NOTIF_RECV
            resp = struct.pack("QqiI", struct.unpack_from("Q", req)[0], 4242, 0, 0)
            fcntl.ioctl(listener, 0xC0182101, bytearray(resp))  # SECCOMP_IOCTL_NOTIF_SEND
        os._exit(0)
    os.close(listener)
    r, e = sc(nr)
    os.kill(helper, 9)
    os.waitpid(helper, 0)
    verdict("nr %d (above the reviewed table), answered by the filter" % nr, r, e)
sys.exit(0)
