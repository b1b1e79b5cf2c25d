"""Nothing lost silently: every record read is used or counted as excluded, per input file.

``AuditData.rows`` (and ``provenance.rows`` in result.json) holds, per file, the records
read, used and excluded by reason; read = used + excluded must hold on every path.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, target
from hypothesis import strategies as st

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data
from tests.audit.inputs.helpers import write

ROOT = Path(__file__).resolve().parents[3]
DEPLOY, DEV = ROOT / "fixtures" / "deployment", ROOT / "fixtures" / "dev"
BUG = "not recorded"


def _balanced(rows) -> None:
    for r in rows:
        assert r.read == r.used + r.n_excluded, r
        assert not any(BUG in reason for reason, _ in r.excluded), r
        assert all(n > 0 for _, n in r.excluded), r


def test_fixture_every_row_is_used():
    d = load_audit_data(
        DEPLOY / "judge.csv",
        DEPLOY / "humans.csv",
        pairs=DEPLOY / "pairs.csv",
        stories=DEPLOY / "stories.csv",
        dev_judge=DEV / "judge.csv",
        dev_humans=DEV / "humans.csv",
    )
    _balanced(d.rows)
    assert [(r.role, r.unit, r.read, r.used) for r in d.rows] == [
        ("humans", "votes", 6300, 6300),
        ("judge", "outputs", 7500, 7500),
        ("pairs", "pairs", 150, 150),
        ("stories", "texts", 300, 300),
        ("dev_judge", "scores", 2000, 2000),
        ("dev_humans", "ratings", 2000, 2000),
    ]
    # every record counted once: the data rows of each file
    for r, s in zip(d.rows, sorted(d.sources, key=lambda s: [x.role for x in d.rows].index(s.role))):
        assert r.read == s.n_rows


@pytest.mark.slow
def test_result_json_and_terminal_say_how_many_rows_were_read_and_used(tmp_path, capsys):
    status = main(
        [
            "run",
            str(DEPLOY / "judge.csv"),
            str(DEPLOY / "humans.csv"),
            "--pairs",
            str(DEPLOY / "pairs.csv"),
            "--out",
            str(tmp_path),
            "--no-uncertainty",
            "--no-readers",
            "--no-surface",
        ]
    )
    out = capsys.readouterr().out
    assert status == ExitStatus.OK
    assert (
        "Rows: humans: 6,300 votes read, 6,300 used; judge: 7,500 outputs read, 7,500 used; "
        "pairs: 150 pairs read, 150 used" in out
    )
    rows = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))["provenance"]["rows"]
    assert rows[0] == {"role": "humans", "unit": "votes", "read": 6300, "used": 6300, "excluded_by_reason": {}}
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Rows read and used" in html and "6,300 votes read, 6,300 used" in html


MESSY_PAIRS = """\
pair_id,system_a,system_b,focal
p1,alpha,beta,alpha
p2,alpha,beta,gamma
p3,alpha,beta,
p4,alpha,alpha,
p5,alpha,beta,
p5,alpha,beta,
p6,,beta,
p7,alpha,beta,
"""
MESSY_HUMANS = """\
pair_id,reader_id,criterion,choice,seconds
p1,r1,empathy,alpha,3
p1,r1,empathy,beta,4
p1,r2,empathy,gamma,5
p1,r3,empathy,beta,-1
p1,r4,empathy,,
p3,r1,empathy,tie,x
p3,r2,empathy,B,2
p4,r1,empathy,alpha,1
p9,r1,empathy,alpha,1
,r1,empathy,alpha,1
p3,r\x01,empathy,alpha,1
p3,r4,empathy,alpha,1
p1,r5,empathy,beta,1
"""
MESSY_JUDGE = """\
pair_id,system,criterion,score
p1,alpha,empathy,4
p1,beta,empathy,nan
p1,beta,empathy,3
p3,alpha,empathy,
p3,beta,empathy,9
p3,gamma,empathy,2
p4,alpha,empathy,1
p8,alpha,empathy,1
p3,beta,overall,1
"""
MESSY_STORIES = """\
pair_id,system,text
p1,alpha,Once.
p1,beta,
p1,beta,Twice.
p3,alpha,Thrice.
p9,alpha,Never.
"""


def test_a_messy_study_under_drop_invalid_counts_every_row_once(tmp_path):
    paths = {
        n: write(tmp_path, f"{n}.csv", t)
        for n, t in (
            ("pairs", MESSY_PAIRS),
            ("humans", MESSY_HUMANS),
            ("judge", MESSY_JUDGE),
            ("stories", MESSY_STORIES),
        )
    }
    d = load_audit_data(
        paths["judge"], paths["humans"], pairs=paths["pairs"], stories=paths["stories"], drop_invalid=True, scale=(1, 5)
    )
    _balanced(d.rows)
    rows = {r.role: r for r in d.rows}
    assert (rows["humans"].read, rows["judge"].read, rows["pairs"].read, rows["stories"].read) == (13, 9, 8, 5)
    assert len(d.votes) == rows["humans"].used
    # a row with two problems (empty pair_id) is counted once, under its first reason
    h = dict(rows["humans"].excluded)
    assert (
        h["empty pair_id"] == 1
        and h["control character in reader_id"] == 1
        and h["blank choice (no judgment given)"] == 1
    )
    assert dict(rows["pairs"].excluded)["self-matchup (the same system on both sides)"] == 1


SCALAR_HUMANS = """\
item_id,reader_id,criterion,rating,group_id
h1,r1,empathy,4,g
h2,r1,empathy,2,g
m1,r1,empathy,3,g
m1,r2,empathy,3,g
lone,r1,empathy,5,g2
h1,r3,empathy,1,g
h2,r3,empathy,2,g
m1,r3,empathy,,g
"""
SCALAR_JUDGE = """\
item_id,system,criterion,score
h1,Human,empathy,3
h2,Human,empathy,3
m1,gpt,empathy,4
lone,gpt,empathy,4
"""
SCALAR_STORIES = """\
item_id,system,text
h1,Human,a
h2,Human,b
m1,gpt,c
lone,gpt,d
"""


def test_scalar_ratings_self_matchups_and_lone_items_are_all_counted(tmp_path):
    d = load_audit_data(
        write(tmp_path, "j.csv", SCALAR_JUDGE),
        write(tmp_path, "h.csv", SCALAR_HUMANS),
        stories=write(tmp_path, "s.csv", SCALAR_STORIES),
    )
    _balanced(d.rows)
    rows = {r.role: r for r in d.rows}
    assert dict(rows["humans"].excluded) == {
        "blank rating (no judgment given)": 1,
        "rating of an item alone in its group (no pair)": 1,
        "rating with no rating of another item of its group by the same reader and criterion (no pair)": 1,
        "rating used only in self-matchup pairs (two outputs of the same system)": 2,
    }
    assert rows["humans"].used == 3 and len(d.votes) == 2
    assert dict(rows["judge"].excluded) == {
        "judge score of an output in no pair (alone in its group, or compared only with outputs of its own system)": 1
    }
    assert rows["stories"].used == 3


# ---------------------------------------------------------------------------- property
SYSTEMS = ["alpha", "beta", "gamma"]
#: mostly valid values, some of every kind of problem (drawn uniformly)
_CHOICE = ["{a}", "{a}", "{b}", "{b}", "tie", "A", "b", "", "gamma?", "x\x00"]
_SCORE = ["1", "2", "3", "4", "5", "3", "", "9", "abc", "inf"]
_PAIR = ["{p}"] * 8 + ["p9", ""]


@st.composite
def _study(draw):
    n_pairs = draw(st.integers(1, 5))
    pairs = []
    for i in range(n_pairs):
        a, b = draw(st.permutations(SYSTEMS))[:2]
        if draw(st.integers(0, 9)) == 0:
            b = a  # a self-matchup
        pairs.append(
            (f"p{i}", a, b, draw(st.sampled_from(["", a, b, b, "delta"])), draw(st.sampled_from(["", "", "M1"])))
        )
    humans, judge = [], []
    for pid, a, b, _, _ in pairs:
        for reader in ("r1", "r2", "r3"):
            for crit in ("empathy", "overall"):
                if draw(st.integers(0, 4)) == 0:
                    continue
                humans.append(
                    (
                        draw(st.sampled_from(_PAIR)).format(p=pid),
                        reader,
                        crit,
                        draw(st.sampled_from(_CHOICE)).format(a=a, b=b),
                        draw(st.sampled_from(["", "1", "2", "-2", "x"])),
                    )
                )
        for system in (a, b):
            for crit in ("empathy", "overall"):
                judge.append((draw(st.sampled_from(_PAIR)).format(p=pid), system, crit, draw(st.sampled_from(_SCORE))))
    if humans and draw(st.booleans()):
        humans.append(humans[0])  # a duplicate vote
    return pairs, humans, judge


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(study=_study(), use_pairs=st.booleans())
@pytest.mark.slow
def test_read_equals_used_plus_excluded_on_random_messy_studies(tmp_path, study, use_pairs):
    pairs, humans, judge = study
    p = tmp_path / "pairs.csv"
    pd.DataFrame(pairs, columns=["pair_id", "system_a", "system_b", "focal", "matchup"]).to_csv(p, index=False)
    h = tmp_path / "humans.csv"
    pd.DataFrame(humans, columns=["pair_id", "reader_id", "criterion", "choice", "seconds"]).to_csv(h, index=False)
    j = tmp_path / "judge.csv"
    pd.DataFrame(judge, columns=["pair_id", "system", "criterion", "score"]).to_csv(j, index=False)
    try:
        d = load_audit_data(j, h, pairs=p if use_pairs else None, drop_invalid=True, scale=(1, 5))
    except InputError:
        target(0.0)
        return
    target(1.0)
    _balanced(d.rows)
    rows = {r.role: r for r in d.rows}
    assert rows["humans"].used == len(d.votes)
    # judge outputs on pairs without votes are used too (by the prediction-powered section)
    only = 0 if d.judge_only_scores is None else len(d.judge_only_scores)
    assert rows["judge"].used == len(d.judge_scores) + only
    assert np.isin(d.votes["y"].dropna().unique(), [0.0, 1.0]).all()
