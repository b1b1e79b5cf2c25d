"""judge_transfer_audit.inputs.stories: precomputed numeric features."""

from __future__ import annotations

import math

from .helpers import basic, problems, write

STORIES = """\
pair_id,system,text,ppl,title
p1,alpha,One story.,12.5,Infinity
p1,beta,Another story.,{v},Dawn
p2,alpha,A third.,7,Dusk
p2,beta,A fourth.,,Noon
"""


def test_non_finite_feature_value_is_a_problem_not_a_poisoned_feature(tmp_path):
    for v in ("inf", "-Infinity", "NaN"):
        s = write(tmp_path, "stories.csv", STORIES.format(v=v))
        [prob] = problems(basic(tmp_path, stories=s))
        assert (prob.column, prob.line, prob.value) == ("ppl", 3, v)
        assert "not a finite number" in prob.message and "empty" in prob.fix


def test_non_finite_feature_value_under_drop_invalid_is_missing_and_counted(tmp_path):
    s = write(tmp_path, "stories.csv", STORIES.format(v="inf"))
    data = basic(tmp_path, stories=s, drop_invalid=True)()
    ppl = data.stories.set_index("item_id")["ppl"]
    assert math.isnan(ppl["p1:beta"]) and ppl["p1:alpha"] == 12.5 and math.isnan(ppl["p2:beta"])
    assert {e.reason: e.n_rows for e in data.exclusions}["non-finite value of feature 'ppl' (kept as missing)"] == 1
    assert "title" not in data.stories.columns  # a text column stays a text column, even holding 'Infinity'
