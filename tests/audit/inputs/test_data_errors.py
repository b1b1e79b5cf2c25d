"""Bad input: one InputProblem per problem (file, line, column, value, fix), all collected."""

from __future__ import annotations

import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data
from tests.audit.inputs.helpers import HUMANS, JUDGE, PAIRS, basic, problems, write


def only(probs, text):
    hits = [p for p in probs if text in p.message]
    assert hits, f"no problem mentions {text!r}: {[str(p) for p in probs]}"
    return hits


def test_duplicate_vote_names_both_lines(tmp_path):
    probs = problems(basic(tmp_path, humans=HUMANS + "p1,r1,empathy,beta\n"))
    (p,) = only(probs, "duplicate judgment")
    assert p.line == 6 and p.file.endswith("humans.csv") and "first at line 2" in p.value and p.fix


def test_choice_naming_a_system_not_in_the_pair(tmp_path):
    probs = problems(basic(tmp_path, humans=HUMANS.replace("p2,r2,empathy,alpha", "p2,r2,empathy,gamma")))
    (p,) = only(probs, "not in the pair")
    assert (p.line, p.column, p.value) == (5, "choice", "gamma")


def test_pair_with_three_systems_in_the_judge_file(tmp_path):
    probs = problems(basic(tmp_path, judge=JUDGE + "p1,gamma,empathy,3\n", pairs=None))
    (p,) = only(probs, "exactly two systems")
    assert p.value == "p1: alpha, beta, gamma" and p.line == 2


def test_self_matchup_in_the_pairs_file_is_left_out_and_counted(tmp_path):
    # p2 compares alpha with itself: not an input error, but left out with its votes and judge outputs
    d = basic(tmp_path, pairs=PAIRS.replace("p2,alpha,beta,alpha", "p2,alpha,alpha,"))()
    assert d.pairs["pair_id"].tolist() == ["p1"] and set(d.votes["pair_id"]) == {"p1"}
    assert any(
        "compare a system with itself" in n and "p2 (alpha)" in n and "2 vote(s) and 2 judge output(s)" in n
        for n in d.notes
    )
    rows = {r.role: r for r in d.rows}
    assert dict(rows["humans"].excluded) == {"vote on a self-matchup pair (the same system on both sides)": 2}
    assert (rows["judge"].read, rows["judge"].used, rows["pairs"].read, rows["pairs"].used) == (4, 2, 2, 1)


def test_judge_system_not_in_the_pair(tmp_path):
    probs = problems(basic(tmp_path, judge=JUDGE.replace("p1,beta,empathy,3", "p1,gamma,empathy,3")))
    (p,) = only(probs, "not one of the pair's two systems")
    assert (p.line, p.column, p.value) == (3, "system", "gamma")


def test_scores_outside_the_declared_scale(tmp_path):
    probs = problems(basic(tmp_path, judge=JUDGE.replace("p1,alpha,empathy,4", "p1,alpha,empathy,7"), scale=(1, 5)))
    (p,) = only(probs, "outside the declared scale [1, 5]")
    assert (p.line, p.column, p.value) == (2, "score", "7")


@pytest.mark.parametrize("bad", ["four", "nan", "inf"])
def test_non_numeric_score(tmp_path, bad):
    probs = problems(basic(tmp_path, judge=JUDGE.replace("p1,alpha,empathy,4", f"p1,alpha,empathy,{bad}")))
    (p,) = only(probs, "score is not a number")
    assert (p.line, p.value) == (2, bad) and "empty" in p.fix


def test_non_numeric_rating_and_seconds(tmp_path):
    from tests.audit.inputs.test_data import SCALAR, SCALAR_JUDGE

    humans = SCALAR.replace("i2,r1,empathy,2", "i2,r1,empathy,two")
    probs = problems(basic(tmp_path, humans=humans, judge=SCALAR_JUDGE, pairs=None))
    assert only(probs, "rating is not a number")[0].line == 3
    probs = problems(
        basic(
            tmp_path,
            humans="pair_id,reader_id,criterion,choice,seconds\np1,r1,empathy,alpha,slow\np2,r1,empathy,beta,3\n",
        )
    )
    assert only(probs, "seconds is not a number")[0].value == "slow"


