"""`audit reliability RATINGS`: ICC, Cronbach's alpha, Kendall's W and Krippendorff's alpha."""

from __future__ import annotations

import json
from pathlib import Path

import click

from judge_transfer_audit.cli.options import seed_option, tables_out_option


def write_outputs(result, tables: dict, out: str, stem: str, *, inputs=()) -> list[Path]:
    """Write ``result`` as JSON and its tables as CSV (atomically, never onto ``inputs``).

    ``out`` ending in ``.json`` writes only that JSON file; otherwise ``out`` is a directory
    (created) receiving ``<stem>.json`` and ``<stem>_<table>.csv`` per table, under the
    output-folder rules of :mod:`judge_transfer_audit.core.output_files` (manifest, no foreign file replaced).
    """
    from judge_transfer_audit.core.output_files import csv_text, write_file, write_folder
    from judge_transfer_audit.core.serialize import to_jsonable

    payload = json.dumps({"kind": stem, "result": to_jsonable(result)}, indent=2, allow_nan=False)
    path = Path(out)
    try:
        if path.suffix.lower() == ".json":
            return [write_file(path, payload, inputs=inputs)]
        files = {f"{stem}.json": payload, **{f"{stem}_{name}.csv": csv_text(frame) for name, frame in tables.items()}}
        return list(write_folder(path, files, command=stem, inputs=inputs).paths.values())
    except OSError as exc:  # an unwritable --out is the user's to fix, not an internal error
        from judge_transfer_audit.core.errors import InputError, InputProblem

        raise InputError(
            InputProblem(
                file=str(out),
                message=f"cannot write the results: {exc.strerror or exc}",
                fix="give --out a writable directory or .json path",
            )
        ) from None


@click.command("reliability")
@click.argument("ratings", type=click.Path(dir_okay=False))
@tables_out_option("reliability.json")
@click.option(
    "--confidence",
    default=0.95,
    show_default=True,
    type=float,
    help="Confidence level of the ICC and Cronbach intervals.",
)
@click.option(
    "--n-boot",
    default=2000,
    show_default=True,
    type=int,
    help="Bootstrap replicates of the ICC2k difference between reader groups.",
)
@seed_option("Seed of that bootstrap (recorded in the output).")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the tables.")
def command(ratings, out, confidence, n_boot, seed, quiet):
    """Reliability of scalar ratings in RATINGS (CSV/TSV/JSONL/Parquet).

    Columns: item_id, reader_id, criterion (or question), rating (empty = missing), optional
    reader_group (e.g. expert / enthusiast). Per question and reader group: the six
    Shrout-Fleiss ICCs with F-tests and intervals, Kendall's W (tie-corrected, chi-square
    test), Krippendorff's alpha (nominal, ordinal, interval); Cronbach's alpha (Feldt
    interval) per item and for the question set; reader groups compared (means, paired
    t-test, ICC2k difference with an item-bootstrap interval). See
    docs/reliability.md for how missing ratings are handled.
    """
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.statistics.reliability.ratings import load_ratings
    from judge_transfer_audit.statistics.reliability.report import reliability_report

    report = reliability_report(load_ratings(ratings), confidence=confidence, n_boot=n_boot, rng=seed)
    if not quiet:
        click.echo(printable(str(report), keep_newlines=True))
    if out:
        for path in write_outputs(report, report.tables(), out, "reliability", inputs=[ratings]):
            if not quiet:
                click.echo(printable(f"wrote {path}"))
    return 0
