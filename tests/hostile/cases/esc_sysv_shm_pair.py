# SysV IPC is per run: two concurrent runs, one creates shm/sem/msg with fixed keys, the other must not see them.
# pair: writer reader
# check: out.startswith("WROTE") == (r["_role"] == "writer")
# expect: outcome=exited exit_code=0 stdout~=^(WROTE|BLOCKED) stdout!~=LEAK
import ctypes, errno, os, time
libc = ctypes.CDLL(None, use_errno=True)
KEY = 0x41495243
if "@ROLE@" == "writer":
    shm = libc.shmget(KEY, 4096, 0o1666)
    sem = libc.semget(KEY, 1, 0o1666)
    msg = libc.msgget(KEY, 0o1666)
    print("WROTE shm=%d sem=%d msg=%d" % (shm, sem, msg))
    time.sleep(2)
else:
    time.sleep(0.7)
    for what, r in (("shm", libc.shmget(KEY, 0, 0o666)), ("sem", libc.semget(KEY, 0, 0o666)), ("msg", libc.msgget(KEY, 0o666))):
        e = ctypes.get_errno()
        print(("BLOCKED %s" if r == -1 and e == errno.ENOENT else "LEAK %s visible") % what, r, e)
    print(open("/proc/sysvipc/shm").read())
