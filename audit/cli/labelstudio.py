"""`audit labelstudio export|import|push|pull`: run the blind human study in Label Studio.

``export``/``import`` work with files carried to and from Label Studio by hand;
``push``/``pull`` talk to a Label Studio server (``pip install 'judge-transfer-audit[labelstudio]'``).
"""

from __future__ import annotations

import click

from judge_transfer_audit.cli.options import seed_option
from judge_transfer_audit.cli.usage import Group


@click.group("labelstudio", cls=Group)
def command():
    """Run the blind study in Label Studio: files (export/import) or a server (push/pull)."""


#: the options export and push share: what the annotators see
_RUBRIC = click.option(
    "--rubric",
    "rubric_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Rubric TOML whose criteria and definitions the annotators see (default: the packaged PDS rubric).",
)
_ALLOW_TIE = click.option("--allow-tie", is_flag=True, help="Offer a 'No difference' choice (default: forced choice).")


@command.command("export")
@click.argument("pairs", type=click.Path(dir_okay=False))
@click.argument("stories", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--out",
    "tasks_path",
    type=click.Path(dir_okay=False),
    required=True,
    help="Tasks JSON to import into Label Studio.",
)
@click.option(
    "--config-out",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Labelling config XML (default: <out stem>_config.xml).",
)
@_RUBRIC
@_ALLOW_TIE
def export_command(pairs, stories, tasks_path, config_path, rubric_path, allow_tie):
    """PAIRS and STORIES (from `audit generate`) -> Label Studio tasks + labelling config."""
    from pathlib import Path

    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.generation.labelstudio import export_tasks
    from judge_transfer_audit.generation.score import load_rubric
    from judge_transfer_audit.generation.tables import prepare_output
    from judge_transfer_audit.inputs.formats import read_frame as read_table

    inputs = [pairs, stories, rubric_path]
    config_path = config_path or str(Path(tasks_path).with_name(Path(tasks_path).stem + "_config.xml"))
    prepare_output(tasks_path, "tasks file", inputs=[*inputs, config_path])
    prepare_output(config_path, "labelling config", inputs=[*inputs, tasks_path])
    rubric = load_rubric(rubric_path)
    result = export_tasks(
        read_table(pairs, "pairs"),
        read_table(stories, "stories"),
        tasks_path,
        config_path,
        criteria=[c.name for c in rubric.criteria],
        definitions={c.name: c.rubric for c in rubric.criteria},
        allow_tie=allow_tie,
        inputs=inputs,
    )
    click.echo(printable(str(result)))


@command.command("import")
@click.argument("export", type=click.Path(dir_okay=False))
@click.option(
    "--pairs",
    "pairs_path",
    type=click.Path(dir_okay=False),
    required=True,
    help="pairs.csv the tasks came from (maps sides to systems).",
)
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False), required=True, help="humans.csv to write.")
@click.option("--anonymise-readers", is_flag=True, help="Replace annotator ids/emails by reader-01, reader-02, ...")
def import_command(export, pairs_path, out_path, anonymise_readers):
    """Label Studio JSON EXPORT -> humans.csv (pair_id, reader_id, criterion, choice, seconds, comment, shown_first)."""
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.generation.labelstudio import import_export
    from judge_transfer_audit.generation.tables import prepare_output
    from judge_transfer_audit.inputs.formats import read_frame as read_table

    inputs = [export, pairs_path]
    prepare_output(out_path, "humans.csv", inputs=inputs)
    result = import_export(
        export, read_table(pairs_path, "pairs"), out_path, anonymise_readers=anonymise_readers, inputs=inputs
    )
    click.echo(printable(str(result)))
    click.echo(f"wrote {printable(out_path)}")


_URL = click.option(
    "--url",
    envvar="LABEL_STUDIO_URL",
    default=None,
    metavar="URL",
    help="Label Studio server, e.g. http://localhost:8080 (default: $LABEL_STUDIO_URL).",
)
_TOKEN = click.option(
    "--token-env",
    default="LABEL_STUDIO_API_KEY",
    show_default=True,
    metavar="NAME",
    help="NAME of the environment variable holding your Label Studio access token (never written anywhere).",
)


