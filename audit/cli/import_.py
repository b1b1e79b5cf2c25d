"""`audit import FORMAT SRC... --out DIR`: another tool's files -> the data contract's CSVs."""

from __future__ import annotations

import click


def import_options(f):
    """The options the readers take (shared with `audit run --from`)."""
    for decorator in reversed(
        (
            click.option(
                "--humans",
                "human_files",
                multiple=True,
                type=click.Path(dir_okay=False),
                help="A file of human labels, for formats whose judge and human files look alike "
                "(alpacaeval cross-annotations); repeatable.",
            ),
            click.option(
                "--import-pairs",
                "import_pairs",
                type=click.Path(dir_okay=False),
                help="labelstudio: our pairs.csv, which says which system each side is.",
            ),
            click.option("--baseline", help="arena-hard: the baseline model, when records do not name it."),
            click.option(
                "--as-judge",
                multiple=True,
                help="mtbench / arena-hard votes: a 'judge' value that is an automatic judge (e.g. gpt4_pair): its "
                "votes go to judge.csv; repeatable.",
            ),
            click.option(
                "--criterion",
                default="overall",
                show_default=True,
                help="Criterion name for formats with one overall judgment.",
            ),
        )
    ):
        f = decorator(f)
    return f


def options_from(human_files, import_pairs, baseline, as_judge, criterion):
    from pathlib import Path

    from judge_transfer_audit.importers import ImportOptions

    return ImportOptions(
        humans=tuple(Path(h) for h in human_files),
        pairs=Path(import_pairs) if import_pairs else None,
        baseline=baseline,
        as_judge=tuple(as_judge),
        criterion=criterion.strip().lower() or "overall",
    )


@click.command("import")
@click.argument("fmt", metavar="FORMAT")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="SRC...")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    required=True,
    help="Folder for judge.csv, humans.csv, pairs.csv, stories.csv and import-report.json.",
)
@import_options
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def command(fmt, sources, out_dir, human_files, import_pairs, baseline, as_judge, criterion, quiet):
    """Read SRC files written by another tool (FORMAT) into the data contract's CSVs in --out.

    \b
    Formats: alpacaeval, mtbench, arena-hard, promptfoo, inspect, labelstudio, argilla
    (the mapping of each: docs/data-contract.md, "Importing from other tools").
    Every record read is counted as used or excluded (with the reason), printed and written
    to import-report.json; on any problem nothing is written (exit status 2).

    \b
    Example:
      audit import mtbench gpt-4_pair.jsonl human_judgments.jsonl --out study/
      audit run study/judge.csv study/humans.csv --pairs study/pairs.csv
    """
    from judge_transfer_audit.core.output_files import check_output_folder
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.importers import MAY_WRITE, import_files, write_imported

    inputs = [*sources, *human_files, import_pairs]
    check_output_folder(out_dir, MAY_WRITE, inputs)  # before reading: an --out onto an input is refused now
    imported = import_files(fmt, list(sources), options_from(human_files, import_pairs, baseline, as_judge, criterion))
    written = write_imported(imported, out_dir, inputs)
    if not quiet:
        for line in imported.lines():
            click.echo(printable(line))
        click.echo(printable(f"into {out_dir}/ ({', '.join(sorted(written.paths))})"))
