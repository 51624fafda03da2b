#!/usr/bin/env python3
"""check_needed.py - the shared libraries a program maps at start, checked.

Usage: check_needed.py PROGRAM LIBRARY...   Prints TAP; exits 1 on any failure.

Reads PROGRAM's dynamic section (`readelf -d`) and checks that none of its NEEDED
entries names one of the LIBRARY stems (libglpk: libglpk.so.40 and the like).
meson.build links GLPK from its archive where the archives are installed, so that
a process does not map the shared GLPK and the six libraries it pulls in (about
1.5 ms of CPU at every start); this test holds that build to it.  The checker
itself: the program's list is not empty and names libc (so that a readelf this
script cannot read fails rather than passes).
"""
import re
import subprocess
import sys


def needed(program):
    out = subprocess.run(["readelf", "-d", program], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def main():
    if len(sys.argv) < 3:
        print("usage: check_needed.py PROGRAM LIBRARY...", file=sys.stderr)
        return 2
    program, stems = sys.argv[1], sys.argv[2:]
    libs = needed(program)
    checks = [("the dynamic section lists libc among %d libraries" % len(libs),
               any(lib.startswith("libc.so") for lib in libs), libs)]
    for stem in stems:
        found = [lib for lib in libs if lib.startswith(stem + ".so")]
        checks.append(("%s needs no %s (linked from its archive)" % (program, stem),
                       not found, found))
    print("1..%d" % len(checks))
    for i, (name, ok, detail) in enumerate(checks, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        if not ok:
            print("# NEEDED: %s" % ", ".join(detail))
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
