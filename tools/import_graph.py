"""Who imports whom inside ``linear_layouts``: one line per module, its intra-package imports.

    python3 tools/import_graph.py [--packages] [--cycles] [--rev REV]

Read from the source text with ``ast`` (nothing is imported or executed). ``--packages`` folds modules
into their subpackage (``analysis``, ``codegen``, ...); ``--cycles`` lists the strongly connected
components with more than one member (import circles, counting imports inside functions too);
``--rev REV`` reads ``src/linear_layouts`` at a git revision (``git show``, no checkout) instead of the
working tree, e.g. for a before / after of a refactoring. A target marked ``*`` is imported only inside
functions (a lazy import: no circle at import time, but still a dependency).
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "src/linear_layouts"


def sources(rev: str | None) -> dict[str, str]:
    """``{module name: source text}`` of every module of the package, in the working tree or at ``rev``."""
    if rev is None:
        paths = sorted((REPO / PACKAGE).rglob("*.py"))
        files = {p.relative_to(REPO / "src").as_posix(): p.read_text(encoding="utf-8") for p in paths}
    else:
        def git(*args: str) -> str:
            return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout
        names = [n for n in git("ls-tree", "-r", "--name-only", rev, "--", PACKAGE).splitlines() if n.endswith(".py")]
        files = {n.removeprefix("src/"): git("show", f"{rev}:{n}") for n in names}
    return {module_name(path): text for path, text in files.items()}


def module_name(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(name: str, text: str, modules: set[str], is_package: bool) -> dict[str, bool]:
    """The package modules ``name`` imports: ``{target: imported at module level}`` (anywhere in the file)."""
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(text)
    lazy = {id(node) for function in ast.walk(tree)
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            for node in ast.walk(function)}
    found: dict[str, bool] = {}
    for node in ast.walk(tree):
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
                found[target] = found.get(target, False) or id(node) not in lazy
    return found


def graph(rev: str | None = None) -> dict[str, dict[str, bool]]:
    """``{module: {imported module: at module level}}`` of the package at ``rev`` (None: the working tree)."""
    texts = sources(rev)
    modules = set(texts)
    packages = {m for m in modules if any(other.startswith(m + ".") for other in modules)}
    return {m: imports_of(m, texts[m], modules, m in packages) for m in sorted(texts)}


def fold(edges: dict[str, dict[str, bool]]) -> dict[str, dict[str, bool]]:
    def group(name: str) -> str:
        parts = name.split(".")
        return parts[1] if len(parts) > 1 else parts[0]
    folded: dict[str, dict[str, bool]] = {}
    for name, targets in edges.items():
        out = folded.setdefault(group(name), {})
        for target, eager in targets.items():
            if group(target) != group(name):
                out[group(target)] = out.get(group(target), False) or eager
    return folded


def cycles(edges: dict[str, dict[str, bool]]) -> list[list[str]]:
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
    parser.add_argument("--packages", action="store_true", help="fold modules into their subpackage")
    parser.add_argument("--cycles", action="store_true", help="list import circles (lazy imports included)")
    parser.add_argument("--rev", help="read the package at this git revision instead of the working tree")
    args = parser.parse_args()
    edges = graph(args.rev)
    if args.cycles:
        found = cycles(edges)
        print("\n".join(" <-> ".join(c) for c in found) if found else "no import circles")
        return
    shown = fold(edges) if args.packages else edges
    prefix = "linear_layouts."
    for name in sorted(shown):
        targets = ", ".join(t.removeprefix(prefix) + ("" if eager else "*") for t, eager in sorted(shown[name].items()))
        print(f"{name.removeprefix(prefix)}: {targets}")


if __name__ == "__main__":
    main()
