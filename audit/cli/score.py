"""`audit score STORIES --rubric FILE -o judge.csv`: run the rubric judge."""

from __future__ import annotations

import click


@click.command("score")
@click.argument("stories", type=click.Path(dir_okay=False))
@click.option(
    "--rubric",
    "rubric_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Rubric TOML (criteria, personas, scale, [judge.provider]); laid over the packaged default.",
)
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False), required=True, help="judge.csv to write.")
@click.option(
    "--raw",
    "raw_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Raw-answer journal (JSONL); default: <out>_raw.jsonl. Rerunning with it resumes.",
)
@click.option("--samples", type=click.IntRange(min=1), default=None, help="Samples per persona (overrides the rubric).")
@click.option("--judge-id", default=None, help="Value of the judge column (overrides the rubric).")
@click.option("--fresh", is_flag=True, help="Discard the raw-answer journal and start over.")
def command(stories, rubric_path, out_path, raw_path, samples, judge_id, fresh):
    """Score every story in STORIES (pair_id, system, text) -> judge.csv (one score per criterion).

    Unparsable answers give empty scores: counted and reported, never imputed.
    """
    from judge_transfer_audit.generation.score import load_rubric, load_stories, score_stories
    from judge_transfer_audit.generation.tables import prepare_output

    inputs = [stories, rubric_path]
    prepare_output(out_path, "judge.csv", inputs=[*inputs, raw_path])
    if raw_path:
        prepare_output(raw_path, "raw-answer journal", inputs=[*inputs, out_path])
    config = load_rubric(rubric_path, overrides={"samples": samples, "judge_id": judge_id})
    result = score_stories(load_stories(stories), config, out_path, raw_path=raw_path, fresh=fresh, inputs=inputs)
    click.echo(str(result))
    click.echo(f"wrote {out_path}")
