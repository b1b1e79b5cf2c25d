"""judge_transfer_audit.reports.sections.FormattedRows formats a display row when it is read (the page shows 200 of
10,000 cells), and reads as the list of every row formatted would."""

from __future__ import annotations

import pytest

from judge_transfer_audit.reports.sections import (
    FormattedRows,
    _check_row,
    _transfer_row,
    checks_context,
    transfer_rows,
    worst_first,
)


def test_rows_are_formatted_once_and_only_when_read():
    calls = []

    def row(x):
        calls.append(x)
        return {"x": x}

    rows = FormattedRows(list(range(10, 20)), row)
    assert len(rows) == 10 and bool(rows) and not calls
    assert rows[0] == {"x": 10} and rows[-1] == {"x": 19} and rows[3:5] == [{"x": 13}, {"x": 14}]
    assert rows[8:100] == [{"x": 18}, {"x": 19}] and rows[5:2] == []
    assert rows[0] is rows[0]  # kept
    assert sorted(calls) == [10, 13, 14, 18, 19]
    assert list(rows) == [{"x": x} for x in range(10, 20)] and len(calls) == 10
    with pytest.raises(IndexError):
        rows[10]
    with pytest.raises(IndexError):
        rows[-11]
    assert not FormattedRows([], row)


def test_the_report_rows_equal_every_row_formatted(result):
    transfer = transfer_rows(result)
    assert list(transfer) == [_transfer_row(c) for c in worst_first(result.cells)]
    ctx = checks_context(tuple(result.checks))
    assert len(ctx["rows"]) == len(result.checks)
    assert sorted(r["name"] for r in ctx["rows"]) == sorted(c.name for c in result.checks)
    assert ctx["rows"][:3] == [_check_row(c) for c in ctx["rows"]._items[:3]]
    assert sum(g["n"] for g in ctx["summary"]) == len(result.checks)
