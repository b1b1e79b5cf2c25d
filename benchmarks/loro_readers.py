"""Leave-one-reader-out's one-step on one cell as its readers grow (issue 15: what stays cubic).

    python benchmarks/loro_readers.py                       # 2,000 and 5,000 readers, 5,000 pairs x 20
    python benchmarks/loro_readers.py --readers 1000 3000 --pairs 5000 --per-pair 20
    python benchmarks/loro_readers.py --readers 2000 6000 --per-pair 1 --pairs 100000   # one reader per pair

For each reader count it builds one seeded cell (``--pairs`` pairs, each read by ``--per-pair``
readers drawn uniformly), then times, in this process, what leave-one-reader-out does per cell
after the full fit: :func:`audit.uncertainty.one_step.conditional_modes` and
:func:`audit.uncertainty.one_step.one_step_without_readers` (at fixed sds 0.5, 0.5, intercept 0.1),
and prints CPU seconds and the process's peak RSS. With readers sharing pairs both work on a dense
readers x readers block (cubic time, quadratic memory); with one reader per pair the block is
diagonal and both are linear. There is no competing tool: nothing else computes this one-step.
Run one reader count per process for a clean peak RSS (``--readers 5000``).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.uncertainty._cells import cell_tables  # noqa: E402
from audit.uncertainty.one_step import conditional_modes, one_step_without_readers  # noqa: E402


def cell(readers: int, pairs: int, per_pair: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    if per_pair == 1:
        reader = rng.integers(0, readers, pairs)
    else:
        reader = np.concatenate([rng.choice(readers, per_pair, replace=False) for _ in range(pairs)])
    pair = np.repeat(np.arange(pairs), per_pair)
    y = (rng.random(pair.size) < 0.5).astype(float)
    frame = pd.DataFrame(
        {"pair_id": pair.astype(str), "reader_id": reader.astype(str), "y": y, "matchup": "m", "criterion": "c"}
    )
    return cell_tables(frame, ("matchup", "criterion"))[0]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readers", type=int, nargs="+", default=[2000, 5000])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--per-pair", type=int, default=20)
    args = parser.parse_args(argv)
    print("readers  pairs  votes    modes CPU s  one-step CPU s  peak RSS MB  reason")
    for readers in args.readers:
        t = cell(readers, args.pairs, args.per_pair)
        c0 = time.process_time()
        bp, br = conditional_modes(t, 0.1, 0.5, 0.5)
        c1 = time.process_time()
        step = one_step_without_readers(t, 0.1, 0.5, 0.5, bp, br)
        c2 = time.process_time()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{t.n_readers:7d} {t.n_pairs:6d} {int(t.n.sum()):6d} {c1 - c0:14.2f} {c2 - c1:15.2f} {peak:12.0f}  "
            f"{step.reason or 'computed'}"
        )


if __name__ == "__main__":
    main()
