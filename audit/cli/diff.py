"""`audit diff OLD/result.json NEW/result.json [--gate]`: what changed, cell by cell."""

from __future__ import annotations

import click

from judge_transfer_audit.cli.exit_status import ExitStatus


@click.command("diff")
@click.argument("old_json", type=click.Path(dir_okay=False))
@click.argument("new_json", type=click.Path(dir_okay=False))
@click.option(
    "--gate", is_flag=True, help="Exit 1 when a cell decision got worse (what counts: the policy's [diff] section)."
)
@click.option(
    "--policy",
    "policy_path",
    type=click.Path(dir_okay=False),
    help="Policy TOML; its [diff] section says what counts as worse (docs/policy.md).",
)
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="Also write the diff as HTML here.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Also write the diff as JSON here.")
@click.option("--all", "all_cells", is_flag=True, help="List every cell, not only those that changed.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing; only the exit status speaks.")
def command(old_json, new_json, gate, policy_path, html_path, json_path, all_cells, quiet):
    """Compare two saved results cell by cell: decisions (order PASS, INCONCLUSIVE,
    INSUFFICIENT, ERROR, FAIL), judge rates, human estimates and judge agreement, with an
    interval for each change where both sides have one.

    Exit 0: no decision worse (or no --gate); 1: --gate and a decision worse; 2: the results
    are incomparable (different schema versions, no cell in common), unreadable, or one's
    recorded verdict does not follow from its own data (verified as `audit gate` does).
    """
    import json

    from judge_transfer_audit.core.errors import InputError
    from judge_transfer_audit.core.output_files import write_file
    from judge_transfer_audit.core.redact import redact_text
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.model.policy import load_policy
    from judge_transfer_audit.results.derive import verify_result
    from judge_transfer_audit.results.diff import diff_results, diff_text, read_pair

    policy = load_policy(policy_path).diff
    old, new = read_pair(old_json, new_json)
    # As `audit gate`: a result whose recorded verdict does not follow from its own data is not compared.
    problems = []
    for result, source in ((old, old_json), (new, new_json)):
        try:
            verify_result(result, source=source)
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    d = diff_results(old, new, policy=policy, old_source=old_json, new_source=new_json)
    inputs = [old_json, new_json, policy_path]
    # Everything shown comes from the two files: secrets redacted (judge_transfer_audit.core.redact) wherever it is
    # rendered.
    if html_path:
        from judge_transfer_audit.reports.diff_page import diff_html

        write_file(html_path, redact_text(diff_html(d)), inputs=inputs)
    if json_path:
        text = redact_text(json.dumps(d.to_dict(), indent=1, allow_nan=False))
        write_file(json_path, text + "\n", inputs=[*inputs, html_path])
    if not quiet:
        for line in diff_text(d, all_cells=all_cells).split("\n"):
            click.echo(printable(redact_text(line)))
    return ExitStatus.GATE_FAILED if gate and d.worse else ExitStatus.OK
