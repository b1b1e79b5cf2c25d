"""No import cycle anywhere in the package; only the output layer imports reports/ and the CLI.

The graph is read from the source with ast (tests/support/import_graph.py): an import inside a
function counts as much as one at the top of a module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.import_graph import cycles, import_graph

ROOT = Path(__file__).resolve().parents[1]

#: the modules that write or show results: only they may import reports/ or the CLI
OUTPUT_LAYER = (
    "judge_transfer_audit.cli",
    "judge_transfer_audit.__main__",
    "judge_transfer_audit.reports.outputs",
    "judge_transfer_audit.api",
    "judge_transfer_audit.reports",
)


def _in(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(ROOT)


def test_the_graph_sees_the_package(graph):
    assert len(graph) > 200 and sum(map(len, graph.values())) > 500


def test_no_import_cycle(graph):
    assert cycles(graph) == []


def test_statistics_do_not_import_reports_or_cli(graph):
    wrong = sorted(
        (m, t)
        for m, targets in graph.items()
        if not _in(m, OUTPUT_LAYER)
        for t in targets
        if _in(t, ("judge_transfer_audit.reports", "judge_transfer_audit.cli"))
    )
    assert wrong == []


def test_reports_do_not_import_cli(graph):
    wrong = sorted(
        (m, t)
        for m, targets in graph.items()
        if _in(m, ("judge_transfer_audit.reports",))
        for t in targets
        if _in(t, ("judge_transfer_audit.cli", "judge_transfer_audit.__main__"))
    )
    assert wrong == []


# ------------------------------------------------------------------ the graph helper itself
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for pkg in ("audit", "detectors", "generation", "reports"):
        (tmp_path / pkg).mkdir(exist_ok=True)
        (tmp_path / pkg / "__init__.py").touch()
    return tmp_path


def test_helper_finds_a_cycle_through_a_lazy_import(tmp_path):
    root = _tree(
        tmp_path,
        {
            "audit/a.py": "from judge_transfer_audit.b import f\n",
            "audit/b.py": "def f():\n    from judge_transfer_audit import a\n    return a\n",
        },
    )
    assert cycles(import_graph(root)) == [["judge_transfer_audit.a", "judge_transfer_audit.b"]]


def test_helper_finds_a_cycle_through_a_package_init(tmp_path):
    # a registry's shape: base lazily imports a backend that imports the package
    root = _tree(
        tmp_path,
        {
            "generation/p/__init__.py": "from judge_transfer_audit.generation.p.base import X\n",
            "generation/p/base.py": "X = 1\ndef g():\n    from judge_transfer_audit.generation.p import backend\n",
            "generation/p/backend.py": "from judge_transfer_audit.generation.p import X\n",
        },
    )
    g = "judge_transfer_audit.generation.p"
    assert cycles(import_graph(root)) == [[g, f"{g}.backend", f"{g}.base"]]


def test_from_package_import_submodule_is_the_submodule(tmp_path):
    # as ``import pkg.mod``: needs pkg.mod, not the names pkg/__init__ defines
    root = _tree(
        tmp_path,
        {
            "audit/g/__init__.py": "from judge_transfer_audit.g.fit import fit\n",
            "audit/g/fit.py": "def fit():\n    from judge_transfer_audit.g import sparse\n",
            "audit/g/sparse.py": "",
        },
    )
    graph = import_graph(root)
    assert graph["judge_transfer_audit.g.fit"] == {"judge_transfer_audit.g.sparse"}
    assert cycles(graph) == []


def test_one_table_reader():
    """Every command reads tables through judge_transfer_audit.inputs.formats (read_table / read_frame): one set
    of checks and messages. The feature cache reads its own files, which no user writes."""
    import re

    allowed = {ROOT / "audit" / "inputs" / "formats.py", ROOT / "detectors" / "cache.py"}
    pattern = re.compile(r"pd\.read_(csv|json|parquet|table)\(|def read_table\(")
    offenders = sorted(
        str(p.relative_to(ROOT))
        for pkg in ("audit", "generation", "detectors", "reports")
        for p in (ROOT / pkg).rglob("*.py")
        if p not in allowed and pattern.search(p.read_text(encoding="utf-8"))
    )
    assert offenders == []


def test_one_home_for_local_language_models():
    """The perplexity detector and the transformers provider load a causal LM through
    generation/providers/local_model.py; nothing else calls transformers' Auto classes."""
    home = ROOT / "generation" / "providers" / "local_model.py"
    offenders = sorted(
        str(p.relative_to(ROOT))
        for pkg in ("audit", "generation", "detectors", "reports")
        for p in (ROOT / pkg).rglob("*.py")
        if p != home and "AutoModelForCausalLM" in p.read_text(encoding="utf-8").replace("``AutoModelForCausalLM``", "")
    )
    assert offenders == []
