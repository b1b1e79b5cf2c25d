"""`audit gate result.json`: the CI gate on a saved result."""

from __future__ import annotations

from pathlib import Path

import click

from audit.cli.exit_status import ExitStatus


@click.command("gate")
@click.argument("result_json", type=click.Path(dir_okay=False))
@click.option("--fail-on-warn", is_flag=True, help="Treat WARN as failing too.")
@click.option("--fail-on", "fail_on", multiple=True, type=click.Choice(["inconclusive", "insufficient"]),
              help="Also fail on INCONCLUSIVE (or INSUFFICIENT) cells; repeatable.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; only the exit status speaks.")
def command(result_json, fail_on_warn, fail_on, quiet):
    """Exit 1 if any check in RESULT_JSON is FAIL or ERROR (or WARN with --fail-on-warn,
    INCONCLUSIVE / INSUFFICIENT cells with --fail-on), else 0."""
    from audit.errors import InputError, InputProblem
    from audit.result import result_from_json

    path = Path(result_json)
    try:
        result = result_from_json(path.read_text(encoding="utf-8"), source=result_json)
    except FileNotFoundError:
        raise InputError(InputProblem(result_json, "file not found", "give the result.json written by `audit run`")) from None
    extra = tuple(s.upper() for s in fail_on) + (("WARN",) if fail_on_warn else ())
    failing = list(result.failing(extra))
    if not quiet:
        for check in failing:
            click.echo(str(check))
        click.echo(f"gate: {'FAILED' if failing else 'passed'} ({len(failing)} failing of {len(result.checks)} checks)")
    return ExitStatus.GATE_FAILED if failing else ExitStatus.OK
