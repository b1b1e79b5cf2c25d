"""How many more human votes reach a target interval width for the vote share, with the judge's
help (prediction-powered) and without it (human-only): ``audit budget result.json --width W``.

Per matchup x criterion, from the stored figures: the human-only variance scales as
``se_h^2 n0 / n`` over n voted pairs; the prediction-powered one as
``(se^2 - imputed) n0 / n + imputed (T - n0) / (T - n)``: its rectifier part shrinks with the
voted pairs and its judge part grows as judge-only pairs become voted ones (T, the judged pairs,
fixed; lam held at its estimate). New votes go to new pairs of the matchup at the current votes
per pair (more pairs, not more readers per pair: the pairs' part only shrinks with pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from judge_transfer_audit.statistics.prediction_powered.result import PredictionPowered


@dataclass(frozen=True)
class WidthBudget:
    matchup: str
    criterion: str
    width: float  #: the target (full) interval width
    width_now: float
    human_width_now: float
    votes_per_pair: float
    pairs_with_judge: float  #: voted pairs needed with the judge (beyond the judged pairs: the human-only figure)
    pairs_without_judge: float
    more_votes_with_judge: float
    more_votes_without_judge: float


def _variance_at(n: int, rect: float, imputed: float, n0: int, total: int, human: float) -> float:
    """The corrected variance at n voted pairs: lam held at its estimate, but never worse than
    human-only (lam = 0 is always open)."""
    ppi = rect * n0 / n + imputed * (total - n0) / (total - n) if n < total else math.inf
    return min(ppi, human * n0 / n)


def width_budget(payload: PredictionPowered, width: float) -> tuple[WidthBudget, ...]:
    out = []
    for r in payload.rows:
        if r.estimand != "vote_share" or not r.se > 0 or not r.human_se > 0:
            continue
        n0, total = r.n_pairs_voted, r.n_pairs_voted + r.n_pairs_judge_only
        k = r.n_votes / n0
        z = r.quantile if math.isfinite(r.quantile) else 1.959963984540054
        half = width / 2.0
        n_h = max(float(n0), n0 * (z * r.human_se / half) ** 2)
        imputed = r.imputed_variance if math.isfinite(r.imputed_variance) else 0.0
        rect = r.se**2 - imputed

        def var_at(n: int, rect=rect, imputed=imputed, n0=n0, total=total, human=r.human_se**2) -> float:
            return _variance_at(n, rect, imputed, n0, total, human)

        n_j = n_h  # beyond the judged pairs the corrected figure is the human-only one
        if n_h > n0 and z * math.sqrt(var_at(min(int(math.ceil(n_h)), total - 1))) <= half:
            lo, hi = n0, min(int(math.ceil(n_h)), total - 1)
            while lo < hi:  # the first n within the judged pairs that reaches the width
                mid = (lo + hi) // 2
                if z * math.sqrt(var_at(mid)) <= half:
                    hi = mid
                else:
                    lo = mid + 1
            n_j = float(lo)
        out.append(
            WidthBudget(
                matchup=r.matchup,
                criterion=r.criterion,
                width=float(width),
                width_now=r.ci_high - r.ci_low,
                human_width_now=r.human_ci_high - r.human_ci_low,
                votes_per_pair=k,
                pairs_with_judge=n_j,
                pairs_without_judge=n_h,
                more_votes_with_judge=(n_j - n0) * k,
                more_votes_without_judge=(n_h - n0) * k,
            )
        )
    return tuple(out)


def width_budget_frame(rows: tuple[WidthBudget, ...]) -> pd.DataFrame:
    return pd.DataFrame([r.__dict__ for r in rows])


def width_budget_text(rows: tuple[WidthBudget, ...], width: float) -> str:
    if not rows:
        return "Width budget: no prediction-powered figures in this result (no judge-only pairs)."
    lines = [
        f"Width budget: human votes to reach a {width:.3f}-wide vote-share interval, with the judge's help "
        "(prediction-powered) and without it (human-only); new votes on new pairs of the matchup at the "
        "current votes per pair:"
    ]
    for r in rows:
        with_judge = f"~{math.ceil(r.more_votes_with_judge):,} more votes"
        lines.append(
            f"  {r.matchup} / {r.criterion}: now {r.width_now:.3f} (human-only {r.human_width_now:.3f}); "
            f"with the judge {with_judge}, without ~{math.ceil(r.more_votes_without_judge):,} more votes "
            f"({r.votes_per_pair:.1f} per pair)"
        )
    return "\n".join(lines)
