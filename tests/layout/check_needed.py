#!/usr/bin/env python3
"""check_needed.py - the shared libraries a program maps at start, checked.

Usage: check_needed.py PROGRAM LIBRARY...   Prints TAP; exits 1 on any failure.
       check_needed.py PROGRAM --static

Reads PROGRAM's dynamic section and program headers (`readelf -d -l`).
With LIBRARY stems, checks that none of its NEEDED entries names one of them
(libglpk: libglpk.so.40 and the like): meson.build links GLPK from its archive
where the archives are installed, so that a process does not map the shared
GLPK and the six libraries it pulls in (about 1.5 ms of CPU at every start).
The checker itself: the program's list is not empty and names libc (so that a
readelf this script cannot read fails rather than passes).
With --static, checks that the program is a static PIE (meson.build's
static_exe): no interpreter requested, no NEEDED entry, and, for the checker
itself, program headers read with a LOAD segment among them and the type a
position-independent executable.
"""
import re
import subprocess
import sys


def readelf(program):
    return subprocess.run(["readelf", "-d", "-l", "-W", program], capture_output=True,
                          text=True, check=True).stdout


def needed(out):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def main():
    if len(sys.argv) < 3:
        print("usage: check_needed.py PROGRAM LIBRARY... | PROGRAM --static", file=sys.stderr)
        return 2
    program, stems = sys.argv[1], sys.argv[2:]
    out = readelf(program)
    libs = needed(out)
    if stems == ["--static"]:
        checks = [
            ("readelf lists the program headers, a LOAD segment among them",
             re.search(r"^\s+LOAD\s", out, re.M) is not None, []),
            ("%s is position-independent (ASLR kept)" % program,
             "DYN (Position-Independent Executable file)" in out, []),
            ("%s requests no interpreter (no dynamic loader at start)" % program,
             "Requesting program interpreter" not in out and not re.search(
                 r"^\s+INTERP\s", out, re.M), []),
            ("%s needs no shared library" % program, not libs, libs),
        ]
    else:
        checks = [("the dynamic section lists libc among %d libraries" % len(libs),
                   any(lib.startswith("libc.so") for lib in libs), libs)]
        for stem in stems:
            found = [lib for lib in libs if lib.startswith(stem + ".so")]
            checks.append(("%s needs no %s (linked from its archive)" % (program, stem),
                           not found, found))
    print("1..%d" % len(checks))
    for i, (name, ok, detail) in enumerate(checks, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        if not ok and detail:
            print("# NEEDED: %s" % ", ".join(detail))
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
