"""The leaderboard beside LMArena's arena-rank and a FastChat-style Bradley-Terry bootstrap, on the same votes
in one run (the Chatbot-Arena shape: 20 systems, one vote per pair, 50 votes per reader).

    python benchmarks/leaderboard_arena.py --votes 100000 --arena-python /tmp/arena/bin/python
    python benchmarks/leaderboard_arena.py --votes 1000000 --jobs 2 --arena-python /tmp/arena/bin/python

Votes: ``logit P(a) = s_a - s_b + u_pair + v_reader`` with the model and spreads of
``benchmarks/scale_data.py``'s arena (strengths, pair and reader sd 0.5), every pair read once, readers
drawn uniformly (``n_votes / 50`` of them, as in its ``chatbot-arena`` presets), the system shown
first at random, ``--ties`` of the votes ties.
Timed, each on the same votes:

* ``leaderboard``: :func:`judge_transfer_audit.statistics.leaderboard.fit.bradley_terry_leaderboard` as ``audit run``
calls it (the
  crossed GLMM, 100 cluster-bootstrap refits on ``--jobs`` workers, the diagnostics), humans only;
* ``vote-level + diagnostics``: :func:`judge_transfer_audit.statistics.leaderboard.diagnostics.leaderboard_diagnostics`
alone;
* ``arena-rank sandwich`` / ``arena-rank bootstrap``: arena-rank's ``compute_ratings_and_cis`` with
  ``ci_method="sandwich"`` and ``"bootstrap"`` (100 resamples, ``n_jobs=--jobs``), in the interpreter
  ``--arena-python`` (arena-rank pins numpy 2.3.3: a separate virtual environment), timed inside that process
  after its imports (the dataset's construction included);
* ``FastChat-style bootstrap``: 100 rounds of resampling the votes with replacement and refitting the
  Bradley-Terry MLE as FastChat's ``compute_mle_elo`` does (win tables, ties half a win, a weighted logistic
  regression by L-BFGS), our own code modelled on it.

Prints wall and CPU seconds and the ratios to the leaderboard.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ARENA_SCRIPT = r"""
import json, multiprocessing, sys, time
if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")  # a forked child of the JAX process deadlocks
    import pandas as pd
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset
    df = pd.read_csv(sys.argv[1])
    out = {}
    for method in sys.argv[3].split(","):
        t0, c0 = time.perf_counter(), time.process_time()
        data = PairDataset.from_pandas(df)
        model = BradleyTerry(n_competitors=len(data.competitors))
        res = model.compute_ratings_and_cis(data, ci_method=method, num_bootstrap=100, n_jobs=int(sys.argv[2]))
        ratings = [float(x) for x in res["ratings"]]
        out[method] = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                       "competitors": list(data.competitors), "ratings": ratings}
    print(json.dumps(out))
"""


def arena_votes(n_votes: int, k: int = 20, seed: int = 40, ties: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_readers = max(n_votes // 50, 1)
    names = np.array([f"s{j:02d}" for j in range(k)], dtype=object)
    strength = rng.normal(0.0, 0.5, k)
    a = rng.integers(0, k, n_votes)
    b = (a + rng.integers(1, k, n_votes)) % k
    reader = rng.integers(0, n_readers, n_votes)
    eta = strength[a] - strength[b] + rng.normal(0.0, 0.5, n_votes) + rng.normal(0.0, 0.5, n_readers)[reader]
    y = (rng.random(n_votes) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
    y[rng.random(n_votes) < ties] = np.nan
    a_first = rng.random(n_votes) < 0.5
    return pd.DataFrame(
        {
            "pair_id": np.char.add("p", np.arange(n_votes).astype(str)),
            "reader_id": np.char.add("r", reader.astype(str)),
            "criterion": "overall",
            "focal": names[a],
            "other": names[b],
            "y": y,
            "shown_first": np.where(a_first, names[a], names[b]),
        }
    )


def fastchat_style_mle(focal: np.ndarray, other: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """FastChat's ``compute_mle_elo`` in our own code: win tables (a win counts 2, a tie 1 for each side),
    one logistic-regression row per ordered matchup and outcome weighted by the table, no intercept, no
    penalty, L-BFGS to a gradient tolerance of 1e-6; logit strengths."""
    from scipy.optimize import minimize

    win = np.where(y == 1, 2.0, np.where(y == 0, 0.0, 1.0))
    table = np.zeros((k, k))
    np.add.at(table, (focal, other), win)
    np.add.at(table, (other, focal), 2.0 - win)
    i, j = np.nonzero(np.triu(table + table.T) > 0)
    X = np.zeros((2 * len(i), k))
    rows = np.arange(len(i))
    X[2 * rows, i] = X[2 * rows + 1, i] = 1.0
    X[2 * rows, j] = X[2 * rows + 1, j] = -1.0
    Y = np.tile([1.0, 0.0], len(i))
    w = np.column_stack([table[i, j], table[j, i]]).ravel()

    def loss(beta):
        eta = X @ beta
        p = 1.0 / (1.0 + np.exp(-eta))
        value = np.sum(w * (np.logaddexp(0.0, eta) - Y * eta))
        return value, X.T @ (w * (p - Y))

    return minimize(loss, np.zeros(k), jac=True, method="L-BFGS-B", options={"gtol": 1e-6}).x


def fastchat_style_bootstrap(votes: pd.DataFrame, k_index: pd.Index, rounds: int = 100, seed: int = 0):
    """FastChat's bootstrap: ``battles.sample(frac=1.0, replace=True)`` then the MLE, ``rounds`` times."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(rounds):
        sample = votes.sample(frac=1.0, replace=True, random_state=rng)
        focal = k_index.get_indexer(sample["focal"])
        other = k_index.get_indexer(sample["other"])
        out.append(fastchat_style_mle(focal, other, sample["y"].to_numpy(), len(k_index)))
    return np.quantile(np.array(out), [0.025, 0.975], axis=0)


