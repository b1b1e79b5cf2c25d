"""judge_transfer_audit.inputs.layout: the fix of a non-numeric value says what an empty cell means there."""

from __future__ import annotations

from .helpers import JUDGE, basic, problems


def test_non_numeric_sample_fix_does_not_call_an_empty_cell_unparsable(tmp_path):
    judge = JUDGE.replace("pair_id,system,criterion,score", "pair_id,system,criterion,score,sample")
    lines = judge.splitlines()
    lines[1:] = [ln + (",x" if i == 0 else ",0") for i, ln in enumerate(lines[1:])]
    [prob] = problems(basic(tmp_path, judge="\n".join(lines) + "\n"))
    assert prob.column == "sample" and prob.value == "x" and prob.line == 2
    assert "unparsable" not in prob.fix and prob.fix == "write a number, or leave the cell empty (sample 0)"


def test_non_numeric_score_fix_still_says_empty_marks_unparsable(tmp_path):
    [prob] = problems(basic(tmp_path, judge=JUDGE.replace("p1,alpha,empathy,4", "p1,alpha,empathy,four")))
    assert prob.column == "score" and "unparsable judge output" in prob.fix


def test_non_numeric_seconds_fix(tmp_path):
    humans = (
        "pair_id,reader_id,criterion,choice,seconds\n"
        "p1,r1,empathy,alpha,5\np1,r2,empathy,beta,soon\np2,r1,empathy,tie,3\np2,r2,empathy,alpha,4\n"
    )
    [prob] = problems(basic(tmp_path, humans=humans))
    assert prob.column == "seconds" and prob.value == "soon" and prob.line == 3
    assert prob.fix == "write a number, or leave the cell empty (time unknown)"


def test_printable_ascii_columns_are_told_from_their_bytes_and_anything_else_is_scanned():
    import pandas as pd

    from judge_transfer_audit.inputs.layout import CONTROL, _printable_ascii

    cases = {
        "plain": (pd.Series(["p1", "alpha beta", "x~"], dtype="str"), True),
        "tab": (pd.Series(["p1", "a\tb"], dtype="str"), False),
        "non-ascii": (pd.Series(["p1", "é"], dtype="str"), False),
        "missing": (pd.Series(["p1", None], dtype="str"), False),
        "object": (pd.Series(["p1", "p2"], dtype=object), False),
    }
    for name, (column, expected) in cases.items():
        assert _printable_ascii(column) is expected, name
        if expected:  # True only where the scan finds nothing
            assert not CONTROL.search("".join(column.tolist()))
    assert _printable_ascii(pd.Series(["a", "b\x1b", "c"], dtype="str").iloc[1:]) is False  # a slice's values
