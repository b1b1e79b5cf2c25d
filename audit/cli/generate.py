"""`audit generate PREMISES --protocol FILE --out DIR`: build the deployment set."""

from __future__ import annotations

import click


@click.command("generate")
@click.argument("premises", type=click.Path(dir_okay=False))
@click.option("--protocol", "protocol_path", type=click.Path(dir_okay=False), required=True,
              help="Protocol TOML (systems, matchups, prompts, word window); laid over the packaged default.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Output directory; rerunning in the same directory resumes.")
@click.option("--matchup", "matchups", multiple=True, metavar="FOCAL:OTHER",
              help="Matchup to generate (repeatable); default: the protocol's [[matchups]].")
@click.option("--seed", type=int, default=None, help="Blinding seed (ids, sides, order); default: protocol seed, else recorded, else drawn.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Stories generated at once (overrides the protocol).")
@click.option("--fresh", is_flag=True, help="Discard the attempts journal in DIR and start over.")
@click.option("-q", "--quiet", is_flag=True, help="No progress messages.")
def command(premises, protocol_path, out_dir, matchups, seed, concurrency, fresh, quiet):
    """Generate prompt-matched story pairs: PREMISES x matchups -> DIR/stories.csv, DIR/pairs.csv.

    PREMISES is a CSV/TSV/JSONL file with premise_id, premise and optional kind. Every attempt
    is kept in DIR/attempts.jsonl; a killed run resumes without asking again for any finished story.
    """
    from generation.generate import generate_stories, load_premises
    from generation.protocol import load_protocol, parse_matchup
    from generation.tables import prepare_output

    prepare_output(out_dir, "output directory", directory=True)
    protocol = load_protocol(protocol_path, overrides={"concurrency": concurrency})
    chosen = tuple(parse_matchup(m, protocol.systems) for m in matchups) or None
    frame = load_premises(premises)
    count = [0]

    def progress(final):
        count[0] += 1
        if not quiet:
            flag = "" if final["in_window"] else " (outside the window)"
            click.echo(f"[{count[0]}] {final['system']} on premise {final['premise_id']}: {final['words']} words "
                       f"after {final['n_attempts']} attempt(s){flag}", err=True)

    result = generate_stories(frame, protocol, out_dir, matchups=chosen, rng=seed, fresh=fresh, progress=progress)
    click.echo(str(result))
    click.echo(f"wrote {out_dir}/stories.csv, {out_dir}/pairs.csv, {out_dir}/story_log.csv (journal: {out_dir}/attempts.jsonl)")
