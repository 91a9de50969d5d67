#!/usr/bin/env python3
"""check_docs_match.py SRCDIR AIRLOCK_CLI: the documentation names what the
code has, no more and no less (issue 32, point 9).

- libairlock's exported functions: the version script
  (libclient/libairlock.map) is the truth, whatever node a symbol is in
  (other changes add nodes): every one is named in full in the Functions
  table of docs/libairlock.md, every node after 0.1 is named there as
  "(0.N)", and every airlock_* name of that table is exported or declared
  in libclient/airlock.h (a type or a macro). libairlock.3 is held to the
  map by docs/check-man.sh.
- airlock(1)'s commands: the command table of the CLI
  (libclient/cli/main.c cli_commands, and the session subcommands of
  cmd_session.c) against the entries of the page's COMMANDS section, both
  ways; `mcp` has its own section, MCP SERVER.
- The MCP tools: what the built `airlock mcp` answers to tools/list (no
  daemon needed) against the Tools table of docs/mcp.md and the tool
  entries of airlock(1)'s MCP SERVER section, both ways; and every "N
  tools" count in either says how many there are.

Python 3 standard library only. Prints every mismatch; exits 1 if any.
"""

import json
import os
import re
import subprocess
import sys

NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16,
}

errors = []


def fail(msg):
    errors.append(msg)


def read(src, rel):
    with open(os.path.join(src, rel), encoding="utf-8") as f:
        return f.read()


