"""Seeded inputs for the verdict's reference values (python make_inputs.py; numpy only).

inputs/votes.csv: cell, pair_id, reader_id, credit -- credited human votes of four cells:
``balanced`` (6 readers x 25 pairs, binary), ``unbalanced`` (1-5 votes per pair, some pairs
read once), ``ties`` (even-split credits 0 / 0.5 / 1), ``spread`` (large between-pair variance).
inputs/p_values.csv: one family of p-values for the multiplicity adjustment.
"""

import os

import numpy as np
from scipy.special import expit

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(20240601)
    rows = []
    specs = {
        "balanced": (25, 6, 0.4, 1.0, False, False),
        "unbalanced": (40, 5, -0.3, 0.8, True, False),
        "ties": (30, 7, 0.2, 0.5, False, True),
        "spread": (30, 4, 0.6, 2.0, False, False),
    }
    for cell, (n_pairs, n_readers, b0, sd, unbalanced, ties) in specs.items():
        u = rng.normal(0, sd, n_pairs)
        for i in range(n_pairs):
            k = int(rng.integers(1, n_readers + 1)) if unbalanced else n_readers
            for r in rng.choice(n_readers, k, replace=False) if unbalanced else range(n_readers):
                eta = b0 + u[i]
                if ties:
                    pf, po = expit(eta - 0.4), expit(-eta - 0.4)
                    x = rng.random()
                    credit = 1.0 if x < pf else (0.0 if x < pf + po else 0.5)
                else:
                    credit = float(rng.random() < expit(eta))
                rows.append(f"{cell},p{i:03d},r{r},{credit}")
    os.makedirs(os.path.join(HERE, "inputs"), exist_ok=True)
    with open(os.path.join(HERE, "inputs", "votes.csv"), "w") as f:
        f.write("cell,pair_id,reader_id,credit\n" + "\n".join(rows) + "\n")
    p = rng.uniform(0, 0.08, 12) ** 1.5
    with open(os.path.join(HERE, "inputs", "p_values.csv"), "w") as f:
        f.write("p\n" + "\n".join(f"{x:.17g}" for x in p) + "\n")


if __name__ == "__main__":
    main()
