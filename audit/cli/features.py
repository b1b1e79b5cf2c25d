"""``audit features stories.csv -o features.csv``: the surface-feature table on its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from judge_transfer_audit.cli.options import perplexity_options

if TYPE_CHECKING:  # `audit --help` and every other subcommand need no pandas
    import pandas as pd


def _read_stories(path: str) -> tuple[pd.DataFrame, list[str]]:
    """Read stories exactly as ``audit run --stories`` does (same parsing, same messages).

    Sharing the loader keeps the texts byte-identical between the two commands, so they
    share the feature cache. Keyed by ``pair_id``, or ``item_id`` renamed to ``pair_id``.
    Returns the frame and the loader's notes (e.g. non-numeric extra columns left out).
    """
    from judge_transfer_audit.inputs.formats import read_table
    from judge_transfer_audit.inputs.problems import ProblemLog
    from judge_transfer_audit.inputs.stories import read_stories

    log = ProblemLog()
    table = read_table(path, "stories", log)
    log.raise_if_any()
    key = "pair_id" if "pair_id" in table.columns or "item_id" not in table.columns else "item_id"
    notes: list[str] = []
    frame = read_stories(table, log, key, notes)
    log.raise_if_any()
    return frame.rename(columns={"item_id": "pair_id"}), notes


@click.command("features")
@click.argument("stories", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--out",
    "out",
    type=click.Path(dir_okay=False),
    required=True,
    help="Output CSV: pair_id, system and one column per feature.",
)
@click.option(
    "--detectors",
    "detector_names",
    help="Comma-separated detectors (default: length,sentences,lexical "
    "and perplexity when a model is given). Known: length, sentences, lexical, perplexity.",
)
@perplexity_options
@click.option(
    "--cache",
    "cache",
    type=click.Path(file_okay=False),
    help="Feature cache directory (re-runs compute nothing twice).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes for the model-free detectors (same values; pays from ~1,000 stories).",
)
@click.option("-q", "--quiet", is_flag=True, help="Do not print the detector summary.")
def command(stories, out, detector_names, perplexity, cache, jobs, quiet):
    """Compute surface features (length, sentence-length moments, MATTR, MTLD, perplexity) of STORIES.

    STORIES has columns pair_id (or item_id), system, text; extra numeric columns are
    copied as precomputed features. A detector that cannot run (no model configured,
    torch missing) is SKIPPED; one that fails while running (e.g. the perplexity server
    is down) is reported, the table is still written, and the exit status is 6. Example:

        audit features stories.csv -o features.csv --cache .features-cache
    """
    from judge_transfer_audit.cli.exit_status import ExitStatus
    from judge_transfer_audit.core.output_files import check_output_file, csv_text, write_file
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.detectors import compute_features
    from judge_transfer_audit.generation.tables import prepare_output
    from judge_transfer_audit.model.checks import Status

    prepare_output(out, "features table")
    check_output_file(out, [stories])  # before the work: -o must not be the stories file
    names = None
    if detector_names:
        names = [n.strip() for n in detector_names.split(",") if n.strip()]
    frame, notes = _read_stories(stories)
    table = compute_features(frame, detectors=names, perplexity=perplexity, cache=cache, n_jobs=jobs)
    write_file(out, csv_text(table.frame), inputs=[stories])  # shortest float repr: round-trips exactly
    if not quiet:
        click.echo(printable(str(table), keep_newlines=True), err=True)
        for note in notes:  # columns the loader left out are said, never dropped silently
            click.echo(printable(f"  note: {note}"), err=True)
        click.echo(printable(f"wrote {out}"), err=True)
    failed = [d.name for d in table.detectors if d.status is Status.ERROR]
    if failed:
        # The table is written (the other features are good), but a detector the user asked
        # for failed: a script must not mistake that for success.
        click.echo(
            printable(f"error: detector(s) {', '.join(failed)} failed (see above); {out} has no column for them"),
            err=True,
        )
        return ExitStatus.COMPUTATION_ERROR
    return ExitStatus.OK
