"""Layers, one way: a module imports only its own layer and the layers below it.

The layers, bottom to top (docs/architecture.md draws them). An import counts wherever it is
written (inside a function too); imports under ``if TYPE_CHECKING:`` name types for annotations
only and are left out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.import_graph import import_graph

ROOT = Path(__file__).resolve().parents[1]
P = "judge_transfer_audit"

#: bottom to top; a module belongs to the layer of its longest matching prefix
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", (f"{P}.core",)),
    ("model", (f"{P}.model",)),
    ("inputs", (f"{P}.inputs", f"{P}.generation.providers", f"{P}.generation.protocol")),
    ("detectors", (f"{P}.detectors",)),
    ("statistics", (f"{P}.statistics",)),
    ("verdict", (f"{P}.verdict",)),
    # the renderers' shared helpers (formats, display tables, SVG figures): below the sections, whose
    # folders hold each section's renderer, and above nothing they would need
    ("presentation", (f"{P}.presentation",)),
    ("sections", (f"{P}.sections",)),
    ("results", (f"{P}.results",)),
    ("engine", (f"{P}.engine", f"{P}.generation")),
    ("importers", (f"{P}.importers",)),
    ("reports", (f"{P}.reports",)),
    ("interface", (f"{P}.cli", f"{P}.api", f"{P}.__main__")),
)


def layer_of(module: str) -> int:
    """The layer's index; the package's own ``__init__`` (its version; the public names load lazily) is
    the floor's."""
    if module == P:
        return 0
    return _layer_of(module)


def _layer_of(module: str) -> int:
    best, rank = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    return rank


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(ROOT, runtime_only=True)


def test_every_module_has_a_layer(graph):
    assert [m for m in graph if layer_of(m) < 0] == []


def test_imports_go_down_the_layers(graph):
    up = sorted(
        f"{m} ({LAYERS[layer_of(m)][0]}) -> {t} ({LAYERS[layer_of(t)][0]})"
        for m, targets in graph.items()
        for t in targets
        if layer_of(t) > layer_of(m)
    )
    assert up == [], "imports against the layers:\n" + "\n".join(up)


def test_statistics_never_import_the_scheduler(graph):
    wrong = sorted(
        (m, t) for m, ts in graph.items() if m.startswith(f"{P}.statistics") for t in ts if t.startswith(f"{P}.engine")
    )
    assert wrong == []


def test_detectors_import_only_the_floor(graph):
    """Detectors see core and model (and the providers that load a language model), nothing else."""
    allowed = (f"{P}.core", f"{P}.model", f"{P}.detectors", f"{P}.generation.providers")
    wrong = sorted(
        (m, t)
        for m, ts in graph.items()
        if m.startswith(f"{P}.detectors")
        for t in ts
        if not any(t == a or t.startswith(a + ".") for a in allowed)
    )
    assert wrong == []


def test_the_top_of_audit_holds_a_handful_of_files():
    top = sorted(p.name for p in (ROOT / "audit").glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "api.py"]


def test_nothing_imports_the_old_top_level_names():
    """One import name: no module, test or benchmark imports ``audit``, ``detectors``, ``generation``
    or ``reports`` as a top-level package (they would load the folder a second time)."""
    import ast

    old = {"audit", "detectors", "generation", "reports"}
    found = []
    for folder in ("audit", "detectors", "generation", "reports", "tests", "benchmarks", "fixtures"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                found += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.split(".")[0] in old]
    assert found == []


def test_the_layer_check_can_fail(tmp_path):
    """The check sees an import against the direction, inside a function too, and not one for annotations."""
    for folder in ("audit", "detectors", "generation", "reports"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "audit" / "statistics").mkdir()
    (tmp_path / "audit" / "statistics" / "__init__.py").write_text("")
    (tmp_path / "audit" / "engine").mkdir()
    (tmp_path / "audit" / "engine" / "__init__.py").write_text("")
    (tmp_path / "audit" / "engine" / "pool.py").write_text("")
    (tmp_path / "audit" / "statistics" / "boot.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from judge_transfer_audit.engine import pool\n"
        "def f():\n    from judge_transfer_audit.engine.pool import X\n"
    )
    g = import_graph(tmp_path, runtime_only=True)
    assert g[f"{P}.statistics.boot"] == {f"{P}.engine.pool"}
    assert layer_of(f"{P}.engine.pool") > layer_of(f"{P}.statistics.boot")
    (tmp_path / "audit" / "statistics" / "boot.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from judge_transfer_audit.engine import pool\n"
    )
    assert import_graph(tmp_path, runtime_only=True)[f"{P}.statistics.boot"] == set()
