"""audit/sections/label_budget/render.py and the budget `audit run` stores (schema 2.2), on the real fixture result:
the JSON round trip, `audit budget` on a stored and on a 2.1 result, the report's trade-off table."""

from __future__ import annotations

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.results.result import result_to_json


@pytest.mark.slow
def test_the_run_stores_the_budget_and_json_round_trips_it(result, tmp_path, capsys):
    """`audit run` stores the budget (schema 2.2); it survives result.json losslessly and equals the
    budget computed from the saved result; `audit budget` shows the stored one and says so."""
    from judge_transfer_audit.core.serialize import to_jsonable
    from judge_transfer_audit.results.result import SCHEMA_VERSION, read_result, result_from_json
    from judge_transfer_audit.statistics.budget.compute import computed_budget, stored_budget

    assert SCHEMA_VERSION == "2.5" and result.label_budget.status is Status.PASS
    stored = stored_budget(result)
    assert stored is not None and stored.power == 0.8 and len(stored.cells) == len(result.cells)
    text = result_to_json(result)
    back = result_from_json(text)
    assert type(back.label_budget.payload) is type(stored)
    assert to_jsonable(back.label_budget.payload) == to_jsonable(stored)
    assert result_to_json(back) == text
    assert to_jsonable(computed_budget(back)) == to_jsonable(stored)
    assert any(c.designs for c in stored.cells), "the fixture's assessed cells carry the trade-off"
    path = tmp_path / "result.json"
    path.write_text(text, encoding="utf-8")
    assert main(["budget", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("(figures stored in the result by `audit run`)")
    assert main(["budget", str(path), "--power", "0.9"]) == 0
    assert "computed from the result at power 90% (the result stores the budget at 80%)" in capsys.readouterr().out
    # a schema 2.1 result has no label_budget: computed from it, and said so
    import json

    data = json.loads(text)
    data["schema_version"] = "2.1"
    del data["label_budget"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert main(["budget", str(old)]) == 0
    out = capsys.readouterr().out
    assert "(figures computed from the result: schema 2.1 stores no label budget" in out
    assert "pairs at readers per pair" in out
    assert stored_budget(read_result(old)) is None


def test_the_report_shows_the_stored_budget_and_its_tradeoff(result, html):
    from judge_transfer_audit.statistics.budget.compute import stored_budget

    budget = stored_budget(result)
    assert "label-budget" in html and "stored in the result by `audit run`" in html
    open_cells = [c for c in budget.cells if c.state in ("budgeted", "out of reach") and c.designs]
    if open_cells:
        assert "Pairs versus readers" in html and "readers/pair (now)" in html


def test_a_result_without_the_section_renders_the_computed_budget(bare_result):
    from judge_transfer_audit.sections.label_budget.render import section_context as budget_section

    ctx = budget_section(bare_result)
    assert ctx["computed"] and ctx["lead_tables"]
    facts = {f["key"]: f["value"] for f in ctx["facts"]}
    assert facts["figures"].startswith("computed from the result")


def test_a_budget_that_could_not_be_computed_is_an_error_section(bare_result):
    from dataclasses import replace

    from judge_transfer_audit.model.section_result import Failed
    from judge_transfer_audit.sections.label_budget.render import section_context as budget_section

    broken = replace(bare_result, label_budget=Failed("label budget could not be computed: boom", "AuditError"))
    ctx = budget_section(broken)
    assert ctx["status"] == "ERROR" and not ctx["computed"] and "boom" in ctx["reason"]
