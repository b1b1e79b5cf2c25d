"""The package's import graph, read from the source with ast (nothing is imported).

The repository's folders are one import name: ``audit/`` is ``judge_transfer_audit`` and
``detectors/``, ``generation/``, ``reports/`` are its subpackages (pyproject.toml's package-dir).
"""

from __future__ import annotations

import ast
from pathlib import Path

#: repository folder -> the import name it holds
FOLDERS = {
    "audit": "judge_transfer_audit",
    "detectors": "judge_transfer_audit.detectors",
    "generation": "judge_transfer_audit.generation",
    "reports": "judge_transfer_audit.reports",
}
PACKAGES = tuple(FOLDERS)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([FOLDERS[parts[0]], *parts[1:]])


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _walk(tree: ast.AST, *, runtime_only: bool):
    """Every node, leaving out ``if TYPE_CHECKING:`` blocks when ``runtime_only`` (annotations only)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if runtime_only and _type_checking_block(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def import_graph(root: Path, *, top_level_only: bool = False, runtime_only: bool = False) -> dict[str, set[str]]:
    """module -> the package modules it imports (``from x import y`` counts x.y when it is a module, else x).

    ``runtime_only``: imports under ``if TYPE_CHECKING:`` (for annotations only) are left out."""
    files = {module_name(root, p): p for pkg in PACKAGES if (root / pkg).is_dir() for p in (root / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_pkg = path.name == "__init__.py"
        nodes = tree.body if top_level_only else list(_walk(tree, runtime_only=runtime_only))
        for node in nodes:
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                # ``from pkg import mod`` where mod is a module is ``import pkg.mod``: it needs
                # mod, not what pkg/__init__ defines (as ``import pkg.mod`` counts only pkg.mod);
                # any other name imported counts pkg itself.
                subs = [f"{base}.{a.name}" for a in node.names]
                targets = [t for t in subs if t in files]
                if len(targets) < len(subs):
                    targets.append(base)
            for t in targets:
                if t in files and t != mod:
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        # other tests (deeply nested TOML / JSON) rely on the default limit
        sys.setrecursionlimit(limit)
    return out
