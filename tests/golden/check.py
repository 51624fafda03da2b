#!/usr/bin/env python3
"""check.py - compare parplan's JSON output with the golden files, as TAP.

Usage: check.py PARPLAN [SOURCE_ROOT] [--case NAME ...]

Each case is a pair in this directory: NAME.args, one line of shell words (the
command's arguments without the program name), and NAME.json, the expected
stdout parsed as JSON with the VOLATILE keys below removed (an empty stdout is
the document null).  NAME.status, when present, holds the expected exit status;
without it the status must be 0.

Every case runs PARPLAN from SOURCE_ROOT (default: two folders up from here), so
relative paths such as tests/data/runs.json work, with PARPLAN_DATA_DIR set to
SOURCE_ROOT so that catalogue names resolve to this checkout's models/ and
topologies/.  When PARPLAN_WRAPPER is set (e.g. "valgrind -q ..."), it is split
into words at white space and put in front of the command of every case that runs
in under 0.2 s without it, as tests/cli/tap.sh does.

Two documents match when they have the same structure (object keys in any
order, arrays of the same length), the same strings, integers, booleans and
nulls, and floats within a relative tolerance of REL_TOL.  Prints "ok K - NAME"
or "not ok K - NAME: first difference at JSON path ..." for each case, then the
plan; exits 1 when any case failed.  Standard library only.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Keys dropped from the output before it is compared or stored: what changes
# between runs or builds.  A pattern is a path from the document's root: object
# keys joined by ".", "[]" for every element of an array.  A pattern that does
# not occur in a document is ignored.
VOLATILE = [
    "tool.version",             # the project's version string (meson.build)
    "search.seconds",           # plan, size: the search's wall time (null without --timing)
    "points[].search.seconds",  # whatif: the same, per point of the sweep
]

REL_TOL = 1e-9


def parse_pattern(pattern):
    parts = []
    for dotted in pattern.split("."):
        key = dotted
        while key.endswith("[]"):
            key = key[:-2]
        if key:
            parts.append(key)
        parts.extend(["[]"] * ((len(dotted) - len(key)) // 2))
    return parts


def drop_path(node, parts):
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    if head == "[]":
        if isinstance(node, list):
            for item in node:
                drop_path(item, rest)
    elif isinstance(node, dict) and head in node:
        if rest:
            drop_path(node[head], rest)
        else:
            del node[head]


def drop_volatile(doc):
    """doc without the VOLATILE keys (changed in place and returned)."""
    for pattern in VOLATILE:
        drop_path(doc, parse_pattern(pattern))
    return doc


def cases(names=None):
    """The case names in this directory (all .args files, sorted), or names."""
    found = sorted(f[:-5] for f in os.listdir(HERE) if f.endswith(".args"))
    if not names:
        return found
    missing = [n for n in names if n not in found]
    if missing:
        sys.exit("check.py: no such case: " + ", ".join(missing))
    return list(names)


def case_args(name):
    with open(os.path.join(HERE, name + ".args"), encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    if len(lines) != 1:
        raise ValueError("%s.args: expected one line of arguments, found %d" % (name, len(lines)))
    return shlex.split(lines[0])


def expected_status(name):
    path = os.path.join(HERE, name + ".status")
    if not os.path.exists(path):
        return 0
    with open(path, encoding="utf-8") as f:
        return int(f.read().strip())


def run_case(parplan, root, name):
    """Runs a case; returns (exit status, stdout text, stderr text).  Under
    PARPLAN_WRAPPER only a case that runs in under 0.2 s without it runs again
    under it, as tests/cli/tap.sh does: memcheck slows a run some 50-fold."""
    argv = [parplan] + case_args(name)
    wrapper = os.environ.get("PARPLAN_WRAPPER", "").split()
    env = dict(os.environ, PARPLAN_DATA_DIR=root)

    def once(prefix):
        return subprocess.run(prefix + argv, cwd=root, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    start = time.monotonic()
    p = once([])
    if wrapper and time.monotonic() - start < 0.2:
        p = once(wrapper)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def parse_output(text):
    """stdout as a JSON document with the volatile keys dropped (null when empty)."""
    if not text.strip():
        return None
    return drop_volatile(json.loads(text))


def path_key(key):
    if key.replace("_", "a").isalnum() and not key[0].isdigit():
        return "." + key
    return "[" + json.dumps(key) + "]"


def kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def short(value):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def first_difference(expected, actual, path=""):
    """None when the documents match, else a description of the first difference
    that starts with its path, written as jq writes paths (.results[0].mfu)."""
    where = path or "."
    ek, ak = kind(expected), kind(actual)
    if ek != ak:
        return "%s: expected %s %s, got %s %s" % (where, ek, short(expected), ak, short(actual))
    if ek == "object":
        for key in expected:
            if key not in actual:
                return "%s: key missing" % (path + path_key(key))
        for key in actual:
            if key not in expected:
                return "%s: unexpected key, value %s" % (path + path_key(key), short(actual[key]))
        for key in expected:
            d = first_difference(expected[key], actual[key], path + path_key(key))
            if d:
                return d
        return None
    if ek == "array":
        for i, (e, a) in enumerate(zip(expected, actual)):
            d = first_difference(e, a, "%s[%d]" % (path or ".", i))
            if d:
                return d
        if len(expected) != len(actual):
            return "%s: expected %d elements, got %d" % (where, len(expected), len(actual))
        return None
    if ek == "float":
        scale = max(abs(expected), abs(actual))
        if abs(expected - actual) <= REL_TOL * scale:
            return None
        return "%s: expected %r, got %r (relative difference %.3g)" % (
            where, expected, actual, abs(expected - actual) / scale)
    if expected != actual:
        return "%s: expected %s, got %s" % (where, short(expected), short(actual))
    return None


def check_case(parplan, root, name):
    """None when the case passes, else (reason, diagnostic lines)."""
    try:
        args = case_args(name)
        status = expected_status(name)
        with open(os.path.join(HERE, name + ".json"), encoding="utf-8") as f:
            expected = json.load(f)
    except (OSError, ValueError) as e:
        return "cannot read the case: %s" % e, []
    notes = ["command: " + " ".join(shlex.quote(a) for a in ["parplan"] + args)]
    try:
        rc, out, err = run_case(parplan, root, name)
    except OSError as e:
        return "cannot run it: %s" % e, notes
    notes += ["stderr: " + l for l in err.splitlines()[:5]]
    try:
        actual = parse_output(out)
    except ValueError as e:
        return "stdout is not JSON (%s; exit status %d)" % (e, rc), notes
    if rc != status:
        return "exit status %d, expected %d" % (rc, status), notes
    diff = first_difference(expected, actual)
    if diff:
        return "first difference at JSON path " + diff, notes
    return None


def main():
    ap = argparse.ArgumentParser(description="Compare parplan's JSON output with tests/golden.")
    ap.add_argument("parplan", help="the parplan executable")
    ap.add_argument("root", nargs="?", default=os.path.dirname(os.path.dirname(HERE)),
                    help="the source root (default: two folders up from this script)")
    ap.add_argument("--case", action="append", metavar="NAME", help="run only this case (repeatable)")
    a = ap.parse_args()
    parplan = os.path.abspath(a.parplan)
    root = os.path.abspath(a.root)
    names = cases(a.case)
    print("1..%d" % len(names))
    failed = 0
    for k, name in enumerate(names, 1):
        result = check_case(parplan, root, name)
        if result is None:
            print("ok %d - %s" % (k, name))
        else:
            failed += 1
            reason, notes = result
            print("not ok %d - %s: %s" % (k, name, reason))
            for line in notes:
                print("#   " + line)
        sys.stdout.flush()
    if failed:
        print("# %d of %d cases failed; tests/golden/update PARPLAN rewrites the expected files"
              % (failed, len(names)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
