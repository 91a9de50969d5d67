# runfigures.py: a python run's figures, compiled with figures.py (in front
# of it) once the code imports matplotlib.pyplot (runboot.py). Figures shown
# (plt.show() with Agg) or left open at the interpreter's exit are written
# to DISPLAY_DIR, which the supervisor sends the frontend as the result's
# display items once every process is gone. It runs in the code's process:
# nothing it writes is trusted (the frontend keeps the names NNN.png and
# NNN.svg only, within the artifacts' byte limit).
DISPLAY_DIR = "/tmp/.airlock-display"  # SUP_DISPLAY_DIR
DISPLAY_MAX = 8  # PROTO_DISPLAY_MAX
_kept = [0]


def _keep(items):
    """Write the figures (mime, bytes) to DISPLAY_DIR as NNN.png or NNN.svg,
    the first DISPLAY_MAX of the run; one that cannot be written is said on
    stderr (a full /tmp)."""
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


def _loaded(plt):
    """pyplot was imported: its show() hooked (AIRLOCK_FIGURES=svg: the
    request's figures_svg), the figures left open kept at exit."""
    import atexit
    import os

    _fig["svg"] = os.environ.get("AIRLOCK_FIGURES") == "svg"
    _fig["sink"] = _keep
    _hook_show(plt)
    atexit.register(lambda: _keep(_figures()))
