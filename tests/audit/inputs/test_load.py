"""judge_transfer_audit.inputs.load: how files are combined (messages and notes seen by the user)."""

from __future__ import annotations

from judge_transfer_audit.inputs import load_audit_data

from .helpers import HUMANS, JUDGE, PAIRS, basic, problems, write


def test_pair_with_one_system_is_reported_once_not_also_as_unknown_id(tmp_path):
    # without a pairs file, p2's systems come from the choices; the judge's only verdict
    # is invalid and every reader chose alpha, so p2 shows one system
    humans = (
        "pair_id,reader_id,criterion,choice\np1,r1,empathy,alpha\np1,r2,empathy,beta\n"
        "p2,r1,empathy,alpha\np2,r2,empathy,alpha\n"
    )
    judge = "pair_id,criterion,choice\np1,empathy,alpha\np2,empathy,invalid\n"
    probs = problems(basic(tmp_path, humans=humans, judge=judge, pairs=None))
    assert len(probs) == 1, [str(p) for p in probs]
    assert probs[0].message.startswith("a pair must have exactly two systems") and probs[0].value == "p2: alpha"
    assert probs[0].line == 3


def test_scalar_judge_pair_with_one_system_is_reported_once(tmp_path):
    judge = "pair_id,system,criterion,score\np1,alpha,empathy,4\np1,beta,empathy,3\np2,alpha,empathy,2\n"
    probs = problems(basic(tmp_path, judge=judge, pairs=None))
    assert [p.message for p in probs] == ["a pair must have exactly two systems, this one has 1"]


def test_judge_criterion_the_readers_lack_gets_a_note(tmp_path):
    judge = JUDGE + "p1,alpha,style,4\np1,beta,style,3\np2,alpha,style,4\np2,beta,style,4\n"
    data = basic(tmp_path, judge=judge)()
    assert any(
        "scored by the judge but not judged by the readers" in n and n.endswith(": style") for n in data.notes
    ), data.notes
    plain = load_audit_data(
        write(tmp_path, "j2.csv", JUDGE), write(tmp_path, "h2.csv", HUMANS), pairs=write(tmp_path, "p2.csv", PAIRS)
    )
    assert not any("scored by the judge" in n for n in plain.notes)


def test_pairwise_judge_criterion_the_readers_lack_gets_a_note(tmp_path):
    judge = "pair_id,criterion,choice\np1,empathy,alpha\np2,empathy,beta\np1,style,alpha\np2,style,tie\n"
    data = basic(tmp_path, judge=judge)()
    [note] = [n for n in data.notes if "scored by the judge" in n]
    assert note.endswith(": style") and "aggregate" not in note


def test_human_file_with_no_usable_vote_is_one_problem_not_one_per_judge_row(tmp_path):
    humans = "pair_id,reader_id,criterion,choice\np1,r1,empathy,\np2,r1,empathy,\n"
    probs = problems(basic(tmp_path, humans=humans))
    assert [(p.message, p.value) for p in probs] == [("this reader judged nothing (every judgment is empty)", "r1")]


def test_every_vote_left_out_under_drop_invalid_says_nothing_usable(tmp_path):
    humans = HUMANS.replace("p1,", "q1,").replace("p2,", "q2,")
    probs = problems(basic(tmp_path, humans=humans, drop_invalid=True))
    assert [p.message for p in probs] == ["no usable human judgment is left"]
    assert "--drop-invalid" in probs[0].fix


def test_configuration_missing_some_outputs_gets_a_note(tmp_path):
    judge = (
        "pair_id,system,criterion,judge,score\n"
        "p1,alpha,empathy,ens,4\np1,beta,empathy,ens,3\np2,alpha,empathy,ens,1\np2,beta,empathy,ens,2\n"
        "p1,alpha,empathy,m1,4\np1,beta,empathy,m1,3\n"
    )
    data = basic(tmp_path, judge=judge)()
    [note] = [n for n in data.notes if "configuration" in n]
    assert "'m1' has no output for 1 of 2 pair x criterion cell(s)" in note
    full = judge + "p2,alpha,empathy,m1,2\np2,beta,empathy,m1,2\n"
    assert not [n for n in basic(tmp_path, judge=full)().notes if "configuration" in n]
