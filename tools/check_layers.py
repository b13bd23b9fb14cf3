#!/usr/bin/env python3
"""Checks that every #include points down the layers (like Chromium's checkdeps).

The layers and what each may include are the table between the `layers:begin` and `layers:end`
markers of docs/DESIGN.md, so the design and the check cannot drift apart. A file belongs to the
longest folder of the table that holds it. It may always include its own layer and the layers
inside it (src/backend its src/backend/cpu); anything else must be named in its row, a sub-layer
with a row of its own too (naming src/backend does not open src/backend/cpu). The
check also fails on an include cycle between two headers, and on a folder of source files that
the table does not name (a new layer must say what it may use).

    tools/check_layers.py [REPO_ROOT]      exit 0: clean; 1: violations, one a line
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc", ".c")
SKIP_DIRS = {"node_modules", "build", ".git"}


def read_table(design_path):
    """{folder: [allowed folder, ...]} from the marked table; '*' allows anything."""
    rows = {}
    inside = False
    with open(design_path, encoding="utf-8") as f:
        for line in f:
            if "layers:begin" in line:
                inside = True
                continue
            if "layers:end" in line:
                break
            if not inside or not line.startswith("|"):
                continue
            cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
            if len(cells) < 2 or cells[0] in ("folder", "") or set(cells[0]) <= {"-", " "}:
                continue
            allowed = [a.strip().strip("`") for a in cells[1].split(",") if a.strip() and a.strip() != "—"]
            rows[cells[0].rstrip("/")] = [a.rstrip("/") for a in allowed]
    if not rows:
        sys.exit(f"check_layers: no layer table between layers:begin and layers:end in {design_path}")
    return rows


def layer_of(path, layers):
    """The longest table folder that holds `path` (repo-relative), or None."""
    best = None
    for folder in layers:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def resolve(root, src_rel, target, search_dirs):
    """The repo-relative file an include names, or None for a system header."""
    here = os.path.dirname(src_rel)
    for base in [here] + search_dirs:
        cand = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    layers = read_table(os.path.join(root, "docs", "DESIGN.md"))
    search_dirs = ["src", "include", "."]  # the include paths the build gives (-Isrc -Iinclude, the root)
    problems = []
    graph = {}
    for top in sorted({f.split("/")[0] for f in layers}):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            for name in sorted(filenames):
                if not name.endswith(SOURCE_EXT):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                own = layer_of(rel, layers)
                if own is None:
                    problems.append(f"{rel}: its folder is in no row of the layer table (docs/DESIGN.md)")
                    continue
                allowed = layers[own]
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = resolve(root, rel, m.group(2), search_dirs)
                        if target is None:
                            continue  # a system or third-party header
                        graph.setdefault(rel, []).append(target)
                        to = layer_of(target, layers)
                        if to is None or to == own or to.startswith(own + "/") or "*" in allowed:
                            continue
                        if to not in allowed:
                            problems.append(f"{rel}:{n}: includes {target} ({to}), which {own} may not use "
                                            f"(it may use: {', '.join(allowed) or 'nothing else'})")
    # Header cycles: a depth-first walk over the include graph.
    state = {}
    def walk(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1 and nxt.endswith((".h", ".hpp")):
                cycle = stack[stack.index(nxt):] + [nxt]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                walk(nxt, stack)
        stack.pop()
        state[node] = 2
    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in state:
            walk(node, [])
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s); the table is in docs/DESIGN.md")
        return 1
    print(f"check_layers: {sum(len(v) for v in graph.values())} includes in {len(graph)} files point down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
