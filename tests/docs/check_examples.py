#!/usr/bin/env python3
"""check_examples.py PARPLAN ROOT - the documents' examples are what parplan prints.

Every shell example of README.md and docs/*.md, a line "$ build/parplan ARGS"
(continued by a trailing backslash) inside a fenced block, is run with ARGS,
one temporary folder per document (so that a later example reads the files an
earlier one wrote: plan.json, a generated topology), PARPLAN_DATA_DIR set to
ROOT.  Each line the document shows under the command, up to the next "$ " line
or the end of the block, must be a line of what the command prints (standard
output, then standard error), in the document's order; a line "..." stands for
lines left out, and blank lines are not checked.  The exit status is not
checked: an example of a refusal shows its message.

What this cannot see: tables and figures quoted in prose without their command.
An example that cannot run here is listed in SKIP with the reason.

PARPLAN_WRAPPER (valgrind, in scripts/test) is not applied: the golden test runs
commands under it, and this test is about the documents.
"""
import glob
import os
import shlex
import subprocess
import sys
import tempfile

# (document, first words of the arguments): why the example cannot run here
SKIP = {
    ("hardware.md", "plan --model path/to/Llama-3.1-8B/config.json"):
        "reads a Hugging Face config.json that the repository does not hold",
}


def examples(path):
    """(line number, argument string, [(line number, shown line)]) per example."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, fenced, i = [], False, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            fenced = not fenced
            i += 1
            continue
        if fenced and line.startswith("$ build/parplan "):
            start, cmd = i + 1, line[len("$ build/parplan "):]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            shown = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```") \
                    and not lines[i].startswith("$ "):
                shown.append((i + 1, lines[i]))
                i += 1
            out.append((start, cmd.strip(), shown))
            continue
        i += 1
    return out


def missing(shown, printed, errors):
    """The shown lines not found in order in printed (nor anywhere in errors)."""
    at, bad = 0, []
    for number, line in shown:
        if line.strip() in ("", "..."):
            continue
        try:
            at = printed.index(line, at) + 1
        except ValueError:
            if line not in errors:
                bad.append((number, line))
    return bad


def main():
    if len(sys.argv) != 3:
        print("usage: check_examples.py PARPLAN ROOT", file=sys.stderr)
        return 2
    parplan, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    env = dict(os.environ, PARPLAN_DATA_DIR=root)
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    results = []
    for doc in docs:
        name = os.path.basename(doc)
        with tempfile.TemporaryDirectory() as tmp:
            os.mkdir(os.path.join(tmp, "docs"))
            for number, cmd, shown in examples(doc):
                label = "%s:%d parplan %s" % (name, number, cmd[:70])
                why = next((w for (d, head), w in SKIP.items()
                            if d == name and cmd.startswith(head)), None)
                if why:
                    results.append((True, label + " # SKIP " + why, []))
                    continue
                r = subprocess.run([parplan] + shlex.split(cmd), cwd=tmp, env=env,
                                   stdin=subprocess.DEVNULL, capture_output=True,
                                   text=True, timeout=240)
                bad = missing(shown, r.stdout.split("\n"), r.stderr.split("\n"))
                results.append((not bad, label, bad))
    print("1..%d" % len(results))
    failed = 0
    for k, (ok, label, bad) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", k, label))
        for number, line in bad:
            print("#   line %d not printed: %s" % (number, line))
        failed += not ok
    print("# %d examples, %d not as shown" % (len(results), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
