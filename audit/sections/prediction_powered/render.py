"""The report section "What the readers would say" (the prediction-powered estimates), placed
right after the decision, and its terminal lines. Shown only when the run has judge-only pairs."""

from __future__ import annotations

import math
from typing import Any

from judge_transfer_audit.presentation.renderers import render_section
from judge_transfer_audit.presentation.tables import table
from judge_transfer_audit.statistics.prediction_powered.result import PredictionPowered

ID = "prediction-powered"
TITLE = "What the readers would say: the humans' figures from the judge on every pair, corrected by the votes"


def render(result: Any, payload: PredictionPowered, ctx: dict) -> None:
    ctx["facts"] = [
        {"key": "judge", "value": payload.judge},
        {"key": "voted pairs", "value": f"{payload.n_pairs_voted:,}"},
        {"key": "judge-only pairs", "value": f"{payload.n_pairs_judge_only:,}"},
        {"key": "sampling (policy)", "value": payload.sampling},
    ]
    ctx["notes"].append(payload.validity)
    ctx["notes"].extend(payload.notes)
    frame = payload.to_frame()
    ctx["lead_tables"].append(
        table(
            frame,
            columns=[
                "matchup",
                "criterion",
                "estimand",
                "estimate",
                "ci_low",
                "ci_high",
                "human_estimate",
                "human_ci_low",
                "human_ci_high",
                "judge_estimate",
                "width_ratio",
                "lam",
                "n_pairs_voted",
                "n_votes",
                "n_pairs_judge_only",
                "judge_worth_votes",
            ],
            max_rows=200,
            caption=f"Prediction-powered (PPI++) vote share and majority rate with {payload.level:.0%} intervals "
            "(pairs x readers), beside the human-only figure (the voted pairs alone) and the judge's own rate; "
            "width_ratio is the corrected interval's width over the human-only one; judge_worth_votes the extra "
            "human votes the human-only figure would need to be as precise.",
        )
    )
    board = payload.leaderboard
    if board is not None:
        ctx["tables"].append(
            table(
                board.to_frame(),
                caption=f"Prediction-powered Bradley-Terry leaderboard ({board.criterion}; lambda {board.lam:.2f}): "
                f"centred logit strengths with {payload.level:.0%} intervals and rank intervals "
                f"({board.n_draws} normal draws), beside the human-only fit.",
            )
        )


def report(result: Any) -> list[dict]:
    """The section's context, or nothing when the run has no judge-only pairs."""
    section = getattr(result, "prediction_powered", None)
    if section is None or (section.payload is None and "no pair carries only the judge" in section.reason):
        return []
    return [render_section(ID, TITLE, result, section, render)]


def terminal_lines(result: Any) -> list[str]:
    section = getattr(result, "prediction_powered", None)
    payload = getattr(section, "payload", None)
    if payload is None:
        return []
    lines = [
        f"What the readers would say ({payload.n_pairs_judge_only:,} judge-only pairs, {payload.n_pairs_voted:,} "
        f"voted; sampling '{payload.sampling}' as the policy states):"
    ]
    for r in payload.rows:
        if r.estimand != "vote_share":
            continue
        narrower = "" if math.isnan(r.width_ratio) else f", interval x{r.width_ratio:.2f} of human-only"
        lines.append(
            f"  {r.matchup} / {r.criterion}: vote share {r.estimate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}] "
            f"(human-only {r.human_estimate:.1%}, judge {r.judge_estimate:.1%}{narrower})"
        )
    if payload.leaderboard is not None:
        order = " > ".join(s.system for s in payload.leaderboard.systems)
        lines.append(f"  corrected leaderboard ({payload.leaderboard.criterion}): {order}")
    return lines
