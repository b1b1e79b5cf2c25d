"""Plain report sections: judge agreement, judge configurations, leaderboard.

One renderer per payload type (see :mod:`judge_transfer_audit.reports.registry`); each fills the section context
the template's generic section loop renders (facts, lead tables, notes) from the typed
payload's fields and ``to_frame()``.
"""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.reports.agreement_decision import agreement_section
from judge_transfer_audit.reports.label_budget import budget_section
from judge_transfer_audit.reports.registry import render_section, renders
from judge_transfer_audit.reports.tables import table
from judge_transfer_audit.statistics.judge.agreement import JudgeAgreement
from judge_transfer_audit.statistics.judge.position import JudgePosition
from judge_transfer_audit.statistics.leaderboard.fit import Leaderboard
from judge_transfer_audit.verdict.judge_configurations import JudgeConfigurations


@renders(JudgeAgreement)
def judge_agreement(result: Any, payload: JudgeAgreement, ctx: dict) -> None:
    frame = payload.to_frame()
    cols = ["scope", "n_pairs", "n_readers", "n_units_scored"]
    for name in (
        "kappa_majority",
        "kappa_readers",
        "alpha_judge_human",
        "alpha_human",
        "alpha_difference",
        "raw_difference",
    ):
        cols += [name, f"{name}_ci_low", f"{name}_ci_high"]
    ctx["facts"] = [
        {"key": "judge", "value": payload.judge},
        {"key": "replicates", "value": str(payload.n_boot)},
        {"key": "seed", "value": str(payload.seed)},
    ]
    ctx["lead_tables"].append(
        table(
            frame,
            columns=cols,
            max_rows=120,
            sort_by=(("kappa_majority", True),),
            sort_label="worst first (lowest kappa against the reader majority)",
            # on paper the two alphas behind alpha_difference give way, so the other columns fit the page
            print_omit=("n_readers", "n_units_scored")
            + tuple(
                f"{name}{end}" for name in ("alpha_judge_human", "alpha_human") for end in ("", "_ci_low", "_ci_high")
            ),
            caption="Cohen's kappa of the judge against the reader majority and against each reader (mean), and "
            "judge-human "
            f"minus human-human Krippendorff alpha and raw agreement, with {payload.level:.0%} pairs x readers "
            f"bootstrap intervals (two-way corrected).",
        )
    )
    if len(payload.readers):
        ctx["tables"].append(
            table(payload.readers, caption="Cohen's kappa of the judge against each reader", max_rows=200)
        )


@renders(Leaderboard)
def leaderboard(result: Any, board: Leaderboard, ctx: dict) -> None:
    if not board.connected:
        ctx["notes"].append(
            "The comparison graph is not connected: these groups of systems cannot be ranked "
            "against each other: " + " | ".join(", ".join(c) for c in board.components)
        )
        return
    ctx["facts"] = [
        {"key": "criterion", "value": board.criterion},
        {"key": "cluster", "value": board.cluster},
        {"key": "Kendall tau", "value": str(board.kendall_tau)},
        {"key": "misplaced", "value": ", ".join(board.misplaced) or "none"},
        {"key": "replicates", "value": f"{board.n_boot} ({board.n_boot_failed} not refitted)"},
    ]
    ctx["lead_tables"].append(
        table(
            board.to_frame(),
            max_rows=200,
            caption="Centred logit strengths (mean zero over systems) with Wald intervals: humans from the "
            "Bradley-Terry "
            f"GLMM with {board.cluster} and reader random intercepts, the judge from a logistic Bradley-Terry fit "
            "on the same pairs; rank shift = judge rank - human rank with its cluster-bootstrap interval.",
        )
    )
    ctx["notes"].extend(board.notes)
    diag = board.diagnostics
    if diag is not None:
        ctx["facts"].extend({"key": "diagnostics", "value": line} for line in diag.summary_lines())
        ctx["tables"].append(
            table(
                diag.to_frame(),
                max_rows=200,
                caption=f"Leaderboard diagnostics: rank_low..rank_high = 1 + systems significantly stronger .. "
                f"k - systems significantly weaker (pairwise Wald tests of the GLMM strengths at {diag.level:.0%}); "
                "vote_level = the vote-level Bradley-Terry strength (arena-rank's model, ties left out) with its "
                "vote-level sandwich interval (arena-rank's) and the reader-clustered one; se_glmm, se_votes, "
                "se_readers side by side; the vote-level ranks with ties as half a win, with a position term "
                "(shown_first) and without the heaviest readers who cast a quarter of the votes.",
            )
        )
        if diag.cycles:
            ctx["tables"].append(
                table(
                    diag.cycles_frame(),
                    caption="Intransitive triples: first beats second beats third beats first in the head-to-head "
                    "decisive votes, each significant (intersection-union p-value, Bonferroni over "
                    f"{diag.n_triples} triples).",
                )
            )
        ctx["notes"].extend(diag.notes)


