# runboot.py: a python run's start-up (docs/design-interpreters.md, "figures
# of a plain run"). The build puts pyplot_hook.py in front of it and, as the
# text _LATER, figures.py and runfigures.py (compiled only once the code
# imports matplotlib.pyplot); the frontend runs the whole as `PROGRAM
# [FLAGS] -c BOOT CODE_FILE ARGS` (run_plan.c), in a namespace of its own:
# the code's __main__ holds nothing of it. It makes the run what `PROGRAM
# [FLAGS] CODE_FILE ARGS` would be, plus the hook. Kept small: every python
# run compiles it (a run's cost, measured in docs/performance.md).
import posix
import sys


def _pyplot_loaded(plt):
    g = {"__name__": "airlock_figures", "__builtins__": __builtins__}
    exec(_LATER, g)
    g["_loaded"](plt)


def _excepthook(etype, e, tb):
    """The code's frames only, not this start-up's, printed by CPython's
    own hook (which reads the exception's traceback)."""
    while tb is not None and tb.tb_frame.f_code.co_filename != sys.argv[0]:
        tb = tb.tb_next
    if isinstance(e, BaseException):
        e.__traceback__ = tb
    sys.__excepthook__(etype, e, tb)


def _main():
    path = sys.argv[1]
    del sys.argv[0]
    if sys.path and sys.path[0] == "":  # -c's; a script's is its directory
        sys.path[0] = path.rpartition("/")[0] or "/"
    sys.meta_path.insert(0, _PyplotFinder(_pyplot_loaded))
    sys.excepthook = _excepthook
    # The first compile() of a process builds CPython's AST types (0.6 ms;
    # running a script does not). A pre-started interpreter's code file is
    # a FIFO until its run comes: it builds them now, before its run.
    if posix.stat(path).st_mode & 0o170000 == 0o010000:
        compile("", path, "exec")
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    main = sys.modules["__main__"]
    main.__file__, main.__cached__ = path, None
    exec(code, main.__dict__)


_main()
