"""Seeded studies at arena scale for the scale benchmarks, written to a folder.

    python benchmarks/scale_data.py OUTDIR --preset 100k      # 5k pairs, 200 readers, one cell
    python benchmarks/scale_data.py OUTDIR --preset 1m        # 50k pairs, 2k readers, one cell
    python benchmarks/scale_data.py OUTDIR --preset criteria  # 10k criteria x 18 votes
    python benchmarks/scale_data.py OUTDIR --preset arena-100k  # 20 systems, 5k pairs, 200 readers
    python benchmarks/scale_data.py OUTDIR --preset chatbot-arena-100k  # 20 systems, one vote per pair, 2k readers
    python benchmarks/scale_data.py OUTDIR --preset chatbot-arena-1m    # 20 systems, one vote per pair, 20k readers
    python benchmarks/scale_data.py OUTDIR --pairs 500 --readers 40 --readers-per-pair 10 --criteria 3

Writes ``judge.csv`` (pair_id, system, criterion, score; one judge) and ``humans.csv``
(pair_id, reader_id, criterion, choice) into OUTDIR, which must be outside the repository
(use a temporary folder): nothing generated here belongs in the repo. Every pair is one
matchup of two systems, ``focal`` vs ``other``; each pair is read by ``readers_per_pair``
distinct readers (drawn at random out of ``readers``), on every criterion. The votes follow
``logit P(focal) = b0 + u_pair + v_reader`` with normal pair and reader effects (seeded); the
judge scores each story ``3 + quality + noise`` rounded to 1..5, where the focal story's
quality carries the same pair effect, so judge and humans agree in direction but not exactly.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class StudyShape:
    pairs: int
    readers: int
    readers_per_pair: int
    criteria: int = 1
    b0: float = 0.3
    sd_pair: float = 0.5
    sd_reader: float = 0.5
    systems: int = 2  #: above 2: each pair a random matchup of the systems (an arena), names s00, s01, ...
    sd_system: float = 0.5
    #: one reader per pair drawn by ``rng.integers`` (the same distribution as the default draw with one reader per
    #: pair, without its pairs x readers keys: the default draws 2e10 of them at a million pairs and 20k readers)
    integer_readers: bool = False

    @property
    def n_votes(self) -> int:
        return self.pairs * self.readers_per_pair * self.criteria


PRESETS = {
    "100k": StudyShape(pairs=5_000, readers=200, readers_per_pair=20),
    "1m": StudyShape(pairs=50_000, readers=2_000, readers_per_pair=20),
    "criteria": StudyShape(pairs=6, readers=3, readers_per_pair=3, criteria=10_000),
    "criteria-1k": StudyShape(pairs=6, readers=3, readers_per_pair=3, criteria=1_000),
    # Chatbot-Arena-shaped: 20 systems, every pair a random matchup (190 matchups, ~26 pairs each)
    "arena-100k": StudyShape(pairs=5_000, readers=200, readers_per_pair=20, systems=20),
    # Chatbot Arena itself: one vote per pair (battle), 2,000 readers, 20 systems
    "chatbot-arena-100k": StudyShape(pairs=100_000, readers=2_000, readers_per_pair=1, systems=20),
    "chatbot-arena-300k": StudyShape(pairs=300_000, readers=6_000, readers_per_pair=1, systems=20),
    "chatbot-arena-1m": StudyShape(
        pairs=1_000_000, readers=20_000, readers_per_pair=1, systems=20, integer_readers=True
    ),
}


def _readers_of_pairs(rng: np.random.Generator, shape: StudyShape) -> np.ndarray:
    """(pairs x readers_per_pair) distinct reader indices per pair, in chunks (no pairs x readers matrix
    beyond a chunk)."""
    if shape.integer_readers and shape.readers_per_pair == 1:
        return rng.integers(0, shape.readers, (shape.pairs, 1))
    out = np.empty((shape.pairs, shape.readers_per_pair), dtype=np.int64)
    chunk = max(1, 2_000_000 // max(shape.readers, 1))
    for start in range(0, shape.pairs, chunk):
        stop = min(shape.pairs, start + chunk)
        keys = rng.random((stop - start, shape.readers))
        out[start:stop] = np.argpartition(keys, shape.readers_per_pair - 1, axis=1)[:, : shape.readers_per_pair]
    return out


def simulate(shape: StudyShape, seed: int = 15) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(judge, humans)`` frames of one seeded study of ``shape``."""
    if shape.readers_per_pair > shape.readers:
        raise ValueError("readers_per_pair cannot exceed readers")
    if shape.systems > 2:
        return simulate_arena(shape, seed)
    rng = np.random.default_rng(seed)
    width = len(str(shape.pairs))
    pair_ids = np.array([f"p{i:0{width}d}" for i in range(shape.pairs)], dtype=object)
    reader_ids = np.array([f"r{j:0{len(str(shape.readers))}d}" for j in range(shape.readers)], dtype=object)
    criteria = np.array(
        ["overall"] if shape.criteria == 1 else [f"c{k:0{len(str(shape.criteria))}d}" for k in range(shape.criteria)],
        dtype=object,
    )
    u_pair = rng.normal(0.0, shape.sd_pair, (shape.criteria, shape.pairs))
    v_reader = rng.normal(0.0, shape.sd_reader, shape.readers)
    readers = _readers_of_pairs(rng, shape)  # the same readers read a pair on every criterion

    k = shape.readers_per_pair
    crit = np.repeat(np.arange(shape.criteria), shape.pairs * k)
    pair = np.tile(np.repeat(np.arange(shape.pairs), k), shape.criteria)
    reader = np.tile(readers.ravel(), shape.criteria)
    eta = shape.b0 + u_pair[crit, pair] + v_reader[reader]
    focal_wins = rng.random(eta.size) < 1.0 / (1.0 + np.exp(-eta))
    humans = pd.DataFrame(
        {
            "pair_id": pair_ids[pair],
            "reader_id": reader_ids[reader],
            "criterion": criteria[crit],
            "choice": np.where(focal_wins, "focal", "other"),
        }
    )

    jc = np.repeat(np.arange(shape.criteria), shape.pairs)
    jp = np.tile(np.arange(shape.pairs), shape.criteria)
    quality = u_pair[jc, jp] + shape.b0
    focal_score = np.clip(np.rint(3.0 + quality + rng.normal(0, 0.7, jc.size)), 1, 5).astype(int)
    other_score = np.clip(np.rint(3.0 + rng.normal(0, 0.7, jc.size)), 1, 5).astype(int)
    judge = pd.DataFrame(
        {
            "pair_id": np.concatenate([pair_ids[jp], pair_ids[jp]]),
            "system": np.repeat(np.array(["focal", "other"], dtype=object), jc.size),
            "criterion": np.concatenate([criteria[jc], criteria[jc]]),
            "score": np.concatenate([focal_score, other_score]),
        }
    )
    return judge, humans


