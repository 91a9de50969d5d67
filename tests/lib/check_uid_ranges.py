#!/usr/bin/env python3
"""check_uid_ranges.py: no two tests' daemons share a host uid.

Arguments: NAME=BASE:COUNT for every range tests/meson.build hands out, then
the C sources whose configs still name their own uid_base (the front-door
tests: "uid_base = N", with "uid_count = M" on the same config or the
daemon's default of 2048). Fails when two ranges overlap, when a handed-out
range is empty, or when a source names no range at all (the scan would then
prove nothing).
"""
import re
import sys

DEFAULT_COUNT = 2048  # daemon/config/config.c: uid_count's default


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


def main(argv):
    ranges, problems = [], []
    for a in argv:
        m = re.fullmatch(r"([\w.-]+)=(\d+):(\d+)", a)
        if m:
            name, base, count = m.group(1), int(m.group(2)), int(m.group(3))
            if count < 2:
                problems.append("%s: a range of %d uids" % (name, count))
            ranges.append((name, base, count))
            continue
        found = config_ranges(a)
        if not found:
            problems.append("%s: no uid_base in it" % a)
        ranges += found
    ranges.sort(key=lambda r: r[1])
    for (n1, b1, c1), (n2, b2, c2) in zip(ranges, ranges[1:]):
        if b2 < b1 + c1:
            problems.append("%s [%d, %d) overlaps %s [%d, %d)" % (n1, b1, b1 + c1, n2, b2, b2 + c2))
    for p in problems:
        print("FAIL " + p)
    print("%d ranges, %d problems" % (len(ranges), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
