"""Import graph of the ``energystats`` package, with the layering rules checked.

Prints every module with its line count and the package modules it imports (at any depth:
module level and inside functions), then checks the rules of the package layout and exits 1
on a violation:

* no import circle between modules (strongly connected components of the graph);
* ``energystats._core`` (and ``energystats._lib``) import no concept package;
* a concept package (``homogeneity``, ``dependence``, ``goodness_of_fit``, ``clustering``,
  ``cli``) uses another concept only through that package's ``__init__``, and no name there
  that starts with an underscore;
* no module is longer than 800 lines.

Run from the repository root::

    python tools/import_graph.py
"""
from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = "energystats"
CONCEPTS = ("homogeneity", "dependence", "goodness_of_fit", "clustering", "cli")
LOWER = ("_core", "_lib")
MAX_LINES = 800


def _modules():
    mods = {}
    for path in sorted((ROOT / PKG).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (path, is_pkg)
    return mods


def _resolve(name, mods):
    """The longest known module that ``name`` names (``a.b.c`` -> ``a.b`` when ``c`` is a name)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


PRIVATE_USES = []  # (module, imported module, name): a private name taken from another concept


def _imports(mod, path, is_pkg, mods):
    tree = ast.parse(path.read_text(), str(path))
    base = mod if is_pkg else mod.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                src = f"{anchor}.{node.module}" if node.module else anchor
            else:
                src = node.module or ""
            targets = [f"{src}.{a.name}" for a in node.names] if src.startswith(PKG) else []
            if src in mods and _concept(src) in CONCEPTS and _concept(src) != _concept(mod):
                PRIVATE_USES.extend((mod, src, a.name) for a in node.names
                                    if a.name.startswith("_") and f"{src}.{a.name}" not in mods)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            name = node.args[0].value
            if name.startswith("."):
                anchor = base
                stripped = name.lstrip(".")
                for _ in range(len(name) - len(stripped) - 1):
                    anchor = anchor.rpartition(".")[0]
                name = f"{anchor}.{stripped}" if stripped else anchor
            targets = [name]
        for t in targets:
            if not t.startswith(PKG):
                continue
            r = _resolve(t, mods)
            if r and r != mod:
                found.add(r)
    return found


def _concept(mod):
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else None


def _sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def main():
    mods = _modules()
    graph = {m: _imports(m, p, pkg, mods) for m, (p, pkg) in mods.items()}
    lines = {m: len(p.read_text().splitlines()) for m, (p, _) in mods.items()}
    problems = []
    for m in sorted(mods):
        short = sorted(x.removeprefix(PKG + ".") for x in graph[m])
        print(f"{m:45s} {lines[m]:5d}  {', '.join(short)}")
        if lines[m] > MAX_LINES:
            problems.append(f"{m}: {lines[m]} lines (over {MAX_LINES})")
        src = _concept(m)
        for t in graph[m]:
            dst = _concept(t)
            # a package's __init__ importing its own submodules (lazily) is not a use
            if src in LOWER and dst not in LOWER and dst is not None and t != PKG:
                if dst in CONCEPTS:
                    problems.append(f"{m} (lower layer) imports the concept module {t}")
            if (src in CONCEPTS and dst in CONCEPTS and src != dst
                    and t != f"{PKG}.{dst}"):
                problems.append(f"{m} imports {t}: another concept's private module "
                                f"(use {PKG}.{dst}'s public names)")
    for m, src, name in PRIVATE_USES:
        problems.append(f"{m} takes the private name {name} from {src}")
    # a package __init__ that imports its submodules lazily (import_module) is a facade, not a
    # dependency: a submodule importing its own package's facade would be a circle only through
    # it, so the facade's edges are left out of the circle check
    cyc_graph = {m: {t for t in graph[m]} for m in graph}
    for m, (_, is_pkg) in mods.items():
        if is_pkg:
            cyc_graph[m] = set()
    for comp in _sccs(cyc_graph):
        if len(comp) > 1:
            problems.append("import circle: " + " -> ".join(comp))
    print()
    if problems:
        print(f"{len(problems)} violation(s):")
        for p in problems:
            print("  " + p)
        return 1
    print(f"{len(mods)} modules; no circle, layers respected, no module over {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
