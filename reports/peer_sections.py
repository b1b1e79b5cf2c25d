"""Plain report sections for issue 17: judge agreement, judge configurations, leaderboard.

Each returns the section context the template's generic section loop renders (id, title,
status, reason, lead tables). They read the typed payloads' ``to_frame()`` only.
"""

from __future__ import annotations

from typing import Any

from reports import discover
from reports.sections import status_value, table


def _context(section_id: str, title: str, section: Any) -> dict:
    status = status_value(discover.field(section, "status", "SKIPPED"))
    payload = discover.field(section, "payload")
    computed = payload is not None and status != "SKIPPED"
    reason = discover.field(section, "reason", "") or ("" if computed else "not computed")
    return {"id": section_id, "title": title, "status": status, "computed": computed, "reason": reason,
            "figures": [], "tables": [], "cases": [], "facts": [], "parts": [], "notes": [], "lead_tables": [],
            "payload": payload}


def judge_agreement_section(result: Any) -> dict:
    ctx = _context("judge-agreement", "Judge against humans: chance-corrected agreement",
                   getattr(result, "judge_agreement", None))
    payload = ctx.pop("payload")
    if not ctx["computed"]:
        return ctx
    frame = payload.to_frame()
    cols = ["scope", "n_pairs", "n_readers", "n_units_scored"]
    for name in ("kappa_majority", "kappa_readers", "alpha_judge_human", "alpha_human", "alpha_difference",
                 "raw_difference"):
        cols += [name, f"{name}_ci_low", f"{name}_ci_high"]
    ctx["facts"] = [{"key": "judge", "value": payload.judge}, {"key": "replicates", "value": str(payload.n_boot)},
                    {"key": "seed", "value": str(payload.seed)}]
    ctx["lead_tables"].append(table(
        frame, columns=cols, max_rows=120,
        caption=f"Cohen's kappa of the judge against the reader majority and against each reader (mean), and judge-human "
                f"minus human-human Krippendorff alpha and raw agreement, with {payload.level:.0%} pairs x readers "
                f"bootstrap intervals (two-way corrected)."))
    if len(payload.readers):
        ctx["tables"].append(table(payload.readers, caption="Cohen's kappa of the judge against each reader",
                                   max_rows=200))
    return ctx


def leaderboard_section(result: Any) -> dict:
    ctx = _context("leaderboard", "Leaderboards: the humans' and the judge's Bradley-Terry ranking",
                   getattr(result, "leaderboard", None))
    board = ctx.pop("payload")
    if not ctx["computed"]:
        return ctx
    if not board.connected:
        ctx["notes"].append("The comparison graph is not connected: these groups of systems cannot be ranked "
                            "against each other: " + " | ".join(", ".join(c) for c in board.components))
        return ctx
    ctx["facts"] = [{"key": "criterion", "value": board.criterion}, {"key": "cluster", "value": board.cluster},
                    {"key": "Kendall tau", "value": str(board.kendall_tau)},
                    {"key": "misplaced", "value": ", ".join(board.misplaced) or "none"},
                    {"key": "replicates", "value": f"{board.n_boot} ({board.n_boot_failed} not refitted)"}]
    ctx["lead_tables"].append(table(
        board.to_frame(), max_rows=200,
        caption="Centred logit strengths (mean zero over systems) with Wald intervals: humans from the Bradley-Terry "
                f"GLMM with {board.cluster} and reader random intercepts, the judge from a logistic Bradley-Terry fit "
                "on the same pairs; rank shift = judge rank - human rank with its cluster-bootstrap interval."))
    ctx["notes"].extend(board.notes)
    return ctx


def judge_configurations_section(result: Any) -> dict:
    ctx = _context("judge-configurations", "Judge configurations: which is closest to the humans",
                   getattr(result, "judge_configurations", None))
    configs = ctx.pop("payload")
    if not ctx["computed"]:
        return ctx
    ctx["facts"] = [{"key": "closest", "value": configs.selected}, {"key": "audited", "value": configs.primary},
                    {"key": "ranked by", "value": configs.closeness}]
    if configs.auto:
        ctx["notes"].append(f"{configs.selected} was picked by --judge auto on the same data it is audited on: its "
                            "agreement is optimistic; confirm it on held-out data.")
    ctx["lead_tables"].append(table(configs.to_frame(), max_rows=100, caption=(
        f"Every configuration's agreement with the humans (all units pooled, {configs.n_boot} bootstrap replicates) "
        "and transfer summary (cells with its rate inside the human GLMM interval, mean |rate - GLMM estimate|).")))
    if configs.effective is not None:
        ctx["facts"].append({"key": "effective number of judges",
                             "value": f"{configs.effective.nyholt:.2f} (Nyholt), {configs.effective.participation_ratio:.2f} "
                                      f"(participation ratio) of {configs.effective.n_judges}"})
    if configs.dawid_skene is not None:
        ds = configs.dawid_skene
        ctx["facts"].append({"key": "Dawid-Skene latent labels vs reader majority (kappa)",
                             "value": str(configs.dawid_skene_kappa)})
        ctx["tables"].append(table(ds.to_frame(), caption=str(ds), max_rows=300))
    ctx["notes"].extend(configs.notes)
    return ctx


def judge_position_section(result: Any) -> dict:
    ctx = _context("judge-position", "Judge position bias: does the judge favour the output shown first",
                   getattr(result, "judge_position", None))
    position = ctx.pop("payload")
    if not ctx["computed"]:
        return ctx
    ctx["lead_tables"].append(table(position.to_frame(), max_rows=100, caption=(
        f"Share of decisive verdicts choosing the output shown first (exact Clopper-Pearson {position.level:.0%} "
        "interval; 0.5 = no position bias) and, for pairs judged in both orders, the share with the same verdict "
        "in both (pairs bootstrap).")))
    return ctx


def peer_sections(result: Any) -> list[dict]:
    """Every issue-17 section, in report order."""
    from reports.peer_budget import budget_section

    return [judge_agreement_section(result), judge_configurations_section(result), judge_position_section(result),
            leaderboard_section(result), budget_section(result)]
