"""generation/ CSVs neutralise formula cells on write and are read back exactly.

stories.csv, pairs.csv, scores and humans.csv written by generate / score / labelstudio are
read again by score, labelstudio and `audit run`: the neutralising rule is reversible
(audit/core/output_files.py) and every CSV reader of the project undoes it.
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_transfer_audit.core.output_files import neutralise_cell, restore_cell
from judge_transfer_audit.generation.tables import write_csv
from judge_transfer_audit.inputs.formats import read_frame as read_table
from judge_transfer_audit.inputs.formats import read_table as audit_read_table
from judge_transfer_audit.inputs.problems import ProblemLog

HOSTILE = [
    '=HYPERLINK("http://x","click")',
    "@SUM(A1:A2)",
    "+cmd|' /C calc'!A0",
    "- a story that starts with a dash",
    "'=already marked",
    "''=twice",
    "'quoted",
    "-0.5",
    "+3",
    "plain text",
    "=",
    "'",
]


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"pair_id": [f"p{i}" for i in range(len(HOSTILE))], "system": "a", "text": HOSTILE})


def test_written_cells_cannot_run_as_formulas(tmp_path):
    path = write_csv(_frame(), tmp_path / "stories.csv")
    cells = pd.read_csv(path, dtype=str, keep_default_na=False)["text"].tolist()
    for cell in cells:
        bare = cell.lstrip("'")
        if cell.startswith(("=", "+", "-", "@")):
            assert cell in ("-0.5", "+3"), cell  # only plain numbers start with a formula character
        elif bare.startswith(("=", "+", "@")) or bare.startswith("- "):
            assert cell.startswith("'"), cell
    assert cells[0] == '\'=HYPERLINK("http://x","click")' and cells[4] == "''=already marked"


def test_generation_reads_its_csv_back_exactly(tmp_path):
    path = write_csv(_frame(), tmp_path / "stories.csv")
    pd.testing.assert_frame_equal(read_table(path, "stories"), _frame())


def test_the_audit_loader_reads_it_back_exactly(tmp_path):
    path = write_csv(_frame(), tmp_path / "stories.csv")
    log = ProblemLog()
    table = audit_read_table(path, "stories", log)
    assert not log.problems
    assert table.frame["text"].tolist() == HOSTILE


def test_a_neutralised_column_name_is_restored_too(tmp_path):
    path = write_csv(pd.DataFrame({"pair_id": ["p1"], "=score": ["1"]}), tmp_path / "t.csv")
    assert pd.read_csv(path).columns[1] == "'=score"
    assert list(read_table(path, "t").columns) == ["pair_id", "=score"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="'=+-@\t\rab1.e ", max_size=8))
def test_the_rule_is_reversible(value):
    assert restore_cell(neutralise_cell(value)) == value
    marked = neutralise_cell(value)
    assert not marked.lstrip("'") or marked == value or marked.startswith("'")


@pytest.mark.parametrize("value", [1, 2.5, None])
def test_non_text_values_pass_through(value):
    assert neutralise_cell(value) == value and restore_cell(value) == value
