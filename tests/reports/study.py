"""Seeded studies written as data-contract files, for the report tests (made here, copied from nothing).

``write_study(folder, n_matchups=..., criteria=..., text=...)``: ``n_matchups`` matchups (a focal
system against another, 2 systems each), ``n_pairs`` pairs per matchup, ``n_readers`` readers who
vote on every criterion plus ``overall`` (with seconds, the side shown first, a few comments and a
reader group), two judge configurations scoring every story 1-5, and a short story per system.
The judge leans to the focal system and tracks sentence length, so sections have something to
show. ``text`` is applied to every piece of user text (system, criterion, matchup, reader and
judge names, comments, stories), so the escaping test can put markup everywhere at once.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable

import numpy as np

CRITERIA = ("authenticity", "empathy", "engagement", "overall")
WORDS = (
    "the river kept its voice as the lamp burned low and a small dog waited by the door while she wrote "
    "her long letter home about the garden the wedding and the rain"
).split()


def _identity(s: str) -> str:
    return s


def _write(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _story(rng: np.random.Generator, sentence_words: int) -> str:
    sentences = []
    for _ in range(int(rng.integers(4, 8))):
        n = max(3, int(rng.normal(sentence_words, 2)))
        sentences.append(" ".join(rng.choice(WORDS, size=n)).capitalize() + ".")
    return " ".join(sentences)


def write_study(
    folder: Path,
    *,
    seed: int = 11,
    n_matchups: int = 2,
    n_pairs: int = 14,
    n_readers: int = 5,
    criteria: tuple[str, ...] = CRITERIA,
    text: Callable[[str], str] = _identity,
    readers_per_pair: int | None = None,
) -> dict[str, Path]:
    """Write judge.csv, humans.csv, pairs.csv and stories.csv into ``folder``; return role -> path.

    ``criteria`` are the human criteria; the judge scores every one of them but ``overall``.
    ``readers_per_pair``: each pair is read by that many readers drawn at random (default: every
    reader reads every pair), so a study can have thousands of readers.
    """
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    judged = [c for c in criteria if c != "overall"]
    readers = [text(f"reader{r + 1}") for r in range(n_readers)]
    judges = [text("ensemble"), text("mini")]
    pairs, judge, humans, stories = [], [], [], []
    for m in range(n_matchups):
        focal, other = text(f"sys{m + 1}-new"), text(f"sys{m + 1}-old")
        matchup = text(f"sys{m + 1}-new vs sys{m + 1}-old")
        lean = float(rng.normal(0.1, 0.4))  # the humans' preference for the focal system, on the logit scale
        for i in range(n_pairs):
            pid = f"m{m + 1}p{i + 1:02d}"
            pairs.append([pid, focal, other, focal, matchup, f"premise{i + 1:02d}"])
            lengths = {focal: float(rng.uniform(6, 10)), other: float(rng.uniform(8, 13))}
            for system in (focal, other):
                stories.append([pid, system, text(_story(rng, lengths[system]))])
                for k, name in enumerate(judges):
                    for criterion in judged:
                        latent = 3.4 - 0.25 * lengths[system] + 0.8 * (system == focal) + rng.normal(0, 0.6 + 0.3 * k)
                        judge.append([pid, system, text(criterion), name, int(np.clip(np.rint(latent + 2.5), 1, 5))])
            pair_effect = rng.normal(0, 0.5)
            chosen = (
                range(n_readers)
                if readers_per_pair is None
                else sorted(rng.choice(n_readers, size=readers_per_pair, replace=False))
            )
            for r in chosen:
                reader = readers[r]
                first = focal if rng.random() < 0.5 else other
                for criterion in criteria:
                    p = 1 / (1 + np.exp(-(lean + pair_effect + rng.normal(0, 0.3))))
                    choice = focal if rng.random() < p else other
                    comment = text(f"{choice} felt more alive") if rng.random() < 0.05 else ""
                    seconds = round(float(rng.lognormal(4.8 - 0.6 * (r == n_readers - 1), 0.5)), 1)
                    humans.append(
                        [
                            pid,
                            reader,
                            text(criterion),
                            choice,
                            seconds,
                            first,
                            comment,
                            "expert" if r % 2 else "enthusiast",
                        ]
                    )
    return {
        "pairs": _write(
            folder / "pairs.csv", ["pair_id", "system_a", "system_b", "focal", "matchup", "group_id"], pairs
        ),
        "judge": _write(folder / "judge.csv", ["pair_id", "system", "criterion", "judge", "score"], judge),
        "humans": _write(
            folder / "humans.csv",
            ["pair_id", "reader_id", "criterion", "choice", "seconds", "shown_first", "comment", "reader_group"],
            humans,
        ),
        "stories": _write(folder / "stories.csv", ["pair_id", "system", "text"], stories),
    }


def run_study(files: dict[str, Path], *, seed: int = 1, n_boot: int = 200, judge: str | None = None):
    """The real pipeline on a written study (every section the data supports)."""
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.spec import AuditSpec

    data = load_audit_data(
        str(files["judge"]), str(files["humans"]), pairs=str(files["pairs"]), stories=str(files["stories"])
    )
    return run_audit(data, AuditSpec(seed=seed, n_boot=n_boot, **({"judge": judge} if judge else {})))