def test_reader_who_judged_nothing(tmp_path):
    probs = problems(basic(tmp_path, humans=HUMANS + "p1,r3,empathy,\np2,r3,empathy,\n"))
    (p,) = only(probs, "judged nothing")
    assert (p.line, p.column, p.value) == (6, "reader_id", "r3")


def test_blank_choices_of_active_readers_are_counted(tmp_path):
    d = basic(tmp_path, humans=HUMANS + "p1,r3,empathy,\np2,r3,empathy,beta\n")()
    assert ("humans", 1) in [(e.role, e.n_rows) for e in d.exclusions]


def test_ids_missing_in_the_other_file(tmp_path):
    humans = HUMANS + "p9,r1,empathy,alpha\n"
    pairs = PAIRS + "p9,alpha,beta,,,\np8,alpha,beta,,,\n"
    judge = JUDGE + "p8,alpha,empathy,1\np8,beta,empathy,1\n"
    probs = problems(basic(tmp_path, humans=humans, judge=judge, pairs=pairs))
    (a,) = only(probs, "not found in the judge file")
    assert (a.value, a.line) == ("p9", 6)
    # a pair with judge outputs and no vote is a judge-only pair (the prediction-powered
    # estimates use it), not a problem
    assert not [p for p in probs if "not found in the human file" in p.message]


def test_pair_unknown_to_pairs_file(tmp_path):
    probs = problems(basic(tmp_path, humans=HUMANS + "p7,r1,empathy,alpha\n"))
    assert only(probs, "not found in the pairs file")[0].value == "p7"


def test_missing_required_columns_lists_the_columns_found(tmp_path):
    probs = problems(basic(tmp_path, humans="pair_id,Reader,criterion,choice\np1,r1,empathy,alpha\n"))
    (p,) = only(probs, "missing required column(s) reader_id")
    assert "pair_id, Reader, criterion, choice" in p.fix and p.line == 1


def test_empty_file_and_header_only(tmp_path):
    assert only(problems(basic(tmp_path, humans="")), "is empty")
    assert only(problems(basic(tmp_path, judge="pair_id,system,criterion,score\n")), "no data rows")


def test_unknown_extension_and_unreadable_files(tmp_path):
    h = write(tmp_path, "humans.xlsx", HUMANS)
    probs = problems(lambda: load_audit_data(tmp_path / "nope.csv", h))
    assert only(probs, "unknown file extension")[0].file == h
    assert only(probs, "cannot read the judge file")
    bad = tmp_path / "judge.csv"
    bad.write_bytes(b"pair_id,system,criterion,score\np1,\xff\xfe,empathy,1\n")
    probs = problems(lambda: load_audit_data(bad, write(tmp_path, "h.csv", HUMANS)))
    assert only(probs, "not valid UTF-8")


def test_all_problems_of_all_files_are_collected(tmp_path):
    humans = HUMANS + "p1,r1,empathy,beta\np2,r3,empathy,gamma\n"
    judge = JUDGE.replace("p1,alpha,empathy,4", "p1,alpha,empathy,x")
    probs = problems(basic(tmp_path, humans=humans, judge=judge))
    assert len(probs) >= 3
    assert {p.file.rsplit("/", 1)[-1] for p in probs} == {"humans.csv", "judge.csv"}


def test_error_message_has_one_line_per_problem(tmp_path):
    with pytest.raises(InputError) as exc:
        basic(tmp_path, humans=HUMANS + "p1,r1,empathy,beta\np2,r3,empathy,gamma\n")()
    text = str(exc.value).splitlines()
    assert len(text) == len(exc.value.problems) == 2
    assert all("line" in t and "Fix:" in t for t in text)


