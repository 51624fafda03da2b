#!/usr/bin/env python3
"""check_links.py - one way down, checked where it matters: at link level.

Usage: check_links.py LIBPARPLAN.a SOURCE_ROOT   Prints TAP; exits 1 on any failure.

Reads the symbols each object file of the library defines and uses (`nm`), draws
the graph "object A calls (or reads) something object B defines", and checks:
  1. the graph has no cycle (a cycle is printed, as the chain of calls and the
     symbol behind each link);
  2. every call goes down the layers, never up: an object of src/LAYER/ uses only
     objects of the layers below it, or of its own layer listed before it, in the
     order docs/internals.md's Layers table gives (read from there: the one place
     it is written);
  3. every global symbol the library defines starts with ppl_ (a program that
     links libparplan.a sees them all);
  4. the checker itself: a synthetic archive with a deliberate back call is
     refused by checks 1 and 2 (so that this test can fail).
An include-level check (check_includes.py) cannot see a function declared in
another module's header, nor a type forward-declared from above: this one can.
"""
import collections
import os
import re
import subprocess
import sys

# bottom first, each with its modules in order (docs/internals.md, read in main;
# the self-test's own below); src/cli is not in the library
LAYERS = ["base", "model", "hardware", "cost", "plan", "studies", "render"]
ORDER = {}  # module -> position inside its layer
OBJ = re.compile(r"^src_([a-z]+)_(.+)\.c\.o$")


def read_layers(root):
    """Layers and module order from docs/internals.md's '## Layers' table."""
    text = open(os.path.join(root, "docs", "internals.md"), encoding="utf-8").read()
    start = text.find("## Layers")
    end = text.find("\n## ", start + 3)
    layers, order = [], {}
    for line in text[start:end].splitlines():
        m = re.match(r"\|\s*`([a-z]+)`\s*\|([^|]*)\|", line)
        if m:
            layers.append(m.group(1))
            for i, mod in enumerate(x.strip() for x in m.group(2).split(",")):
                order[mod] = i
    return layers, order


def read_nm(text):
    """(defines, uses) from `nm -A` output: symbol -> object, object -> {symbols}."""
    defines, uses = {}, collections.defaultdict(set)
    for line in text.splitlines():
        # "lib.a:member.o:0000000000000000 T name" or "lib.a:member.o:                 U name"
        head, _, rest = line.rpartition(":")
        member = head.rsplit(":", 1)[-1] if ":" in head else head
        parts = rest.split()
        if len(parts) == 3 and parts[1] in "TDBRCV":
            defines[parts[2]] = member
        elif len(parts) == 2 and parts[0] == "U":
            uses[member].add(parts[1])
    return defines, uses


def module(obj):
    """("cost", "memory") for src_cost_memory.c.o; None for what is not ours."""
    m = OBJ.match(obj)
    return (m.group(1), m.group(2)) if m else None


def graph_of(defines, uses):
    g = collections.defaultdict(dict)  # a -> {b: first symbol}
    for a, syms in uses.items():
        for s in sorted(syms):
            b = defines.get(s)
            if b and b != a:
                g[a].setdefault(b, s)
    return g


def find_cycle(g):
    """One cycle as a list of objects (first == last), or []."""
    colour, stack = {}, []
    nodes = sorted(set(g) | {b for a in g for b in g[a]})

    def visit(v):
        colour[v] = 1
        stack.append(v)
        for w in sorted(g.get(v, {})):
            if colour.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in colour:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        colour[v] = 2
        return []

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in colour:
            found = visit(v)
            if found:
                return found
    return []


def upward(g):
    """Calls up a layer, or forward in a layer's module order: [(a, b, symbol)]."""
    bad = []
    for a in sorted(g):
        ma = module(a)
        for b, sym in sorted(g[a].items()):
            mb = module(b)
            if not ma or not mb or ma[0] not in LAYERS or mb[0] not in LAYERS:
                continue
            la, lb = LAYERS.index(ma[0]), LAYERS.index(mb[0])
            if lb > la or (lb == la and ORDER.get(mb[1], -1) > ORDER.get(ma[1], -1)):
                bad.append((a, b, sym))
    return bad


def unknown_layers(g):
    objs = set(g) | {b for a in g for b in g[a]}
    return sorted(o for o in objs if not module(o) or module(o)[0] not in LAYERS)


def name(obj):
    m = module(obj)
    return f"{m[0]}/{m[1]}" if m else obj


def describe_cycle(g, cycle):
    return " -> ".join(f"{name(a)} ({g[a][b]})" for a, b in zip(cycle, cycle[1:])) + \
        f" -> {name(cycle[-1])}"


def check(text):
    defines, uses = read_nm(text)
    g = graph_of(defines, uses)
    cycle = find_cycle(g)
    up = upward(g)
    return defines, g, cycle, up


def self_test():
    """A base object calling up into cost, which calls it back: both checks refuse it."""
    fake = "\n".join([
        "lib.a:src_base_units.c.o:0000000000000000 T ppl_units_parse",
        "lib.a:src_base_units.c.o:                 U ppl_memory_at",
        "lib.a:src_cost_memory.c.o:0000000000000000 T ppl_memory_at",
        "lib.a:src_cost_memory.c.o:                 U ppl_units_parse",
    ])
    _, _, cycle, up = check(fake)
    return bool(cycle) and up == [("src_base_units.c.o", "src_cost_memory.c.o", "ppl_memory_at")]


def main():
    global LAYERS, ORDER
    if len(sys.argv) != 3:
        print("usage: check_links.py LIBPARPLAN.a SOURCE_ROOT", file=sys.stderr)
        return 2
    saved = (LAYERS, ORDER)
    ok_self = self_test()
    LAYERS, ORDER = read_layers(sys.argv[2])
    if not LAYERS:
        LAYERS, ORDER = saved
    nm = subprocess.run(["nm", "-A", "--defined-only", sys.argv[1]], capture_output=True, text=True)
    nm_u = subprocess.run(["nm", "-A", "--undefined-only", sys.argv[1]], capture_output=True,
                          text=True)
    if nm.returncode or nm_u.returncode:
        print("1..1\nnot ok 1 - nm reads the library: " + (nm.stderr or nm_u.stderr).strip())
        return 1
    defines, g, cycle, up = check(nm.stdout + "\n" + nm_u.stdout)
    results = []
    results.append((not cycle, "no call cycle between the library's object files",
                    describe_cycle(g, cycle) if cycle else ""))
    results.append((not up, "every call goes down the layers (" + " < ".join(LAYERS) +
                    ") or back in a layer's module order",
                    "; ".join(f"{name(a)} -> {name(b)} ({s})" for a, b, s in up)))
    stray = unknown_layers(g)
    results.append((not stray, "every object sits in a known layer", ", ".join(stray)))
    # names beginning with "__" are the implementation's (a sanitizer's ODR
    # indicators, __odr_asan.ppl_...): no program may define them, so none clash
    unprefixed = sorted(s for s in defines if not s.startswith("ppl_") and not s.startswith("__"))
    results.append((not unprefixed, "every global symbol starts with ppl_",
                    f"{len(unprefixed)}: " + ", ".join(unprefixed[:20])))
    results.append((ok_self, "the checker refuses a deliberate back call (self-test)", ""))
    print(f"1..{len(results)}")
    for i, (ok, what, why) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {what}{'' if ok else ': ' + why}")
    return 0 if all(ok for ok, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
