"""`audit labelstudio export|import`: run the blind human study in Label Studio."""

from __future__ import annotations

import click


@click.group("labelstudio")
def command():
    """Export pairs as Label Studio tasks; import a Label Studio JSON export as humans.csv."""


@command.command("export")
@click.argument("pairs", type=click.Path(dir_okay=False))
@click.argument("stories", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "tasks_path", type=click.Path(dir_okay=False), required=True, help="Tasks JSON to import into Label Studio.")
@click.option("--config-out", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Labelling config XML (default: <out stem>_config.xml).")
@click.option("--rubric", "rubric_path", type=click.Path(dir_okay=False), default=None,
              help="Rubric TOML whose criteria and definitions the annotators see (default: the packaged PDS rubric).")
@click.option("--allow-tie", is_flag=True, help="Offer a 'No difference' choice (default: forced choice).")
def export_command(pairs, stories, tasks_path, config_path, rubric_path, allow_tie):
    """PAIRS and STORIES (from `audit generate`) -> Label Studio tasks + labelling config."""
    from pathlib import Path

    from generation.labelstudio import export_tasks
    from generation.score import load_rubric
    from generation.tables import prepare_output, read_table

    rubric = load_rubric(rubric_path)
    config_path = config_path or str(Path(tasks_path).with_name(Path(tasks_path).stem + "_config.xml"))
    prepare_output(tasks_path, "tasks file")
    prepare_output(config_path, "labelling config")
    result = export_tasks(
        read_table(pairs, "pairs"), read_table(stories, "stories"), tasks_path, config_path,
        criteria=[c.name for c in rubric.criteria], definitions={c.name: c.rubric for c in rubric.criteria},
        allow_tie=allow_tie,
    )
    click.echo(str(result))


@command.command("import")
@click.argument("export", type=click.Path(dir_okay=False))
@click.option("--pairs", "pairs_path", type=click.Path(dir_okay=False), required=True, help="pairs.csv the tasks came from (maps sides to systems).")
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False), required=True, help="humans.csv to write.")
@click.option("--anonymise-readers", is_flag=True, help="Replace annotator ids/emails by reader-01, reader-02, ...")
def import_command(export, pairs_path, out_path, anonymise_readers):
    """Label Studio JSON EXPORT -> humans.csv (pair_id, reader_id, criterion, choice, seconds, comment, shown_first)."""
    from generation.labelstudio import import_export
    from generation.tables import prepare_output, read_table

    prepare_output(out_path, "humans.csv")
    result = import_export(export, read_table(pairs_path, "pairs"), out_path, anonymise_readers=anonymise_readers)
    click.echo(str(result))
    click.echo(f"wrote {out_path}")
