"""Every script in benchmarks/ imports, and every name it takes from this project exists.

A benchmark is not a test, so nothing else notices when a function it uses is renamed. Importing
a script runs none of its work (its ``main`` sits under ``if __name__ == "__main__"``). Most
scripts import the package inside their functions (to time the imports, or to keep ``--help``
fast), so the imports are also read from the source with ast, at any depth and in code strings
handed to a fresh interpreter, and each one is resolved.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))
SIBLINGS = {p.stem for p in BENCHMARKS}
#: the import names of this project (a benchmark may also use tests/support helpers)
OWN = {"judge_transfer_audit", "tests"}


def _own(module: str) -> bool:
    return module.split(".")[0] in OWN or module in SIBLINGS


def _imports(tree: ast.AST, where: str = "") -> Iterator[tuple[str, str, list[str]]]:
    """(line, module, names) of every absolute import in ``tree``, code strings included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield f"{where}{node.lineno}", node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield f"{where}{node.lineno}", alias.name, []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "import " in node.value:
            try:
                code = ast.parse(textwrap.dedent(node.value))
            except SyntaxError:
                continue  # prose, not code
            yield from _imports(code, where=f"{node.lineno} (code string) ")


def _aliased_attributes(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    """(line, module, attribute) for ``import judge_transfer_audit.x as m`` then ``m.attribute``."""
    aliases = {
        alias.asname: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.asname and _own(alias.name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            yield node.lineno, aliases[node.value.id], node.attr


def _has(module, name: str) -> bool:
    if hasattr(module, name):
        return True
    try:  # a submodule not imported by its package
        importlib.import_module(f"{module.__name__}.{name}")
    except ImportError:
        return False
    return True


@pytest.fixture
def benchmark_path(monkeypatch):
    """sys.path as ``python benchmarks/X.py`` sets it (benchmarks/ first), restored afterwards."""
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))


def test_the_benchmarks_are_found():
    assert len(BENCHMARKS) > 30 and "features" in SIBLINGS


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.stem)
def test_a_benchmark_imports_without_running(script, benchmark_path, monkeypatch, capsys):
    tree = ast.parse(script.read_text(encoding="utf-8"))
    guards = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "__name__ == '__main__'"]
    assert guards, f'{script.name}: no `if __name__ == "__main__":` guard, so importing it runs it'
    spec = importlib.util.spec_from_file_location(f"benchmark_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    assert capsys.readouterr().out == "", f"{script.name} prints at import: its work belongs in main()"


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.stem)
def test_every_name_a_benchmark_imports_from_the_project_exists(script, benchmark_path):
    tree = ast.parse(script.read_text(encoding="utf-8"))
    missing = []
    for line, name, names in _imports(tree):
        if not _own(name):
            continue  # third-party and optional packages (torch, R bridges) are the script's own business
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            missing.append(f"line {line}: import {name}: {exc}")
            continue
        missing += [f"line {line}: {name} has no {n}" for n in names if n != "*" and not _has(module, n)]
    for line, name, attribute in _aliased_attributes(tree):
        if not _has(importlib.import_module(name), attribute):
            missing.append(f"line {line}: {name} has no {attribute}")
    assert not missing, f"{script.name}: " + "; ".join(missing)
