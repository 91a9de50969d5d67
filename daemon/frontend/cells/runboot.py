# runboot.py: a python run's start-up (docs/design-interpreters.md, "figures
# of a plain run"). The build puts pyplot_hook.py in front of it and
# _FIGURES (figures.py's text) between them, and the frontend runs the whole
# as `PROGRAM [FLAGS] -c BOOT CODE_FILE ARGS` (run_plan.c), in a namespace
# of its own: the code's __main__ holds nothing of it. It makes the run what
# `PROGRAM [FLAGS] CODE_FILE ARGS` would be, with a hook on
# matplotlib.pyplot: figures shown (plt.show() with Agg) or left open at
# the end are written to DISPLAY_DIR, which the supervisor sends the
# frontend as the result's display items once every process is gone. It
# runs in the code's process: nothing it writes is trusted (the frontend
# checks the names, the sizes are the artifacts' budget).
import sys

DISPLAY_DIR = "/tmp/.airlock-display"
DISPLAY_MAX = 8  # PROTO_DISPLAY_MAX
_kept = [0]


def _keep(items):
    """Write the figures (mime, bytes) to DISPLAY_DIR as NNN.png or NNN.svg,
    the first DISPLAY_MAX of the run; one that cannot be written is said on
    stderr (a read-only /tmp: a profile with file_write = false)."""
    import os

    for mime, data in items:
        if _kept[0] >= DISPLAY_MAX:
            return
        name = "%s/%03d.%s" % (DISPLAY_DIR, _kept[0], "svg" if mime == "image/svg+xml" else "png")
        try:
            if _kept[0] == 0:
                # Readable by the supervisor, which reads them as the
                # workspace's files, with no capability over the code's.
                os.makedirs(DISPLAY_DIR, 0o755, exist_ok=True)
            with open(name, "xb") as f:
                f.write(data)
        except OSError as e:
            sys.stderr.write("airlock: a figure was not kept: %s\n" % e)
            return
        _kept[0] += 1


def _pyplot_loaded(plt):
    """pyplot was imported: figures.py now, its show() hooked, and the
    figures left open kept at the interpreter's exit."""
    import atexit
    import os

    g = {"__name__": "airlock_figures", "__builtins__": __builtins__}
    exec(compile(_FIGURES, "<airlock figures>", "exec"), g)
    g["_fig"]["svg"] = os.environ.get("AIRLOCK_FIGURES") == "svg"
    g["_fig"]["sink"] = _keep
    g["_hook_show"](plt)
    atexit.register(lambda: _keep(g["_figures"]()))


def _user_frames(path):
    """sys.excepthook showing the code's frames only, not this start-up's."""

    def hook(etype, e, tb):
        while tb is not None and tb.tb_frame.f_code.co_filename != path:
            tb = tb.tb_next
        # CPython's own printing, which reads the exception's traceback.
        if isinstance(e, BaseException):
            e.__traceback__ = tb
        sys.__excepthook__(etype, e, tb)

    return hook


def _main():
    path = sys.argv[1]
    del sys.argv[0]
    if sys.path and sys.path[0] == "":  # -c's; a script's is its directory
        sys.path[0] = path.rpartition("/")[0] or "/"
    sys.meta_path.insert(0, _PyplotFinder(_pyplot_loaded))
    sys.excepthook = _user_frames(path)
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    main = sys.modules["__main__"]
    main.__file__, main.__cached__ = path, None
    exec(code, main.__dict__)


_main()
