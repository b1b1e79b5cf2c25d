"""Design checks at load time: matchups, orientation, self-matchups.

Each case states what a user gives, the exit status and the message (through
``judge_transfer_audit.cli.main``) or the frames that come back.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.model.data import ALL_MATCHUPS, MatchupOrientation, pooling_scopes
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes
from tests.audit.inputs.helpers import HUMANS, JUDGE, basic, problems, write


def _cli(tmp_path, capsys, judge, humans, pairs=None, *extra):
    j = write(tmp_path, "judge.csv", judge)
    h = write(tmp_path, "humans.csv", humans)
    args = [
        "run",
        j,
        h,
        "--out",
        str(tmp_path / "out"),
        "-q",
        "--no-uncertainty",
        "--no-readers",
        "--no-surface",
        "--no-html",
        *extra,
    ]
    if pairs is not None:
        args += ["--pairs", write(tmp_path, "pairs.csv", pairs)]
    status = main(args)
    return status, capsys.readouterr().err


def test_one_matchup_label_over_two_pairings_is_an_input_error_naming_the_pairs(tmp_path, capsys):
    pairs = "pair_id,system_a,system_b,focal,matchup\np1,alpha,beta,alpha,M\np2,alpha,gamma,alpha,M\n"
    judge = JUDGE.replace("p2,beta", "p2,gamma")
    humans = HUMANS.replace("p2,r1,empathy,tie", "p2,r1,empathy,gamma")
    status, err = _cli(tmp_path, capsys, judge, humans, pairs)
    assert status == ExitStatus.INPUT_ERROR
    assert (
        "pairs.csv, line 3, column 'matchup': one matchup label spans 2 different pairings of systems: "
        "alpha vs beta (e.g. pair p1); alpha vs gamma (e.g. pair p2) (found 'M')"
    ) in err
    assert "give each pairing of two systems its own matchup label" in err


def test_the_same_label_over_both_orders_of_one_pairing_is_one_matchup(tmp_path):
    pairs = "pair_id,system_a,system_b,focal,matchup\np1,alpha,beta,alpha,M\np2,beta,alpha,alpha,M\n"
    d = basic(tmp_path, pairs=pairs)()
    assert d.matchups == ("M",) and set(d.pairs["focal"]) == {"alpha"} and not d.notes


ALTERNATING = """\
pair_id,system_a,system_b,focal
p1,alpha,beta,alpha
p2,alpha,beta,beta
p3,alpha,beta,alpha
"""
ALT_HUMANS = """\
pair_id,reader_id,criterion,choice
p1,r1,empathy,alpha
p1,r2,empathy,beta
p2,r1,empathy,alpha
p2,r2,empathy,alpha
p3,r1,empathy,beta
p3,r2,empathy,tie
"""
ALT_JUDGE = """\
pair_id,system,criterion,score
p1,alpha,empathy,4
p1,beta,empathy,3
p2,alpha,empathy,5
p2,beta,empathy,2
p3,alpha,empathy,1
p3,beta,empathy,2
"""


def test_a_focal_that_alternates_within_a_matchup_is_reoriented_with_a_note(tmp_path):
    d = basic(tmp_path, humans=ALT_HUMANS, judge=ALT_JUDGE, pairs=ALTERNATING)()
    # without re-orientation p2 would be its own matchup "beta vs alpha", averaged in the opposite direction
    assert d.matchups == ("alpha vs beta",) and set(d.pairs["focal"]) == {"alpha"}
    [note] = [n for n in d.notes if "alternated" in n]
    assert note == (
        "matchup 'alpha vs beta': the focal system alternated between its pairs (alpha in 2, beta in 1); "
        "re-oriented to alpha in all 3 pairs (the votes and judge outputs of the 1 flipped pair(s) are "
        "read with alpha as focal)"
    )
    assert d.orientation == (MatchupOrientation("alpha vs beta", "alpha", "beta", "pairs file", 3, 1),)
    # the humans' choices and the judge's credits flip together: both read against alpha
    p2 = d.votes[d.votes["pair_id"] == "p2"]
    assert p2["y"].tolist() == [1.0, 1.0] and set(p2["focal"]) == {"alpha"}
    outcomes = judge_pair_outcomes(d, EVEN_SPLIT, np.random.default_rng(0))
    credit = outcomes.set_index("pair_id")["credit"]
    assert credit.to_dict() == {"p1": 1.0, "p2": 1.0, "p3": 0.0}


def test_reorientation_matches_a_study_declared_consistently(tmp_path):
    flipped = basic(tmp_path, humans=ALT_HUMANS, judge=ALT_JUDGE, pairs=ALTERNATING)()
    consistent = basic(
        tmp_path,
        humans=ALT_HUMANS,
        judge=ALT_JUDGE,
        pairs=ALTERNATING.replace("p2,alpha,beta,beta", "p2,alpha,beta,alpha"),
    )()
    cols = ["pair_id", "reader_id", "criterion", "matchup", "focal", "other", "choice", "y"]
    pd.testing.assert_frame_equal(flipped.votes[cols], consistent.votes[cols])


def test_a_tie_between_alternating_focals_is_broken_by_the_automatic_rule(tmp_path):
    pairs = "pair_id,system_a,system_b,focal\np1,alpha,beta,beta\np2,alpha,beta,alpha\n"
    d = basic(tmp_path, pairs=pairs)()
    assert set(d.pairs["focal"]) == {"alpha"}  # 1 pair each: alpha and beta in 2 pairs each -> code-point order


HUB_JUDGE = """\
pair_id,system,criterion,score
p1,zeta,empathy,4
p1,alpha,empathy,3
p2,zeta,empathy,4
p2,beta,empathy,3
p3,zeta,empathy,2
p3,gamma,empathy,3
p4,alpha,empathy,3
p4,beta,empathy,3
"""
HUB_HUMANS = """\
pair_id,reader_id,criterion,choice
p1,r1,empathy,zeta
p2,r1,empathy,beta
p3,r1,empathy,zeta
p4,r1,empathy,tie
"""


def test_without_focal_the_system_in_most_pairs_is_focal_then_code_point_order(tmp_path):
    d = basic(tmp_path, humans=HUB_HUMANS, judge=HUB_JUDGE, pairs=None)()
    # zeta is in 3 pairs: focal against everyone although it sorts last; alpha vs beta (2 pairs each): alpha
    assert dict(zip(d.pairs["pair_id"], d.pairs["focal"])) == {"p1": "zeta", "p2": "zeta", "p3": "zeta", "p4": "alpha"}
    assert d.matchups == ("zeta vs alpha", "zeta vs beta", "zeta vs gamma", "alpha vs beta")
    assert d.focal_source == "automatic" and all(not o.declared for o in d.orientation)
    # pooled preference figures: only the matchups whose focal system is zeta
    assert d.pooling_scopes() == {"(all matchups, focal zeta)": ("zeta vs alpha", "zeta vs beta", "zeta vs gamma")}


def test_focal_option_decides_where_it_names_a_system(tmp_path):
    d = basic(tmp_path, humans=HUB_HUMANS, judge=HUB_JUDGE, pairs=None, focal="beta")()
    assert dict(zip(d.pairs["pair_id"], d.pairs["focal"]))["p2"] == "beta"
    assert d.focal_source == "--focal + automatic"


def test_orientation_does_not_depend_on_row_order(tmp_path):
    rows = HUB_JUDGE.splitlines()
    shuffled = "\n".join([rows[0]] + rows[1:][::-1]) + "\n"
    a = basic(tmp_path, humans=HUB_HUMANS, judge=HUB_JUDGE, pairs=None)()
    b = basic(tmp_path, humans=HUB_HUMANS, judge=shuffled, pairs=None)()
    key = a.pairs.set_index("pair_id")[["focal", "matchup"]]
    pd.testing.assert_frame_equal(key, b.pairs.set_index("pair_id")[["focal", "matchup"]].loc[key.index])


def _orient(*rows):
    return tuple(MatchupOrientation(m, f, o, s, 10) for m, f, o, s in rows)


@pytest.mark.parametrize(
    "orientation, expected",
    [
        (_orient(("a vs b", "a", "b", "automatic")), {}),
        (
            _orient(("a vs b", "a", "b", "pairs file"), ("c vs d", "c", "d", "pairs file")),
            {ALL_MATCHUPS: ("a vs b", "c vs d")},
        ),
        (
            _orient(("a vs b", "a", "b", "automatic"), ("a vs c", "a", "c", "automatic")),
            {ALL_MATCHUPS: ("a vs b", "a vs c")},
        ),
        (_orient(("a vs b", "a", "b", "automatic"), ("c vs d", "c", "d", "automatic")), {}),
        (
            _orient(
                ("a vs b", "a", "b", "--focal"), ("c vs d", "c", "d", "automatic"), ("a vs d", "a", "d", "--focal")
            ),
            {"(all matchups, focal a)": ("a vs b", "a vs d")},
        ),
    ],
)
def test_pooling_scopes(orientation, expected):
    assert pooling_scopes(orientation) == expected


# ---------------------------------------------------------------------------- reserved words
TIE_JUDGE = JUDGE.replace("beta", "Tie")
TIE_HUMANS = """\
pair_id,reader_id,criterion,choice
p1,r1,empathy,alpha
p1,r2,empathy,Tie
p2,r1,empathy,tie
p2,r2,empathy,Tie
"""


def test_a_system_named_tie_without_a_pairs_file_is_an_input_error(tmp_path, capsys):
    status, err = _cli(tmp_path, capsys, TIE_JUDGE, TIE_HUMANS)
    assert status == ExitStatus.INPUT_ERROR
    assert (
        "judge.csv, line 3, column 'system': a system name is also a choice word (tie, invalid, A, B; any case): "
        "its votes could not be told from ties or from positions A/B (found 'Tie'). Fix: rename the system in "
        "every file (e.g. 'Tie-model'), or give a pairs file"
    ) in err


@pytest.mark.parametrize("name", ["tie", "TIE", "a", "B", "Invalid"])
def test_every_reserved_word_in_any_case_is_caught(tmp_path, name):
    probs = problems(
        basic(tmp_path, judge=JUDGE.replace("beta", name), humans=HUMANS.replace("beta", name), pairs=None)
    )
    assert any("also a choice word" in p.message and p.value == name for p in probs)


def test_a_pairs_file_makes_a_system_named_tie_unambiguous(tmp_path):
    pairs = "pair_id,system_a,system_b,focal\np1,alpha,Tie,alpha\np2,alpha,Tie,alpha\n"
    d = basic(tmp_path, judge=TIE_JUDGE, humans=TIE_HUMANS, pairs=pairs)()
    # 'Tie' written exactly as the system is the system; 'tie' is a tie
    assert d.votes["choice"].tolist() == ["alpha", "Tie", "tie", "Tie"]
    np.testing.assert_array_equal(d.votes["y"], [1.0, 0.0, np.nan, 0.0])
    assert any("also choice words" in n for n in d.notes)


def test_a_declared_system_named_b_is_that_system_not_position_b(tmp_path):
    pairs = "pair_id,system_a,system_b,focal\np1,B,alpha,alpha\np2,B,alpha,alpha\n"
    humans = HUMANS.replace("beta", "B")
    d = basic(tmp_path, judge=JUDGE.replace("beta", "B"), humans=humans, pairs=pairs)()
    assert d.votes["choice"].tolist() == ["alpha", "B", "tie", "alpha"]


def test_a_pairwise_judge_verdict_tie_for_a_system_named_tie(tmp_path):
    pairs = "pair_id,system_a,system_b\np1,alpha,Tie\np2,alpha,Tie\n"
    judge = "pair_id,criterion,choice\np1,empathy,Tie\np2,empathy,TIE\n"
    d = basic(tmp_path, judge=judge, humans=TIE_HUMANS, pairs=pairs)()
    assert d.judge_verdicts["choice"].tolist() == ["Tie", "tie"]


# ---------------------------------------------------------------------------- self-matchups
def test_self_matchup_run_exits_0_and_says_what_was_left_out(tmp_path, capsys):
    pairs = "pair_id,system_a,system_b\np1,alpha,beta\np2,alpha,alpha\n"
    judge = JUDGE.replace("p2,beta,empathy,2", "p2,alpha,empathy,2").replace("p2,alpha,empathy,\n", "")
    status, err = _cli(tmp_path, capsys, judge, HUMANS, pairs)
    assert status == ExitStatus.OK, err
    import json

    result = json.loads((tmp_path / "out" / "result.json").read_text(encoding="utf-8"))
    assert any("self-matchups: p2 (alpha)" in n for n in result["provenance"]["notes"])
    assert [c["matchup"] for c in result["cells"]] == ["alpha vs beta"]


def test_derived_self_matchups_are_counted(tmp_path):
    humans = "item_id,reader_id,criterion,rating,group_id\nh1,r1,empathy,4,g\nh2,r1,empathy,2,g\nm1,r1,empathy,3,g\n"
    judge = "item_id,system,criterion,score\nh1,Human,empathy,3\nh2,Human,empathy,3\nm1,gpt,empathy,4\n"
    d = basic(tmp_path, humans=humans, judge=judge, pairs=None)()
    assert d.pairs["pair_id"].tolist() == ["h1~m1", "h2~m1"] and d.matchups == ("Human vs gpt",)
    assert any("self-matchups, e.g. h1~h2 of Human" in n and "1 vote(s)" in n for n in d.notes)


@pytest.mark.parametrize(
    "kw",
    [
        dict(
            humans="item_id,reader_id,criterion,rating,group_id\nh1,r1,empathy,4,g\nh2,r1,empathy,2,g\n",
            judge="item_id,system,criterion,score\nh1,Human,empathy,3\nh2,Human,empathy,3\n",
            pairs=None,
        ),
        dict(pairs="pair_id,system_a,system_b\np1,alpha,alpha\np2,beta,beta\n"),
    ],
)
def test_a_study_of_self_matchups_only_says_why_nothing_is_left(tmp_path, kw):
    (p,) = problems(basic(tmp_path, **kw))
    assert p.message == "no usable human judgment is left" and "left out" in p.fix
    assert "same system" in p.fix or "itself" in p.fix
