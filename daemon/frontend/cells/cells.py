# cells.py: the driver of an interpreter session (docs/design-interpreters.md, section 2).
#
# Sent by airlockd as the code of the session's interpreter sandbox and run
# there as `python3 -I -S -B main.py`: standard library only. It runs each
# cell in one dict of globals and answers on the channel it finds at fd 0
# (a SOCK_SEQPACKET socket from the supervisor). It runs in the code's own
# process, so the daemon trusts nothing it says: every message is checked by
# the frontend (daemon/frontend/cells.c), and a cell may break this driver at will
# (the interpreter is then restarted, and the result says the state was lost).
#
# Messages (daemon/ipc/cells_msg.h, little-endian, fixed size):
#   start: magic, flags (1: figures as SVG), cell, value_max, display_max
#          + fds: code (sealed
#          memfd), stdout, stderr, reply (memfds)
#   done:  magic, status, cell, exit_code, has_value, value_len, ndisplay,
#          8 x (mime[32], len); value then display bytes written to reply.
import ast
import io
import linecache
import os
import signal
import socket
import struct
import sys
import traceback

# linecache and traceback (about 4 ms of the interpreter's start) are
# imported here, not when a cell needs them: a cell may have cleared
# sys.modules, and an import then may fail in the driver (state lost).

MAGIC = 0x4C4C4543  # "CELL"
START = struct.Struct("<IIQII")
DONE_HEAD = struct.Struct("<IIQiIII")
DONE_DISPLAY = struct.Struct("<32sQ")
DISPLAY_MAX = 8
OK, EXCEPTION, INTERRUPTED, EXIT = 0, 1, 2, 3


