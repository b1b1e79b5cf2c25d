"""Judge against humans in the report and the terminal summary: chance-corrected agreement."""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.core.terminal_text import printable
from judge_transfer_audit.presentation.renderers import payload_of, render_section
from judge_transfer_audit.presentation.tables import table
from judge_transfer_audit.statistics.judge.agreement import JudgeAgreement

ID, TITLE = "judge-agreement", "Judge against humans: chance-corrected agreement"


def render(result: Any, payload: JudgeAgreement, ctx: dict) -> None:
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


def report(result: Any) -> list[dict]:
    """The section's context in the report."""
    return [render_section(ID, TITLE, result, result.judge_agreement, render)]


def terminal_lines(result: Any) -> list[str]:
    """One line when computed: kappa against the reader majority and the alpha difference, pooled."""
    lines = []
    agreement = payload_of(result, "judge_agreement")
    if agreement is not None and agreement.rows:
        row = agreement.rows[-1]
        lines.append(
            f"Judge agreement ({printable(row.scope)}): kappa vs reader majority {row.kappa_majority}; "
            f"alpha judge-human minus human-human {row.alpha_difference}"
        )
    return lines
