#!/usr/bin/env python3
"""assemble.py driver|boot OUT PYPLOT_HOOK FIGURES MAIN [LATER]: the python
code the frontend sends (daemon/frontend/meson.build), the shared files put
in front.

driver: the cells driver: PYPLOT_HOOK, FIGURES and MAIN (cells.py) one after
        the other.
boot:   a run's start-up for `-c`: one line that runs PYPLOT_HOOK and MAIN
        (runboot.py) in a namespace of their own, with FIGURES and LATER
        (runfigures.py) as the text _LATER, compiled only once pyplot is
        imported."""
import sys

kind, out = sys.argv[1:3]
text = [open(p, encoding="utf-8").read() for p in sys.argv[3:]]
if kind == "driver" and len(text) == 3:
    code = "".join(text)
elif kind == "boot" and len(text) == 4:
    inner = text[0] + "\n_LATER = %r\n\n" % (text[1] + text[3]) + text[2]
    # exec of the text, not of compile()'s code: the first compile() of a
    # process costs 0.6 ms (runboot.py).
    code = "exec(%r, {'__name__': 'airlock_run', '__builtins__': __builtins__})" % inner
else:
    sys.exit("usage: assemble.py driver OUT HOOK FIGURES CELLS | boot OUT HOOK FIGURES RUNBOOT RUNFIGURES")
with open(out, "w", encoding="utf-8") as f:
    f.write(code)
