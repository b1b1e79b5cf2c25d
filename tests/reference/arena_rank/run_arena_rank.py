"""Run LMArena's arena-rank on the seeded designs of make_inputs.py and write arena_rank.json.

Run from this directory with an interpreter that has arena-rank (it pins numpy==2.3.3, so a separate
virtual environment: ``python -m venv /tmp/arena && /tmp/arena/bin/pip install arena-rank`` then
``/tmp/arena/bin/python run_arena_rank.py``). For every case: arena-rank's BradleyTerry with its
defaults (scale 400, base 10, initial rating 1000, L-BFGS, ties as outcome 0.5), the ratings with its
default intervals (``ci_method="sandwich"``) at significance level 0.05. (Its other method,
``ci_method="bootstrap"``, refits 100 multinomial resamples of the vote buckets; each refit compiles its
optimiser afresh (10 resamples took 90 s on the 2-core machine), so it is left out here.)
"""

import json
import sys
from importlib.metadata import version

import numpy as np
import pandas as pd
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.utils.data_utils import PairDataset

CASES = ("plain", "ties_readers", "position")


def as_list(x):
    return [float(v) for v in np.asarray(x)]


def run(case: str) -> dict:
    df = pd.read_csv(f"{case}.csv")
    data = PairDataset.from_pandas(df)
    out = {"n_votes": len(df), "competitors": list(data.competitors)}
    for method in ("sandwich",):
        model = BradleyTerry(n_competitors=len(data.competitors))
        res = model.compute_ratings_and_cis(data, significance_level=0.05, ci_method=method)
        out[method] = {
            "ratings": as_list(res["ratings"]),
            "rating_lower": as_list(res["rating_lower"]),
            "rating_upper": as_list(res["rating_upper"]),
            "variances": as_list(res["variances"]),
        }
    return out


if __name__ == "__main__":
    model = BradleyTerry(n_competitors=2)
    result = {
        "arena_rank_version": version("arena-rank"),
        "jax_version": version("jax"),
        "numpy_version": version("numpy"),
        "python": sys.version.split()[0],
        "settings": {
            "scale": model.scale,
            "base": model.base,
            "init_rating": model.init_rating,
            "hessian_reg": model.hessian_reg,
            "ftol": model.ftol,
            "gtol": model.gtol,
        },
        "cases": {case: run(case) for case in CASES},
    }
    with open("arena_rank.json", "w") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")
