# A 100 GB sparse file is refused (EFBIG at file_size_bytes); a 1 GiB sparse one is allowed but its artifact is capped; the result comes quickly.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
# check: [(a["name"], a["size"], a["truncated"]) for a in r["artifacts"]] == [("sparse1g", 1 << 30, True)]
# args: --limit file_size_bytes=1G --limit artifact_bytes=1M --wall 10
# within: 8
import errno, os, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
fd = os.open("/workspace/sparse100g", os.O_CREAT | os.O_WRONLY)
try:
    os.ftruncate(fd, 100 << 30)
    print("LEAK 100 GB sparse file")
except OSError as e:
    print(("BLOCKED %s" if e.errno == errno.EFBIG else "LEAK %s") % "100G", e)
os.close(fd)
os.unlink("/workspace/sparse100g")
fd = os.open("/workspace/sparse1g", os.O_CREAT | os.O_WRONLY)
os.ftruncate(fd, 1 << 30)
os.close(fd)
