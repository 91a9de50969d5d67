#!/usr/bin/env python3
"""Network egress through the daemon's proxy (issue 20, docs/design-egress.md).

The runner moves itself into a network namespace of its own (unshare -n) in
which lo is the only interface: the "outside" is 198.51.100.1 (TEST-NET-2)
and 169.254.169.254 on lo, with an HTTP server, a banner server, a
"metadata" server, a "host service" on 127.0.0.1:8080 and a DNS server that
the proxy is pointed at ([egress] resolver). Nothing here can reach an
address outside this machine (asserted: no interface but lo, no default
route). airlockd runs in that namespace; its runs have namespaces of their
own, as always.

Checked: an allowed download works with curl (HTTP and CONNECT) and with
Python's urllib through the proxy variables; raw sockets, a direct
connection, other ports, IP literals, lookups from inside, a listed name
that resolves to 127.0.0.1, 169.254.169.254 or ::ffff:127.0.0.1, CONNECT
to an unlisted host (which is never looked up), a connection flood and a
byte flood are refused and reported, in the code's view, in the result and
in the audit line, while the daemon keeps serving; a profile without
network = proxy has no network at all.

Exit 77 (skipped) when the runner cannot make a network namespace.
"""
import argparse
import http.server
import json
import os
import re
import select
import shutil
import socket
import socketserver
import struct
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from airlock_testlib import Daemon, wait_for  # noqa: E402

# An audit line: "airlockd[frontend]: audit time=... run=..." on stderr (the
# foreground), "audit run=..." in the journal (docs/security.md).
AUDIT_RE = re.compile(r"(^|: )audit (time=\S+ )?run=")

OUT4 = "198.51.100.1"
META4 = "169.254.169.254"
DATA = b"hello from data.test\n"
BIG = 1 << 20
NETNS_MARK = "AIRLOCK_EGRESS_NETNS"

# The resolver's table: what the "outside" names resolve to.
DNS_TABLE = {
    "data.test": ("A", OUT4),
    "local.test": ("A", "127.0.0.1"),
    "meta.test": ("A", META4),
    "mapped.test": ("AAAA", "::ffff:127.0.0.1"),
    "x.secret.test": ("A", OUT4),
    "half.test": ("A", OUT4),  # no answer for AAAA
}

CONFIG = """
[daemon]
prepared_sandboxes = 0
[egress]
resolver = %s
connect_timeout_ms = 3000
max_connections = 24
[profile net]
network = proxy
wall_ms = 30000
allow_hosts = data.test:80,8443, *.wild.test:80, local.test:8080, meta.test:80, mapped.test:8080
allow_hosts = hang.test:80, half.test:80
[profile flood]
network = proxy
allow_hosts = data.test:8443
network_connections = 40
[profile small]
network = proxy
allow_hosts = data.test:80
network_bytes = 100K
""" % OUT4

hits = {"http": [], "meta": [], "host": [], "dns": []}
FLAG = [b"wait"]  # what /flag answers: test_reload_live's signal to a cell in flight
lock = threading.Lock()


def note(kind, what):
    with lock:
        hits[kind].append(what)


