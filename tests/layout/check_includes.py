#!/usr/bin/env python3
"""check_includes.py - the layout rules issue 15 sets, checked on the tree.

Usage: check_includes.py SOURCE_ROOT.  Prints TAP; exits 1 on any failure.
  1. the library (include/parplan/*.h, src/*.c, src/*.h) includes nothing of the
     command line (src/cli/);
  2. the include graph of the project's own headers has no cycle;
  3. every public header is reached from include/parplan/parplan.h;
  4. no source file is over 800 lines;
  5. the Layout table of docs/internals.md (its "## Layout" section, up to the
     next "## " heading) names every file of include/parplan/, src/ and src/cli/,
     and no file that is not there.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def files(sub, exts):
    d = os.path.join(root, sub)
    return sorted(os.path.join(sub, f) for f in os.listdir(d) if f.endswith(exts))


LAYERS = sorted(d for d in os.listdir(os.path.join(root, "src")) if d != "cli" and
                os.path.isdir(os.path.join(root, "src", d)))
lib = files("include/parplan", (".h",)) + [f for d in LAYERS for f in files("src/" + d, (".c", ".h"))]
cli = files("src/cli", (".c", ".h"))


def resolve(src, name):
    """The project file an include names, or None (system and third-party)."""
    for cand in (os.path.join("include", name), os.path.join(os.path.dirname(src), name),
                 os.path.join("src", name), os.path.join("src/cli", name)):
        if os.path.exists(os.path.join(root, cand)):
            return os.path.normpath(cand)
    return None


graph = {}
for f in lib + cli:
    text = open(os.path.join(root, f), encoding="utf-8").read()
    graph[f] = [t for t in (resolve(f, n) for n in INC.findall(text)) if t]

results = []
bad = [(f, t) for f in lib for t in graph[f] if t.startswith("src/cli/")]
results.append((not bad, "the library includes nothing of the command line",
                "; ".join(f"{f} includes {t}" for f, t in bad)))

# cycles among headers: depth-first search with colours
headers = [f for f in graph if f.endswith(".h")]
colour, stack, cycle = {}, [], []


def visit(h):
    colour[h] = 1
    stack.append(h)
    for t in graph.get(h, []):
        if not t.endswith(".h"):
            continue
        if colour.get(t) == 1 and not cycle:
            cycle.extend(stack[stack.index(t):] + [t])
        elif t not in colour:
            visit(t)
    stack.pop()
    colour[h] = 2


for h in headers:
    if h not in colour:
        visit(h)
results.append((not cycle, "the include graph has no cycle", " -> ".join(cycle)))

seen, todo = set(), ["include/parplan/parplan.h"]
while todo:
    h = todo.pop()
    if h in seen:
        continue
    seen.add(h)
    todo.extend(t for t in graph.get(h, []) if t.endswith(".h"))
missing = [h for h in files("include/parplan", (".h",)) if h not in seen]
results.append((not missing, "parplan.h reaches every public header", ", ".join(missing)))

long = []
for f in lib + cli + files("tests/unit", (".c",)):
    n = sum(1 for _ in open(os.path.join(root, f), encoding="utf-8"))
    if n > 800:
        long.append(f"{f} ({n} lines)")
results.append((not long, "no source file over 800 lines", ", ".join(long)))

LAYOUT_DOC = "docs/internals.md"
doc = open(os.path.join(root, LAYOUT_DOC), encoding="utf-8").read()
start = doc.find("## Layout")
end = doc.find("\n## ", start + 5)
section = doc[start:end if end > 0 else len(doc)]
table = "\n".join(l for l in section.splitlines() if l.startswith("|"))
named = set(re.findall(r"`((?:include/parplan|src)/[^`]+)`", table))
tree = set(lib + cli + ["src/modules.h"])
results.append((start >= 0 and named == tree, f"{LAYOUT_DOC}'s Layout table matches the tree",
                "not in the table: " + ", ".join(sorted(tree - named)) +
                "; not in the tree: " + ", ".join(sorted(named - tree))))

print(f"1..{len(results)}")
for i, (ok, what, why) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {what}{'' if ok else ': ' + why}")
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
