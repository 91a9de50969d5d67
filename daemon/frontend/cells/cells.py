# cells.py: the driver of an interpreter session (docs/design-interpreters.md, section 2).
#
# Sent by airlockd as the code of the session's interpreter sandbox (after
# pyplot_hook.py and figures.py, which the build puts in front of it) and run
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
#          value_display (bit i: item i is the value's), reserved,
#          8 x (mime[32], len), ename_len, evalue_len, tb_len, 0; value,
#          display, then the exception's bytes written to reply.
import ast
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
DONE_HEAD = struct.Struct("<IIQiIIIII")
DONE_DISPLAY = struct.Struct("<32sQ")
DONE_ERROR = struct.Struct("<IIII")
# The exception's fields' bounds (common/proto.h PROTO_ENAME_MAX, ...):
# the frontend refuses more, and restarts the interpreter.
ENAME_MAX, EVALUE_MAX, TB_MAX = 256, 4096, 16 << 10
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
# plt.show() calls captured (the driver's only state besides the globals;
# the figure code, _fig and _figures, is figures.py's, put in front of this
# file by the build with pyplot_hook.py's _PyplotFinder).
_cell = {"items": [], "name": None, "ipython": False, "ip_value": None, "ip_exc": None,
         "ip_fmt": 0, "value_span": (0, 0), "value_mask": 0, "stream": False, "error": None}
START_SVG = 0x1
START_BACKGROUND = 0x2  # cells_start.flags: the session keeps its cells' processes
START_DRAIN_SIGINT = 0x4  # cells_start.flags: a SIGINT pending now is the last cell's
START_STREAM = 0x10  # cells_start.flags: the output is streamed (design-jupyter.md section 6.3)
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


def _utf8(text, limit, front=False):
    """text as UTF-8 without NUL, at most limit bytes: cut at its end (at
    its front after a "...\\n" line, front), never inside a character."""
    raw = text.replace("\0", "\\x00").encode("utf-8", "backslashreplace")
    if len(raw) <= limit:
        return raw
    if front:
        return b"...\n" + raw[len(raw) - limit + 4 :].decode("utf-8", "ignore").encode()
    return raw[:limit].decode("utf-8", "ignore").encode()


def _cell_error(quiet=False):
    """The exception being handled as the done message's fields
    (design-jupyter.md section 6.2): its type's name (as ipykernel gives it, a
    single word: the frontend refuses a space or a control character),
    str() of it and the traceback from the user's first frame; printed on
    stderr too unless quiet or the output is streamed. Never raises: a cell's
    exception may have a __str__ that does."""
    etype, e, tb = sys.exc_info()
    if not quiet and not _cell["stream"]:
        _print_exc()
    try:
        name = "".join(c if c.isprintable() and not c.isspace() else "_" for c in etype.__name__)
        try:
            value = str(e)
        except Exception:
            value = "<unprintable %s object>" % name
        text = "".join(traceback.format_exception(etype, e, _user_tb(tb)))
    except Exception:
        name, value, text = "Exception", "", ""
    _cell["error"] = (_utf8(name or "Exception", ENAME_MAX), _utf8(value, EVALUE_MAX),
                      _utf8(text, TB_MAX, front=True))


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


def _show_sink(items):
    """plt.show() in a cell: its figures are the cell's items at that point."""
    _cell["items"] += items


# IPython (docs/design-jupyter.md section 5): a cell whose request asks for it
# (START_IPYTHON) runs through IPython's InteractiveShell when the runtime can
# import it, on the same globals as the plain cells. Only the display
# publisher, the displayhook, the tracebacks and `!cmd` are the driver's.
START_IPYTHON = 0x8
IPYTHON_MISSING = "airlock: IPython is not importable in this runtime; plain Python\n"
# The richest first: one display item per display(), as the plain driver's.
IPYTHON_MIMES = ("image/png", "image/svg+xml", "text/html", "text/markdown", "text/latex", "application/json",
                 "text/plain")
_ipython = {"shell": None, "tried": False, "classes": None}


def _ipython_item(data):
    """The richest (mime, bytes) of a mime bundle IPython formatted, or None."""
    import base64

    for mime in IPYTHON_MIMES:
        v = data.get(mime)
        if v is None:
            continue
        if mime == "image/png":
            return mime, bytes(v) if isinstance(v, (bytes, bytearray)) else base64.b64decode(v)
        if mime == "application/json":
            import json  # IPython's own import: never the first

            try:
                return mime, json.dumps(v).encode("utf-8")
            except (TypeError, ValueError):
                continue
        if isinstance(v, str):
            return mime, v.encode("utf-8", "backslashreplace")
    return None