def test_drop_invalid_turns_row_problems_into_counted_exclusions(tmp_path):
    humans = HUMANS + "p1,r1,empathy,beta\np2,r3,empathy,gamma\n"
    d = basic(tmp_path, humans=humans, drop_invalid=True)()
    assert len(d.votes) == 4
    reasons = {e.reason: e.n_rows for e in d.exclusions if e.role == "humans"}
    assert sum(reasons.values()) == 2 and len(reasons) == 2


def test_drop_invalid_does_not_hide_structural_problems(tmp_path):
    probs = problems(basic(tmp_path, humans="pair_id,criterion,choice\np1,empathy,alpha\n", drop_invalid=True))
    assert only(probs, "missing required column")


def test_focal_name_unknown(tmp_path):
    assert only(problems(basic(tmp_path, focal="gamma")), "not a system of any pair")[0].value == "gamma"


def test_dev_set_needs_both_files_and_matching_items(tmp_path):
    dh = write(tmp_path, "dev_h.csv", "item_id,reader_id,criterion,rating\nd1,a,empathy,3\n")
    assert only(problems(basic(tmp_path, dev_humans=dh)), "needs both")
    dj = write(tmp_path, "dev_j.csv", "item_id,criterion,score\nd1,empathy,2\nd2,empathy,5\n")
    assert only(problems(basic(tmp_path, dev_humans=dh, dev_judge=dj)), "not found in the development human file")


def test_scalar_ratings_need_group_id(tmp_path):
    from tests.audit.inputs.test_data import SCALAR, SCALAR_JUDGE

    humans = "\n".join(",".join(r.split(",")[:4]) for r in SCALAR.splitlines()) + "\n"
    assert only(problems(basic(tmp_path, humans=humans, judge=SCALAR_JUDGE, pairs=None)), "group_id")


def test_scale_argument_is_checked():
    with pytest.raises(InputError, match="lower bound"):
        load_audit_data("j.csv", "h.csv", scale=(5, 1))


def test_shown_first_must_be_a_system_of_the_pair(tmp_path):
    humans = "pair_id,reader_id,criterion,choice,shown_first\np1,r1,empathy,alpha,B\np2,r1,empathy,beta,left\n"
    (p,) = only(problems(basic(tmp_path, humans=humans)), "shown_first names a system")
    assert (p.line, p.value) == (3, "left")
    d = basic(tmp_path, humans=humans.replace("left", "alpha"))()
    assert d.votes["shown_first"].tolist() == ["beta", "alpha"]


def test_reader_with_two_reader_groups(tmp_path):
    humans = (
        "pair_id,reader_id,criterion,choice,reader_group\np1,r1,empathy,alpha,expert\n"
        "p2,r1,empathy,beta,novice\np1,r2,empathy,beta,novice\n"
    )
    (p,) = only(problems(basic(tmp_path, humans=humans)), "two different reader_group")
    assert (p.line, p.value) == (3, "r1: expert then novice")


def test_scale_applies_to_human_ratings_and_accepts_text(tmp_path):
    from tests.audit.inputs.test_data import SCALAR, SCALAR_JUDGE

    humans = SCALAR.replace("i3,r2,empathy,5", "i3,r2,empathy,6")
    (p,) = only(
        problems(basic(tmp_path, humans=humans, judge=SCALAR_JUDGE, pairs=None, scale="1,5")),
        "rating outside the declared scale [1, 5]",
    )
    assert (p.line, p.value) == (7, "6")


def test_nothing_usable_left_after_drop_invalid(tmp_path):
    humans = "pair_id,reader_id,criterion,choice\np1,r1,empathy,gamma\np2,r1,empathy,delta\n"
    (p,) = only(problems(basic(tmp_path, humans=humans, drop_invalid=True)), "no usable human judgment")
    assert "--drop-invalid" in p.fix
