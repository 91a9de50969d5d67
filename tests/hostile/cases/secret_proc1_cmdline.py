# /proc/1/cmdline (the supervisor's, world-readable) names no host path: the
# supervisor is a clone of the daemon, not an exec, so its argv memory held
# the daemon's command line (--config and --socket paths) until it wrote over
# it; its environment strings are blanked too.
# expect: outcome=exited exit_code=0 stdout~=^BLOCKED stdout!~=LEAK
import sys
leaks = 0
raw = open("/proc/1/cmdline", "rb").read()
text = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
print("cmdline %r" % text)
for what in ("@CONFIG@", "@SOCK@", "@TMPDIR@", "--config", "--socket", "--user", "airlock-hostile-"):
    if what in text:
        leaks += 1
        print("LEAK %s in /proc/1/cmdline" % what)
    else:
        print("BLOCKED %s" % what)
if not text.startswith("airlockd"):
    leaks += 1
    print("LEAK? unexpected title %r" % text)
sys.exit(0)
