"""The host test's Jupyter check (tests/host/acceptance.sh, in the VM, as
the user agent): the installed kernelspec airlock-python, started by
jupyter_client as Jupyter starts it, runs cells in the installed daemon's
sandbox. Prints what it saw; exit status 0 only if all held."""

import os
import sys

from jupyter_client.manager import start_new_kernel


def main():
    # python-site: the runtime that reaches Debian's python3-ipython (the
    # VM has no numpy, which the kernel's own pick of a runtime counts).
    # 120 s a cell: the VM is emulated (TCG) on a shared host, where
    # IPython's import in the first cell once took past the 10 s default
    # and every cell came back KeyboardInterrupt (CI of 1fe0973).
    km, kc = start_new_kernel(kernel_name="airlock-python", startup_timeout=120,
                              env=dict(os.environ, AIRLOCK_KERNEL_RUNTIME="python-site",
                                       AIRLOCK_KERNEL_WALL_S="120"))
    try:
        outs = []

        def hook(msg):
            if msg["header"]["msg_type"] in ("stream", "execute_result", "error"):
                outs.append(msg["content"])

        marker = "/tmp/airlock-host-kernel-%d" % os.getpid()
        kc.execute_interactive("x = 6 * 7\nimport os\nopen(%r, 'w').write('x')\n"
                               "print(os.stat('/proc/self/ns/user').st_ino)" % marker,
                               output_hook=hook, timeout=120)
        reply = kc.execute_interactive("x", output_hook=hook, timeout=120)["content"]
        print(outs, reply["status"])
        ok = reply["status"] == "ok" and outs[-1].get("data", {}).get("text/plain") == "42"
        # Another user namespace than this process's (the uid inside may be
        # 1000, as the agent's is here: not a difference to test).
        ok = ok and outs[0].get("text", "").strip() != str(os.stat("/proc/self/ns/user").st_ino)
        ok = ok and not os.path.exists(marker)  # the cell's /tmp is the sandbox's
        # IPython in the sandbox: `!cmd` runs there (its hostname and pid
        # namespace the sandbox's), a magic works.
        outs.clear()
        reply = kc.execute_interactive("!hostname; readlink /proc/self/ns/pid\n%pwd", output_hook=hook,
                                       timeout=120)["content"]
        print(outs, reply["status"])
        text = "".join(o.get("text", "") for o in outs).split()
        ok = ok and reply["status"] == "ok" and len(text) == 2 and text[0] == "airlock"
        ok = ok and text[-1] != os.readlink("/proc/self/ns/pid")
        ok = ok and outs[-1].get("data", {}).get("text/plain") == "'/workspace'"
        return 0 if ok else 1
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)


if __name__ == "__main__":
    sys.exit(main())
