"""Leaderboards in the report and the terminal summary: the humans' and the judge's Bradley-Terry ranking."""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.core.terminal_text import printable
from judge_transfer_audit.presentation.renderers import payload_of, render_section
from judge_transfer_audit.presentation.tables import table
from judge_transfer_audit.statistics.leaderboard.fit import Leaderboard

ID, TITLE = "leaderboard", "Leaderboards: the humans' and the judge's Bradley-Terry ranking"


def render(result: Any, board: Leaderboard, ctx: dict) -> None:
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


def report(result: Any) -> list[dict]:
    """The section's context in the report."""
    return [render_section(ID, TITLE, result, result.leaderboard, render)]


def terminal_lines(result: Any) -> list[str]:
    """Kendall's tau of the judge's ranking against the humans' and the systems it misplaces."""
    lines = []
    board = payload_of(result, "leaderboard")
    if board is not None:
        if not board.connected:
            groups = " | ".join(", ".join(printable(s) for s in c) for c in board.components)
            lines.append(f"Leaderboard: cannot rank across {groups} (no comparison links them)")
        else:
            misplaced = ", ".join(printable(s) for s in board.misplaced) or "none"
            lines.append(
                f"Leaderboard ({len(board.systems)} systems): Kendall tau judge vs humans "
                f"{board.kendall_tau}; misplaced by the judge: {misplaced}"
            )
    return lines
