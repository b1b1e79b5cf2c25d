"""`audit report result.json`: re-render a saved result without recomputing."""

from __future__ import annotations

from pathlib import Path

import click

from judge_transfer_audit.cli.exit_status import ExitStatus


@click.command("report")
@click.argument("result_json", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Where to write the HTML (default: report.html beside RESULT_JSON).",
)
@click.option("--junit", type=click.Path(dir_okay=False), help="Also write the JUnit XML here.")
def command(result_json, output, junit):
    """Render report.html (and optionally junit.xml) from a saved RESULT_JSON.

    As `audit gate` does, the result is verified first: its checks, cell statuses and
    status are re-derived from its own cells, tables, sections and recorded policy, and a
    file whose verdict does not follow from them (edited by hand, truncated) is refused
    with exit status 2 and the reason: a report never shows a verdict its data do not give.
    """
    from judge_transfer_audit.core.output_files import check_output_file
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.reports.html import write_html
    from judge_transfer_audit.reports.junit import write_junit
    from judge_transfer_audit.results.derive import verify_result
    from judge_transfer_audit.results.result import read_result

    path = Path(result_json)
    result = read_result(result_json)
    verify_result(result, source=result_json)  # InputError (exit 2) when inconsistent
    target = Path(output) if output else path.with_name("report.html")
    if junit:
        check_output_file(junit, [result_json, target])
    write_html(result, target, inputs=[result_json, junit])
    if junit:
        write_junit(result.checks, junit, inputs=[result_json, target])
    click.echo(printable(f"report written to {target}"))
    return ExitStatus.OK
