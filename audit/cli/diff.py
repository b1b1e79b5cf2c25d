"""`audit diff OLD/result.json NEW/result.json [--gate]`: what changed, cell by cell."""

from __future__ import annotations

import click

from audit.cli.exit_status import ExitStatus


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
    are incomparable (different schema versions, no cell in common) or unreadable.
    """
    import json

    from audit.diff import diff_results, diff_text, read_pair
    from audit.output_files import write_file
    from audit.policy import load_policy
    from audit.terminal_text import printable

    policy = load_policy(policy_path).diff
    old, new = read_pair(old_json, new_json)
    d = diff_results(old, new, policy=policy, old_source=old_json, new_source=new_json)
    inputs = [old_json, new_json, policy_path]
    if html_path:
        from reports.peer_diff import diff_html

        write_file(html_path, diff_html(d), inputs=inputs)
    if json_path:
        write_file(json_path, json.dumps(d.to_dict(), indent=1, allow_nan=False) + "\n", inputs=[*inputs, html_path])
    if not quiet:
        for line in diff_text(d, all_cells=all_cells).split("\n"):
            click.echo(printable(line))
    return ExitStatus.GATE_FAILED if gate and d.worse else ExitStatus.OK
