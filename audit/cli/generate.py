"""`audit generate PREMISES --protocol FILE --out DIR`: build the deployment set."""

from __future__ import annotations

import sys

import click

from judge_transfer_audit.cli.options import seed_option


@click.command("generate")
@click.argument("premises", type=click.Path(dir_okay=False))
@click.option(
    "--protocol",
    "protocol_path",
    type=click.Path(dir_okay=False),
    required=True,
    help="Protocol TOML (systems, matchups, prompts, word window); laid over the packaged default.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    required=True,
    help="Output directory; rerunning in the same directory resumes.",
)
@click.option(
    "--matchup",
    "matchups",
    multiple=True,
    metavar="FOCAL:OTHER",
    help="Matchup to generate (repeatable); default: the protocol's [[matchups]].",
)
@seed_option("Blinding seed (ids, sides, order); default: protocol seed, else recorded, else drawn.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Stories generated at once (overrides the protocol).",
)
@click.option("--fresh", is_flag=True, help="Discard the attempts journal in DIR and start over.")
@click.option(
    "-q", "--quiet", is_flag=True, help="No progress bar (there is none either when stderr is not a terminal)."
)
def command(premises, protocol_path, out_dir, matchups, seed, concurrency, fresh, quiet):
    """Generate prompt-matched story pairs: PREMISES x matchups -> DIR/stories.csv, DIR/pairs.csv.

    PREMISES is a CSV/TSV/JSONL file with premise_id, premise and optional kind. Every attempt
    is kept in DIR/attempts.jsonl; a killed run resumes without asking again for any finished story.
    """
    from judge_transfer_audit.core.terminal_text import printable
    from judge_transfer_audit.generation.generate import check_output_dir, generate_stories, load_premises
    from judge_transfer_audit.generation.protocol import load_protocol, parse_matchup

    inputs = [premises, protocol_path]
    check_output_dir(out_dir, inputs)
    protocol = load_protocol(protocol_path, overrides={"concurrency": concurrency})
    chosen = tuple(parse_matchup(m, protocol.systems) for m in matchups) or None
    frame = load_premises(premises)
    # A progress bar only for a person watching: never under -q, never into a log or a pipe.
    bar = _ProgressBar() if not quiet and sys.stderr.isatty() else None

    def progress(record):
        if bar is None:
            return
        if record.get("type") == "run":
            bar.start(int(record["n_todo"]), int(record["n_stories"]))
            return
        flag = "" if record["in_window"] else " (outside the window)"
        # system names and premise ids come from the user's files: no escape sequence may reach the terminal
        bar.advance(
            printable(
                f"{record['system']} on {record['premise_id']}: {record['words']} words "
                f"after {record['n_attempts']} attempt(s){flag}"
            )
        )

    try:
        result = generate_stories(
            frame, protocol, out_dir, matchups=chosen, rng=seed, fresh=fresh, progress=progress, inputs=inputs
        )
    finally:
        if bar is not None:
            bar.close()
    click.echo(str(result))
    out = printable(out_dir)
    click.echo(f"wrote {out}/stories.csv, {out}/pairs.csv, {out}/story_log.csv (journal: {out}/attempts.jsonl)")


class _ProgressBar:
    """A tqdm bar on stderr: stories finished in this run, and the last one's word count."""

    def __init__(self):
        self._bar = None

    def start(self, n_todo: int, n_stories: int) -> None:
        from tqdm import tqdm

        resumed = n_stories - n_todo
        self._bar = tqdm(
            total=n_todo,
            unit="story",
            desc="generating" + (f" ({resumed} resumed)" if resumed else ""),
            file=sys.stderr,
            dynamic_ncols=True,
            leave=True,
        )

    def advance(self, text: str) -> None:
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(text, refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