def make_http(kind, addr, port):
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            note(kind, self.path)
            body = DATA if self.path != "/big" else b"x" * BIG
            if self.path == "/flag":
                body = FLAG[0]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer((addr, port), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class Banner(socketserver.BaseRequestHandler):
    """A TCP service on 198.51.100.1:8443: a banner, then an echo (CONNECT carries any bytes)."""

    def handle(self):
        self.request.sendall(b"BANNER\n")
        try:
            while True:
                d = self.request.recv(4096)
                if not d:
                    return
                self.request.sendall(d)
        except OSError:
            return


def dns_server():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((OUT4, 53))

    def loop():
        while True:
            q, peer = s.recvfrom(512)
            try:
                tid = struct.unpack("!H", q[:2])[0]
                off, labels = 12, []
                while q[off]:
                    labels.append(q[off + 1:off + 1 + q[off]].decode("ascii", "replace"))
                    off += 1 + q[off]
                qtype = struct.unpack("!H", q[off + 1:off + 3])[0]
                qend = off + 5
            except (IndexError, struct.error):
                continue
            name = ".".join(labels).lower()
            note("dns", name)
            if name == "hang.test" or (name == "half.test" and qtype != 1):
                continue  # no answer: the proxy's lookup stays pending
            ent = DNS_TABLE.get(name)
            if ent is None and name.endswith(".wild.test"):
                ent = ("A", OUT4)
            ans = b""
            if ent and ((ent[0] == "A" and qtype == 1) or (ent[0] == "AAAA" and qtype == 28)):
                rd = socket.inet_pton(socket.AF_INET if qtype == 1 else socket.AF_INET6, ent[1])
                ans = b"\xc0\x0c" + struct.pack("!HHIH", qtype, 1, 60, len(rd)) + rd
            flags = 0x8180 | (3 if ent is None else 0)
            hdr = struct.pack("!HHHHHH", tid, flags, 1, 1 if ans else 0, 0, 0)
            s.sendto(hdr + q[12:qend] + ans, peer)

    threading.Thread(target=loop, daemon=True).start()


def sh(*argv):
    subprocess.run(argv, check=True)


def outside():
    """The namespace's "outside", all on lo, and the proof that nothing leaves the machine."""
    sh("ip", "link", "set", "lo", "up")
    sh("ip", "addr", "add", OUT4 + "/24", "dev", "lo")
    sh("ip", "addr", "add", META4 + "/32", "dev", "lo")
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    ifs = [l.split(":")[1].strip() for l in links]
    assert ifs == ["lo"], "interfaces besides lo: %r" % ifs
    routes = subprocess.run(["ip", "route", "show", "default"], capture_output=True,
                            text=True, check=True).stdout
    assert routes.strip() == "", "a default route: %r" % routes
    make_http("http", OUT4, 80)
    make_http("meta", META4, 80)
    make_http("host", "127.0.0.1", 8080)
    srv = socketserver.ThreadingTCPServer((OUT4, 8443), Banner)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    dns_server()


class Ctx:
    def __init__(self, args):
        self.airlock = args.airlock
        self.python_dir = args.python_dir
        self.libairlock = args.libairlock
        self.daemon = Daemon(args.airlockd, CONFIG, prefix="airlock-egress-", debug=True)
        self.failures = []

    def run(self, code, profile=None, lang="python", timeout=60, wall=None):
        cmd = [self.airlock, "--socket", self.daemon.sock, "--json", "run", "--lang", lang]
        if wall:
            cmd += ["--wall", str(wall)]
        if profile:
            cmd += ["--profile", profile]
        cmd += ["-c", code]
        p = subprocess.run(cmd, capture_output=True, timeout=timeout)
        try:
            r = json.loads(p.stdout)
        except ValueError:
            raise AssertionError("airlock exit %d, not JSON: %r %r" % (p.returncode, p.stdout[:300], p.stderr[:300]))
        r["_stderr_cli"] = p.stderr.decode("utf-8", "replace")
        r.setdefault("stdout", "")
        r.setdefault("stderr", "")
        return r

    def audit(self, n_before):
        """The audit lines written since the log had n_before of them."""
        with open(self.daemon.log, errors="replace") as f:
            lines = [l for l in f if AUDIT_RE.search(l)]
        return lines[n_before:]

    def naudit(self):
        with open(self.daemon.log, errors="replace") as f:
            return sum(1 for l in f if AUDIT_RE.search(l))

    def check(self, name, cond, detail=""):
        print("%s %s%s" % ("ok  " if cond else "FAIL", name, (": " + detail) if (detail and not cond) else ""))
        if not cond:
            self.failures.append(name)

    def ping(self):
        p = subprocess.run([self.airlock, "--socket", self.daemon.sock, "ping"], capture_output=True, timeout=10)
        return p.returncode == 0


# A tiny client of the proxy for the code inside: one request, the status line and body.
PY_ASK = r'''
import os, socket, sys
def ask(req, read=4096):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(req.encode())
    data = b""
    try:
        while len(data) < read:
            d = s.recv(4096)
            if not d:
                break
            data += d
            if b"BANNER" in data:
                break
    except OSError as e:
        data += b" (" + str(e).encode() + b")"
    s.close()
    return data.decode("latin-1")
def first(req):
    d = ask(req)
    reason = ""
    for line in d.split("\r\n"):
        if line.lower().startswith("x-airlock-refused:"):
            reason = line.split(":", 1)[1].strip()
    return d.split("\r\n", 1)[0] + (" reason=" + reason if reason else "") + (" BANNER" if "BANNER" in d else "")
'''


def test_allowed(ctx):
    n = ctx.naudit()
    r = ctx.run("set -e\n"
                "curl -sS --max-time 10 http://data.test/data.txt\n"
                "curl -sS --max-time 10 -p http://data.test/data.txt\n"
                "curl -sS --max-time 10 http://a.wild.test/data.txt\n", profile="net", lang="sh")
    ctx.check("curl through HTTP_PROXY (plain, CONNECT, wildcard)",
              r.get("outcome") == "exited" and r.get("exit_code") == 0 and r["stdout"] == DATA.decode() * 3,
              "outcome=%s exit=%s stdout=%r stderr=%r" % (r.get("outcome"), r.get("exit_code"), r["stdout"], r["stderr"]))
    net = r.get("network") or {}
    ctx.check("the result counts and names what was contacted",
              net.get("contacted") == ["data.test:80", "a.wild.test:80"] and net.get("connections") == 3
              and net.get("refused") == 0 and net.get("refusals") == [] and net.get("bytes_down", 0) > 3 * len(DATA)
              and net.get("bytes_up", 0) > 0, repr(net))
    r = ctx.run("import urllib.request\n"
                "print(urllib.request.urlopen('http://data.test/data.txt', timeout=10).read().decode(), end='')\n",
                profile="net")
    ctx.check("python urllib through the proxy variables", r["stdout"] == DATA.decode(),
              "stdout=%r stderr=%r" % (r["stdout"], r["stderr"][-500:]))
    r = ctx.run(PY_ASK + "print(first('CONNECT data.test:8443 HTTP/1.1\\r\\nHost: data.test:8443\\r\\n\\r\\n'))\n",
                profile="net")
    ctx.check("CONNECT carries any bytes to a listed port", "200" in r["stdout"] and "BANNER" in r["stdout"],
              "stdout=%r stderr=%r" % (r["stdout"], r["stderr"][-500:]))
    lines = ctx.audit(n)
    ctx.check("the audit lines count and name what was contacted",
              len(lines) == 3 and all("net_conns=" in l for l in lines)
              and 'net_contacted="data.test:80,a.wild.test:80"' in lines[0]
              and re.search(r"net_down=(\d+)", lines[0]) and int(re.search(r"net_down=(\d+)", lines[0]).group(1)) > 3 * len(DATA)
              and 'net_contacted="data.test:8443"' in lines[2],
              "".join(lines))
    ctx.check("the outside saw the allowed requests", hits["http"].count("/data.txt") >= 4, repr(hits["http"]))


REFUSALS = [
    # (request, expected reason)
    ("CONNECT data.test:22 HTTP/1.1\r\n\r\n", "not_listed"),
    ("CONNECT evil.test:443 HTTP/1.1\r\n\r\n", "not_listed"),
    ("CONNECT x.secret.test:80 HTTP/1.1\r\n\r\n", "not_listed"),
    ("CONNECT 198.51.100.1:80 HTTP/1.1\r\n\r\n", "ip_literal"),
    ("CONNECT 2130706433:80 HTTP/1.1\r\n\r\n", "ip_literal"),
    ("GET http://0x7f.1:8080/ HTTP/1.1\r\n\r\n", "ip_literal"),
    ("CONNECT [::1]:8080 HTTP/1.1\r\n\r\n", "ip_literal"),
    ("GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n", "ip_literal"),
    ("CONNECT local.test:8080 HTTP/1.1\r\n\r\n", "private_address"),
    ("GET http://meta.test/latest/meta-data/ HTTP/1.1\r\nHost: meta.test\r\n\r\n", "private_address"),
    ("CONNECT mapped.test:8080 HTTP/1.1\r\n\r\n", "private_address"),
    ("GET / HTTP/1.1\r\nHost: data.test\r\n\r\n", "bad_request"),
]


def test_refused(ctx):
    n = ctx.naudit()
    dns_before = len(hits["dns"])
    code = PY_ASK + "reqs = %r\n" % [q for q, _ in REFUSALS] + r'''
for q in reqs:
    print(first(q))
def attempt(what, f):
    try:
        f()
        print(what, "WORKED")
    except Exception as e:
        print(what, "refused", type(e).__name__)
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
attempt("direct", lambda: socket.create_connection(("198.51.100.1", 80), timeout=5))
attempt("metadata", lambda: socket.create_connection(("169.254.169.254", 80), timeout=5))
attempt("otherport", lambda: socket.create_connection(("127.0.0.1", 8080), timeout=5))
attempt("lookup", lambda: socket.getaddrinfo("x.secret.test", 80))
attempt("udp53", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"q", ("198.51.100.1", 53)))
'''
    r = ctx.run(code, profile="net")
    out = r["stdout"].splitlines()
    ctx.check("the refusal run ran", r.get("outcome") == "exited" and len(out) == len(REFUSALS) + 7,
              "outcome=%s stdout=%r stderr=%r" % (r.get("outcome"), r["stdout"], r["stderr"][-800:]))
    for i, (q, reason) in enumerate(REFUSALS):
        line = out[i] if i < len(out) else ""
        want_status = "400" if reason == "bad_request" else "403"
        ctx.check("refused %s: %s" % (reason, q.split("\r\n")[0]),
                  line.startswith("HTTP/1.1 " + want_status) and line.endswith("reason=" + reason),
                  repr(line))
    for what in ("raw", "packet", "direct", "metadata", "otherport", "lookup", "udp53"):
        ctx.check("refused inside: " + what, any(l.startswith(what + " refused") for l in out), r["stdout"])
    time.sleep(0.5)
    ctx.check("nothing reached the host service or the metadata server", hits["host"] == [] and hits["meta"] == [],
              "host=%r meta=%r" % (hits["host"], hits["meta"]))
    ctx.check("an unlisted name was never looked up (no DNS channel)",
              not any("secret" in q or "evil" in q for q in hits["dns"][dns_before:]), repr(hits["dns"]))
    net = r.get("network") or {}
    got = {(x["host"], x["reason"]) for x in net.get("refusals", [])}
    want = {("data.test:22", "not_listed"), ("evil.test:443", "not_listed"), ("x.secret.test:80", "not_listed"),
            ("198.51.100.1:80", "ip_literal"), ("2130706433:80", "ip_literal"), ("0x7f.1:8080", "ip_literal"),
            ("[::1]:8080", "ip_literal"), ("169.254.169.254:80", "ip_literal"),
            ("local.test:8080", "private_address"), ("meta.test:80", "private_address"),
            ("mapped.test:8080", "private_address"), ("", "bad_request")}
    ctx.check("the result lists every refusal with its reason",
              got == want and net.get("refused") == len(REFUSALS) and net.get("contacted") == [],
              "got %r, missing %r, extra %r" % (net, want - got, got - want))
    lines = ctx.audit(n)
    ctx.check("the audit line lists the refusals",
              len(lines) == 1 and "data.test:22/not_listed" in lines[0]
              and "meta.test:80/private_address" in lines[0] and "2130706433:80/ip_literal" in lines[0]
              and "net_refused=%d" % len(REFUSALS) in lines[0],
              "".join(lines))


def test_flood(ctx):
    """Connections past the limits are refused while the daemon serves others."""
    n = ctx.naudit()
    code = PY_ASK + r'''
import time
held, ok, refused, other = [], 0, 0, 0
for i in range(300):
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        s.sendall(b"CONNECT data.test:8443 HTTP/1.1\r\n\r\n")
        d = s.recv(4096)
        while d.startswith(b"HTTP/1.1 200") and b"BANNER" not in d:
            more = s.recv(4096)
            if not more:
                break
            d += more
    except ConnectionResetError:
        refused += 1  # refused at accept, its request came after the close
        continue
    except OSError:
        other += 1
        continue
    if d.startswith(b"HTTP/1.1 200"):
        ok += 1
        held.append(s)  # held open: the concurrency limit
    elif b"X-Airlock-Refused: limit" in d:
        refused += 1
        s.close()
    else:
        other += 1
print("ok", ok, "refused", refused, "other", other)
time.sleep(2)
'''
    res = {}

    def flood():
        res["r"] = ctx.run(code, profile="flood")

    t = threading.Thread(target=flood)
    t.start()
    time.sleep(1.0)
    served = ctx.run("print('still serving')")
    pinged = ctx.ping()
    t.join(120)
    r = res.get("r", {"stdout": "", "stderr": "no result"})
    m = re.search(r"ok (\d+) refused (\d+) other (\d+)", r["stdout"])
    ctx.check("a flood of connections: 16 open at once, the rest refused (limit)",
              m is not None and int(m.group(1)) == 16 and int(m.group(2)) == 300 - 16,
              "stdout=%r stderr=%r" % (r["stdout"], r.get("stderr", "")[-500:]))
    net = r.get("network") or {}
    ctx.check("the result counts the flood", net.get("connections") == 300 and net.get("refused") == 284
              and ["", "limit"] in [[x["host"], x["reason"]] for x in net.get("refusals", [])], repr(net))
    ctx.check("another run and ping are served during the flood",
              served.get("stdout") == "still serving\n" and pinged, "%r ping=%s" % (served.get("stdout"), pinged))
    lines = ctx.audit(n)
    ctx.check("the audit line counts the flood",
              any("net_conns=300 " in l and "net_refused=284 " in l and '/limit"' in l for l in lines),
              "".join(lines))
    n = ctx.naudit()
    r = ctx.run("import socket, time\nfor i in range(50):\n"
                "    s = socket.create_connection(('127.0.0.1', 3128)); s.close(); time.sleep(0.05)\n"
                "print('done')\n", profile="flood")
    lines = ctx.audit(n)
    ctx.check("network_connections (40) refuses past the total",
              r["stdout"] == "done\n" and len(lines) == 1 and "net_conns=50 " in lines[0]
              and "net_refused=10 " in lines[0], r["stdout"] + r["stderr"] + "".join(lines))


def test_head_deadline(ctx):
    """A head sent a byte a second never completes: refused head_timeout 10 s after the accept
    (the read timeout alone restarted with every byte, so such a head never timed out)."""
    code = r'''
import select, socket, time
s = socket.create_connection(("127.0.0.1", 3128), timeout=30)
t0 = time.monotonic()
s.sendall(b"CONNECT data.test:8443 HTTP/1.1\r\nX-Drip: ")
got = b""
while time.monotonic() - t0 < 16 and not got:
    try:
        s.sendall(b"a")
    except OSError:
        pass
    if select.select([s], [], [], 1.0)[0]:
        try:
            got = s.recv(4096) or b"(eof)"
        except OSError as e:
            got = str(e).encode()
print("after %.1f s: %r" % (time.monotonic() - t0, got[:200]))
'''
    r = ctx.run(code, profile="net")
    m = re.search(r"after ([0-9.]+) s: (.*)", r["stdout"])
    ctx.check("a head dripped a byte a second is refused head_timeout within 10 s of the accept",
              m is not None and 9.0 <= float(m.group(1)) <= 12.5 and "X-Airlock-Refused: head_timeout" in m.group(2),
              "stdout=%r stderr=%r" % (r["stdout"], r["stderr"][-300:]))
    net = r.get("network") or {}
    ctx.check("the result names the head timeout", {"host": "", "reason": "head_timeout"} in net.get("refusals", []),
              repr(net))


def test_global_cap(ctx):
    """[egress] max_connections (24) bounds the connections of all runs together: two runs that
    each hold 16 (their own bound) get 24 between them, the rest refused limit."""
    code = r'''
import socket, time
held, ok, refused = [], 0, 0
for i in range(16):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    try:
        s.sendall(b"CONNECT data.test:8443 HTTP/1.1\r\n\r\n")
        d = s.recv(4096)
    except ConnectionResetError:
        # Refused at accept and closed before the request arrived: the
        # kernel answers the late request with a reset (docs/design-egress.md).
        d = b"X-Airlock-Refused: limit (reset)"
    if d.startswith(b"HTTP/1.1 200"):
        ok += 1
        held.append(s)
    elif b"X-Airlock-Refused: limit" in d:
        refused += 1
print("ok", ok, "refused", refused, flush=True)
time.sleep(8)
'''
    res = {}

    def one(k):
        res[k] = ctx.run(code, profile="flood")

    ts = [threading.Thread(target=one, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    oks, refs = 0, 0
    for k in range(2):
        m = re.search(r"ok (\d+) refused (\d+)", res.get(k, {}).get("stdout", ""))
        if m:
            oks += int(m.group(1))
            refs += int(m.group(2))
    ctx.check("two runs of 16 connections each: 24 open in all, 8 refused (max_connections)",
              oks == 24 and refs == 8,
              repr([(res.get(k, {}).get("stdout"), res.get(k, {}).get("stderr", "")[-600:]) for k in range(2)]))
    ctx.check("the daemon serves a proxy run after the cap was reached",
              ctx.run("curl -sS --max-time 10 http://data.test/data.txt", profile="net", lang="sh")["stdout"]
              == DATA.decode())


def test_dns_pending(ctx):
    """A connection that closes, and a run that ends, while its lookup is pending: the lookup
    is cancelled and its late callback touches nothing freed (run under ASan too). hang.test
    gets no answer at all; half.test an A answer but none for AAAA (evdns then waits for it)."""
    dns_before = len(hits["dns"])
    code = r'''
import socket, time
held = []
for name in ("hang.test", "half.test"):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(("CONNECT %s:80 HTTP/1.1\r\n\r\n" % name).encode())
    time.sleep(0.5)
    s.close()
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(("CONNECT %s:80 HTTP/1.1\r\n\r\n" % name).encode())
    held.append(s)
time.sleep(0.5)
print("done")
'''
    r = ctx.run(code, profile="net")
    ctx.check("closing while a lookup is pending, and ending the run so", r["stdout"] == "done\n",
              "stdout=%r stderr=%r" % (r["stdout"], r["stderr"][-300:]))
    # The proxy's lookups reach the stub server on their own schedule: a deadline, not a pause.
    wait_for(lambda: {"hang.test", "half.test"} <= set(hits["dns"][dns_before:]), 10)
    asked = hits["dns"][dns_before:]
    ctx.check("the lookups were sent (the cancelled path was taken)",
              "hang.test" in asked and "half.test" in asked, repr(asked))
    ctx.check("the daemon serves a proxy run after the cancelled lookups",
              ctx.run("curl -sS --max-time 10 http://data.test/data.txt", profile="net", lang="sh")["stdout"]
              == DATA.decode())


def test_bytes(ctx):
    n = ctx.naudit()
    r = ctx.run("curl -sS --max-time 10 -o /tmp/big http://data.test/big; echo rc=$?; "
                "wc -c < /tmp/big; curl -sS -i --max-time 10 http://data.test/data.txt | head -1",
                profile="small", lang="sh")
    got = r["stdout"].split()
    ctx.check("network_bytes cuts a download and refuses what follows",
              len(got) >= 3 and got[0] != "rc=0" and int(got[1]) < 100 * 1024 and "403" in r["stdout"],
              "stdout=%r stderr=%r" % (r["stdout"], r["stderr"][-300:]))
    net = r.get("network") or {}
    ctx.check("the result names the byte limit",
              {"host": "data.test:80", "reason": "limit"} in net.get("refusals", [])
              and net.get("bytes_up", 0) + net.get("bytes_down", 0) <= 100 * 1024, repr(net))
    lines = ctx.audit(n)
    ctx.check("the audit line names the byte limit", len(lines) == 1 and "data.test:80/limit" in lines[0],
              "".join(lines))


def test_abuse(ctx):
    """Hostile heads and splices: refused or bounded, and the proxy serves the next request."""
    code = PY_ASK + r'''
import threading, time
# An over-long head: 431 before any lookup.
print("long", first("GET http://data.test/" + "a" * 9000 + " HTTP/1.1\r\n\r\n"))
# A CONNECT whose client never reads: the echo service answers everything
# the code sends; the proxy stops reading when 256 KiB wait for the code.
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
s.sendall(b"CONNECT data.test:8443 HTTP/1.1\r\n\r\n")
sent = 0
try:
    s.setblocking(False)
    end = time.time() + 3
    while time.time() < end:
        try:
            sent += s.send(b"x" * 65536)
        except BlockingIOError:
            time.sleep(0.01)
except OSError as e:
    print("send error", e)
print("unread sent", sent < 64 << 20)
print("after", first("GET http://data.test/data.txt HTTP/1.1\r\n\r\n").split(" reason")[0])
'''
    r = ctx.run(code, profile="net", wall=25, timeout=60)
    out = r["stdout"]
    ctx.check("an over-long head is refused (431 head_too_large)",
              "long HTTP/1.1 431 Request Header Fields Too Large reason=head_too_large" in out, out + r["stderr"][-500:])
    ctx.check("a CONNECT whose client does not read is bounded, others still served",
              "unread sent True" in out and "after HTTP/1.0 200 OK" in out, out)
    ctx.check("the daemon answers after the abuse", ctx.ping())


def test_clients(ctx):
    """airlock info, the CLI's line, the Python binding and the MCP server show it."""
    p = subprocess.run([ctx.airlock, "--socket", ctx.daemon.sock, "--json", "info"], capture_output=True, timeout=30)
    info = json.loads(p.stdout)
    profs = {x["name"]: x for x in info.get("profiles", [])}
    net = profs.get("net", {})
    ctx.check("airlock info --json: network and the allow-list",
              net.get("network") == "proxy" and net.get("allow_hosts", [])[:2] == ["data.test:80,8443", "*.wild.test:80"]
              and net.get("allow_private_hosts") == [] and profs.get("default", {}).get("network") == "none"
              and "allow_hosts" not in profs.get("default", {}), repr(net))
    p = subprocess.run([ctx.airlock, "--socket", ctx.daemon.sock, "info"], capture_output=True, text=True, timeout=30)
    ctx.check("airlock info: the proxy profiles' hosts",
              "network: proxy to data.test:80,8443, *.wild.test:80" in p.stdout, p.stdout)
    p = subprocess.run([ctx.airlock, "--socket", ctx.daemon.sock, "run", "--profile", "net", "--lang", "sh", "-c",
                        "curl -sS --max-time 10 http://data.test/data.txt; curl -sS --max-time 10 http://evil.test/"],
                       capture_output=True, text=True, timeout=60)
    ctx.check("airlock run: the network line on stderr",
              re.search(r"airlock: network: 2 connections \(1 refused\), [0-9.]+ B down, [0-9.]+ B up; "
                        r"contacted data.test:80; refused evil.test:80 \(not_listed\)", p.stderr) is not None,
              p.stderr)
    if ctx.python_dir:
        code = ("import json, sys\n"
                "from airlock import AirlockSandbox\n"
                "sb = AirlockSandbox(socket=sys.argv[1], profile='net')\n"
                "r = sb.run_sync(\"import urllib.request as u\\n"
                "print(u.urlopen('http://data.test/data.txt', timeout=10).read().decode(), end='')\\n"
                "try:\\n    u.urlopen('http://meta.test/', timeout=10)\\nexcept Exception as e:\\n    print(e)\")\n"
                "print(json.dumps({'stdout': r.stdout, 'network': r.network.__dict__ if r.network else None}))\n"
                "print(json.dumps(AirlockSandbox(socket=sys.argv[1]).run_sync('print(1)').network))\n")
        env = dict(os.environ, PYTHONPATH=ctx.python_dir, AIRLOCK_LIBRARY=ctx.libairlock)
        if os.environ.get("AIRLOCK_TEST_PRELOAD"):
            # An ASan build's libairlock needs the sanitizer runtime first.
            env.update(LD_PRELOAD=os.environ["AIRLOCK_TEST_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
        p = subprocess.run([sys.executable, "-c", code, ctx.daemon.sock], capture_output=True, text=True,
                           timeout=60, env=env)
        lines = p.stdout.splitlines()
        try:
            got = json.loads(lines[0])
            n = got["network"]
            ok = (got["stdout"].startswith(DATA.decode()) and "403" in got["stdout"]
                  and n["contacted"] == ["data.test:80"] and [list(x) for x in n["refusals"]] == [["meta.test:80", "private_address"]]
                  and n["connections"] == 2 and n["refused"] == 1 and lines[1] == "null")
        except (ValueError, IndexError, KeyError, TypeError):
            ok = False
        ctx.check("python binding: result.network", ok, p.stdout + p.stderr[-800:])
    mcp = subprocess.Popen([ctx.airlock, "--socket", ctx.daemon.sock, "mcp"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "run_python", "arguments": {"profile": "net", "code":
                        "import urllib.request as u\nprint(u.urlopen('http://data.test/data.txt', timeout=10).read())\n"
                        "try:\n    u.urlopen('http://x.secret.test/', timeout=10)\nexcept Exception as e:\n    print(e)\n"}}}]
    replies = {}
    try:
        for m in msgs:
            mcp.stdin.write(json.dumps(m) + "\n")
            mcp.stdin.flush()
            if "id" in m:
                while True:
                    line = mcp.stdout.readline()
                    if not line:
                        break
                    rep = json.loads(line)
                    if rep.get("id") == m["id"]:
                        replies[m["id"]] = rep
                        break
    finally:
        mcp.stdin.close()
        mcp.wait(30)
    tools = {t["name"]: t for t in replies.get(2, {}).get("result", {}).get("tools", [])}
    desc = tools.get("run_python", {}).get("description", "")
    ctx.check("mcp: the run tools say which profile reaches which hosts",
              "With profile 'net' the code may reach" in desc and "*.wild.test:80" in desc, desc[-400:])
    res = replies.get(3, {}).get("result", {})
    sc = res.get("structuredContent", {})
    text = "".join(c.get("text", "") for c in res.get("content", []) if c.get("type") == "text")
    ctx.check("mcp: structuredContent.network and the status line",
              sc.get("network", {}).get("contacted") == ["data.test:80"]
              and {"host": "x.secret.test:80", "reason": "not_listed"} in sc.get("network", {}).get("refusals", [])
              and "network: 2 connections (1 refused)" in text and "refused x.secret.test:80 (not_listed)" in text,
              repr(sc.get("network")) + text[-600:])


def test_default_profile(ctx):
    code = r'''
import os, socket, subprocess
print("vars", sorted(k for k in os.environ if "proxy" in k.lower()))
try:
    socket.create_connection(("127.0.0.1", 3128), timeout=5)
    print("proxy REACHED")
except OSError as e:
    print("proxy refused", type(e).__name__)
rc = subprocess.run(["curl", "-sS", "--max-time", "5", "-x", "http://127.0.0.1:3128", "http://data.test/data.txt"],
                    capture_output=True).returncode
print("curl", rc)
'''
    r = ctx.run(code)
    ctx.check("the default profile's result has no network figures", "network" not in r, repr(r.get("network")))
    out = r["stdout"]
    ctx.check("the default profile: no proxy variables, nothing on 3128, curl fails",
              "vars []" in out and "proxy refused" in out and "curl 0" not in out and "curl " in out,
              "stdout=%r stderr=%r" % (out, r["stderr"][-300:]))


# A profile whose mount and one host a reload takes away (test_reload_live).
LIVE_PROFILE = """
[mount livedata]
source = %s
target = /data/live
[profile live]
network = proxy
wall_ms = 30000
allow_hosts = keep.wild.test:80%s
%s
"""

LIVE_CELL = """
import urllib.request as u
try:
    x
except NameError:
    x = 'fresh'
else:
    x = 'kept'
print('state', x)
try:
    print('mount', open('/data/live/f.txt').read().strip())
except OSError as e:
    print('mount', type(e).__name__)
for h in ('keep.wild.test', 'drop.wild.test'):
    try:
        u.urlopen('http://%s/data.txt' % h, timeout=10).read()
        print(h, 'ok')
    except Exception as e:
        print(h, 'refused')
"""

LIVE_DRIVER = r"""
import json, sys
from airlock import AirlockSandbox
sb = AirlockSandbox(socket=sys.argv[1], profile='live')
with sb.session_sync(interpreter='python') as s:
    for line in sys.stdin:
        r = s.run_cell(json.loads(line))
        print(json.dumps({'stdout': r.stdout, 'stderr': r.stderr[-400:], 'state': r.state,
                          'outcome': r.outcome, 'advisories': list(r.advisories)}), flush=True)
"""

# A cell in flight while a reload takes drop.wild.test away: it reaches the
# host, says it is ready (a request the outside records), waits for the
# test's "go" (/flag, once the reload is done) and tries the host again.
LIVE_INFLIGHT = r"""
import time, urllib.request as u
def get(url):
    return u.urlopen(url, timeout=10).read()
get('http://drop.wild.test/data.txt')
get('http://keep.wild.test/cell-ready')
t = time.monotonic()
while time.monotonic() - t < 20:
    try:
        if get('http://keep.wild.test/flag') == b'go':
            break
    except Exception:
        pass
    time.sleep(0.1)
try:
    get('http://drop.wild.test/data.txt')
    print('reached after the reload')
except Exception as e:
    print('refused in the cell')
"""


def reload_config(ctx, text):
    """Write the config and SIGHUP the daemon; wait for its "reloaded: " line."""
    n = ctx.daemon.log_text().count("reloaded: ")
    ctx.daemon.write_config(text)
    ctx.daemon.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 20
    while ctx.daemon.log_text().count("reloaded: ") <= n and time.time() < deadline:
        time.sleep(0.05)
    return ctx.daemon.log_text().count("reloaded: ") > n


def test_reload_live(ctx):
    """Issue 28, point 6: a reload that drops a mount and an allowed host of a
    live interpreter's profile reaches it. Its next cell no longer sees the
    mount nor reaches the host: the interpreter is restarted under the new
    profile (state lost) and the cell's advisories say why. Before, the
    interpreter kept both (one-shot runs lost them at once)."""
    if not ctx.python_dir:
        ctx.check("test_reload_live needs the python binding", False)
        return
    src = tempfile.mkdtemp(prefix="airlock-test-egress-", dir="/var/lib")
    try:
        os.chmod(src, 0o755)
        with open(os.path.join(src, "f.txt"), "w") as f:
            f.write("seen\n")
        os.chmod(os.path.join(src, "f.txt"), 0o644)
        ctx.check("reload: the live profile is added",
                  reload_config(ctx, CONFIG + LIVE_PROFILE % (src, ", drop.wild.test:80", "mounts = livedata")), ctx.daemon.log_tail(2000))
        env = dict(os.environ, PYTHONPATH=ctx.python_dir, AIRLOCK_LIBRARY=ctx.libairlock)
        if os.environ.get("AIRLOCK_TEST_PRELOAD"):
            env.update(LD_PRELOAD=os.environ["AIRLOCK_TEST_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
        p = subprocess.Popen([sys.executable, "-c", LIVE_DRIVER, ctx.daemon.sock], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

        def answer():
            # The driver's next line, or {} when none comes within 90 s
            # (the check that reads it fails, and main() prints the log).
            if not select.select([p.stdout], [], [], 90)[0]:
                return {}
            return json.loads(p.stdout.readline() or "null") or {}

        def cell(code):
            p.stdin.write(json.dumps(code) + "\n")
            p.stdin.flush()
            return answer()

        try:
            first = cell(LIVE_CELL)
            ctx.check("before the reload the interpreter sees the mount and reaches both hosts",
                      first.get("stdout") == "state fresh\nmount seen\nkeep.wild.test ok\ndrop.wild.test ok\n",
                      repr(first))
            ok = reload_config(ctx, CONFIG + LIVE_PROFILE % (src, "", ""))
            ctx.check("reload: the mount and drop.wild.test are taken away", ok, ctx.daemon.log_tail(2000))
            second = cell(LIVE_CELL)
            out = second.get("stdout", "")
            ctx.check("after the reload the next cell no longer sees the mount",
                      "mount seen" not in out and "mount " in out, repr(second))
            ctx.check("after the reload the next cell cannot reach the host taken away",
                      "drop.wild.test refused" in out and "keep.wild.test ok" in out, repr(second))
            ctx.check("the interpreter was restarted: state lost, and the cell says why",
                      second.get("state") == "lost" and "state fresh" in out
                      and any("reload" in a and "interpreter was restarted" in a for a in second.get("advisories", [])),
                      repr(second))
            # A reload that leaves the sandbox as it was keeps the state.
            ok = reload_config(ctx, CONFIG + LIVE_PROFILE % (src, "", "") + "[profile other]\nwall_ms = 1000\n")
            third = cell(LIVE_CELL)
            ctx.check("a reload that does not change the session's sandbox keeps its interpreter",
                      ok and third.get("state") == "kept" and "state kept" in third.get("stdout", "")
                      and third.get("advisories") == [], repr(third))
            # In flight: the proxy follows the reload within the cell.
            ok = reload_config(ctx, CONFIG + LIVE_PROFILE % (src, ", drop.wild.test:80", ""))
            ctx.check("reload: drop.wild.test is given back", ok, ctx.daemon.log_tail(2000))
            n = len(hits["http"])
            p.stdin.write(json.dumps(LIVE_INFLIGHT) + "\n")
            p.stdin.flush()
            deadline = time.time() + 30
            FLAG[0] = b"wait"
            while "/cell-ready" not in hits["http"][n:] and time.time() < deadline:
                time.sleep(0.02)
            ok = reload_config(ctx, CONFIG + LIVE_PROFILE % (src, "", ""))
            FLAG[0] = b"go"
            fourth = answer()
            ctx.check("a cell in flight at the reload is refused the host taken away, within the cell",
                      ok and fourth.get("stdout") == "refused in the cell\n", repr(fourth))
            fifth = cell("print('next')")
            ctx.check("and the cell after it runs in a restarted interpreter",
                      fifth.get("state") == "lost" and fifth.get("stdout") == "next\n"
                      and any("allow-list" in a for a in fifth.get("advisories", [])), repr(fifth))
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            err = p.stderr.read()
        ctx.check("the live profile's session ended cleanly", p.returncode == 0, err[-800:])
    finally:
        reload_config(ctx, CONFIG)
        shutil.rmtree(src, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--airlockd", required=True)
    ap.add_argument("--airlock", required=True)
    ap.add_argument("--python-dir", help="libclient/python, for the binding's check")
    ap.add_argument("--libairlock", help="libairlock.so, for the binding's check")
    ap.add_argument("--only", help="run this test alone (a test function's name), e.g. while working on it")
    args = ap.parse_args()
    if os.environ.get(NETNS_MARK) != "1":
        if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
            print("skipped: needs root, unshare and ip")
            return 77
        if subprocess.run(["unshare", "-n", "true"]).returncode != 0:
            print("skipped: cannot make a network namespace")
            return 77
        os.environ[NETNS_MARK] = "1"
        os.execvp("unshare", ["unshare", "-n", sys.executable, os.path.abspath(__file__)] + sys.argv[1:])
    if shutil.which("curl") is None:
        print("curl is not installed (apt-get install curl)")
        return 1
    outside()
    ctx = Ctx(args)
    ctx.daemon.start()
    try:
        for t in (test_allowed, test_refused, test_flood, test_head_deadline, test_global_cap,
                  test_dns_pending, test_bytes, test_abuse, test_clients, test_default_profile,
                  test_reload_live):
            if args.only and t.__name__ != args.only:
                continue
            try:
                t(ctx)
            except (AssertionError, subprocess.TimeoutExpired) as e:
                ctx.check(t.__name__, False, str(e))
            ctx.check("the daemon is alive and answers after " + t.__name__,
                      ctx.daemon.proc.poll() is None and ctx.ping())
    finally:
        ctx.daemon.stop()
    if ctx.failures:
        print("log:\n" + ctx.daemon.log_tail(6000))
        print("%d failed: %s" % (len(ctx.failures), ", ".join(ctx.failures)))
        return 1
    ctx.daemon.remove()
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
