"""Who imports whom inside ``linear_layouts``: one line per module, its intra-package imports.

    python3 tools/import_graph.py [--packages] [--cycles]

``--packages`` folds modules into their subpackage (``analysis``, ``codegen``, ...); ``--cycles``
lists the strongly connected components with more than one member (import circles, counting
imports inside functions too).
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "src" / "linear_layouts"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: pathlib.Path, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports (anywhere in the file, at top level or inside functions)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    paths = sorted(ROOT.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def fold(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    def group(name: str) -> str:
        parts = name.split(".")
        return parts[1] if len(parts) > 1 else parts[0]
    folded: dict[str, set[str]] = {}
    for name, targets in edges.items():
        folded.setdefault(group(name), set()).update(group(t) for t in targets if group(t) != group(name))
    return folded


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of size > 1 (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", action="store_true")
    parser.add_argument("--cycles", action="store_true")
    args = parser.parse_args()
    edges = graph()
    if args.cycles:
        found = cycles(edges)
        print("\n".join(" <-> ".join(c) for c in found) if found else "no import circles")
        return
    shown = fold(edges) if args.packages else edges
    prefix = "linear_layouts."
    for name in sorted(shown):
        targets = ", ".join(sorted(t.removeprefix(prefix) for t in shown[name]))
        print(f"{name.removeprefix(prefix)}: {targets}")


if __name__ == "__main__":
    main()
