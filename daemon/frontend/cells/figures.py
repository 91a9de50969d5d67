# figures.py: open matplotlib figures as display items, and plt.show() that
# shows them, shared by the cells driver (cells.py) and a python run's
# start-up (runboot.py: compiled only once the run imports pyplot). The
# build puts this file in front of cells.py (daemon/frontend/meson.build).
import io
import sys

# svg: the request's figures_svg. sink: where plt.show() puts the figures it
# shows (a list of (mime, bytes)); None: show() does what it would anyway.
_fig = {"svg": False, "sink": None}


def _figure_format():
    """PNG, or SVG when the request asks (figures_svg) or the code does
    (rcParams["savefig.format"] = "svg")."""
    mpl = sys.modules.get("matplotlib")
    if _fig["svg"] or (mpl is not None and mpl.rcParams.get("savefig.format") == "svg"):
        return "svg"
    return "png"


def _figures():
    """The open matplotlib figures, each as PNG (or SVG), then closed."""
    plt = sys.modules.get("matplotlib.pyplot")
    out = []
    if plt is None:
        return out
    fmt = _figure_format()
    for num in list(plt.get_fignums()):
        fig = plt.figure(num)
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt)
        plt.close(fig)
        out.append(("image/svg+xml" if fmt == "svg" else "image/png", buf.getvalue()))
    return out


def _hook_show(plt):
    """plt.show() with a backend that draws on no screen (Agg, the sandbox's:
    it has no display) gives the open figures to the sink at that point, as
    Jupyter's inline backend does, instead of doing nothing; so code that
    closes its figures after showing them still shows them."""
    import matplotlib

    real = plt.show
    quiet = {b.lower() for b in getattr(matplotlib.rcsetup, "non_interactive_bk", ["agg"])}

    def show(*args, **kwargs):
        sink = _fig["sink"]
        if sink is None or plt.get_backend().lower() not in quiet:
            return real(*args, **kwargs)
        sink(_figures())
        return None

    show.__doc__ = real.__doc__
    plt.show = show
