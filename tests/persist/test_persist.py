#!/usr/bin/env python3
"""Sessions outlive the daemon (issue 30, point 5; docs/design-sessions.md).

Through a real airlockd (its state_directory in the test's directory) and
the real airlock command:
- a SIGTERM restart keeps a session's id, files (put, and written by a
  run) and lease, and the session takes runs again;
- a SIGKILL of the daemon while a cell runs: the files of the steps before
  come back, and the next cell says state "lost" with the note;
- of several kept sessions, a hostile archive (a symlink to a host file,
  a "../" name, a device, more than the quota) or a bad record stops only
  its own: the others come back, the log names each that could not and
  why, its files go to lost/, and nothing is written outside;
- a lease that ended while the daemon was down: the session is gone;
- with only the unit's capabilities (no CAP_DAC_OVERRIDE, CAP_FOWNER), two
  restarts keep a session (root cannot open what the service user owns);
- a lease extended (CLI and Python binding) outlives a twin's that was
  not, and comes back with a restart; past lifetime_ms_max, or 0, refused;
- a workspace saved (CLI and Python binding) is a tar of its files and
  directories, a link the code made left out; a session opened from it
  (CLI --archive, binding archive=) has those files; a hostile archive at
  open (a link, "..", absolute, a device, past the quota, garbage) opens
  nothing, says which entry and why, and writes nothing outside;
- a detached session (airlock session open's) and a background one come
  back with the flag: the detached one outlives its owner's connections
  after the restart (an attached twin ends after the grace), the
  background one keeps a process a cell starts (session ps lists it); a
  record that says background without an interpreter is not restored.
On a failure the daemon's log is shown.
"""
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, wait_for  # noqa: E402

AIRLOCKD = os.environ["AIRLOCKD"]
AIRLOCK = os.environ["AIRLOCK"]


