#!/usr/bin/env python3
"""check_includes.py - the architecture on the tree, from #include lines.

Usage: check_includes.py SOURCE_ROOT.  Prints TAP; exits 1 on any failure.

The layers and their modules' order are read from docs/internals.md ("## Layers"),
the one place they are written; check_links.py checks the same on the built
library.  Here:
  1. the library (src/LAYER/, include/parplan/) includes nothing of the command
     line (src/cli/) nor src/modules.h (the command line's and the tests' view);
  2. a library file includes only headers of its own layer or of the layers below
     ("LAYER/NAME.h"), and within its layer only modules listed before its own;
  3. the public headers (include/parplan/) include only each other and system
     headers: a program that installs them needs nothing of src/;
  4. the include graph of the project's own headers has no cycle;
  5. every library source has its own header of the same name (include/parplan/
     for the public ones), and every module the Layers table lists has its source;
  6. no source file is over 800 lines;
  7. docs/internals.md's Layout table names every file of include/parplan/, src/
     and src/cli/, and no file that is not there.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DOC = "docs/internals.md"


def read(rel):
    return open(os.path.join(root, rel), encoding="utf-8").read()


def section(text, title):
    start = text.find("## " + title)
    if start < 0:
        return ""
    end = text.find("\n## ", start + 3)
    return text[start:end if end > 0 else len(text)]


def layers_of(doc):
    """[(layer, [modules in order])] from the Layers table."""
    out = []
    for line in section(doc, "Layers").splitlines():
        m = re.match(r"\|\s*`([a-z]+)`\s*\|([^|]*)\|", line)
        if m:
            out.append((m.group(1), [x.strip() for x in m.group(2).split(",") if x.strip()]))
    return out


def files(sub, exts):
    d = os.path.join(root, sub)
    return sorted(os.path.join(sub, f) for f in os.listdir(d) if f.endswith(exts))


doc = read(DOC)
LAYERS = layers_of(doc)
layer_names = [l for l, _ in LAYERS]
order = {}  # module -> (layer index, position in layer)
for li, (layer, mods) in enumerate(LAYERS):
    for mi, mod in enumerate(mods):
        order[mod] = (li, mi)

public = files("include/parplan", (".h",))
lib = public + [f for l in layer_names if os.path.isdir(os.path.join(root, "src", l))
                for f in files("src/" + l, (".c", ".h"))]
cli = files("src/cli", (".c", ".h"))
inside = ["src/modules.h"]


def resolve(src, name):
    """The project file an include names, or None (system and third-party)."""
    for cand in (os.path.join("include", name), os.path.join(os.path.dirname(src), name),
                 os.path.join("src", name), os.path.join("src/cli", name)):
        if os.path.exists(os.path.join(root, cand)):
            return os.path.normpath(cand)
    return None


def place(path):
    """(layer index, position) of a library file: its module's; None elsewhere."""
    name = os.path.splitext(os.path.basename(path))[0]
    if path.startswith("include/parplan/"):
        return order.get(name)
    parts = path.split("/")
    if len(parts) == 3 and parts[0] == "src" and parts[1] in layer_names:
        li = layer_names.index(parts[1])
        pos = order.get(name)
        return (li, pos[1] if pos and pos[0] == li else -1)
    return None


graph = {}
for f in lib + cli + inside:
    graph[f] = [t for t in (resolve(f, n) for n in INC.findall(read(f))) if t]

results = []
results.append((len(LAYERS) >= 2, f"{DOC} lists the layers", "no '## Layers' table found"))

bad = [(f, t) for f in lib for t in graph[f] if t.startswith("src/cli/") or t in inside]
results.append((not bad, "the library includes nothing of the command line nor src/modules.h",
                "; ".join(f"{f} includes {t}" for f, t in bad)))

up = []
for f in lib:
    pf, stem = place(f), os.path.splitext(os.path.basename(f))[0]
    for t in graph[f]:
        pt = place(t)
        if pf is None or pt is None or os.path.splitext(os.path.basename(t))[0] == stem:
            continue  # outside the layers, or the file's own header
        if pt[0] > pf[0] or (pt[0] == pf[0] and pt[1] > pf[1]):
            up.append(f"{f} includes {t}")
results.append((not up, "every include goes down the layers, or back in the module order",
                "; ".join(up)))

leaky = [(f, t) for f in public for t in graph[f] if not t.startswith("include/parplan/")]
results.append((not leaky, "the public headers include only each other",
                "; ".join(f"{f} includes {t}" for f, t in leaky)))

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

lonely = []
for f in lib:
    if not f.endswith(".c"):
        continue
    stem = os.path.splitext(os.path.basename(f))[0]
    if not (os.path.exists(os.path.join(root, os.path.splitext(f)[0] + ".h")) or
            os.path.exists(os.path.join(root, "include/parplan", stem + ".h"))):
        lonely.append(f)
listed = {m for _, mods in LAYERS for m in mods}
sources = {os.path.splitext(os.path.basename(f))[0] for f in lib if f.endswith(".c")}
results.append((not lonely and listed == sources,
                "every source has its own header, and the Layers table lists every module",
                "without a header: " + ", ".join(lonely) + "; listed without a source: " +
                ", ".join(sorted(listed - sources)) + "; not listed: " +
                ", ".join(sorted(sources - listed))))

long = []
for f in lib + cli + files("tests/unit", (".c",)):
    n = read(f).count("\n")
    if n > 800:
        long.append(f"{f} ({n} lines)")
results.append((not long, "no source file over 800 lines", ", ".join(long)))

table = "\n".join(l for l in section(doc, "Layout").splitlines() if l.startswith("|"))
named = set(re.findall(r"`((?:include/parplan|src)/[^`]+)`", table))
tree = set(lib + cli + inside)
results.append((bool(table) and named == tree, f"{DOC}'s Layout table matches the tree",
                "not in the table: " + ", ".join(sorted(tree - named)) +
                "; not in the tree: " + ", ".join(sorted(named - tree))))

print(f"1..{len(results)}")
for i, (ok, what, why) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {what}{'' if ok else ': ' + why}")
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
