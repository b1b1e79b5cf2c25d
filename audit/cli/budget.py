"""`audit budget result.json`: the pairs and readers that would decide each cell."""

from __future__ import annotations

import click

from judge_transfer_audit.cli.exit_status import ExitStatus


@click.command("budget")
@click.argument("result_json", type=click.Path(dir_okay=False))
@click.option(
    "--power",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=None,
    help="Probability of reaching the decision the estimates point to [default: the stored budget's, 0.8].",
)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Also write one row per cell here.")
@click.option(
    "--designs-csv",
    "designs_path",
    type=click.Path(dir_okay=False),
    help="Also write the pairs-vs-readers trade-off here (one row per cell x readers per pair).",
)
@click.option("--all", "all_cells", is_flag=True, help="List decided and unassessed cells too.")
@click.option(
    "--width",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=None,
    help="Also: the human votes that reach a vote-share interval this wide, with the judge's help "
    "(prediction-powered, needs judge-only pairs) and without it (docs/prediction-powered.md).",
)
def command(result_json, power, csv_path, designs_path, all_cells, width):
    """Per cell of RESULT_JSON, the pairs and readers that would decide the transfer decision
    (PASS or FAIL at the policy margin) with the stated power, the pairs needed at other numbers
    of readers per pair, and the distance from the human band a FAIL would detect at the current
    sample (docs/leaderboard.md, "Label budget"). The budget `audit run` stored in the result is
    shown as is; another --power, or a result of schema 2.1, is computed from the result."""
    from judge_transfer_audit.core.output_files import csv_text, write_file
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.results.result import read_result
    from judge_transfer_audit.statistics.budget.compute import budget_source, budget_text, label_budget

    result = read_result(result_json)
    budget = label_budget(result, power=power)
    if csv_path:
        write_file(csv_path, csv_text(budget.to_frame()), inputs=[result_json])
    if designs_path:
        write_file(designs_path, csv_text(budget.designs_frame()), inputs=[result_json])
    for line in budget_text(budget, all_cells=all_cells).split("\n"):
        click.echo(printable(line))
    click.echo(printable(f"(figures {budget_source(result, power)})"))
    if width is not None:
        from judge_transfer_audit.statistics.prediction_powered.budget import width_budget, width_budget_text

        section = getattr(result, "prediction_powered", None)
        payload = getattr(section, "payload", None)
        rows = width_budget(payload, width) if payload is not None else ()
        for line in width_budget_text(rows, width).split("\n"):
            click.echo(printable(line))
    return ExitStatus.OK