def man_section(text, name):
    """The lines of a man page's .SH NAME section."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith(".SH "):
            inside = line[4:].strip().strip('"') == name
            continue
        if inside:
            out.append(line)
    return out


def man_entries(lines):
    """The first words of each .TP entry's tag line (quotes, fonts and
    escapes dropped): ["ping"], ["session", "open"], ["cancel", "ID"], ..."""
    out = []
    for i, line in enumerate(lines[:-1]):
        if line.strip() != ".TP":
            continue
        tag = lines[i + 1]
        if not tag.startswith((".B ", ".BI ", ".BR ", ".B\t")):
            continue
        tag = re.sub(r"\\f[BIRP]", "", tag.split(None, 1)[1])
        tag = tag.replace("\\-", "-").replace('"', " ")
        out.append(tag.split())
    return out


def check_symbols(src):
    mapping = read(src, "libclient/libairlock.map")
    symbols = re.findall(r"^\s*(airlock_[a-z0-9_]+);", mapping, re.M)
    nodes = re.findall(r"^(AIRLOCK_\d+\.\d+)\s*\{", mapping, re.M)
    if len(symbols) < 100 or not nodes:
        fail("libairlock.map: %d symbols in %d nodes: not the version script?" % (len(symbols), len(nodes)))
    md = read(src, "docs/libairlock.md")
    m = re.search(r"^## Functions\n(.*?)^## ", md, re.M | re.S)
    if m is None:
        fail("docs/libairlock.md: no '## Functions' section")
        return
    table = m.group(1)
    named = set(re.findall(r"`(airlock_[a-z0-9_]+)`", table))
    for sym in symbols:
        if sym not in named:
            fail("docs/libairlock.md: the Functions table does not name %s (exported)" % sym)
    for node in nodes:
        version = node.split("_", 1)[1]
        if version != "0.1" and "(%s)" % version not in table:
            fail("docs/libairlock.md: the Functions table does not name node %s" % node)
    header = read(src, "libclient/airlock.h")
    declared = set(re.findall(r"\b(airlock_[a-z0-9_]+)\b", header))
    for name in sorted(named - set(symbols) - declared):
        fail("docs/libairlock.md: %s is neither exported nor in airlock.h" % name)
    return len(symbols)


def check_commands(src):
    main = read(src, "libclient/cli/main.c")
    m = re.search(r"cli_commands\[\] = \{(.*?)\n\};", main, re.S)
    session = read(src, "libclient/cli/cmd_session.c")
    ms = re.search(r"session_commands\[\] = \{(.*?)\n\s*\};", session, re.S)
    if m is None or ms is None:
        fail("libclient/cli: no cli_commands or session_commands table")
        return
    commands = set(re.findall(r'\.name = "([a-z-]+)"', m.group(1)))
    subs = set(re.findall(r'\.name = "([a-z-]+)"', ms.group(1)))
    if "session" not in commands or not subs:
        fail("libclient/cli: the command tables did not parse (%s; %s)" % (commands, subs))
        return
    want = {c for c in commands if c not in ("session", "mcp")}
    want |= {"session " + s for s in subs}
    page = read(src, "docs/man/airlock.1")
    have = set()
    for words in man_entries(man_section(page, "COMMANDS")):
        have.add(" ".join(words[:2]) if words[0] == "session" and len(words) > 1 else words[0])
    for c in sorted(want - have):
        fail("airlock(1): COMMANDS has no entry for '%s' (a command of the CLI)" % c)
    for c in sorted(have - want):
        fail("airlock(1): COMMANDS documents '%s', which the CLI does not have" % c)
    if "mcp" in commands and not any(l.startswith(".B airlock mcp") for l in man_section(page, "MCP SERVER")):
        fail("airlock(1): the command mcp has no MCP SERVER section")
    return len(want)


def mcp_tools(cli):
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "check-docs", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in msgs)
    # No daemon: the list does not need one (its probes fail quietly).
    p = subprocess.run([cli, "--socket", "/nonexistent/airlock.sock", "mcp"], input=stdin,
                       capture_output=True, text=True, timeout=60)
    for line in p.stdout.splitlines():
        m = json.loads(line)
        if m.get("id") == 2:
            return [t["name"] for t in m["result"]["tools"]]
    fail("airlock mcp: no tools/list answer (status %d): %s" % (p.returncode, p.stderr[-500:]))
    return []


def check_counts(where, text, n):
    for word in re.findall(r"\b([a-z]+|\d+) (?:MCP )?tools\b", text, re.I):
        value = NUMBERS.get(word.lower(), int(word) if word.isdigit() else None)
        if value is not None and value != n:
            fail("%s says '%s tools'; airlock mcp has %d" % (where, word, n))


def check_mcp(src, cli):
    tools = mcp_tools(cli)
    if not tools:
        return
    md = read(src, "docs/mcp.md")
    m = re.search(r"^## Tools\n(.*?)^#", md, re.M | re.S)
    table = set(re.findall(r"^\| `([a-z_]+)` \|", m.group(1), re.M)) if m else set()
    for t in sorted(set(tools) - table):
        fail("docs/mcp.md: the Tools table has no row for %s (in tools/list)" % t)
    for t in sorted(table - set(tools)):
        fail("docs/mcp.md: the Tools table lists %s, which tools/list does not" % t)
    check_counts("docs/mcp.md", md, len(tools))
    page = read(src, "docs/man/airlock.1")
    lines = man_section(page, "MCP SERVER")
    entries = {w[0] for w in man_entries(lines) if re.fullmatch(r"[a-z]+_[a-z_]+", w[0])}
    for t in sorted(set(tools) - entries):
        fail("airlock(1): MCP SERVER has no entry for the tool %s" % t)
    for t in sorted(entries - set(tools)):
        fail("airlock(1): MCP SERVER documents a tool %s that tools/list does not have" % t)
    check_counts("airlock(1)", "\n".join(lines), len(tools))
    return len(tools)


def main():
    if len(sys.argv) != 3:
        print("usage: check_docs_match.py SRCDIR AIRLOCK_CLI", file=sys.stderr)
        return 2
    src, cli = sys.argv[1], sys.argv[2]
    nsym = check_symbols(src)
    ncmd = check_commands(src)
    ntools = check_mcp(src, cli)
    for e in errors:
        print("FAIL " + e)
    if errors:
        return 1
    print("ok: %d exported functions, %d commands, %d MCP tools documented" % (nsym, ncmd, ntools))
    return 0


if __name__ == "__main__":
    sys.exit(main())
