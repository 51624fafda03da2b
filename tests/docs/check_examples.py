#!/usr/bin/env python3
"""check_examples.py [--update] PARPLAN ROOT - the documents' examples are what parplan prints.

Every shell example of README.md and docs/*.md, a line "$ build/parplan ARGS"
or "$ scripts/parplan ARGS" (which builds build/ and runs it: the same program;
continued by a trailing backslash) inside a fenced block, is run with ARGS,
one temporary folder per document (so that a later example reads the files an
earlier one wrote: plan.json, a generated topology), PARPLAN_DATA_DIR set to
ROOT.  Each line the document shows under the command, up to the next "$ " line
or the end of the block, must be a line of what the command prints (standard
output, then standard error), in the document's order; a line "..." stands for
lines left out, and blank lines are not checked.  The exit status is not
checked: an example of a refusal shows its message.

What this cannot see: tables and figures quoted in prose without their command.
An example that cannot run here is listed in SKIP with the reason.

--update rewrites each shown line that is not printed with the printed line most
like it between its neighbours' (after a refit moves the figures); a line with
no printed line like it is left, and reported.  Read the diff before committing.

PARPLAN_WRAPPER (valgrind, in scripts/test) is not applied: the golden test runs
commands under it, and this test is about the documents.
"""
import difflib
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


# the lines that run parplan: the built program, and the script that builds it
PREFIXES = ("$ build/parplan ", "$ scripts/parplan ")


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
        prefix = next((p for p in PREFIXES if line.startswith(p)), None)
        if fenced and prefix:
            start, cmd = i + 1, line[len(prefix):]
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


def rewrite(shown, printed):
    """{line number: printed line} for the shown lines not printed in order, each
    the printed line most like it between the lines its neighbours matched."""
    found, at = {}, 0
    for number, line in shown:
        if line.strip() in ("", "..."):
            continue
        try:
            at = printed.index(line, at) + 1
            found[number] = at - 1
        except ValueError:
            pass
    out, lo = {}, 0
    for k, (number, line) in enumerate(shown):
        if number in found:
            lo = found[number] + 1
            continue
        if line.strip() in ("", "..."):
            continue
        hi = next((found[n] for n, _ in shown[k + 1:] if n in found), len(printed))
        best, score = None, 0.6
        for j in range(lo, hi):
            r = difflib.SequenceMatcher(None, line, printed[j]).ratio()
            if r > score:
                best, score = j, r
        if best is not None:
            out[number] = printed[best]
            lo = best + 1
    return out


def main():
    args = sys.argv[1:]
    update = bool(args) and args[0] == "--update"
    if update:
        args = args[1:]
    if len(args) != 2:
        print("usage: check_examples.py [--update] PARPLAN ROOT", file=sys.stderr)
        return 2
    parplan, root = os.path.abspath(args[0]), os.path.abspath(args[1])
    env = dict(os.environ, PARPLAN_DATA_DIR=root)
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    results = []
    for doc in docs:
        name = os.path.basename(doc)
        edits = {}
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
                printed = r.stdout.split("\n")
                bad = missing(shown, printed, r.stderr.split("\n"))
                if bad and update:
                    edits.update(rewrite(shown, printed + r.stderr.split("\n")))
                    bad = [(n, l) for n, l in bad if n not in edits]
                results.append((not bad, label, bad))
            if edits:
                text = open(doc, encoding="utf-8").read().split("\n")
                for number, line in edits.items():
                    text[number - 1] = line
                with open(doc, "w", encoding="utf-8") as f:
                    f.write("\n".join(text))
                print("# %s: %d lines rewritten" % (name, len(edits)))
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
