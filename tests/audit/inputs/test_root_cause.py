"""One root cause is reported once: knock-on problems collapsed or not repeated."""

from __future__ import annotations

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.inputs.problems import MAX_ROWS_PER_KIND

from .helpers import basic, problems

FIXTURE = "fixtures/deployment"


def _words_study(tmp_path, pairs_with_words=None):
    """The deployment fixture with judge scores written as words (good/bad) in the given pairs
    (every pair when None)."""
    judge = pd.read_csv(f"{FIXTURE}/judge.csv")
    hit = judge["pair_id"].isin(pairs_with_words) if pairs_with_words is not None else judge["pair_id"].notna()
    judge["score"] = judge["score"].astype(object)
    judge.loc[hit, "score"] = ["good" if s >= 3 else "bad" for s in judge.loc[hit, "score"]]
    judge.to_csv(tmp_path / "judge.csv", index=False)
    return judge, int(hit.sum())


def test_scores_as_words_give_a_short_error_without_knock_on_missing_pairs(tmp_path, capsys):
    _, n_bad = _words_study(tmp_path)
    status = main(
        [
            "run",
            str(tmp_path / "judge.csv"),
            f"{FIXTURE}/humans.csv",
            "--pairs",
            f"{FIXTURE}/pairs.csv",
            "--out",
            str(tmp_path / "out"),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2
    lines = [ln for ln in err.splitlines() if ln.startswith("  - ")]
    assert len(lines) == MAX_ROWS_PER_KIND + 1
    assert "not found" not in err  # the pairs left without a judge score are knock-ons
    rest = n_bad - MAX_ROWS_PER_KIND
    assert lines[-1].endswith(
        f"score is not a number: and {rest:,} more rows of the same kind (values found: 'good', 'bad')"
    )
    assert err.count("Fix: write a number") == 1  # the fix once, not per line


def test_words_in_some_pairs_only_report_the_words_and_not_the_missing_pairs(tmp_path):
    from judge_transfer_audit.inputs import load_audit_data

    _words_study(tmp_path, ["p01", "p02"])
    found = problems(
        lambda: load_audit_data(str(tmp_path / "judge.csv"), f"{FIXTURE}/humans.csv", pairs=f"{FIXTURE}/pairs.csv")
    )
    assert {p.message for p in found} >= {"score is not a number"}
    assert not [p for p in found if "not found" in p.message]


def test_an_id_really_missing_is_still_reported_next_to_a_bad_score(tmp_path):
    # p2's judge rows are absent (a real problem), p1's score is a word (its own problem):
    # the missing p2 is reported, p1 is not reported as missing
    judge = "pair_id,system,criterion,score\np1,alpha,empathy,good\np1,beta,empathy,3\n"
    found = problems(basic(tmp_path, judge=judge, pairs=None))
    messages = [(p.message, p.value) for p in found]
    assert ("score is not a number", "good") in messages
    assert [v for m, v in messages if "not found" in m] == ["p2"]


@pytest.mark.parametrize("n_missing", [MAX_ROWS_PER_KIND + 1, MAX_ROWS_PER_KIND + 30])
def test_many_missing_ids_are_collapsed_with_an_exact_count(tmp_path, n_missing):
    votes = ["pair_id,reader_id,criterion,choice", "p1,r1,empathy,alpha"]
    votes += [f"q{i},r1,empathy,alpha" for i in range(n_missing)]
    judge = "pair_id,system,criterion,score\np1,alpha,empathy,4\np1,beta,empathy,3\n"
    found = problems(basic(tmp_path, humans="\n".join(votes) + "\n", judge=judge, pairs=None))
    missing = [p for p in found if "not found" in p.message]
    assert len(missing) == MAX_ROWS_PER_KIND + 1
    rest = n_missing - MAX_ROWS_PER_KIND
    assert f"and {rest:,} more pair_ids of the same kind ({rest:,} row(s))" in missing[-1].message
