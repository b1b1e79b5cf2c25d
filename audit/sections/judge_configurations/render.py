"""Judge configurations in the report and the terminal summary: which is closest to the humans."""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.core.terminal_text import printable
from judge_transfer_audit.presentation.renderers import payload_of, render_section
from judge_transfer_audit.presentation.tables import table
from judge_transfer_audit.verdict.judge_configurations import JudgeConfigurations

ID, TITLE = "judge-configurations", "Judge configurations: which is closest to the humans"


def render(result: Any, configs: JudgeConfigurations, ctx: dict) -> None:
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


def report(result: Any) -> list[dict]:
    """The section's context in the report."""
    return [render_section(ID, TITLE, result, result.judge_configurations, render)]


def terminal_lines(result: Any) -> list[str]:
    """One line when more than one configuration was audited: the closest to the humans."""
    lines = []
    configs = payload_of(result, "judge_configurations")
    if configs is not None and len(configs.rows) > 1:
        how = " (--judge auto: selected on the same data)" if configs.auto else ""
        panel = (
            f"; effective number of judges {configs.effective.nyholt:.2f} of {len(configs.rows)}"
            if configs.effective is not None and configs.effective.nyholt == configs.effective.nyholt
            else ""
        )
        lines.append(
            f"Judge configurations: closest to the humans {printable(configs.selected)}, kappa "
            f"{configs.rows[0].kappa_majority}{how}{panel}"
        )
    return lines
