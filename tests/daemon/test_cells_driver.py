#!/usr/bin/env python3
"""The interpreter session's driver (daemon/frontend/cells/cells.py) on its
own, with this test as its frontend: the channel at fd 0, the start message
with its four memfds, the done message back (daemon/ipc/cells_msg.h). What
it checks is the driver's side of an interrupt, which no daemon test can
time: a SIGINT already pending when a cell starts is that cell's cancel
unless the start says it is the last cell's (CELLS_START_F_DRAIN_SIGINT)."""
import importlib.util
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

CELLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "daemon", "frontend", "cells")


def _assemble():
    """The driver as the build makes it (cells/assemble.py: the pyplot hook
    and the figure code in front of cells.py), in a directory of its own."""
    out = os.path.join(tempfile.mkdtemp(prefix="airlock-driver-"), "cells_driver.py")
    subprocess.run([sys.executable, os.path.join(CELLS, "assemble.py"), "driver", out,
                    os.path.join(CELLS, "pyplot_hook.py"), os.path.join(CELLS, "figures.py"),
                    os.path.join(CELLS, "cells.py")], check=True)
    return out


DRIVER = _assemble()


def _driver_module():
    """The driver's own message layouts (its main() is not run): the test
    speaks whatever the driver packs, as cells.c checks it."""
    spec = importlib.util.spec_from_file_location("airlock_cells_driver", DRIVER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


D = _driver_module()
MAGIC, START, DONE_HEAD = D.MAGIC, D.START, D.DONE_HEAD
DONE_SIZE = DONE_HEAD.size + D.DISPLAY_MAX * D.DONE_DISPLAY.size
OK, INTERRUPTED = D.OK, D.INTERRUPTED
DRAIN_SIGINT = D.START_DRAIN_SIGINT
DONE_ERROR = D.DONE_ERROR  # the exception's lengths (issue 31)
DONE_SIZE += DONE_ERROR.size
EXCEPTION, STREAM = D.EXCEPTION, D.START_STREAM
DEADLINE = 30.0


class DriverTest(unittest.TestCase):
    def setUp(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.chan = ours
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-B", DRIVER], stdin=theirs,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        theirs.close()
        self.chan.settimeout(DEADLINE)
        self.n = 0

    def tearDown(self):
        self.chan.close()
        try:
            self.proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stderr.close()

    def wait_blocked(self):
        """Until the driver has blocked SIGINT (its first step): a SIGINT
        sent then stays pending instead of ending it."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("SigBlk:") and int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)):
                        return
            time.sleep(0.005)  # a poll step inside a deadline, not a wait for a time
        self.fail("the driver never blocked SIGINT")

    def cell(self, code, flags=0, fields=False):
        """Send one cell; its (status, stderr), and with fields its
        exception's (ename, evalue, traceback) from the reply."""
        self.n += 1
        fds = [os.memfd_create(name, os.MFD_CLOEXEC) for name in ("code", "out", "err", "reply")]
        try:
            os.write(fds[0], code.encode())
            msg = START.pack(MAGIC, flags, self.n, 4096, 65536)
            self.chan.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("4i", *fds))])
            done = self.chan.recv(DONE_SIZE + 1)
            self.assertEqual(len(done), DONE_SIZE, "the driver ended: %r" % self.proc.stderr.read1(4096))
            magic, status, cell = DONE_HEAD.unpack(done[: DONE_HEAD.size])[:3]
            self.assertEqual((magic, cell), (MAGIC, self.n))
            err = os.pread(fds[2], 65536, 0).decode()
            if not fields:
                return status, err
            lens = DONE_ERROR.unpack(done[-DONE_ERROR.size:])[:3]
            raw = os.pread(fds[3], sum(lens), 0)  # no value or display: at 0
            return status, err, (raw[: lens[0]], raw[lens[0]: lens[0] + lens[1]], raw[lens[0] + lens[1]:])
        finally:
            for fd in fds:
                os.close(fd)

    def test_cancel_before_the_first_line_is_the_cells(self):
        # A cancel that reached the interpreter after the start was sent
        # but before the driver ran the cell: the cell is interrupted (it
        # would loop for ever if the SIGINT were dropped as a leftover).
        self.wait_blocked()
        self.assertEqual(self.cell("x = 7"), (OK, ""))
        os.kill(self.proc.pid, signal.SIGINT)
        status, err = self.cell("while True:\n    pass\n")
        self.assertEqual(status, INTERRUPTED)
        self.assertIn("KeyboardInterrupt", err)
        self.assertEqual(self.cell("assert x == 7"), (OK, ""), "the state is kept")

    def test_leftover_of_the_last_cell_is_dropped(self):
        # The last cell's SIGINT came after it had ended: the frontend says
        # so, and the driver drops it; this cell runs whole.
        self.wait_blocked()
        os.kill(self.proc.pid, signal.SIGINT)
        self.assertEqual(self.cell("import time\ntime.sleep(0.05)\ny = 1", DRAIN_SIGINT), (OK, ""))
        self.assertEqual(self.cell("assert y == 1"), (OK, ""))

    def test_drain_without_a_pending_sigint(self):
        # The supervisor's SIGINT was dropped (the cell had ended): the
        # flag finds nothing pending and the cell runs.
        self.wait_blocked()
        self.assertEqual(self.cell("z = 2", DRAIN_SIGINT), (OK, ""))
        self.assertEqual(self.cell("assert z == 2"), (OK, ""))

    def test_exception_fields(self):
        # Issue 31: the exception as fields; on stderr too unless streamed.
        self.wait_blocked()
        status, err, (name, value, tb) = self.cell("raise ValueError('v')", fields=True)
        self.assertEqual((status, name, value), (EXCEPTION, b"ValueError", b"v"))
        self.assertTrue(tb.endswith(b"ValueError: v\n"), tb)
        self.assertEqual(err, tb.decode())
        status, err, (name, _, tb) = self.cell("raise ValueError('v')", STREAM, fields=True)
        self.assertEqual((status, err, name), (EXCEPTION, "", b"ValueError"))
        self.assertTrue(tb.endswith(b"ValueError: v\n"), tb)
        self.assertEqual(self.cell("1", fields=True), (OK, "", (b"", b"", b"")))


def tearDownModule():
    shutil.rmtree(os.path.dirname(DRIVER), ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
