"""Small AuditData objects built directly (no files) for pipeline-level unit tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.model.data import AuditData

CRITERIA = ("empathy", "engagement", "overall")


def make_audit_data(
    *,
    n_pairs: int = 12,
    n_readers: int = 5,
    human_p: float = 0.5,
    judge_p: float = 0.9,
    seed: int = 1,
    matchups: tuple[str, ...] = ("a vs b",),
    ties_every: int = 0,
    judge_follows_majority: bool = False,
) -> AuditData:
    """Votes from ``n_readers`` readers on ``n_pairs`` pairs per matchup, judge scores 1-5.

    The judge prefers the focal story with probability ``judge_p``, or, with
    ``judge_follows_majority``, exactly when most readers did.
    """
    rng = np.random.default_rng(seed)
    pairs, votes, scores = [], [], []
    for m_index, matchup in enumerate(matchups):
        focal, other = matchup.split(" vs ")
        for i in range(n_pairs):
            pid = f"m{m_index}p{i:02d}"
            pairs.append(
                {
                    "pair_id": pid,
                    "system_a": focal,
                    "system_b": other,
                    "focal": focal,
                    "other": other,
                    "matchup": matchup,
                    "group_id": f"g{i}",
                }
            )
            for crit in CRITERIA:
                n_focal_votes = 0
                for r in range(n_readers):
                    pick_focal = rng.random() < human_p
                    n_focal_votes += pick_focal
                    votes.append(
                        {
                            "pair_id": pid,
                            "reader_id": f"r{r}",
                            "criterion": crit,
                            "matchup": matchup,
                            "focal": focal,
                            "other": other,
                            "choice": focal if pick_focal else other,
                            "y": 1.0 if pick_focal else 0.0,
                        }
                    )
                if crit == "overall":
                    continue
                better = rng.random() < judge_p
                if judge_follows_majority:
                    better = 2 * n_focal_votes > n_readers
                f_score, o_score = (4.0, 3.0) if better else (3.0, 4.0)
                if ties_every and i % ties_every == 0:
                    o_score = f_score
                scores.append(
                    {
                        "pair_id": pid,
                        "system": focal,
                        "criterion": crit,
                        "judge": "ensemble",
                        "sample": 0,
                        "score": f_score,
                        "line": 0,
                    }
                )
                scores.append(
                    {
                        "pair_id": pid,
                        "system": other,
                        "criterion": crit,
                        "judge": "ensemble",
                        "sample": 0,
                        "score": o_score,
                        "line": 0,
                    }
                )
    votes_frame = pd.DataFrame(votes)
    votes_frame["seconds"] = np.nan
    votes_frame["comment"] = ""
    votes_frame["shown_first"] = ""
    votes_frame["reader_group"] = ""
    votes_frame["order"] = np.arange(len(votes_frame))
    votes_frame["line"] = np.arange(len(votes_frame)) + 2
    return AuditData(
        votes=votes_frame, pairs=pd.DataFrame(pairs), judge_scores=pd.DataFrame(scores), focal_source="pairs file"
    )
