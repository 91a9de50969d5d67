"""airlockd's zygote (docs/design-bursts.md section 3): a started
`python3 -I -S -B` that never runs user code. It takes one order at a time
from the spawner's socket and forks; the child enters the run's sandbox in
C (_airlock_zygote.fork_enter, zygote_enter.c) and only then reads the
run's code (fd 5) and runs it as __main__, ending the way a forked worker
does (atexit, thread shutdown, flush, os._exit): the interpreter's own
finalisation would copy most of the zygote's pages (section 3.1).

argv: the extension module's path, the order socket's fd, the seccomp
program's fd. Imports nothing but the extension (no `random`: its state
would be every run's). Installed in $libexecdir/airlock; started by the
spawner (spawner_zygote.c) when the frontend asks."""
import os
import sys

CODE_FD = 5
# The interpreter flags a run may have that the zygote's child can honour
# (it already runs isolated, without bytecode files): -S skips the site
# module, which a fresh run imports otherwise.
FLAGS = ("-I", "-S", "-s", "-E", "-B", "-P")


def load(path):
    import _imp

    class Spec:
        name = "_airlock_zygote"
        origin = path

    return _imp.create_dynamic(Spec)


def read_all(fd):
    chunks = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def exit_status(e):
    """The status the interpreter gives for SystemExit(e.code)."""
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1


def run_code():
    """In the entered child: the run's code as __main__, then the end.

    fd 5 holds NUL-terminated strings (docs/design-bursts.md section
    3.5): how many argv strings follow, then the run's argv after the
    interpreter, then the run's environment. The argv: the interpreter's
    flags (only
    those in FLAGS: the supervisor sends no other), then `-c TEXT ARGS` (a
    python run's start-up, whose own ARGS name the code file) or `FILE
    ARGS`, run as CPython runs them: the site module's path set-up first
    (the zygote runs with -S; a fresh run has it unless -S), then
    sys.path[0]. Nothing there (the supervisor emptied it: this child
    came too late) runs nothing."""
    raw = read_all(CODE_FD)
    os.close(CODE_FD)
    items = [a.decode("utf-8", "surrogateescape") for a in raw.split(b"\0")[:-1]]
    if not items or not items[0].isdigit() or int(items[0]) > len(items) - 1:
        os._exit(127)
    nargs = int(items[0])
    args, env = items[1 : 1 + nargs], items[1 + nargs :]
    # The run's environment, not the zygote's: os.environ's changes reach
    # the C environment too (putenv), so the code's children get it.
    os.environ.clear()
    for kv in env:
        k, sep, v = kv.partition("=")
        if sep and k:
            os.environ[k] = v
    flags = set()
    while args and args[0] in FLAGS:
        flags.add(args.pop(0))
    if not args or (args[0] == "-c" and len(args) < 2):
        os._exit(127)
    if "-S" not in flags:
        import site

        site.main()
    main = type(sys)("__main__")
    main.__builtins__ = __builtins__
    if args[0] == "-c":
        source, name = args[1], "<string>"
        sys.argv[:] = ["-c"] + args[2:]
        sys.path.insert(0, "")
    else:
        name = args[0]
        with open(name, "rb") as f:
            source = f.read()
        main.__file__ = name
        sys.argv[:] = args
        sys.path.insert(0, name.rpartition("/")[0] or "/")
    sys.modules["__main__"] = main
    status = 0
    try:
        exec(compile(source, name, "exec"), main.__dict__)
    except SystemExit as e:
        status = exit_status(e)
    except BaseException:
        # Without this frame (zygote.py's): a fresh run's traceback starts
        # at the code.
        t, v, tb = sys.exc_info()
        sys.excepthook(t, v.with_traceback(tb.tb_next), tb.tb_next)
        status = 1
    # What Py_FinalizeEx does first, in its order: wait for the threads,
    # run the atexit functions, flush the streams.
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = status or 120
    os._exit(status)


def main():
    z = load(sys.argv[1])
    sock, bpf = int(sys.argv[2]), int(sys.argv[3])
    z.set_seccomp(read_all(bpf))
    os.close(bpf)
    while z.recv_order(sock):
        pid = z.fork_enter()
        if pid == 0:
            run_code()
        # The child exits once its own child (the sandbox's pid 2) has.
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
