"""`audit consistency SCORES`: self-consistency, judge agreement, mode invariance, redundancy, discrimination."""

from __future__ import annotations

import click

from judge_transfer_audit.cli.options import tables_out_option
from judge_transfer_audit.cli.usage import Choice


@click.command("consistency")
@click.argument("scores", type=click.Path(dir_okay=False))
@tables_out_option("consistency.json")
@click.option(
    "--convergence-threshold",
    default=0.3,
    show_default=True,
    type=float,
    help="A judge x item x criterion converged when |last round - previous round| is below this.",
)
@click.option(
    "--agreement-threshold",
    default=0.3,
    show_default=True,
    type=float,
    help="Two judges agree on an item when their scores differ by less than this.",
)
@click.option(
    "--redundancy-threshold",
    default=0.7,
    show_default=True,
    type=float,
    help="Two criteria are flagged redundant when |Pearson r| reaches this.",
)
@click.option(
    "--final",
    type=Choice(["last", "mean"]),
    default="last",
    show_default=True,
    help="Score the other analyses use per judge x item x criterion x mode: the last round "
    "(iterative evaluator) or the mean over rounds (repeated, unordered samples).",
)
@click.option("-q", "--quiet", is_flag=True, help="Do not print the tables.")
def command(scores, out, convergence_threshold, agreement_threshold, redundancy_threshold, final, quiet):
    """Reliability claims of a (multi-round) evaluator, measured on SCORES (CSV/TSV/JSONL/Parquet).

    One row per score: item_id, criterion (or dimension), score; optional judge (or model),
    round (or sample), mode, category. Runs what the columns allow: convergence rate and
    spread across rounds; agreement between judges (MAD, Pearson, Spearman, ICC, mean
    offset); paired t-test between modes with the largest difference; the cross-criterion
    correlation matrix against a threshold; ANOVA / Welch ANOVA between categories with
    Bonferroni-corrected pairwise Welch t-tests and Cohen's d. Analyses other than
    self-consistency use each evaluator's last round, or the mean over rounds with
    --final mean (repeated samples). See docs/reliability.md.
    """
    from judge_transfer_audit.cli.reliability import write_outputs
    from judge_transfer_audit.core.errors import InputError, InputProblem
    from judge_transfer_audit.inputs.formats import read_frame
    from judge_transfer_audit.statistics.consistency import ConsistencySettings, consistency_report, validate_scores

    for name, value in (
        ("--convergence-threshold", convergence_threshold),
        ("--agreement-threshold", agreement_threshold),
        ("--redundancy-threshold", redundancy_threshold),
    ):
        if not value > 0:
            raise InputError(
                InputProblem(
                    file="arguments", message=f"{name} must be positive", value=str(value), fix="give a positive number"
                )
            )
    settings = ConsistencySettings(
        convergence_threshold=convergence_threshold,
        agreement_threshold=agreement_threshold,
        redundancy_threshold=redundancy_threshold,
        final=final,
    )
    report = consistency_report(validate_scores(read_frame(scores, "scores"), file=scores), settings)
    if not quiet:
        click.echo(str(report))
    if out:
        for path in write_outputs(report, report.tables(), out, "consistency", inputs=[scores]):
            if not quiet:
                click.echo(f"wrote {path}")
    return 0
