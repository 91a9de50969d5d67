# ptrace/process_vm_readv of the supervisor or anything else: refused.
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

verdict("PTRACE_ATTACH 1", *sc(101, 16, 1, 0, 0))
verdict("PTRACE_SEIZE 1", *sc(101, 0x4206, 1, 0, 0))
verdict("PTRACE_TRACEME", *sc(101, 0, 0, 0, 0))
pid = os.fork()
if pid == 0:
    import time
    time.sleep(5)
    os._exit(0)
verdict("PTRACE_ATTACH own child", *sc(101, 16, pid, 0, 0))
buf = ctypes.create_string_buffer(8)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
verdict("process_vm_readv 1", *sc(310, 1, iov, 1, iov, 1, 0))
verdict("kcmp", *sc(312, 1, pid, 0, 0, 0))
verdict("pidfd_getfd", *sc(438, 0, 0, 0))
os.kill(pid, 9)
sys.exit(0)
