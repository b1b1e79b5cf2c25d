"""Benchmark: the native crossed GLMM engine against lme4::glmer on the same data, in one run.

    python benchmarks/glmm.py                      # 2.5k and 100k votes, glmer via Rscript
    python benchmarks/glmm.py --sizes 2500 100000 1000000 --no-r-above 100000
    python benchmarks/glmm.py --sizes 1000000 --memory

Data: N votes, N/20 pairs, N/500 readers, each pair read by 20 distinct readers,
logit P(y=1) = 0.3 + u_pair + v_reader with sd 0.8 and 0.5 (seeded). glmer's time is measured
inside R (``system.time`` around ``glmer()``), so R's start-up and CSV reading are excluded;
ours is wall time of ``fit_crossed_glmm`` (input encoding included), best of ``--repeats``.
Prints both times, their ratio and the differences in the estimates.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit.glmm import fit_crossed_glmm  # noqa: E402
from audit.glmm.rscript import rscript_available, run_glmer  # noqa: E402

FORMULA = "y ~ 1 + (1|pair) + (1|reader)"


def simulate(n_votes: int, seed: int = 20260) -> pd.DataFrame:
    """N votes, N/20 pairs each read by 20 distinct readers out of N/500."""
    rng = np.random.default_rng(seed)
    n_pair = max(n_votes // 20, 2)
    n_reader = max(n_votes // 500, 20)
    per_pair = 20
    reader = np.concatenate([rng.choice(n_reader, per_pair, replace=False) for _ in range(n_pair)])
    pair = np.repeat(np.arange(n_pair), per_pair)
    eta = 0.3 + rng.normal(0, 0.8, n_pair)[pair] + rng.normal(0, 0.5, n_reader)[reader]
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(np.int8)
    return pd.DataFrame({"y": y, "pair": pair.astype(np.int64), "reader": reader.astype(np.int64)})


def fit_ours(frame: pd.DataFrame, repeats: int):
    best, res = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = fit_crossed_glmm(frame["y"].to_numpy(float), {"pair": frame["pair"].to_numpy(),
                                                            "reader": frame["reader"].to_numpy()})
        best = min(best, time.perf_counter() - t0)
    return best, res


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2500, 100_000])
    parser.add_argument("--no-r-above", type=int, default=None,
                        help="skip glmer for sizes above this (glmer takes ~18 min at 1M)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of our fit (best is kept) below 200k")
    parser.add_argument("--memory", action="store_true", help="report this process's peak RSS after each size")
    parser.add_argument("--glmer-cache", type=Path, default=None,
                        help="directory caching glmer's JSON per size (reuse a long 1M glmer run)")
    parser.add_argument("--glmer-only", action="store_true", help="only run (and cache) glmer")
    args = parser.parse_args(argv)
    have_r = rscript_available()
    if not have_r:
        print("Rscript with lme4/jsonlite not found: timing the native engine only")
    header = (f"{'votes':>9} {'pairs':>7} {'readers':>7} {'ours s':>9} {'glmer s':>9} {'ratio':>7} "
              f"{'|db0|':>9} {'|dse|':>9} {'|dsd_pair|':>10} {'|dsd_rdr|':>9} {'dlogLik':>10}")
    rows = []
    for n in args.sizes:
        frame = simulate(n)
        if args.glmer_only:
            _glmer(frame, n, args.glmer_cache)
            continue
        ours_t, res = fit_ours(frame, args.repeats if n < 200_000 else 1)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        line = {"votes": len(frame), "pairs": frame["pair"].nunique(), "readers": frame["reader"].nunique(),
                "ours": ours_t, "res": res, "peak_mb": peak}
        if have_r and (args.no_r_above is None or n <= args.no_r_above):
            line["r"] = _glmer(frame, n, args.glmer_cache)
        rows.append(line)
        print(_format(line, header if len(rows) == 1 else None, args.memory), flush=True)
    return 0


def _glmer(frame, n, cache):
    path = None if cache is None else cache / f"glmer_{n}.json"
    if path is not None and path.exists():
        return json.loads(path.read_text())
    r_frame = frame.assign(pair="p" + frame["pair"].astype(str), reader="r" + frame["reader"].astype(str))
    out = run_glmer(r_frame, FORMULA)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out))
    return out


def _format(line, header, memory):
    res = line["res"]
    text = "" if header is None else header + "\n"
    out = line.get("r")
    if out is None:
        text += (f"{line['votes']:>9} {line['pairs']:>7} {line['readers']:>7} {line['ours']:>9.3f} {'-':>9} {'-':>7} "
                 f"{'-':>9} {'-':>9} {'-':>10} {'-':>9} {'-':>10}   b0={res.b[0]:.5f} se={res.se[0]:.5f} "
                 f"sd={res.sd['pair']:.4f},{res.sd['reader']:.4f} logLik={res.loglik:.4f}")
    else:
        fixef = out["fixef"] if isinstance(out["fixef"], list) else [out["fixef"]]
        se = out["se"] if isinstance(out["se"], list) else [out["se"]]
        text += (f"{line['votes']:>9} {line['pairs']:>7} {line['readers']:>7} {line['ours']:>9.3f} "
                 f"{out['time_fit']:>9.3f} {out['time_fit'] / line['ours']:>7.1f} "
                 f"{abs(res.b[0] - fixef[0]):>9.2e} {abs(res.se[0] - se[0]):>9.2e} "
                 f"{abs(res.sd['pair'] - out['sd']['pair']):>10.2e} {abs(res.sd['reader'] - out['sd']['reader']):>9.2e} "
                 f"{res.loglik - out['loglik']:>10.2e}")
    if memory:
        text += f"   peak RSS {line['peak_mb']:.0f} MB"
    return text


if __name__ == "__main__":
    raise SystemExit(main())
