"""Pairs with judge outputs and no vote (judge-only pairs): accepted, oriented as the voted pairs
of their matchup, counted; those of a matchup without any vote are left out and counted."""

from __future__ import annotations

from judge_transfer_audit.inputs import load_audit_data

HUMANS = "pair_id,reader_id,criterion,choice\np1,r1,overall,alpha\np1,r2,overall,beta\np2,r1,overall,alpha\n"
JUDGE = (
    "pair_id,system,criterion,score\n"
    "p1,alpha,overall,4\np1,beta,overall,3\n"
    "p2,alpha,overall,2\np2,beta,overall,3\n"
    "p3,beta,overall,5\np3,alpha,overall,1\n"  # judge-only, same matchup, systems listed the other way
    "p4,alpha,overall,5\np4,delta,overall,1\n"  # judge-only, a matchup nobody voted on
)


def _load(tmp_path, **kw):
    (tmp_path / "h.csv").write_text(HUMANS)
    (tmp_path / "j.csv").write_text(JUDGE)
    return load_audit_data(tmp_path / "j.csv", tmp_path / "h.csv", **kw)


def test_judge_only_pairs_are_oriented_like_their_matchup(tmp_path):
    d = _load(tmp_path)
    assert list(d.pairs["pair_id"]) == ["p1", "p2"]
    only = d.judge_only_pairs.set_index("pair_id")
    assert list(only.index) == ["p3"]
    voted = d.pairs.iloc[0]
    assert (only.loc["p3", "focal"], only.loc["p3", "matchup"]) == (voted["focal"], voted["matchup"])
    assert set(d.judge_only_scores["pair_id"]) == {"p3"}
    assert set(d.judge_scores["pair_id"]) == {"p1", "p2"}


def test_every_judge_output_is_used_or_counted(tmp_path):
    d = _load(tmp_path)
    judge = next(r for r in d.rows if r.role == "judge")
    assert judge.read == 8 and judge.used == 6 and judge.n_excluded == 2
    assert any("belong to no matchup the readers judged" in n for n in d.notes)
    assert any("1 pair(s) carry only the judge" in n for n in d.notes)
