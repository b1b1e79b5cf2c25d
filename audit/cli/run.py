"""`audit run JUDGE HUMANS`: the audit, from CSVs to a report and an exit status."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import click

from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.cli.import_ import import_options, options_from
from judge_transfer_audit.cli.options import (
    Progress,
    jobs_option,
    parse_scale,
    perplexity_options,
    scheduler_option,
    seed_option,
)
from judge_transfer_audit.cli.usage import Choice
from judge_transfer_audit.model.tie_rules import TIE_RULES


@click.command("run")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="JUDGE HUMANS")
@click.option(
    "--from",
    "from_format",
    help="Read the files of another tool (alpacaeval, mtbench, arena-hard, promptfoo, inspect, labelstudio, "
    "argilla) instead of JUDGE HUMANS: they are imported into OUT/imported/ first (as `audit import`).",
)
@import_options
@click.option(
    "--pairs", type=click.Path(dir_okay=False), help="pairs.csv: system_a, system_b, focal, matchup, group_id per pair."
)
@click.option(
    "--stories",
    type=click.Path(dir_okay=False),
    help="stories.csv: the texts (pair_id, system, text); enables surface features.",
)
@click.option(
    "--dev-judge", type=click.Path(dir_okay=False), help="Development-set judge scores (scalar); needs --dev-humans."
)
@click.option(
    "--dev-humans", type=click.Path(dir_okay=False), help="Development-set human ratings (scalar); needs --dev-judge."
)
@click.option(
    "--focal",
    help="Focal system(s) whose win rate is reported, comma-separated: in each pair the first listed name present "
    "(default: the pairs file's focal column, else the system in more pairs, then name order; one focal per matchup).",
)
@click.option(
    "--judge",
    "judge_name",
    help="Judge configuration that is 'the judge' (default: 'ensemble' if present, else the first; "
    "'auto': the one closest to the humans, selected on the same data).",
)
@click.option(
    "--policy",
    type=click.Path(dir_okay=False),
    help="Policy TOML with check thresholds (default: built-in, see docs/policy.md).",
)
@click.option(
    "--tie-rule",
    type=Choice(TIE_RULES.names()),
    default="even-split",
    show_default=True,
    help="How an exact judge tie is credited.",
)
@seed_option("Seed of every random procedure (bootstraps, random tie rule).", default=0)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="audit-out",
    show_default=True,
    help="Output directory: result.json, report.html, junit.xml, CSV tables.",
)
@click.option("--gate", is_flag=True, help="Exit with status 1 when any check is FAIL or ERROR (for CI).")
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    type=Choice(["inconclusive", "insufficient"]),
    help="With --gate: also fail on INCONCLUSIVE (or INSUFFICIENT) cells; repeatable.",
)
@click.option(
    "--n-boot",
    type=click.IntRange(min=100, max=100_000),
    help="Bootstrap replicates, 100 to 100,000 (default from the policy: 2000).",
)
@click.option("--no-uncertainty", is_flag=True, help="Skip bootstraps and leave-one-reader-out.")
@click.option("--no-readers", is_flag=True, help="Skip the reader-heterogeneity analysis.")
@click.option("--no-surface", is_flag=True, help="Skip surface features even when --stories is given.")
@perplexity_options
@click.option("--features-cache", type=click.Path(file_okay=False), help="Directory of the surface-feature cache.")
@click.option(
    "--drop-invalid",
    is_flag=True,
    help="Leave out invalid rows (bad values, unknown ids, duplicates) and unparsable judge outputs, "
    "counted in the report, instead of stopping; file-level problems still stop the run.",
)
@click.option(
    "--scale",
    callback=parse_scale,
    help="Declared judge score scale LO,HI (e.g. 1,5); scores outside are input errors.",
)
@click.option(
    "--glmm-backend",
    type=Choice(["native", "lme4"]),
    default="native",
    show_default=True,
    help="GLMM engine: our own (no R) or lme4 through pymer4 (needs R).",
)
@click.option(
    "--linkage",
    type=Choice(["average", "complete", "single", "weighted", "ward", "centroid", "median"]),
    default="average",
    show_default=True,
    help="Linkage of the reader and criteria clustering.",
)
@jobs_option
@scheduler_option
@click.option("--no-html", is_flag=True, help="Do not write report.html.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary; only errors (for CI logs).")
@click.option(
    "--progress/--no-progress",
    "progress_bars",
    default=None,
    help="Progress bars (counts, ETA) on stderr. Default: only when stderr is a terminal and not -q; "
    "--progress draws them into a log or pipe too, --no-progress never. Never in the result files.",
)
def command(
    files,
    from_format,
    human_files,
    import_pairs,
    baseline,
    as_judge,
    criterion,
    pairs,
    stories,
    dev_judge,
    dev_humans,
    focal,
    judge_name,
    policy,
    tie_rule,
    seed,
    out_dir,
    gate,
    fail_on,
    n_boot,
    no_uncertainty,
    no_readers,
    no_surface,
    perplexity,
    features_cache,
    drop_invalid,
    scale,
    glmm_backend,
    linkage,
    jobs,
    scheduler,
    no_html,
    quiet,
    progress_bars,
):
    """Audit JUDGE (judge.csv) against HUMANS (humans.csv) and write the report.

    \b
    Required columns (CSV, TSV, JSONL or Parquet; names are case-insensitive):
      JUDGE   scores:   pair_id, system, criterion, score   (optional: judge, sample)
              or verdicts: pair_id, criterion, choice       (a system, A/B, tie, invalid)
      HUMANS  votes:    pair_id, reader_id, criterion, choice   (a system, A/B, tie)
              or ratings: item_id, reader_id, criterion, rating, group_id
                          (the judge's scores then keyed by item_id)
    Wide layouts (one column per criterion) work too. Every column, layout and
    check: docs/data-contract.md.

    \b
    Example:
      audit run fixtures/deployment/judge.csv fixtures/deployment/humans.csv \\
          --pairs fixtures/deployment/pairs.csv --stories fixtures/deployment/stories.csv \\
          --out audit-out --gate
    """
    from judge_transfer_audit import api
    from judge_transfer_audit.core.errors import InputError, InputProblem
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.core.timings import RunTimings
    from judge_transfer_audit.reports.outputs import check_output_dir, write_outputs_detail

    if (dev_judge is None) != (dev_humans is None):
        raise InputError(
            InputProblem(
                "options", "--dev-judge and --dev-humans go together", "give both development files, or neither"
            )
        )
    if from_format is None and len(files) != 2:
        raise click.UsageError(
            f"expected two files, JUDGE and HUMANS (got {len(files)}); to read another tool's files use --from FORMAT"
        )
    inputs = [*files, *human_files, import_pairs, pairs, stories, dev_judge, dev_humans, policy]
    check_output_dir(out_dir, inputs)  # before the work: an --out that would touch an input is refused now
    if from_format is not None:
        judge, humans, pairs, stories = _imported_inputs(
            from_format,
            files,
            out_dir,
            inputs,
            options_from(human_files, import_pairs, baseline, as_judge, criterion),
            pairs,
            stories,
            quiet,
        )
        inputs = [judge, humans, pairs, stories, dev_judge, dev_humans, policy, *inputs]
    else:
        judge, humans = files
    timings = RunTimings()
    progress = Progress(enabled=not quiet, timings=timings, force_bars=progress_bars)
    started = time.perf_counter()
    if scheduler:
        from judge_transfer_audit.engine.parallel import connect

        connect(scheduler).close()  # fail fast (exit 2, with the address) before loading anything
    result = api.run(
        judge,
        humans,
        pairs=pairs,
        stories=stories,
        dev_judge=dev_judge,
        dev_humans=dev_humans,
        policy=policy,
        focal=focal.split(",") if focal else None,
        drop_invalid=drop_invalid,
        scale=scale,
        progress=progress,
        tie_rule=tie_rule,
        judge=judge_name,
        seed=seed,
        glmm_backend=glmm_backend,
        linkage=linkage,
        uncertainty=not no_uncertainty,
        readers=not no_readers,
        surface=not no_surface,
        n_boot=n_boot,
        perplexity=perplexity,
        features_cache=features_cache,
        command=_command_line(),
        timings=timings,
        jobs=jobs,
        scheduler=scheduler,
        progress_bar=progress.bar,
    )
    record = timings.to_dict()  # the writing itself cannot be timed in the file it writes
    progress("writing outputs")
    fail_on = tuple(s.upper() for s in fail_on)
    from judge_transfer_audit.engine.parallel import check_jobs

    written = write_outputs_detail(
        result,
        out_dir,
        html=not no_html,
        inputs=inputs,
        timings=record,
        fail_on=fail_on if gate else (),
        jobs=check_jobs(jobs),  # the run's cores are free now: result.json beside the other files
        progress_bar=progress.bar,
    )
    progress.done()
    paths = written.paths
    if not quiet:
        from judge_transfer_audit.reports.terminal import render_summary

        for name in written.kept:
            click.echo(
                printable(
                    f"note: kept {Path(out_dir) / name} from an earlier run: it changed since "
                    "judge-audit wrote it, so it was not removed (it does not belong to this result)"
                ),
                err=True,
            )
        click.echo(render_summary(result, report_path=str(paths.get("report.html", paths["result.json"]))))
        click.echo(f"({time.perf_counter() - started:.1f} s)", err=True)
    incomplete = could_not_compute(result)
    if incomplete:
        # Outputs are written, but evidence the user asked for is missing: not a success,
        # and not a gate verdict either (exit status 6, README).
        for check in incomplete:
            click.echo(printable(f"error: {check.name} ({check.scope}): {check.reason}"), err=True)
        return ExitStatus.COMPUTATION_ERROR
    if gate and result.failing(fail_on):
        from judge_transfer_audit.cli.gate import failing_lines

        failing = result.failing(fail_on)
        for line in failing_lines(failing):  # -q too: a CI log names the checks that failed the gate
            click.echo(line)
        if not quiet:
            click.echo(f"gate: FAILED ({len(failing)} failing of {len(result.checks)} checks)")
        return ExitStatus.GATE_FAILED
    return ExitStatus.OK


def _imported_inputs(fmt, sources, out_dir, inputs, options, pairs, stories, quiet):
    """Import ``sources`` into OUT/imported/ (as `audit import`) and return the contract files to audit."""
    from judge_transfer_audit.core.errors import InputError, InputProblem
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.importers import import_files, write_imported

    imported = import_files(fmt, list(sources), options)
    missing = [name for name in ("judge.csv", "humans.csv") if name not in imported.tables]
    if missing:
        what = "judge outputs" if missing[0] == "judge.csv" else "human labels"
        raise InputError(
            InputProblem(
                ", ".join(sources),
                f"the {fmt} files hold no {what}",
                f"give the {fmt} file(s) with the {what} too, or import them with `audit import` and add the missing "
                "file by hand",
            )
        )
    folder = Path(out_dir) / "imported"
    written = write_imported(imported, folder, inputs).paths
    if not quiet:
        for line in imported.lines():
            click.echo(printable(f"import: {line}"), err=True)
    return (
        str(written["judge.csv"]),
        str(written["humans.csv"]),
        pairs or (str(written["pairs.csv"]) if "pairs.csv" in written else None),
        stories or (str(written["stories.csv"]) if "stories.csv" in written else None),
    )


def could_not_compute(result) -> list:
    """ERROR checks saying that a requested part of the audit (a section, a detector) failed."""
    from judge_transfer_audit.model.checks import Status

    return [
        c
        for c in result.checks
        if c.status is Status.ERROR and (c.name.endswith(".computed") or c.name == "surface.detector")
    ]


def _command_line() -> str:
    """The command as typed, with every secret redacted (it is written to result.json and the report)."""
    from judge_transfer_audit.core.redact import redact_argv

    obj = click.get_current_context().find_root().obj or {}
    return shlex.join(redact_argv(list(obj.get("argv", ["audit", "run"]))))
