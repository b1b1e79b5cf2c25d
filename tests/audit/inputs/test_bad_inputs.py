"""The bad-input corpus (tests/audit/inputs/bad_inputs): the exact messages users get."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data

BAD = Path(__file__).parent / "bad_inputs"
STUDY = BAD / "study"


def _messages(**kw) -> list[str]:
    with pytest.raises(InputError) as exc:
        load_audit_data(**kw)
    return [str(p).replace(str(BAD) + "/", "") for p in exc.value.problems]


def test_bad_study_gets_every_problem_once_in_file_and_line_order():
    got = _messages(judge=STUDY / "judge.csv", humans=STUDY / "humans.csv", pairs=STUDY / "pairs.csv", scale=(1, 5))
    expected = (STUDY / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert got == expected
    # the self-matchup p4 (alpha vs alpha) is left out with a note, and the judge-only pair p3 is
    # kept for the prediction-powered estimates: neither is an error
    assert len(got) == 7


def test_bad_study_with_drop_invalid_keeps_only_structural_problems():
    got = _messages(
        judge=STUDY / "judge.csv",
        humans=STUDY / "humans.csv",
        pairs=STUDY / "pairs.csv",
        scale=(1, 5),
        drop_invalid=True,
    )
    assert [m.split(": ", 1)[1].split(" (found")[0] for m in got] == [
        "this reader judged nothing (every judgment is empty)"
    ]


@pytest.mark.parametrize(
    "name, message, line",
    [
        ("empty.csv", "the humans file is empty", None),
        ("header_only.csv", "the humans file has a header but no data rows", None),
        ("not_utf8.csv", "the humans file is not valid UTF-8 text (byte 34)", 2),
        ("broken.jsonl", "not valid JSON: Expecting property name enclosed in double quotes", 2),
        ("humans.xlsx", "unknown file extension for the humans file", None),
        (
            "missing_column.csv",
            "missing required column(s) reader_id (did you mean 'Reader'?) for pairwise judgments",
            1,
        ),
        ("duplicate_column.csv", "duplicate column name (names are case-insensitive)", 1),
        ("ragged.csv", "this row has 3 fields but the header names 2 columns", 2),
    ],
)
def test_unusable_files(name, message, line):
    with pytest.raises(InputError) as exc:
        load_audit_data(STUDY / "judge.csv", BAD / name, pairs=STUDY / "pairs.csv")
    first = exc.value.problems[0]
    assert first.file.endswith(name) and first.message == message and first.line == line and first.fix
