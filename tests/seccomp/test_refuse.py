#!/usr/bin/env python3
"""test_refuse.py: airlockd refuses to start, naming the call, when its
seccomp policy lists a system call that libseccomp cannot name (and the
policy's own number table does not have), instead of running without that
rule. libseccomp is made not to know the name by an LD_PRELOAD shim
(preload_unknown.c). Usage: test_refuse.py AIRLOCKD PRELOAD_SO"""
import os
import subprocess
import sys
import tempfile


def main():
    airlockd, preload = sys.argv[1], sys.argv[2]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="airlock-seccomp-refuse-") as d:
        conf = os.path.join(d, "airlockd.conf")
        with open(conf, "w") as f:
            f.write("")
        # kcmp: on the named deny list; setresuid: on the frontend's.
        for call in ("kcmp", "setresuid"):
            sock = os.path.join(d, "airlock.sock")
            env = dict(os.environ, LD_PRELOAD=preload, AIRLOCK_TEST_UNKNOWN_SYSCALL=call)
            try:
                p = subprocess.run([airlockd, "--foreground", "--user", "nobody", "--socket", sock,
                                    "--config", conf], env=env, stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True, timeout=20)
                rc, err = p.returncode, p.stderr
            except subprocess.TimeoutExpired as e:
                rc, err = "timeout", (e.stderr or b"").decode(errors="replace")
            why = []
            if rc != 1:
                why.append("exit %s, expected 1" % rc)
            if "system call %s " % call not in err or "refusing to start" not in err:
                why.append("the error does not name %s" % call)
            if os.path.exists(sock):
                why.append("the socket was made before the refusal")
                os.unlink(sock)
            if why:
                failed += 1
                print("FAIL %s: %s; stderr:\n%s" % (call, "; ".join(why), err))
            else:
                print("ok %s: %s" % (call, err.strip().splitlines()[-1]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
