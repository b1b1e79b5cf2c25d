"""A tiny seeded study written as files, for the hostile-input tests (made here, copied from nothing).

One matchup, 12 pairs (at least the policy's min_pairs, so that cells are decided), 3 readers, two criteria
plus overall, one judge configuration and a
short story per system, so that a whole ``audit run`` with surface features takes seconds.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import numpy as np

CRITERIA = ("empathy", "style")
SYSTEMS = ("sysA", "sysB")
WORDS = (
    "the river kept its voice as the lamp burned low and a small dog waited by the door "
    "while she wrote her long letter home about the garden the wedding and the rain"
).split()


def _write(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_study(
    folder: Path,
    *,
    seed: int = 7,
    n_pairs: int = 12,
    n_readers: int = 3,
    systems: tuple[str, str] = SYSTEMS,
    criteria: tuple[str, ...] = CRITERIA,
) -> dict[str, Path]:
    """Write judge.csv, humans.csv, pairs.csv and stories.csv into ``folder``; return role -> path.

    ``systems`` and ``criteria`` can be any text (the hostile tests use formula-shaped and
    escape-laden names); the files are written with the csv module, so they are valid CSV.
    """
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    focal, other = systems
    pairs, judge, humans, stories = [], [], [], []
    for i in range(n_pairs):
        pid = f"p{i:02d}"
        pairs.append([pid, focal, other, focal, f"{focal} vs {other}", f"g{i}"])
        for system in systems:
            n_words = int(rng.integers(40, 80))
            text = " ".join(rng.choice(WORDS, size=n_words)).capitalize() + "."
            stories.append([pid, system, text.replace(" and ", ". And ", 2)])
            for criterion in criteria:
                judge.append([pid, system, criterion, "ensemble", int(rng.integers(1, 6))])
        for r in range(n_readers):
            for criterion in (*criteria, "overall"):
                choice = focal if rng.random() < 0.6 else other
                humans.append([pid, f"reader{r}", criterion, choice, round(float(rng.uniform(20, 90)), 1)])
    return {
        "pairs": _write(
            folder / "pairs.csv", ["pair_id", "system_a", "system_b", "focal", "matchup", "group_id"], pairs
        ),
        "judge": _write(folder / "judge.csv", ["pair_id", "system", "criterion", "judge", "score"], judge),
        "humans": _write(folder / "humans.csv", ["pair_id", "reader_id", "criterion", "choice", "seconds"], humans),
        "stories": _write(folder / "stories.csv", ["pair_id", "system", "text"], stories),
    }


def run_args(files: dict[str, Path], out: Path, *extra: str) -> list[str]:
    """``audit run`` arguments on the study (every section on, surface features included)."""
    return [
        "run",
        str(files["judge"]),
        str(files["humans"]),
        "--pairs",
        str(files["pairs"]),
        "--stories",
        str(files["stories"]),
        "--out",
        str(out),
        "--n-boot",
        "100",
        "-q",
        *extra,
    ]


def digest(paths) -> dict[str, str]:
    """sha256 of every file (to prove a run changed no input)."""
    return {str(p): hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths}
