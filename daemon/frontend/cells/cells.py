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
#   start: magic, reserved, cell, value_max, display_max   + fds: code (sealed
#          memfd), stdout, stderr, reply (memfds)
#   done:  magic, status, cell, exit_code, has_value, value_len, ndisplay,
#          8 x (mime[32], len); value then display bytes written to reply.
import ast
import os
import signal
import socket
import struct
import sys

MAGIC = 0x4C4C4543  # "CELL"
START = struct.Struct("<IIQII")
DONE_HEAD = struct.Struct("<IIQiIII")
DONE_DISPLAY = struct.Struct("<32sQ")
DISPLAY_MAX = 8
OK, EXCEPTION, INTERRUPTED, EXIT = 0, 1, 2, 3


def _display_items(g, last, budget):
    """Rich outputs: open matplotlib figures as PNG (closed after), and a
    trailing value's _repr_png_."""
    out = []
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        import io

        for num in list(plt.get_fignums()):
            fig = plt.figure(num)
            buf = io.BytesIO()
            fig.savefig(buf, format="png")
            plt.close(fig)
            out.append(("image/png", buf.getvalue()))
    if last is not None and hasattr(type(last), "_repr_png_"):
        png = last._repr_png_()
        if isinstance(png, (bytes, bytearray)):
            out.append(("image/png", bytes(png)))
    kept, used = [], 0
    for mime, data in out[:DISPLAY_MAX]:
        if used + len(data) > budget:
            continue
        kept.append((mime, data))
        used += len(data)
    return kept


def _run(code, name, g, value_max, display_max):
    """One cell: everything but a trailing expression exec'd, that one
    eval'd; its repr bounded. Returns (status, exit_code, value, display)."""
    value, display, last = None, [], None
    try:
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
        display = _display_items(g, last, display_max)
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
        import traceback

        traceback.print_exc()
        return EXCEPTION, 0, None, []


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
    g = {"__name__": "__main__", "__builtins__": __builtins__}
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
        if magic != MAGIC or len(fds) != 4:
            return 70
        code_fd, out_fd, err_fd, reply_fd = fds
        os.lseek(code_fd, 0, os.SEEK_SET)  # written by the frontend: at its end
        with os.fdopen(code_fd, "rb") as f:
            code = f.read()
        # Children the last cell's processes left (killed at its end). In
        # a session with background processes (flag 2) they may live on and
        # are the code's: a Popen waits for its own, and its status is kept.
        try:
            while not flags & 2 and os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        _flush()
        _streams(keep)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.close(out_fd)
        os.close(err_fd)
        # A SIGINT left over from the last cell's end is not this cell's.
        # The supervisor sends it to this (the main) thread only, so it
        # waits here, blocked, whatever threads the cells started.
        if signal.SIGINT in signal.sigpending():
            signal.sigwait(block)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, block)
        try:
            status, code_, value, display = _run(code, "<cell %d>" % cell, g, value_max, display_max)
            # Blocked again inside the try: an interrupt that came just
            # after the cell is raised by this call, and is the cell's.
            signal.pthread_sigmask(signal.SIG_BLOCK, block)
        except KeyboardInterrupt:
            signal.pthread_sigmask(signal.SIG_BLOCK, block)
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
