"""A test zygote (tests/prestart/test_zygote_enter_real.c): a started
python that loads _airlock_zygote from a path, prepares one order from its
argv and forks a child that enters the run's sandbox and runs a code string
as __main__, as the zygote of docs/design-bursts.md will."""
import sys

ext, ns, cg, stdio, report, landlock = sys.argv[1:7]


def load(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_airlock_zygote", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ints(s):
    return [int(x) for x in s.split(",")]


z = load(ext)
# struct sock_filter {u16 code; u8 jt, jf; u32 k}: BPF_RET|BPF_K ALLOW
allow = (6).to_bytes(2, "little") + bytes(2) + (0x7FFF0000).to_bytes(4, "little")
z.prepare(ints(ns), int(cg), ints(stdio), int(report), 1000, 1000, [(7, 32, 32)], allow,
          landlock=int(landlock), cwd="/tmp")
CODE = r'''
import os, sys
try:
    open("/usr/zygote-test", "w")
    usr = "written"
except OSError as e:
    usr = e.errno
print("pid=%d ppid=%d uid=%d host=%s fds=%d isolated=%d usr=%s main=%s" % (
    os.getpid(), os.getppid(), os.getuid(), os.uname().nodename,
    len(os.listdir("/proc/self/fd")) - 1, sys.flags.isolated, usr, __name__))
sys.exit(5)
'''
pid = z.fork_enter()
if pid == 0:
    main = type(sys)("__main__")
    sys.modules["__main__"] = main
    exec(compile(CODE, "/run/airlock/main.py", "exec"), main.__dict__)
    raise SystemExit(0)
import os

_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
