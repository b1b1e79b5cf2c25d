"""The report package has no import cycle and depends one way: audit -> reports, never reports -> cli."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.import_graph import cycles, import_graph

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_no_import_cycle_touches_reports():
    graph = import_graph(ROOT)
    assert [c for c in cycles(graph) if any(m.startswith("judge_transfer_audit.reports") for m in c)] == []


@pytest.mark.slow
def test_reports_never_import_the_cli():
    graph = import_graph(ROOT)
    assert (
        sorted(
            (m, t)
            for m, ts in graph.items()
            if m.startswith("judge_transfer_audit.reports")
            for t in ts
            if t.startswith("judge_transfer_audit.cli")
        )
        == []
    )


@pytest.mark.slow
def test_the_leaf_modules_import_nothing_else_from_reports():
    graph = import_graph(ROOT)
    for leaf in (
        "judge_transfer_audit.presentation.tables",
        "judge_transfer_audit.presentation.renderers",
        "judge_transfer_audit.presentation.format",
    ):
        assert {t for t in graph[leaf] if t.startswith("judge_transfer_audit.reports")} <= {
            "judge_transfer_audit.presentation.format",
            "judge_transfer_audit.presentation.tables",
        }, leaf
