#!/usr/bin/env python3
"""Checks the core's rooms from its object files: which file uses which file's functions and
globals (nm: what each object defines and what it needs), then
  - no file of a room uses a file of a room above it (the order below, from the Makefile's
    comment and docs/architecture.md), and
  - no circle of files, within a room or across rooms, in the directories given.

  tools/check-rooms.py BUILD_DIR [DIR ...]     e.g. tools/check-rooms.py build/plain src c_src

DIRs are source folders (src, c_src, reference, tools); the objects are BUILD_DIR/obj/DIR/...
Exit status 1 with one line per finding, 0 when there is none."""
import collections
import os
import subprocess
import sys

# The core, bottom up: a room may use the rooms before it (and itself), never those after.
ORDER = ["base", "board", "loader", "qnnset", "device", "model", "quant", "shape", "vision", "profile", "exec", "top"]


def room_of(src):
    parts = src.split("/")
    if parts[0] != "src":
        return None
    return parts[1] if len(parts) > 2 else "top"


def objects(build, dirs):
    out = []
    for d in dirs:
        root = os.path.join(build, "obj", d)
        for r, _, fs in os.walk(root):
            for f in fs:
                if f.endswith(".o"):
                    obj = os.path.join(r, f)
                    src = os.path.relpath(obj, os.path.join(build, "obj"))[:-2] + ".c"
                    if os.path.exists(src):  # not an object left from a file since moved
                        out.append((obj, src))
    return out


def symbols(obj):
    text = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, needed = set(), set()
    for line in text.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            needed.add(name)
        elif kind in "TDBRCVW":
            defined.add(name)
    return defined, needed


def edges_of(objs):
    owner, needs = {}, {}
    for obj, src in objs:
        d, n = symbols(obj)
        needs[src] = n
        for s in d:
            owner.setdefault(s, set()).add(src)
    edges = collections.defaultdict(dict)
    for src, n in needs.items():
        for s in n:
            for o in owner.get(s, ()):
                if o != src and len(owner[s]) == 1:
                    edges[src].setdefault(o, []).append(s)
    return edges


def circles(edges, nodes):
    index, low, stack, on, out, i = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = i[0]
        i[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    objs = objects(sys.argv[1], sys.argv[2:])
    if not objs:
        print(f"check-rooms: no objects under {sys.argv[1]}/obj for {' '.join(sys.argv[2:])}")
        return 2
    edges = edges_of(objs)
    findings = []
    for a in sorted(edges):
        for b, syms in sorted(edges[a].items()):
            ra, rb = room_of(a), room_of(b)
            if ra and rb and ORDER.index(rb) > ORDER.index(ra):
                findings.append(f"{a} ({ra}) uses {b} ({rb}), a room above it: "
                                f"{' '.join(sorted(syms)[:6])}")
    for c in circles(edges, [s for _, s in objs]):
        findings.append(f"circle of {len(c)}: {' '.join(c)}")
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