@renders(JudgeConfigurations)
def judge_configurations(result: Any, configs: JudgeConfigurations, ctx: dict) -> None:
    ctx["facts"] = [
        {"key": "closest", "value": configs.selected},
        {"key": "audited", "value": configs.primary},
        {"key": "ranked by", "value": configs.closeness},
    ]
    if configs.auto:
        ctx["notes"].append(
            f"{configs.selected} was picked by --judge auto on the same data it is audited on: its "
            "agreement is optimistic; confirm it on held-out data."
        )
    ctx["lead_tables"].append(
        table(
            configs.to_frame(),
            max_rows=100,
            caption=(
                f"Every configuration's agreement with the humans (all units pooled, {configs.n_boot} bootstrap "
                "replicates) "
                "and transfer summary (cells with its rate inside the human GLMM interval, mean |rate - GLMM "
                "estimate|)."
            ),
            # on paper the raw-agreement interval and the unit count give way to the kappa and alpha columns
            print_omit=("raw_difference_ci_low", "raw_difference_ci_high", "n_units_scored"),
        )
    )
    if configs.effective is not None:
        ctx["facts"].append(
            {
                "key": "effective number of judges",
                "value": f"{configs.effective.nyholt:.2f} (Nyholt), {configs.effective.participation_ratio:.2f} "
                f"(participation ratio) of {configs.effective.n_judges}",
            }
        )
    if configs.dawid_skene is not None:
        ds = configs.dawid_skene
        ctx["facts"].append(
            {"key": "Dawid-Skene latent labels vs reader majority (kappa)", "value": str(configs.dawid_skene_kappa)}
        )
        ctx["tables"].append(table(ds.to_frame(), caption=str(ds), max_rows=300))
    ctx["notes"].extend(configs.notes)


@renders(JudgePosition)
def judge_position(result: Any, position: JudgePosition, ctx: dict) -> None:
    ctx["lead_tables"].append(
        table(
            position.to_frame(),
            max_rows=100,
            caption=(
                "Share of decisive verdicts choosing the output shown first (exact Clopper-Pearson "
                f"{position.level:.0%} "
                "interval; 0.5 = no position bias) and, for pairs judged in both orders, the share with the same "
                "verdict "
                "in both (pairs bootstrap)."
            ),
        )
    )


def judge_sections(result: Any) -> list[dict]:
    """Every issue-17 section, in report order."""
    return [
        render_section(
            "judge-agreement", "Judge against humans: chance-corrected agreement", result, result.judge_agreement
        ),
        render_section(
            "judge-configurations",
            "Judge configurations: which is closest to the humans",
            result,
            result.judge_configurations,
        ),
        render_section(
            "judge-position",
            "Judge position bias: does the judge favour the output shown first",
            result,
            result.judge_position,
        ),
        render_section(
            "leaderboard", "Leaderboards: the humans' and the judge's Bradley-Terry ranking", result, result.leaderboard
        ),
        budget_section(result),
        agreement_section(result),
    ]