def timed(fn):
    t0, c0 = time.perf_counter(), _cpu()
    value = fn()
    return value, time.perf_counter() - t0, _cpu() - c0


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--ties", type=float, default=0.0, help="share of the votes that are ties")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--arena-python", default=None, help="an interpreter with arena-rank (default: skip it)")
    parser.add_argument("--arena-bootstrap", action="store_true", help="also time arena-rank's bootstrap")
    parser.add_argument("--skip-leaderboard", action="store_true")
    args = parser.parse_args(argv)

    from judge_transfer_audit.engine.parallel import open_runner
    from judge_transfer_audit.statistics.leaderboard.diagnostics import leaderboard_diagnostics
    from judge_transfer_audit.statistics.leaderboard.fit import bradley_terry_leaderboard
    from judge_transfer_audit.statistics.leaderboard.votes import fit_vote_level

    votes = arena_votes(args.votes, args.systems, ties=args.ties)
    systems = sorted(set(votes["focal"]) | set(votes["other"]))
    index = pd.Index(systems)
    print(f"{len(votes):,} votes, {votes['reader_id'].nunique():,} readers, {len(systems)} systems, jobs {args.jobs}")
    rows = []
    board = None
    if not args.skip_leaderboard:

        def leaderboard():
            with open_runner(args.jobs) as runner:  # timed with the pool's start and shutdown (its workers' CPU)
                return bradley_terry_leaderboard(votes, n_boot=100, rng=0, runner=runner)

        board, wall, cpu = timed(leaderboard)
        rows.append(("leaderboard (GLMM, 100 cluster-bootstrap refits, diagnostics)", wall, cpu))
    focal, other = index.get_indexer(votes["focal"]), index.get_indexer(votes["other"])
    fit, wall, cpu = timed(lambda: fit_vote_level(focal, other, votes["y"].to_numpy(), len(systems), ties="half"))
    rows.append(("vote-level fit (arena-rank's model and sandwich)", wall, cpu))
    # the diagnostics on the leaderboard's strengths (or, without it, the vote-level ones)
    strength, cov = fit.strengths, fit.cov_model
    if board is not None:
        s = {x.system: x.human.estimate for x in board.systems}
        strength = np.array([s[n] for n in systems])
        cov = np.diag([((x.human.ci_high - x.human.ci_low) / 3.92) ** 2 for x in board.systems])
    _, wall, cpu = timed(lambda: leaderboard_diagnostics(votes, systems, strength, cov))
    rows.append(("diagnostics alone (inside the leaderboard's time)", wall, cpu))
    _, wall, cpu = timed(lambda: fastchat_style_bootstrap(votes[["focal", "other", "y"]], index))
    rows.append(("FastChat-style BT bootstrap (100 rounds)", wall, cpu))
    if args.arena_python:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "votes.csv"
            winner = np.where(votes["y"].isna(), "tie", np.where(votes["y"] == 1, "model_a", "model_b"))
            pd.DataFrame({"model_a": votes["focal"], "model_b": votes["other"], "winner": winner}).to_csv(
                path, index=False
            )
            methods = "sandwich,bootstrap" if args.arena_bootstrap else "sandwich"
            t0 = time.perf_counter()
            proc = subprocess.run(
                [args.arena_python, "-c", ARENA_SCRIPT, str(path), str(args.jobs), methods],
                capture_output=True,
                text=True,
                check=True,
                env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            )
            process_wall = time.perf_counter() - t0
            res = json.loads(proc.stdout.strip().splitlines()[-1])
        for method in methods.split(","):
            r = res[method]
            label = f"arena-rank {method}" + (" (100 resamples)" if method == "bootstrap" else "")
            rows.append((label, r["wall"], r["cpu"]))
            theirs = np.array(r["ratings"]) - np.mean(r["ratings"])
            theirs /= 400.0 / np.log(10.0)
            ours = fit.strengths[[systems.index(c) for c in r["competitors"]]]
            print(f"arena-rank {method}: max |centred logit difference| to ours {np.max(np.abs(theirs - ours)):.2e}")
        print(f"arena-rank process, imports included: {process_wall:.1f} s wall")
    base = rows[0][1] if board is not None else float("nan")
    print(f"{'step':<66} {'wall s':>8} {'CPU s':>8} {'wall / leaderboard':>19}")
    for label, wall, cpu in rows:
        print(f"{label:<66} {wall:8.2f} {cpu:8.2f} {wall / base:19.3f}")
    print(f"peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
