"""`audit gate result.json`: the CI gate on a saved result."""

from __future__ import annotations

import click

from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.cli.usage import Choice


@click.command("gate")
@click.argument("result_json", type=click.Path(dir_okay=False))
@click.option("--fail-on-warn", is_flag=True, help="Treat WARN as failing too.")
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    type=Choice(["inconclusive", "insufficient"]),
    help="Also fail on INCONCLUSIVE (or INSUFFICIENT) cells; repeatable.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Silent when the gate passes; one line per failing check when it fails (no summary line).",
)
def command(result_json, fail_on_warn, fail_on, quiet):
    """Exit 1 if any check in RESULT_JSON is FAIL or ERROR (or WARN with --fail-on-warn,
    INCONCLUSIVE / INSUFFICIENT cells with --fail-on), else 0.

    The gate trusts nothing it can re-derive: the checks and the status are recomputed from
    the result's own cells, tables, sections and recorded policy, and a file whose recorded
    verdict does not follow from them is refused (exit status 2, with the reason).
    """
    from judge_transfer_audit.model.checks import Status
    from judge_transfer_audit.results.derive import verify_result
    from judge_transfer_audit.results.result import read_result

    result = read_result(result_json)
    checks = verify_result(result, source=result_json)
    failing_statuses = (
        {Status.FAIL, Status.ERROR} | ({Status.WARN} if fail_on_warn else set()) | {Status(s.upper()) for s in fail_on}
    )
    failing = [c for c in checks if c.status in failing_statuses]
    for line in failing_lines(failing):
        click.echo(line)
    if not quiet:
        click.echo(f"gate: {'FAILED' if failing else 'passed'} ({len(failing)} failing of {len(checks)} checks)")
    return ExitStatus.GATE_FAILED if failing else ExitStatus.OK


def failing_lines(failing) -> list[str]:
    """One printable line per failing check: ``[FAIL] name (scope) value=... threshold=...: reason``."""
    from judge_transfer_audit.core.terminal_text import printable

    return [printable(" ".join(str(check).split())) for check in failing]