def _ipython_classes():
    """The shell's display publisher, displayhook and shell, the driver's way."""
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kw):
            item = _ipython_item(data)
            if item is not None:
                _cell["items"].append(item)

    class Hook(DisplayHook):
        # The value goes in the cell's answer, never to stdout as Out[n].
        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            _cell["ip_value"] = format_dict

        def finish_displayhook(self):
            pass

    class Shell(InteractiveShell):
        def showtraceback(self, exc_tuple=None, filename=None, tb_offset=None, exception_only=False,
                          running_compiled_code=False):
            # A _repr_*_ that raised: skipped, its traceback on stderr, as in
            # the plain driver. Any other is the cell's: kept, and raised by
            # _ipython_exec into the driver's one exception path.
            try:
                info = self._get_exc_info(exc_tuple)
            except ValueError:
                return  # no exception to show
            if _cell["ip_fmt"]:
                traceback.print_exception(info[0], info[1], _user_tb(info[2]))
            elif _cell["ip_exc"] is None:
                _cell["ip_exc"] = info

        def showsyntaxerror(self, filename=None, running_compiled_code=False):
            if _cell["ip_exc"] is None:
                _cell["ip_exc"] = self._get_exc_info()

        def showindentationerror(self):
            self.showsyntaxerror()

        def enable_gui(self, gui=None):
            # %matplotlib inline asks no event loop; a GUI one has no
            # display to draw on in the sandbox (as ipykernel without one).
            if gui not in (None, "inline"):
                raise NotImplementedError("no GUI event loop in the sandbox: %%matplotlib inline")

        def system(self, cmd):
            # `!cmd`: a child of this interpreter (subprocess, /bin/sh), so
            # inside the sandbox, in the session's namespaces and limits, a
            # process of the cell killed at its end like any other; never
            # IPython's pexpect path, which needs a pty.
            _flush()
            self.system_raw(cmd)

    return Shell, Publisher, Hook


def _ipython_shell(g):
    """The session's InteractiveShell on the globals g; None (and a line on
    the cell's stderr saying so) when the runtime cannot import IPython."""
    if _ipython["shell"] is not None or _ipython["tried"]:
        if _ipython["shell"] is None:
            sys.stderr.write(IPYTHON_MISSING)
        return _ipython["shell"]
    # IPython keeps a profile directory: a private one in /tmp, not in the
    # workspace (whose new files would be the cell's artifacts).
    if "IPYTHONDIR" not in os.environ:
        import tempfile

        os.environ["IPYTHONDIR"] = tempfile.mkdtemp(prefix="ipython-")
    before = set(sys.modules)
    try:
        from traitlets.config import Config

        # Made once: an interrupted set-up's shell may exist already, and
        # instance() gives it only to the class that made it.
        _ipython["classes"] = _ipython["classes"] or _ipython_classes()
        shell_cls, pub, hook = _ipython["classes"]
    except ImportError:
        # Said for every cell that asks, tried once.
        _ipython["tried"] = True
        sys.stderr.write(IPYTHON_MISSING)
        return None
    except BaseException:
        # An interrupt in the middle of the import leaves modules half
        # made, which the next cell's import would take as they are (an
        # ImportError): dropped, so that it imports them afresh.
        for name in set(sys.modules) - before:
            del sys.modules[name]
        raise
    cfg = Config()
    cfg.HistoryManager.hist_file = ":memory:"  # no sqlite file
    cfg.InteractiveShell.colors = "NoColor"
    shell = shell_cls.instance(config=cfg, user_ns=g, display_pub_class=pub, displayhook_class=hook)
    # Tracebacks and linecache name the cell as the plain driver does.
    shell.compile.get_code_name = lambda raw, transformed, number: _cell["name"]
    fmt = shell.display_formatter.format

    def format(*args, **kwargs):
        _cell["ip_fmt"] += 1
        try:
            return fmt(*args, **kwargs)
        finally:
            _cell["ip_fmt"] -= 1

    shell.display_formatter.format = format
    if g.get("display") is _DISPLAY:
        from IPython.display import display as ip_display

        g["display"] = ip_display
    _ipython["shell"] = shell
    return shell


def _ipython_exec(shell, code):
    """Run one cell through the shell. Returns the value's format bundle (or
    None); an exception of the cell is raised here, with its traceback."""
    _cell["ip_value"], _cell["ip_exc"], _cell["ip_fmt"] = None, None, 0
    shell.run_cell(code.decode("utf-8", "replace"), store_history=True)
    exc = _cell["ip_exc"]
    _cell["ip_exc"] = None
    if exc is not None and exc[1] is not None:
        raise exc[1].with_traceback(exc[2])
    value, _cell["ip_value"] = _cell["ip_value"], None
    return value


