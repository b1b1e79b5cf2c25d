"""Malformed and hostile input files: each case with
the exit status of ``audit run`` and the message the user gets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data
from tests.audit.inputs.helpers import HUMANS, JUDGE, PAIRS, basic, problems, write

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "fixtures" / "deployment"
FAST = ["-q", "--no-uncertainty", "--no-readers", "--no-surface", "--no-html"]


def _run(tmp_path, capsys, judge, humans, pairs=None):
    args = ["run", str(judge), str(humans), "--out", str(tmp_path / "out"), *FAST]
    if pairs is not None:
        args += ["--pairs", str(pairs)]
    status = main(args)
    return status, capsys.readouterr().err


# ---------------------------------------------------------------------------- CSV structure
def test_stray_quote_in_a_comment_that_swallows_rows_is_an_input_error(tmp_path, capsys):
    # the campaign's case: a comment opened with a quote merged rows into one; 2,490 of 2,520
    # votes were used with exit 0 and no count anywhere
    lines = (DEPLOY / "humans.csv").read_text(encoding="utf-8").split("\n")
    fields = lines[99].split(",")
    fields[6] = '"I liked it'  # the comment column of line 100
    lines[99] = ",".join(fields)
    humans = tmp_path / "humans.csv"
    humans.write_text("\n".join(lines), encoding="utf-8")
    status, err = _run(tmp_path, capsys, DEPLOY / "judge.csv", humans, DEPLOY / "pairs.csv")
    assert status == ExitStatus.INPUT_ERROR
    assert (
        "humans.csv, line 100: a quoted value opened on this line runs to line 199 and swallows 99 line(s) that "
        "look like rows (lines 101-199): they would be read as one row"
    ) in err
    assert 'double every quote character inside a quoted value ("")' in err


def test_a_multiline_comment_or_story_is_not_mistaken_for_swallowed_rows(tmp_path):
    humans = (
        "pair_id,reader_id,criterion,choice,comment\n"
        'p1,r1,empathy,alpha,"first line\nsecond, with a comma\np2, r9, not a row"\n'
        "p1,r2,empathy,beta,\np2,r1,empathy,tie,\np2,r2,empathy,alpha,\n"
    )
    d = basic(tmp_path, humans=humans)()
    assert d.votes["line"].tolist() == [2, 5, 6, 7] and "second, with a comma" in d.votes["comment"].iloc[0]


def test_rows_with_fewer_fields_than_the_header_are_named(tmp_path, capsys):
    humans = write(
        tmp_path,
        "humans.csv",
        HUMANS.replace("p1,r2,empathy,beta", "p1,r2,empathy").replace("p2,r2,empathy,alpha", "p2,r2"),
    )
    status, err = _run(
        tmp_path, capsys, write(tmp_path, "judge.csv", JUDGE), humans, write(tmp_path, "pairs.csv", PAIRS)
    )
    assert status == ExitStatus.INPUT_ERROR
    assert "humans.csv, line 3: this row has 3 field(s) but the header names 4 columns (found 'p1,r2,empathy')" in err
    assert "humans.csv, line 5: this row has 2 field(s) but the header names 4 columns (found 'p2,r2')" in err
    assert "an empty value still needs its delimiter" in err


def test_rows_with_more_fields_are_named_with_their_lines(tmp_path):
    probs = problems(basic(tmp_path, humans=HUMANS.replace("p2,r1,empathy,tie", "p2,r1,empathy,tie,x,y")))
    assert [(p.line, p.message) for p in probs] == [(4, "this row has 6 fields but the header names 4 columns")]


def test_crlf_and_lone_cr_line_ends_keep_line_numbers(tmp_path):
    p = write(tmp_path, "pairs.csv", PAIRS)
    for sep in ("\r\n", "\r"):
        h = tmp_path / "h.csv"
        h.write_bytes(HUMANS.replace("\n", sep).encode())
        j = write(tmp_path, "judge.csv", JUDGE)
        d = load_audit_data(j, h, pairs=p)
        assert d.votes["line"].tolist() == [2, 3, 4, 5]


# ---------------------------------------------------------------------------- JSONL
def _jsonl(tmp_path, name, rows) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


JUDGE_ROWS = [
    {"pair_id": "p1", "system": "alpha", "criterion": "empathy", "score": 4},
    {"pair_id": "p1", "system": "beta", "criterion": "empathy", "score": 3},
    {"pair_id": "p2", "system": "alpha", "criterion": "empathy", "score": 2},
    {"pair_id": "p2", "system": "beta", "criterion": "empathy", "score": 2},
]


def test_a_json_nan_score_is_an_error_naming_the_line_like_nan_in_a_csv(tmp_path, capsys):
    rows = list(JUDGE_ROWS)
    rows[2] = '{"pair_id": "p2", "system": "alpha", "criterion": "empathy", "score": NaN}'
    status, err = _run(
        tmp_path,
        capsys,
        _jsonl(tmp_path, "judge.jsonl", rows),
        write(tmp_path, "h.csv", HUMANS),
        write(tmp_path, "pairs.csv", PAIRS),
    )
    assert status == ExitStatus.INPUT_ERROR
    assert (
        "judge.jsonl, line 3, column 'score': NaN is not a JSON number (JSON has no NaN or Infinity) "
        "(found 'NaN'). Fix: write a number, or null (or leave the key out) to mark a missing value"
    ) in err
    csv_judge = write(tmp_path, "judge.csv", JUDGE.replace("p2,alpha,empathy,", "p2,alpha,empathy,nan"))
    (p,) = problems(
        lambda: load_audit_data(csv_judge, write(tmp_path, "h.csv", HUMANS), pairs=write(tmp_path, "pairs.csv", PAIRS))
    )
    assert (p.line, p.column, p.message) == (4, "score", "score is not a number")


@pytest.mark.parametrize("constant", ["Infinity", "-Infinity"])
def test_json_infinity_is_an_error_too(tmp_path, constant):
    rows = list(JUDGE_ROWS)
    rows[0] = '{"pair_id": "p1", "system": "alpha", "criterion": "empathy", "score": %s}' % constant
    probs = problems(lambda: load_audit_data(_jsonl(tmp_path, "j.jsonl", rows), write(tmp_path, "h.csv", HUMANS)))
    assert [(p.line, p.column, p.value) for p in probs] == [(1, "score", constant)]


def test_a_json_null_score_is_an_unparsable_output_counted_as_kept(tmp_path):
    rows = list(JUDGE_ROWS)
    rows[2] = dict(rows[2], score=None)
    d = load_audit_data(_jsonl(tmp_path, "j.jsonl", rows), write(tmp_path, "h.csv", HUMANS))
    assert np.isnan(d.judge_scores["score"].iloc[2])
    assert [(e.reason, e.n_rows, e.kept) for e in d.exclusions] == [
        ("unparsable judge output (empty score), kept as missing, never imputed", 1, True)
    ]


def test_line_separators_inside_json_strings_are_text_and_keep_line_numbers(tmp_path):
    humans = [
        {
            "pair_id": "p1",
            "reader_id": "r1",
            "criterion": "empathy",
            "choice": "alpha",
            "comment": "one\u2028two\u2029three\x85four",
        },
        {"pair_id": "p1", "reader_id": "r2", "criterion": "empathy", "choice": "beta"},
        {"pair_id": "p2", "reader_id": "r1", "criterion": "empathy", "choice": "tie"},
        {"pair_id": "p2", "reader_id": "r2", "criterion": "empathy", "choice": "gamma"},
    ]
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in humans) + "\n", encoding="utf-8")
    (p,) = problems(
        lambda: load_audit_data(write(tmp_path, "j.csv", JUDGE), path, pairs=write(tmp_path, "pairs.csv", PAIRS))
    )
    assert (p.line, p.value) == (4, "gamma")  # not 7: U+2028, U+2029 and NEL do not end a record
    humans[3]["choice"] = "alpha"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in humans) + "\n", encoding="utf-8")
    d = load_audit_data(write(tmp_path, "j.csv", JUDGE), path, pairs=write(tmp_path, "pairs.csv", PAIRS))
    assert d.votes["comment"].iloc[0] == "one\u2028two\u2029three\x85four" and d.votes["line"].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"pair_id": "p1", "pair_id": "p2"}', "a key appears twice in this JSON object"),
        ("[" * 50000 + "]" * 50000, "JSON nested too deeply"),
        ('{"score": 1' + "0" * 5000 + "}", "not valid JSON: Exceeds the limit"),
        ('{"comment": "half \\ud800 a pair"}', "a JSON string holds a lone UTF-16 surrogate"),
    ],
)
def test_jsonl_lines_that_cannot_be_read_are_input_errors(tmp_path, line, message):
    path = _jsonl(tmp_path, "j.jsonl", [JUDGE_ROWS[0], line])
    probs = problems(lambda: load_audit_data(path, write(tmp_path, "h.csv", HUMANS)))
    assert probs[0].line == 2 and probs[0].message.startswith(message) and probs[0].fix


# ---------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    "column, old, bad",
    [
        ("system", "beta", "be\x00ta"),
        ("system", "beta", "beta\x1b[31m"),
        ("reader_id", "r1", "r\n1"),
        ("criterion", "empathy", "emp\u2028athy"),
        ("pair_id", "p1", "p\x7f1"),
    ],
)
def test_control_characters_in_names_are_input_errors_before_any_computation(tmp_path, capsys, column, old, bad):
    # they made the SVG renderer raise after the whole computation; now: exit 2 up front
    import pandas as pd

    paths = {}
    for name, text in (("judge", JUDGE), ("humans", HUMANS), ("pairs", PAIRS)):
        frame = pd.read_csv(write(tmp_path, f"{name}.csv", text), dtype=str, keep_default_na=False)
        frame = frame.replace({old: bad})
        paths[name] = tmp_path / f"{name}.jsonl"
        frame.to_json(paths[name], orient="records", lines=True, force_ascii=False)
    status, err = _run(tmp_path, capsys, paths["judge"], paths["humans"], paths["pairs"])
    assert status == ExitStatus.INPUT_ERROR, err
    assert f"column '{column}': {column} contains a control character" in err
    assert repr(bad) in err  # shown escaped, never raw
    assert bad not in err and "\x1b" not in err and "\x00" not in err


def test_control_characters_in_a_wide_criterion_header(tmp_path):
    humans = "pair_id,reader_id,emp\x07athy\np1,r1,alpha\np1,r2,beta\np2,r1,tie\np2,r2,alpha\n"
    probs = problems(basic(tmp_path, humans=humans))
    assert any(p.column == "criterion" and p.value == "emp\x07athy" for p in probs)


def test_control_characters_are_dropped_and_counted_under_drop_invalid(tmp_path):
    d = basic(tmp_path, humans=HUMANS.replace("p1,r2,empathy,beta", "p1,r\x002,empathy,beta"), drop_invalid=True)()
    assert len(d.votes) == 3
    rows = {r.role: r for r in d.rows}
    assert dict(rows["humans"].excluded) == {"control character in reader_id": 1}


def test_input_error_lists_are_never_a_traceback(tmp_path, capsys):
    with pytest.raises(InputError):
        basic(tmp_path, humans="pair_id,reader_id,criterion,choice\n\x00,\x00,\x00,\x00\n")()
