#!/usr/bin/env python3
"""options_doc.py - docs/commands.md's table of options is what --help says, as TAP.

Usage: options_doc.py PARPLAN [SOURCE_ROOT] [--update]

The option registry (src/cli/options.c) is the one home of every flag: its
name, its value and what it does.  Each command's --help prints the options
that command takes from it.  This script reads every command's --help, joins
the options by flag (a flag with the same text on several commands is one row
naming them all; one whose text differs by command is a row each), and
compares the table with the one docs/commands.md holds between the lines
OPEN and CLOSE below.  With --update it writes the table there instead, so an
option added to the registry is a reviewable diff of the document.

Prints "ok 1 - ..." when they agree, else "not ok 1 - ..." with the first rows
that differ; exits 1 on a difference.  Standard library only.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OPEN = ("<!-- options: generated from each command's --help by "
        "tests/docs/options_doc.py --update; edit src/cli/options.c, not this table -->")
CLOSE = "<!-- end of options -->"
# an option line of --help: two spaces, the flag (and a short form), its value,
# two spaces or more, what it does
OPTION = re.compile(r"^  (-[a-z], )?(--[a-z0-9-]+)(\S*)(?: (\S+))?\s{2,}(.*)$")


def commands(parplan):
    """The commands the overview lists, two-word ones included."""
    text = run(parplan, ["--help"])
    out, inside = [], False
    for line in text.splitlines():
        if line == "commands:":
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            words = re.split(r"\s{2,}", line.strip())[0]
            out.append(words.split())
    return out


def run(parplan, args):
    p = subprocess.run([parplan] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.exit("Bail out! parplan %s exited %d: %s" % (" ".join(args), p.returncode,
                                                           p.stderr.strip()))
    return p.stdout


def options_of(parplan, words):
    """(flag, value, text) for each option of one command's --help, in its order."""
    text = run(parplan, words + ["--help"])
    out, inside = [], False
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line == "options:":
            inside = True
            continue
        if inside and not line.startswith("  "):
            break
        if not inside or not line.startswith("  -"):
            continue  # a long option's text, on the line after it (below)
        if i + 1 < len(lines) and lines[i + 1].startswith(" " * 8) and "  " not in line.strip():
            line = line + "  " + lines[i + 1].strip()
        m = OPTION.match(line)
        if not m:
            sys.exit("Bail out! parplan %s --help: not an option line: %r" % (" ".join(words), line))
        short, flag, suffix, value, what = m.groups()
        shown = (short or "") + flag + suffix + (" " + value if value else "")
        out.append((flag, shown, what.strip()))
    return out


def table(parplan):
    rows = {}   # (shown, text) -> [commands]
    order = []
    for words in commands(parplan):
        for flag, shown, what in options_of(parplan, words):
            key = (flag, shown, what)
            if key not in rows:
                rows[key] = []
                order.append(key)
            rows[key].append(" ".join(words))
    # the registry's order is the help's; a flag's rows kept together
    first, seen = {}, {}
    for i, key in enumerate(order):
        first.setdefault(key[0], i)
        seen[key] = i
    order.sort(key=lambda k: (first[k[0]], seen[k]))
    lines = ["| option | commands | what it does |", "|---|---|---|"]
    every = len(commands(parplan))
    for key in order:
        flag, shown, what = key
        cmds = rows[key]
        named = "every command" if len(cmds) == every else ", ".join("`%s`" % c for c in cmds)
        cell = what.replace("|", "\\|")
        lines.append("| `%s` | %s | %s |" % (shown.replace("|", "\\|"), named, cell))
    return lines


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    update = "--update" in sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    parplan = os.path.abspath(args[0])
    root = args[1] if len(args) > 1 else os.path.join(HERE, "..", "..")
    path = os.path.join(root, "docs", "commands.md")
    doc = open(path, encoding="utf-8").read().split("\n")
    if OPEN not in doc or CLOSE not in doc:
        sys.exit("Bail out! %s has no table between %r and %r" % (path, OPEN, CLOSE))
    a, b = doc.index(OPEN), doc.index(CLOSE)
    want = table(parplan)
    have = doc[a + 1:b]
    if update:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(doc[:a + 1] + want + doc[b:]))
        print("wrote %d options into %s" % (len(want) - 2, path))
        return 0
    print("1..1")
    if have == want:
        print("ok 1 - docs/commands.md lists the %d options --help gives" % (len(want) - 2))
        return 0
    print("not ok 1 - docs/commands.md's options differ from --help (run %s --update)"
          % os.path.relpath(__file__))
    shown = 0
    for line in sorted(set(want) - set(have)):
        print("#   missing: %s" % line[:160])
        shown += 1
        if shown >= 5:
            break
    for line in sorted(set(have) - set(want))[:5]:
        print("#   stale:   %s" % line[:160])
    return 1


if __name__ == "__main__":
    sys.exit(main())
