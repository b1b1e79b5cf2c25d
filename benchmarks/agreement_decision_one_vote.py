"""The agreement decision on one vote per pair (Chatbot-Arena shape): 28 matchups x 700 pairs,
each pair read once by one of 20 readers (19,600 votes), for a judge on the wrong side of the
readers, one that picks their expected majority and one that votes like a reader.

    python benchmarks/agreement_decision_one_vote.py
    python benchmarks/agreement_decision_one_vote.py --studies 50

Prints per judge the study's decision (basis "votes": agreement with the readers' votes against the
chance baseline), its interval and the matchups' statuses. With ``--studies N`` it simulates N
studies (study ``s`` from the seed sequence ``[seed, s]``, decided with seed ``s``: other studies
than the default run's) and prints per judge how many studies and matchups FAIL and the statuses of
every scope (cells, matchups and the study).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np
import pandas as pd

from judge_transfer_audit.verdict.agreement_decision import agreement_decision
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell, simulate_judge

KINDS = {"wrong-side": "reversed", "majority": "majority", "reader-like": "reader-like"}


def simulate_study(rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """The votes of one study (one vote per pair) and each judge's choices."""
    votes, choices = [], {k: [] for k in KINDS}
    for m in range(28):
        design = CellDesign(b0=rng.normal(0, 0.8), sd_pair=2.5, sd_reader=0.3, tie=0.2)
        cell = simulate_cell(design, 700, 20, rng)
        v = pd.DataFrame(
            {
                "pair_id": [f"m{m}-{p}" for p in cell.pair_id],
                "reader_id": cell.reader_id,
                "criterion": "overall",
                "matchup": f"m{m}",
                "y": cell.y,
            }
        )
        votes.append(v.sample(frac=1.0, random_state=m).groupby("pair_id", sort=False).head(1))
        for k, kind in KINDS.items():
            credit = simulate_judge(kind, cell, rng).credit
            pairs = [f"m{m}-{p}" for p in cell.pairs]
            choices[k].append(pd.DataFrame({"pair_id": pairs, "criterion": "overall", "y_judge": credit}))
    return pd.concat(votes, ignore_index=True), {k: pd.concat(c, ignore_index=True) for k, c in choices.items()}


def one_study(seed: int) -> None:
    frame, choices = simulate_study(np.random.default_rng(seed))
    print(f"{len(frame):,} votes on {frame.pair_id.nunique():,} pairs")
    for k in KINDS:
        t = time.process_time()
        res = agreement_decision(frame, choices[k], n_boot=999, rng=0)
        s = res.row("all/all")
        matchups = dict(Counter(r.status for r in res.level("matchup")))
        print(
            f"{k}: study {s.status} (basis {s.basis}); judge agrees with {s.judge_agreement:.3f} of the votes, "
            f"chance {s.chance:.3f}; advantage bound {s.advantage}; matchups {matchups}; "
            f"{time.process_time() - t:.1f} CPU-s"
        )


def many_studies(seed: int, studies: int) -> None:
    tally = {k: {"study_fail": 0, "matchup_fail": 0, "matchups": 0, "statuses": Counter()} for k in KINDS}
    for s in range(studies):
        frame, choices = simulate_study(np.random.default_rng([seed, s]))
        for k in KINDS:
            res = agreement_decision(frame, choices[k], n_boot=999, rng=s)
            t = tally[k]
            t["study_fail"] += res.row("all/all").status == "FAIL"
            t["matchup_fail"] += sum(r.status == "FAIL" for r in res.level("matchup"))
            t["matchups"] += len(res.level("matchup"))
            t["statuses"].update(r.status for r in res.rows)
    print(f"{studies} studies of 28 matchups x 700 one-vote pairs (seed {seed}, 999 replicates)")
    for k, t in tally.items():
        print(
            f"{k}: study FAIL in {t['study_fail']}/{studies}; matchups FAIL {t['matchup_fail']}/{t['matchups']}; "
            f"every scope: {dict(t['statuses'])}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--studies", type=int, default=1, help="simulate this many studies and count their statuses")
    a = ap.parse_args(argv)
    if a.studies < 1:
        ap.error("--studies must be at least 1")
    if a.studies == 1:
        one_study(a.seed)
    else:
        many_studies(a.seed, a.studies)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
