#!/usr/bin/env python3
"""check_uid_ranges.py: no two tests' daemons share a host uid.

Arguments: --band=B --shift=S --max-offset=M --by-hand=BASE:COUNT, then
NAME=BASE:COUNT for every range tests/meson.build hands out (already moved
by this build's shift S), then the C sources whose configs still name their
own uid_base (the front-door tests: "uid_base = N", with "uid_count = M" on
the same config or the daemon's default of 2048), which the fixture moves by
S when below B (tests/integration/fixture.c, fixture_config_text).

Fails when two ranges of this build overlap, when a handed-out range is
empty, when a source names no range at all (the scan would then prove
nothing), and, independently of this build's offset, when a range of offset
0 leaves [1, B) (then the bands of two offsets, or the fixture's rule that a
base at or above B is already moved, could fail), when the by-hand range
overlaps a range of any offset 0..M, or when the last band reaches 2^31.
"""
import re
import sys

DEFAULT_COUNT = 2048  # daemon/config/config_keys.c: uid_count's default


def config_ranges(path):
    """(name, base, count) of each config in a C source: a uid_base, and the
    uid_count that follows it before the next uid_base, if any."""
    text = open(path, encoding="utf-8").read()
    found = []
    for m in re.finditer(r"uid_base = (\d+)", text):
        rest = text[m.end():]
        nxt = rest.find("uid_base = ")
        cm = re.search(r"uid_count = (\d+)", rest if nxt < 0 else rest[:nxt])
        count = int(cm.group(1)) if cm and cm.start() < 200 else DEFAULT_COUNT
        line = text.count("\n", 0, m.start()) + 1
        found.append(("%s:%d" % (path, line), int(m.group(1)), count))
    return found


def overlaps(ranges):
    """Problems: each pair of ranges that overlap."""
    out = []
    ranges = sorted(ranges, key=lambda r: r[1])
    for (n1, b1, c1), (n2, b2, c2) in zip(ranges, ranges[1:]):
        if b2 < b1 + c1:
            out.append("%s [%d, %d) overlaps %s [%d, %d)" % (n1, b1, b1 + c1, n2, b2, b2 + c2))
    return out


def main(argv):
    opts = {"band": None, "shift": 0, "max-offset": 0, "by-hand": None}
    handed, sources, problems = [], [], []
    for a in argv:
        m = re.fullmatch(r"--([\w-]+)=(\d+)(?::(\d+))?", a)
        if m and m.group(1) in opts:
            opts[m.group(1)] = (int(m.group(2)), int(m.group(3))) if m.group(3) else int(m.group(2))
            continue
        m = re.fullmatch(r"([\w.-]+)=(\d+):(\d+)", a)
        if m:
            name, base, count = m.group(1), int(m.group(2)), int(m.group(3))
            if count < 2:
                problems.append("%s: a range of %d uids" % (name, count))
            handed.append((name, base, count))
            continue
        found = config_ranges(a)
        if not found:
            problems.append("%s: no uid_base in it" % a)
        sources += found
    band, shift = opts["band"], opts["shift"]
    if band is None:
        band, shift = 1 << 32, 0  # no bands: the ranges as they are
    if shift % band:
        problems.append("shift %d is no multiple of the band %d" % (shift, band))
    # This build's ranges: those handed out as they are, the sources' moved
    # as the fixture moves them.
    ranges = handed + [(n, b + shift if b < band else b, c) for n, b, c in sources]
    problems += overlaps(ranges)
    # Every build's: offset 0's ranges lie in [1, band), so each offset's
    # lie in its own band and never meet another's.
    base0 = [(n, b - shift, c) for n, b, c in handed] + sources
    for n, b, c in base0:
        if b < 1 or b + c > band:
            problems.append("%s [%d, %d) at offset 0 leaves [1, %d)" % (n, b, b + c, band))
    for n, b, c in handed:
        if not shift <= b < shift + band:
            problems.append("%s: handed out at %d, outside this build's band [%d, %d)"
                            % (n, b, shift, shift + band))
    if opts["by-hand"] is not None:
        hb, hc = opts["by-hand"]
        for k in range(opts["max-offset"] + 1):
            problems += overlaps([("by-hand", hb, hc)] +
                                 [("%s (offset %d)" % (n, k), b + k * band, c) for n, b, c in base0])
    if (opts["max-offset"] + 1) * band >= 1 << 31:
        problems.append("offset %d's band ends at or past 2^31" % opts["max-offset"])
    for p in problems:
        print("FAIL " + p)
    print("%d ranges, band %d, shift %d, %d problems" % (len(ranges), band, shift, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
