"""The agreement decision on one vote per pair (Chatbot-Arena shape): 28 matchups x 700 pairs,
each pair read once by one of 20 readers (19,600 votes), for a judge on the wrong side of the
readers, one that picks their expected majority and one that votes like a reader.

    python benchmarks/agreement_decision_one_vote.py

Prints per judge the study's decision (basis "votes": agreement with the readers' votes against the
chance baseline), its interval and the matchups' statuses.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pandas as pd

from judge_transfer_audit.verdict.agreement_decision import agreement_decision
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell, simulate_judge


def main() -> None:
    rng = np.random.default_rng(7)
    kinds = {"wrong-side": "reversed", "majority": "majority", "reader-like": "reader-like"}
    votes, choices = [], {k: [] for k in kinds}
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
        for k, kind in kinds.items():
            credit = simulate_judge(kind, cell, rng).credit
            pairs = [f"m{m}-{p}" for p in cell.pairs]
            choices[k].append(pd.DataFrame({"pair_id": pairs, "criterion": "overall", "y_judge": credit}))
    frame = pd.concat(votes, ignore_index=True)
    print(f"{len(frame):,} votes on {frame.pair_id.nunique():,} pairs")
    for k in kinds:
        t = time.process_time()
        res = agreement_decision(frame, pd.concat(choices[k], ignore_index=True), n_boot=999, rng=0)
        s = res.row("all/all")
        matchups = dict(Counter(r.status for r in res.level("matchup")))
        print(
            f"{k}: study {s.status} (basis {s.basis}); judge agrees with {s.judge_agreement:.3f} of the votes, "
            f"chance {s.chance:.3f}; advantage bound {s.advantage}; matchups {matchups}; "
            f"{time.process_time() - t:.1f} CPU-s"
        )


if __name__ == "__main__":
    main()
