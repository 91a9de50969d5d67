#!/usr/bin/env python3
"""assemble.py driver|boot OUT PYPLOT_HOOK FIGURES MAIN: the python code the
frontend sends (daemon/frontend/meson.build), the shared files put in front.

driver: the cells driver, the three files one after the other.
boot:   a run's start-up for `-c` (runboot.py): one line that runs the
        finder and MAIN in a namespace of their own, FIGURES kept as the
        text _FIGURES, compiled only once pyplot is imported."""
import sys

kind, out, hook, figures, main = sys.argv[1:6]
text = [open(p, encoding="utf-8").read() for p in (hook, figures, main)]
if kind == "driver":
    code = "".join(text)
elif kind == "boot":
    inner = text[0] + "\n_FIGURES = %r\n\n" % text[1] + text[2]
    code = ("exec(compile(%r, '<airlock run>', 'exec'), "
            "{'__name__': 'airlock_run', '__builtins__': __builtins__})" % inner)
else:
    sys.exit("assemble.py: driver or boot, not %r" % kind)
with open(out, "w", encoding="utf-8") as f:
    f.write(code)