def _manifest_path(manifest, pairs_path):
    from pathlib import Path

    return manifest or str(Path(pairs_path).with_name("labelstudio.json"))


@command.command("push")
@click.argument("pairs", type=click.Path(dir_okay=False))
@click.argument("stories", type=click.Path(dir_okay=False))
@_URL
@_TOKEN
@click.option(
    "--reader",
    "readers",
    multiple=True,
    metavar="NAME",
    help="A reader (repeatable): one project per reader, with that reader's own seeded order and sides.",
)
@click.option(
    "--overlap", type=int, default=None, help="Annotations per task in one shared project (needed without --reader)."
)
@click.option(
    "--title",
    default=None,
    help="Project title (a reader's: 'TITLE · READER'); default: the manifest's, else 'judge-audit study'.",
)
@seed_option("Seeds the per-reader orders (default: the manifest's, else drawn and recorded).")
@click.option(
    "--manifest",
    default=None,
    type=click.Path(dir_okay=False),
    help="Where to record what was pushed (default: labelstudio.json beside PAIRS); read first to update.",
)
@_RUBRIC
@_ALLOW_TIE
def push_command(pairs, stories, url, token_env, readers, overlap, title, seed, manifest, rubric_path, allow_tie):
    """PAIRS and STORIES (from `audit generate`) -> project(s) on a Label Studio server.

    Creates the project(s) with the blind labelling config and the tasks, or, with an
    existing manifest, updates them and adds only the pairs not pushed yet.
    """
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.generation.labelstudio.server import Server, push_study
    from judge_transfer_audit.generation.score import load_rubric
    from judge_transfer_audit.generation.tables import prepare_output
    from judge_transfer_audit.inputs.formats import read_frame as read_table

    manifest = _manifest_path(manifest, pairs)
    inputs = [pairs, stories, rubric_path]
    prepare_output(manifest, "manifest", inputs=inputs)
    rubric = load_rubric(rubric_path)
    frame_pairs, frame_stories = read_table(pairs, "pairs"), read_table(stories, "stories")
    server = Server(_require_url(url), token_env)
    result = push_study(
        frame_pairs,
        frame_stories,
        server,
        manifest,
        title=title,
        readers=readers,
        seed=seed,
        criteria=[c.name for c in rubric.criteria],
        definitions={c.name: c.rubric for c in rubric.criteria},
        allow_tie=allow_tie,
        overlap=overlap,
        inputs=inputs,
    )
    click.echo(printable(str(result)))


@command.command("pull")
@click.option(
    "--pairs", "pairs_path", type=click.Path(dir_okay=False), required=True, help="The pairs.csv that was pushed."
)
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False), required=True, help="humans.csv to write.")
@click.option(
    "--manifest",
    default=None,
    type=click.Path(dir_okay=False),
    help="The manifest written by push (default: labelstudio.json beside --pairs).",
)
@_URL
@_TOKEN
@click.option("--anonymise-readers", is_flag=True, help="Replace annotator emails by reader-01, reader-02, ...")
def pull_command(pairs_path, out_path, manifest, url, token_env, anonymise_readers):
    """Annotations of every project in the manifest -> humans.csv (one row per annotator, pair
    and question, with seconds, comment and shown_first)."""
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.generation.labelstudio.server import Server, StudyManifest, pull_study
    from judge_transfer_audit.generation.tables import prepare_output
    from judge_transfer_audit.inputs.formats import read_frame as read_table

    manifest = _manifest_path(manifest, pairs_path)
    prepare_output(out_path, "humans.csv", inputs=[pairs_path, manifest])
    recorded = StudyManifest.read(manifest)
    pairs = read_table(pairs_path, "pairs")
    server = Server(url or recorded.url, token_env)
    result = pull_study(manifest, pairs, server, out_path, anonymise_readers=anonymise_readers, inputs=[pairs_path])
    click.echo(printable(str(result)))
    click.echo(f"wrote {printable(out_path)}")


def _require_url(url):
    from judge_transfer_audit.core.errors import InputError, InputProblem

    if not url:
        raise InputError(
            InputProblem(
                "--url", "no Label Studio server given", fix="give --url http://HOST:PORT or set LABEL_STUDIO_URL"
            )
        )
    return url
