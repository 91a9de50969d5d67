# Create empty files in /tmp until the inode limit (nr_inodes=16384) says ENOSPC.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# within: 20
import errno, os
n = 0
try:
    while n < 200000:
        os.close(os.open("/tmp/%d" % n, os.O_CREAT | os.O_WRONLY))
        n += 1
    print("LEAK", n)
except OSError as e:
    print(("BLOCKED at %d" if e.errno == errno.ENOSPC and n <= 16384 else "LEAK at %d") % n, e)