def _display_items(last, budget):
    """Rich outputs in Jupyter's order: display() calls and plt.show()
    figures as they came, the trailing value's rich representations, then
    the figures left open (closed after); the first DISPLAY_MAX that fit."""
    out = _cell["items"]
    _cell["items"] = []
    start, end = _cell["value_span"]
    if last is not None:
        start = len(out)
        out += _bundle(last, False)
        end = len(out)
    out += _figures()
    kept, used = [], 0
    for i, (mime, data) in enumerate(out):
        if len(kept) == DISPLAY_MAX or used + len(data) > budget:
            continue
        # The value's representations, marked: with its text/plain they
        # are one bundle, Jupyter's execute_result.
        if start <= i < end:
            _cell["value_mask"] |= 1 << len(kept)
        kept.append((mime, data))
        used += len(data)
    return kept


def _bounded(text, value_max):
    """A value's text as at most value_max bytes of UTF-8."""
    if len(text) > value_max:
        text = text[: value_max - 3] + "..."
    raw = text.encode("utf-8", "backslashreplace")
    while len(raw) > value_max:
        text = text[: len(text) // 2] + "..."
        raw = text.encode("utf-8", "backslashreplace")
    return raw


def _ipython_value(fmt, value_max):
    """The value's text/plain (bounded) of IPython's format bundle; its rich
    representations become display items, as _bundle() makes them."""
    if not fmt:
        return None
    start = len(_cell["items"])
    for mime in IPYTHON_MIMES[:-1]:
        if mime in fmt:
            item = _ipython_item({mime: fmt[mime]})
            if item is not None:
                _cell["items"].append(item)
    _cell["value_span"] = (start, len(_cell["items"]))
    return _bounded(fmt.get("text/plain", ""), value_max)


def _run(code, name, g, value_max, display_max):
    """One cell: everything but a trailing expression exec'd, that one
    eval'd; its repr bounded. Returns (status, exit_code, value, display)."""
    value, display, last = None, [], None
    _cell["items"], _cell["name"], _fig["sink"] = [], name, _show_sink
    _cell["value_span"], _cell["value_mask"] = (0, 0), 0
    try:
        _remember_source(name, code)
        shell = _ipython_shell(g) if _cell["ipython"] else None
        if shell is not None:
            value = _ipython_value(_ipython_exec(shell, code), value_max)
        else:
            tree = ast.parse(code, name, "exec")
            tail = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                tail = ast.Expression(tree.body.pop().value)
            exec(compile(tree, name, "exec"), g)
            if tail is not None:
                last = eval(compile(tail, name, "eval"), g)
                if last is not None:
                    g["_"] = last
                    value = _bounded(repr(last), value_max)
        display = _display_items(last, display_max)
        return OK, 0, value, display
    except KeyboardInterrupt:
        if not _cell["stream"]:
            sys.stderr.write("KeyboardInterrupt\n")
        _cell_error(quiet=True)
        return INTERRUPTED, 0, None, []
    except SystemExit as e:
        c = e.code
        if c is None:
            c = 0
        elif not isinstance(c, int) or not -(1 << 31) <= c < 1 << 31:
            c = 1  # a message, or more than the answer's int32 holds
        return EXIT, c, None, []
    except BaseException:
        _cell_error()
        return EXCEPTION, 0, None, []
    finally:
        _cell["items"], _cell["name"], _fig["sink"] = [], None, None


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


def _line_buffered(on):
    """A streamed cell's print reaches its memfd when written (the frontend
    reads the memfds' growth, design-jupyter.md section 6.3); else block-buffered.
    (stderr is line-buffered always, since Python 3.9.)"""
    try:
        sys.stdout.reconfigure(line_buffering=on)
    except Exception:
        pass


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
    sys.meta_path.insert(0, _PyplotFinder(_hook_show))
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
        _fig["svg"] = bool(flags & START_SVG)
        _cell["ipython"] = bool(flags & START_IPYTHON)
        _cell["stream"], _cell["error"] = bool(flags & START_STREAM), None
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
        _line_buffered(_cell["stream"])
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
            if not _cell["stream"]:
                sys.stderr.write("KeyboardInterrupt\n")
            status, code_, value, display = INTERRUPTED, 0, None, []
            _cell["error"] = (b"KeyboardInterrupt", b"", b"KeyboardInterrupt\n")
        _flush()
        os.dup2(null, 1)
        os.dup2(null, 2)
        mask = _cell["value_mask"] if value is not None and display else 0
        head = DONE_HEAD.pack(MAGIC, status, cell, code_, value is not None,
                              len(value) if value is not None else 0, len(display), mask, 0)
        body = b"".join(DONE_DISPLAY.pack(m.encode()[:32], len(d)) for m, d in display)
        body += DONE_DISPLAY.pack(b"", 0) * (DISPLAY_MAX - len(display))
        err = _cell["error"] or (b"", b"", b"")
        body += DONE_ERROR.pack(len(err[0]), len(err[1]), len(err[2]), 0)
        with os.fdopen(reply_fd, "wb") as f:
            if value is not None:
                f.write(value)
            for _, d in display:
                f.write(d)
            for part in err:
                f.write(part)
        chan.send(head + body)


if __name__ == "__main__":
    sys.exit(main())
