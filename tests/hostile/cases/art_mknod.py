# mknod of device nodes (in the workspace, /tmp and /dev) is refused; nodev mounts anyway.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# check: r["artifacts"] == []
import errno, os, stat
for path, dev in (("/workspace/mem", os.makedev(1, 1)), ("/tmp/vda", os.makedev(254, 0)), ("/dev/kmsg", os.makedev(1, 11))):
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, dev)
        print("LEAK mknod", path)
    except OSError as e:
        print(("BLOCKED %s" if e.errno in (errno.EPERM, errno.EACCES, errno.EROFS) else "LEAK %s") % path, e)