def simulate_arena(shape: StudyShape, seed: int = 15) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An arena of ``shape.systems`` systems with normal strengths: every pair a random matchup
    ``a`` vs ``b``, read by ``readers_per_pair`` readers on every criterion with ``logit P(a) =
    s_a - s_b + u_pair + v_reader``; the judge scores each story ``3 + s + noise`` (``a``'s also
    carrying the pair effect), rounded to 1..5. Choices name the system preferred."""
    rng = np.random.default_rng(seed)
    width = len(str(shape.pairs))
    pair_ids = np.array([f"p{i:0{width}d}" for i in range(shape.pairs)], dtype=object)
    reader_ids = np.array([f"r{j:0{len(str(shape.readers))}d}" for j in range(shape.readers)], dtype=object)
    names = np.array([f"s{j:02d}" for j in range(shape.systems)], dtype=object)
    criteria = np.array(
        ["overall"] if shape.criteria == 1 else [f"c{k:0{len(str(shape.criteria))}d}" for k in range(shape.criteria)],
        dtype=object,
    )
    strength = rng.normal(0.0, shape.sd_system, shape.systems)
    a = rng.integers(0, shape.systems, shape.pairs)
    b = (a + rng.integers(1, shape.systems, shape.pairs)) % shape.systems  # never a itself
    u_pair = rng.normal(0.0, shape.sd_pair, (shape.criteria, shape.pairs))
    v_reader = rng.normal(0.0, shape.sd_reader, shape.readers)
    readers = _readers_of_pairs(rng, shape)

    k = shape.readers_per_pair
    crit = np.repeat(np.arange(shape.criteria), shape.pairs * k)
    pair = np.tile(np.repeat(np.arange(shape.pairs), k), shape.criteria)
    reader = np.tile(readers.ravel(), shape.criteria)
    eta = strength[a[pair]] - strength[b[pair]] + u_pair[crit, pair] + v_reader[reader]
    a_wins = rng.random(eta.size) < 1.0 / (1.0 + np.exp(-eta))
    humans = pd.DataFrame(
        {
            "pair_id": pair_ids[pair],
            "reader_id": reader_ids[reader],
            "criterion": criteria[crit],
            "choice": np.where(a_wins, names[a[pair]], names[b[pair]]),
        }
    )

    jc = np.repeat(np.arange(shape.criteria), shape.pairs)
    jp = np.tile(np.arange(shape.pairs), shape.criteria)
    a_score = np.clip(np.rint(3.0 + strength[a[jp]] + u_pair[jc, jp] + rng.normal(0, 0.7, jc.size)), 1, 5)
    b_score = np.clip(np.rint(3.0 + strength[b[jp]] + rng.normal(0, 0.7, jc.size)), 1, 5)
    judge = pd.DataFrame(
        {
            "pair_id": np.concatenate([pair_ids[jp], pair_ids[jp]]),
            "system": np.concatenate([names[a[jp]], names[b[jp]]]),
            "criterion": np.concatenate([criteria[jc], criteria[jc]]),
            "score": np.concatenate([a_score, b_score]).astype(int),
        }
    )
    return judge, humans


def write_study(out: Path, shape: StudyShape, seed: int = 15) -> tuple[Path, Path]:
    """Write ``judge.csv`` and ``humans.csv`` into ``out`` (refuses a folder inside the repo)."""
    out = Path(out).resolve()
    if out == ROOT or ROOT in out.parents:
        raise SystemExit(f"{out} is inside the repository; write scale studies to a temporary folder")
    out.mkdir(parents=True, exist_ok=True)
    judge, humans = simulate(shape, seed)
    judge_path, humans_path = out / "judge.csv", out / "humans.csv"
    judge.to_csv(judge_path, index=False)
    humans.to_csv(humans_path, index=False)
    return judge_path, humans_path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder outside the repository (e.g. under /tmp)")
    parser.add_argument("--preset", choices=sorted(PRESETS), help="a named study shape")
    parser.add_argument("--pairs", type=int)
    parser.add_argument("--readers", type=int)
    parser.add_argument("--readers-per-pair", type=int)
    parser.add_argument("--criteria", type=int, default=1)
    parser.add_argument("--systems", type=int, default=2, help="above 2: an arena, every pair a random matchup")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args(argv)
    if args.systems < 2:
        parser.error("--systems needs 2 or more (2: every pair focal vs other)")
    if args.preset and args.systems != 2:
        parser.error("--systems does not combine with --preset (the preset fixes the shape)")
    if args.preset:
        shape = PRESETS[args.preset]
    elif args.pairs and args.readers and args.readers_per_pair:
        shape = StudyShape(args.pairs, args.readers, args.readers_per_pair, args.criteria, systems=args.systems)
    else:
        parser.error("give --preset or all of --pairs, --readers, --readers-per-pair")
    judge_path, humans_path = write_study(args.out, shape, args.seed)
    print(
        f"{shape.n_votes} votes ({shape.pairs} pairs, {shape.readers} readers, {shape.criteria} criteria): "
        f"{judge_path} {humans_path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
