"""judge_transfer_audit.inputs.resolve (and the number parser): in a wide layout a bad value is reported under
the criterion column it sits in, not under a 'choice'/'score' column the file does not have."""

from __future__ import annotations

from judge_transfer_audit.inputs import load_audit_data

from .helpers import basic, problems, write

WIDE_HUMANS = """\
pair_id,reader_id,empathy,overall
p1,r1,alpha,beta
p1,r2,beta,gamma
p2,r1,tie,alpha
p2,r2,alpha,alpha
"""
WIDE_JUDGE = """\
pair_id,system,empathy,overall
p1,alpha,4,3
p1,beta,3,three
p2,alpha,2,9
p2,beta,2,1
"""


def test_wide_human_choice_not_in_pair_names_the_criterion_column(tmp_path):
    judge = (
        "pair_id,system,criterion,score\np1,alpha,empathy,4\np1,beta,empathy,3\np2,alpha,empathy,1\np2,beta,empathy,2\n"
    )
    [prob] = problems(basic(tmp_path, humans=WIDE_HUMANS, judge=judge))
    assert (prob.column, prob.line, prob.value) == ("overall", 3, "gamma")


def test_wide_judge_bad_scores_name_the_criterion_column(tmp_path):
    humans = WIDE_HUMANS.replace("gamma", "alpha")
    probs = problems(basic(tmp_path, humans=humans, judge=WIDE_JUDGE, scale=(1, 5)))
    assert [(p.column, p.line, p.value, p.message.split(" (")[0]) for p in probs] == [
        ("overall", 3, "three", "score is not a number"),
        ("overall", 4, "9", "score outside the declared scale [1, 5]"),
    ]


def test_wide_pairwise_judge_bad_choice_names_the_criterion_column(tmp_path):
    humans = WIDE_HUMANS.replace("gamma", "alpha")
    judge = "pair_id,empathy,overall\np1,alpha,delta\np2,tie,beta\n"
    [prob] = problems(basic(tmp_path, humans=humans, judge=judge))
    assert (prob.column, prob.line, prob.value) == ("overall", 2, "delta")


def test_wide_ratings_outside_the_scale_name_the_criterion_column(tmp_path):
    humans = write(tmp_path, "h.csv", "item_id,reader_id,group_id,empathy,overall\ni1,r1,g,4,7\ni2,r1,g,2,3\n")
    judge = write(tmp_path, "j.csv", "item_id,system,criterion,score\ni1,a,empathy,3\ni2,b,empathy,2\n")
    probs = problems(lambda: load_audit_data(judge, humans, scale=(1, 5)))
    assert [(p.column, p.line, p.value) for p in probs] == [("overall", 2, "7")]


def test_member_is_isin_on_arrow_and_object_columns():
    import numpy as np
    import pandas as pd

    from judge_transfer_audit.inputs.resolve import member

    values = ["p1", "p3", "p9"]
    for dtype in ("str", object):
        col = pd.Series(["p1", "p2", "p3", "p1", "", "p9"], dtype=dtype)
        assert member(col, set(values)).tolist() == col.isin(values).tolist() == [1, 0, 1, 1, 0, 1]
    with_none = pd.Series(["p1", None, "p2"], dtype=object)
    assert member(with_none, {"p1"}).tolist() == [True, False, False]
    assert member(with_none, {"p1", None}).tolist() == with_none.isin(["p1", None]).tolist()
    assert member(pd.Series([], dtype="str"), {"a"}).dtype == np.bool_