# An object's rich representations as Jupyter's formatters read them (the
# method of its type; bytes for PNG, str for the text ones; a (data, metadata)
# tuple is taken too), in this order within its item group.
REPRS = (
    ("_repr_png_", "image/png"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
)
# The cell being run: its display() items in order, and the figures its
# plt.show() calls captured (the driver's only state besides the globals).
_cell = {"items": [], "name": None, "svg": False}
START_SVG = 0x1
START_BACKGROUND = 0x2  # cells_start.flags: the session keeps its cells' processes
START_DRAIN_SIGINT = 0x4  # cells_start.flags: a SIGINT pending now is the last cell's
# Cell sources for tracebacks (linecache), the oldest dropped past this.
SOURCES_MAX = 16 << 20
_sources = {}


def _user_tb(tb):
    """A traceback from the first frame of a cell's code on: the driver's
    frames (exec, eval; ast.parse's for a SyntaxError) are not the user's."""
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell "):
        tb = tb.tb_next
    return tb


def _print_exc():
    """The exception being handled, as the user's code raised it."""
    etype, e, tb = sys.exc_info()
    traceback.print_exception(etype, e, _user_tb(tb))


def _remember_source(name, code):
    """The cell's source in linecache, so that a traceback (of this cell, or
    of a function it defines, raised in a later one) shows its lines, as
    Jupyter does. Bounded: the interpreter's memory is the session's."""
    text = code.decode("utf-8", "replace")
    lines = text.splitlines(True)
    _sources[name] = len(text)
    # mtime None: linecache.checkcache() leaves the entry alone.
    linecache.cache[name] = (len(text), None, lines, name)
    while sum(_sources.values()) > SOURCES_MAX and len(_sources) > 1:
        old = next(iter(_sources))
        del _sources[old]
        linecache.cache.pop(old, None)


def _bundle(obj, plain):
    """obj's representations (REPRS) as (mime, bytes); text/plain (its repr)
    only when plain and it has no rich one. A _repr_*_ that raises is
    skipped with its traceback on stderr, as IPython does."""
    out = []
    for meth, mime in REPRS:
        if getattr(type(obj), meth, None) is None:
            continue
        try:
            data = getattr(obj, meth)()
        except Exception:
            _print_exc()
            continue
        if isinstance(data, tuple) and len(data) == 2:
            data = data[0]
        if isinstance(data, str) and mime != "image/png":
            out.append((mime, data.encode("utf-8", "backslashreplace")))
        elif isinstance(data, (bytes, bytearray)) and mime == "image/png":
            out.append((mime, bytes(data)))
    if plain and not out:
        out.append(("text/plain", repr(obj).encode("utf-8", "backslashreplace")))
    return out


def display(*objs):
    """Show each object in the cell's answer, as Jupyter's display() does:
    its rich representations, else its repr as text/plain."""
    for obj in objs:
        _cell["items"] += _bundle(obj, True)


_DISPLAY = display  # main() has a local of that name


def _figure_format():
    """PNG, or SVG when the request asks (figures_svg) or the code does
    (rcParams["savefig.format"] = "svg")."""
    mpl = sys.modules.get("matplotlib")
    if _cell["svg"] or (mpl is not None and mpl.rcParams.get("savefig.format") == "svg"):
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
    it has no display) shows the open figures in the cell's answer at that
    point, as Jupyter's inline backend does, instead of doing nothing; so a
    cell that closes its figures after showing them still shows them."""
    import matplotlib

    real = plt.show
    quiet = {b.lower() for b in getattr(matplotlib.rcsetup, "non_interactive_bk", ["agg"])}

    def show(*args, **kwargs):
        if _cell["name"] is None or plt.get_backend().lower() not in quiet:
            return real(*args, **kwargs)
        _cell["items"] += _figures()
        return None

    show.__doc__ = real.__doc__
    plt.show = show


class _PyplotFinder:
    """Imports matplotlib.pyplot as usual, then _hook_show() on it."""

    def find_spec(self, name, path, target=None):
        if name != "matplotlib.pyplot":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real = spec.loader.exec_module

        def exec_module(module):
            real(module)
            _hook_show(module)

        spec.loader.exec_module = exec_module
        return spec


def _display_items(last, budget):
    """Rich outputs in Jupyter's order: display() calls and plt.show()
    figures as they came, the trailing value's rich representations, then
    the figures left open (closed after); the first DISPLAY_MAX that fit."""
    out = _cell["items"]
    _cell["items"] = []
    if last is not None:
        out += _bundle(last, False)
    out += _figures()
    kept, used = [], 0
    for mime, data in out:
        if len(kept) == DISPLAY_MAX or used + len(data) > budget:
            continue
        kept.append((mime, data))
        used += len(data)
    return kept


def _run(code, name, g, value_max, display_max):
    """One cell: everything but a trailing expression exec'd, that one
    eval'd; its repr bounded. Returns (status, exit_code, value, display)."""
    value, display, last = None, [], None
    _cell["items"], _cell["name"] = [], name
    try:
        _remember_source(name, code)
        tree = ast.parse(code, name, "exec")
        tail = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            tail = ast.Expression(tree.body.pop().value)
        exec(compile(tree, name, "exec"), g)
        if tail is not None:
            last = eval(compile(tail, name, "eval"), g)
            if last is not None:
                g["_"] = last
                text = repr(last)
                if len(text) > value_max:
                    text = text[: value_max - 3] + "..."
                raw = text.encode("utf-8", "backslashreplace")
                while len(raw) > value_max:
                    text = text[: len(text) // 2] + "..."
                    raw = text.encode("utf-8", "backslashreplace")
                value = raw
        display = _display_items(last, display_max)
        return OK, 0, value, display
    except KeyboardInterrupt:
        sys.stderr.write("KeyboardInterrupt\n")
        return INTERRUPTED, 0, None, []
    except SystemExit as e:
        c = e.code
        if c is None:
            c = 0
        elif not isinstance(c, int) or not -(1 << 31) <= c < 1 << 31:
            c = 1  # a message, or more than the answer's int32 holds
        return EXIT, c, None, []
    except BaseException:
        _print_exc()
        return EXCEPTION, 0, None, []
    finally:
        _cell["items"], _cell["name"] = [], None


def _streams(keep):
    """sys.stdout and sys.stderr as the driver made them (over fds 1 and 2),
    whatever the last cell did to them (closed, replaced, set to None):
    otherwise the driver's own flush fails and the state is lost."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        f = keep.get(name)
        if f is None or f.closed:
            f = keep[name] = open(fd, "w", encoding=keep["encoding"], errors="backslashreplace",
                                  closefd=False)
        setattr(sys, name, f)


def _flush():
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass


def main():
    chan = socket.socket(fileno=os.dup(0))
    keep = {"stdout": sys.stdout, "stderr": sys.stderr, "encoding": sys.stdout.encoding}
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    block = {signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, block)
    g = {"__name__": "__main__", "__builtins__": __builtins__, "display": _DISPLAY}
    sys.meta_path.insert(0, _PyplotFinder())
    fdsize = struct.calcsize("i")
    while True:
        msg, anc, flags, _ = chan.recvmsg(START.size, socket.CMSG_SPACE(4 * fdsize))
        if len(msg) != START.size:
            return 0
        fds = []
        for level, typ, data in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds += struct.unpack("%di" % (len(data) // fdsize), data[: len(data) - len(data) % fdsize])
        magic, flags, cell, value_max, display_max = START.unpack(msg)
        _cell["svg"] = bool(flags & START_SVG)
        if magic != MAGIC or len(fds) != 4:
            return 70
        code_fd, out_fd, err_fd, reply_fd = fds
        os.lseek(code_fd, 0, os.SEEK_SET)  # written by the frontend: at its end
        with os.fdopen(code_fd, "rb") as f:
            code = f.read()
        # Children the last cell's processes left (killed at its end). In
        # a session with background processes (START_BACKGROUND) they may live on and
        # are the code's: a Popen waits for its own, and its status is kept.
        try:
            while not flags & START_BACKGROUND and os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        _flush()
        _streams(keep)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.close(out_fd)
        os.close(err_fd)
        # A SIGINT left over from the last cell's end (sent after that
        # cell blocked it) is not this cell's: the frontend says so
        # (START_DRAIN_SIGINT) when the supervisor sent the last cell one it
        # did not take. Without the flag a pending SIGINT is this cell's:
        # a cancel that came before it started (it is raised at once). The
        # supervisor sends it to this (the main) thread only, so it waits
        # here, blocked, whatever threads the cells started.
        if flags & START_DRAIN_SIGINT and signal.SIGINT in signal.sigpending():
            signal.sigwait(block)
        try:
            # Unblocked inside the try: a cancel already pending is raised
            # by this call, before the cell's first line, and is the cell's.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, block)
            status, code_, value, display = _run(code, "<cell %d>" % cell, g, value_max, display_max)
            # Blocked again inside the try: an interrupt that came just
            # after the cell is raised by this call, and is the cell's.
            signal.pthread_sigmask(signal.SIG_BLOCK, block)
        except KeyboardInterrupt:
            signal.pthread_sigmask(signal.SIG_BLOCK, block)
            sys.stderr.write("KeyboardInterrupt\n")
            status, code_, value, display = INTERRUPTED, 0, None, []
        _flush()
        os.dup2(null, 1)
        os.dup2(null, 2)
        head = DONE_HEAD.pack(MAGIC, status, cell, code_, value is not None,
                              len(value) if value is not None else 0, len(display))
        body = b"".join(DONE_DISPLAY.pack(m.encode()[:32], len(d)) for m, d in display)
        body += DONE_DISPLAY.pack(b"", 0) * (DISPLAY_MAX - len(display))
        with os.fdopen(reply_fd, "wb") as f:
            if value is not None:
                f.write(value)
            for _, d in display:
                f.write(d)
        chan.send(head + body)


if __name__ == "__main__":
    sys.exit(main())