class Persist(unittest.TestCase):
    def setUp(self):
        self.d = Daemon(AIRLOCKD, prefix="airlock-persist-")
        self.state = os.path.join(self.d.dir, "state")
        self.store = os.path.join(self.state, "sessions")
        self.d.write_config("[sessions]\nstate_directory = %s\nmax_per_uid = 8\n"
                            % self.state)
        self.d.start()

    def tearDown(self):
        # remove() shows the log's tail on stderr: meson shows it on a failure.
        self.d.remove()

    def cli(self, *args, stdin=None, check=True):
        p = subprocess.run([AIRLOCK, "--socket", self.d.sock, "--json"] + list(args),
                           input=stdin, capture_output=True, timeout=60)
        if check and p.returncode != 0:
            self.fail("airlock %s: %d %s %s\n%s" % (" ".join(args), p.returncode, p.stdout,
                                                   p.stderr, self.d.log_tail()))
        return p

    def open(self, *extra):
        return json.loads(self.cli("session", "open", *extra).stdout)["id"]

    def ids(self):
        return [s.get("session", s.get("id"))
                for s in json.loads(self.cli("session", "ls").stdout)]

    def back(self, sid):
        """Wait until sid is listed idle again after a restart (its files
        go back to a new keeper first: listed "running" meanwhile)."""
        def idle():
            ls = json.loads(self.cli("session", "ls").stdout)
            return any(s.get("session", s.get("id")) == sid and s["state"] == "idle" for s in ls)
        self.assertTrue(wait_for(idle, 20), "session %s not back\n%s" % (sid, self.d.log_tail()))

    def get(self, sid, path):
        return self.cli("get", sid, path, "-").stdout

    def restart(self, kill=False):
        if kill:
            # The main pid is the spawner: the frontend and every keeper
            # die with it (PR_SET_PDEATHSIG), as under systemctl kill -s KILL.
            os.kill(self.d.proc.pid, signal.SIGKILL)
            self.d.proc.wait()
        else:
            self.d.stop()
        self.d.start()

    def wait_snapshot(self, sid, member):
        """Until the kept archive holds member (snapshots follow steps)."""
        def has():
            try:
                with tarfile.open(os.path.join(self.store, sid + ".tar")) as t:
                    return member in t.getnames()
            except (OSError, tarfile.TarError):
                return False
        self.assertTrue(wait_for(has, 10), "no snapshot with %s\n%s" % (member, self.d.log_tail()))

    def test_restart_keeps_session(self):
        sid = self.open("--lifetime", "600")
        self.cli("put", sid, "-", "d/a.txt", stdin=b"hello")
        self.cli("run", "--session", sid, "-c", "open('/workspace/b', 'w').write('bee')")
        self.wait_snapshot(sid, "b")
        st = os.stat(self.store)
        self.assertEqual(st.st_mode & 0o777, 0o700)
        for name in os.listdir(self.store):
            self.assertEqual(os.stat(os.path.join(self.store, name)).st_mode & 0o777, 0o600)
        self.restart()
        self.back(sid)
        self.assertEqual(self.get(sid, "d/a.txt"), b"hello")
        self.assertEqual(self.get(sid, "b"), b"bee")
        out = json.loads(self.cli("run", "--session", sid, "-c",
                                  "print(open('/workspace/b').read())").stdout)
        self.assertEqual(out["stdout"], "bee\n")
        self.assertIn("restored", self.d.log_text())
        # Changes a moment before a stop (snapshots wait up to a second
        # after the last one) are written by the stop itself.
        for i in range(3):
            self.cli("put", sid, "-", "late%d" % i, stdin=b"late")
        self.restart()
        self.back(sid)
        for i in range(3):
            self.assertEqual(self.get(sid, "late%d" % i), b"late")
        # Closed: its files are gone, and it does not come back.
        self.cli("session", "close", sid)
        self.assertFalse(os.path.exists(os.path.join(self.store, sid + ".rec")))
        self.restart()
        self.assertNotIn(sid, self.ids())

    def test_sigkill_mid_cell(self):
        sid = self.open("--interpreter", "python")
        out = json.loads(self.cli("cell", sid, "-",
                                  stdin=b"x = 41\nopen('/workspace/f', 'w').write('kept')\n").stdout)
        self.assertEqual(out["state"], "kept")
        self.wait_snapshot(sid, "f")
        cell = subprocess.Popen([AIRLOCK, "--socket", self.d.sock, "cell", sid, "-"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        cell.stdin.write(b"import time\ntime.sleep(60)\n")
        cell.stdin.close()
        self.assertTrue(wait_for(lambda: "running" in self.cli("session", "ls").stdout.decode(), 10))
        self.restart(kill=True)
        cell.wait(10)
        self.back(sid)
        self.assertEqual(self.get(sid, "f"), b"kept")
        out = json.loads(self.cli("cell", sid, "-", stdin=b"print(x)\n", check=False).stdout)
        self.assertEqual(out["state"], "lost")
        self.assertIn("NameError", out["stderr"])
        self.assertTrue(any("restarted" in a for a in out.get("advisories", [])), out)
        out = json.loads(self.cli("cell", sid, "-", stdin=b"y = 1\ny + 1\n").stdout)
        self.assertEqual(out["state"], "kept")

    def hostile(self, sid, build):
        """Replace sid's kept archive by one build(tarfile) makes."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
            build(t)
        path = os.path.join(self.store, sid + ".tar")
        with open(path, "wb") as f:
            f.write(buf.getvalue())
        os.chown(path, os.stat(self.store).st_uid, -1)
        os.chmod(path, 0o600)

    def test_hostile_archives_refused(self):
        outside = os.path.join(self.d.dir, "escaped")

        def link(t):
            i = tarfile.TarInfo("passwd")
            i.type = tarfile.SYMTYPE
            i.linkname = "/etc/passwd"
            t.addfile(i)

        def dotdot(t):
            i = tarfile.TarInfo("../../../../../../" + outside.lstrip("/"))
            i.size = 3
            t.addfile(i, io.BytesIO(b"bad"))

        def absolute(t):
            i = tarfile.TarInfo(outside)
            i.size = 3
            t.addfile(i, io.BytesIO(b"bad"))

        def device(t):
            i = tarfile.TarInfo("null")
            i.type = tarfile.CHRTYPE
            i.devmajor, i.devminor = 1, 3
            t.addfile(i)

        def big(t):
            i = tarfile.TarInfo("big")
            i.size = (1 << 20) + 1
            t.addfile(i, io.BytesIO(b"\0" * i.size))

        cases = {"a link": link, '"..\"': dotdot, "absolute": absolute, "a device": device,
                 "past the workspace": big}
        good = self.open("--workspace", "1M")
        self.cli("put", good, "-", "g", stdin=b"good")
        self.wait_snapshot(good, "g")
        bad = {}
        for why, build in cases.items():
            sid = self.open("--workspace", "1M")
            self.cli("put", sid, "-", "x", stdin=b"x")
            self.wait_snapshot(sid, "x")
            bad[sid] = (why, build)
        self.d.stop()
        for sid, (why, build) in bad.items():
            self.hostile(sid, build)
        # A record that is not the daemon's, beside them.
        rec = "f" * 32
        with open(os.path.join(self.store, rec + ".rec"), "w") as f:
            f.write("version=1\nid=%s\nuid=0\ncolor=red\n" % rec)
        os.chown(os.path.join(self.store, rec + ".rec"), os.stat(self.store).st_uid, -1)
        os.chmod(os.path.join(self.store, rec + ".rec"), 0o600)
        self.d.start()
        self.back(good)
        ids = self.ids()
        self.assertEqual(self.get(good, "g"), b"good")
        log = self.d.log_text()
        for sid, (why, _) in bad.items():
            self.assertNotIn(sid, ids)
            self.assertRegex(log, "session %s: cannot be restored: .*%s" % (sid, why))
            self.assertTrue(os.path.exists(os.path.join(self.store, "lost", sid + ".tar")))
        self.assertIn("session %s: cannot be restored: line 4" % rec, log)
        self.assertFalse(os.path.exists(outside))

    def test_lease_ended_while_down(self):
        sid = self.open()
        self.d.stop()
        path = os.path.join(self.store, sid + ".rec")
        with open(path) as f:
            text = f.read()
        text = "\n".join("lease_end_ms=1" if line.startswith("lease_end_ms=") else line
                         for line in text.split("\n"))
        with open(path, "w") as f:
            f.write(text)
        self.d.start()
        self.assertNotIn(sid, self.ids())
        self.assertIn("its lease ended while the daemon was down", self.d.log_text())
        self.assertFalse(os.path.exists(path))

    def binding(self):
        sys.path.insert(0, os.environ["AIRLOCK_PYTHON"])
        import airlock  # noqa: E402
        return airlock.AirlockSandbox(socket=self.d.sock)

    def test_lease_extend(self):
        short = self.open("--lifetime", "2")
        kept = self.open("--lifetime", "2")
        self.cli("session", "extend", kept, "600")
        # The twin not extended ends at its lease: by then the other must not.
        self.assertTrue(wait_for(lambda: short not in self.ids(), 20), self.d.log_tail())
        self.assertIn(kept, self.ids())
        with open(os.path.join(self.store, kept + ".rec")) as f:
            end = int([l for l in f.read().split("\n") if l.startswith("lease_end_ms=")][0][13:])
        self.assertGreater(end, (time.time() + 500) * 1000)
        # Refused: past lifetime_ms_max (a day by default), and 0.
        p = self.cli("session", "extend", kept, str(2 * 86400), check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(b"too_large", p.stdout + p.stderr)
        self.assertEqual(self.cli("session", "extend", kept, "0", check=False).returncode, 2)
        p = self.cli("session", "extend", "f" * 32, "60", check=False)
        self.assertIn(b"not_found", p.stdout + p.stderr)
        # The binding's, on a session of its own; the lease survives a restart.
        sb = self.binding()
        with sb.session_sync(lifetime=2) as s:
            s.extend(300)
            sid = s.id
            self.restart()
            self.back(sid)
            self.assertRegex(self.d.log_text(), r"session %s uid \d+: restored, .* lifetime (2\d\d|300)\d\d\d ms" % sid[:8])

    def test_save(self):
        sid = self.open()
        self.cli("put", sid, "-", "d/e/f.txt", stdin=b"deep")
        self.cli("run", "--session", sid, "-c",
                 "import os; os.symlink('/etc/passwd', '/workspace/lnk'); open('/workspace/r', 'w').write('run')")
        out = os.path.join(self.d.dir, "ws.tar")
        self.cli("session", "save", sid, out)
        with tarfile.open(out) as t:
            names = t.getnames()
            self.assertEqual(t.extractfile("d/e/f.txt").read(), b"deep")
            self.assertEqual(t.extractfile("r").read(), b"run")
            self.assertTrue(t.getmember("d/e").isdir())
        self.assertNotIn("lnk", names)
        sb = self.binding()
        with sb.session_sync() as s:
            s.write_file("x/y", "binding")
            with tarfile.open(fileobj=io.BytesIO(s.save())) as t:
                self.assertEqual(t.extractfile("x/y").read(), b"binding")
        p = self.cli("session", "save", "f" * 32, "-", check=False)
        self.assertIn(b"not_found", p.stdout + p.stderr)
        # Where nothing can be written: exit 73 and, with --json, the error
        # as JSON, for `session save` and `get` alike (one writer, cli_write_out).
        for args in (("session", "save", sid), ("get", sid, "d/e/f.txt")):
            p = self.cli(*args, os.path.join(self.d.dir, "no", "such", "dir"), check=False)
            self.assertEqual(p.returncode, 73, p)
            self.assertEqual(json.loads(p.stdout)["error"]["code"], "cantcreat", p)

    def test_open_from_archive(self):
        sid = self.open()
        self.cli("put", sid, "-", "d/e/f.txt", stdin=b"deep")
        out = os.path.join(self.d.dir, "ws.tar")
        self.cli("session", "save", sid, out)
        self.cli("session", "close", sid)
        copy = self.open("--archive", out)
        self.assertEqual(self.get(copy, "d/e/f.txt"), b"deep")
        # Kept across a restart like any session: its archive's files too.
        self.wait_snapshot(copy, "d/e/f.txt")
        self.restart()
        self.back(copy)
        self.assertEqual(self.get(copy, "d/e/f.txt"), b"deep")
        self.cli("session", "close", copy)
        sb = self.binding()
        with open(out, "rb") as f:
            data = f.read()
        with sb.session_sync(archive=data) as s:
            self.assertEqual(bytes(s.read_file("d/e/f.txt")), b"deep")
            round_trip = s.save()
        with sb.session_sync(archive=round_trip) as s:
            self.assertEqual(bytes(s.read_file("d/e/f.txt")), b"deep")

    def test_open_from_hostile_archive(self):
        outside = os.path.join(self.d.dir, "escaped")

        def one(build):
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
                build(t)
            return buf.getvalue()

        def entry(name, type_=tarfile.REGTYPE, data=b"", **kw):
            def build(t):
                i = tarfile.TarInfo(name)
                i.type = type_
                for k, v in kw.items():
                    setattr(i, k, v)
                i.size = len(data) if type_ == tarfile.REGTYPE else 0
                t.addfile(i, io.BytesIO(data) if i.size else None)
            return build

        cases = [
            ("a link", one(entry("passwd", tarfile.SYMTYPE, linkname="/etc/passwd"))),
            ("a link", one(entry("hard", tarfile.LNKTYPE, linkname="/etc/shadow"))),
            ("component", one(entry("../../../../../../" + outside.lstrip("/"), data=b"bad"))),
            ("absolute", one(entry(outside, data=b"bad"))),
            ("a device", one(entry("sda", tarfile.BLKTYPE, devmajor=8, devminor=0))),
            ("FIFO", one(entry("fifo", tarfile.FIFOTYPE))),
            ("past the workspace", one(entry("big", data=b"x" * ((1 << 20) + 1)))),
            ("not a ustar header", b"garbage" * 200 + b"\0" * (1024 - 1400 % 1024) + b"\0" * 1024),
        ]
        sb = self.binding()
        before = self.ids()
        for why, data in cases:
            path = os.path.join(self.d.dir, "bad.tar")
            with open(path, "wb") as f:
                f.write(data)
            p = self.cli("session", "open", "--workspace", "1M", "--archive", path, check=False)
            self.assertNotEqual(p.returncode, 0, why)
            self.assertIn(why, (p.stdout + p.stderr).decode(), why)
            with self.assertRaises(Exception) as cm:
                sb.session_sync(workspace_bytes=1 << 20, archive=data).open()
            self.assertIn(why, str(cm.exception), why)
        self.assertEqual(self.ids(), before)
        self.assertFalse(os.path.exists(outside))

    def reconfigure(self, extra):
        """Restart the daemon with extra config besides the state directory."""
        self.d.stop()
        self.d.write_config("[sessions]\nstate_directory = %s\nmax_per_uid = 8\n%s"
                            % (self.state, extra))
        self.d.start()

    def record(self, sid):
        """The kept record of sid as a dict."""
        with open(os.path.join(self.store, sid + ".rec")) as f:
            return dict(line.split("=", 1) for line in f.read().split("\n") if line)

    def test_detached_kept(self):
        """A detached session (airlock session open's) comes back detached:
        after a restart its owner's connections ending do not end it, while
        one the binding opened (not detached) ends after the grace, as
        before the restart."""
        self.reconfigure("orphan_grace_ms = 1000\n")
        detached = self.open("--lifetime", "600")
        attached = self.binding().session_sync(lifetime=600)
        attached.open()
        self.assertEqual(self.record(detached)["detached"], "1")
        self.assertEqual(self.record(attached.id)["detached"], "0")
        self.restart()
        self.back(detached)
        self.back(attached.id)
        self.assertRegex(self.d.log_text(), r"session %s uid \d+: restored, .*, detached" % detached[:8])
        # The last connection of the owner (the CLI's above) has gone: the
        # grace runs for the attached one alone. The log says when it ends
        # (a connection now would stop the grace).
        gone = "session %s uid \\d+: .*its owner has been gone too long" % attached.id[:8]
        self.assertTrue(wait_for(lambda: re.search(gone, self.d.log_text()), 20), self.d.log_tail())
        ids = self.ids()
        self.assertIn(detached, ids)
        self.assertNotIn(attached.id, ids)
        self.assertNotRegex(self.d.log_text(), "session %s uid \\d+: .*gone too long" % detached[:8])

    def test_background_kept(self):
        """A background session comes back a background session: listed so,
        and a process a cell starts after the restart lives on between cells
        (session ps lists it; a session without background is refused)."""
        self.reconfigure("[profile bg]\nbackground_processes = true\nprocesses = 32\n")
        sid = self.open("--interpreter", "python", "--background", "--profile", "bg")
        plain = self.open("--interpreter", "python", "--profile", "bg")
        self.assertEqual(self.record(sid)["background"], "1")
        self.assertEqual(self.record(plain)["background"], "0")
        self.restart()
        self.back(sid)
        self.back(plain)
        ls = {e.get("session", e.get("id")): e for e in json.loads(self.cli("session", "ls").stdout)}
        self.assertTrue(ls[sid].get("background"), ls)
        self.assertFalse(ls[plain].get("background"), ls)
        self.cli("cell", sid, "-", stdin=b"import subprocess\n"
                 b"p = subprocess.Popen(['sleep', '300'])\n", check=False)
        ps = json.loads(self.cli("session", "ps", sid).stdout)
        procs = ps["processes"] if isinstance(ps, dict) else ps
        self.assertTrue(any(p["name"] == "sleep" for p in procs), ps)
        p = self.cli("session", "ps", plain, check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(b"background", p.stdout + p.stderr)

    def test_background_record_without_interpreter(self):
        """A record that says background for a session without an
        interpreter (admission never opens one) is not restored."""
        sid = self.open()
        self.d.stop()
        path = os.path.join(self.store, sid + ".rec")
        with open(path) as f:
            text = f.read()
        self.assertIn("\nbackground=0\n", text)
        with open(path, "w") as f:
            f.write(text.replace("\nbackground=0\n", "\nbackground=1\n"))
        self.d.start()
        self.assertNotIn(sid, self.ids())
        self.assertIn("session %s: cannot be restored: background processes without an "
                      "interpreter" % sid, self.d.log_text())
        self.assertTrue(os.path.exists(os.path.join(self.store, "lost", sid + ".rec")))

    def start_as_unit(self):
        """Start the daemon with the unit's bounding set (systemd/airlockd.service:
        CapabilityBoundingSet=CAP_SETUID CAP_SETGID CAP_SETPCAP CAP_CHOWN)."""
        argv = ["setpriv", "--bounding-set", "-all,+setuid,+setgid,+setpcap,+chown",
                AIRLOCKD, "--foreground", "--user", "nobody", "--socket", self.d.sock,
                "--config", self.d.config]
        with open(self.d.log, "ab") as logf:
            self.d.proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True,
                                           preexec_fn=self.d._preexec)
        self.assertTrue(wait_for(lambda: self.d.proc.poll() is not None or self.d.ping(), 10))
        self.assertIsNone(self.d.proc.poll(), self.d.log_tail())
        self.d.started(time.time())

    def test_unit_capabilities(self):
        self.d.stop()
        shutil.rmtree(self.state)
        self.start_as_unit()
        sid = self.open()
        self.cli("put", sid, "-", "x", stdin=b"unit")
        for _ in range(2):
            self.d.stop()
            # What systemd does to a StateDirectory= of a User=root unit
            # that it finds owned by another user: all of it back to root.
            subprocess.run(["chown", "-R", "root:root", self.state], check=True)
            self.start_as_unit()
            self.back(sid)
            self.assertEqual(self.get(sid, "x"), b"unit")
        self.assertNotIn("Permission denied", self.d.log_text())


if __name__ == "__main__":
    unittest.main(verbosity=2)
