"""Load the stored lme4 reference cases of tests/reference/glmm/."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

REFERENCE = Path(__file__).resolve().parents[3] / "reference" / "glmm"
CASES = json.loads((REFERENCE / "cases.json").read_text())


def parse_formula(formula: str) -> tuple[list[str], list[str]]:
    """Fixed-effect columns and grouping factors of ``y ~ a + b + (1|g) + (1|h)``."""
    rhs = formula.split("~", 1)[1]
    terms = [t.strip() for t in rhs.split("+")]
    groups = [t.strip("() ").split("|")[1].strip() for t in terms if "|" in t]
    fixed = [t for t in terms if "|" not in t and t not in ("1", "")]
    return fixed, groups


@lru_cache(maxsize=None)
def load_case(name: str):
    """Return ``(y, factors, X, x_names, formula, profile)`` of a stored case."""
    case = CASES[name]
    frame = pd.read_csv(REFERENCE / "inputs" / f"{name}.csv", dtype={"pair": str, "reader": str, "batch": str})
    fixed, groups = parse_formula(case["formula"])
    X = np.column_stack([np.ones(len(frame))] + [frame[c].to_numpy(float) for c in fixed]) if fixed else None
    names = ("(Intercept)", *fixed) if fixed else None
    factors = {g: frame[g].to_numpy() for g in groups}
    return frame["y"].to_numpy(float), factors, X, names, case["formula"], case["profile"]


@lru_cache(maxsize=None)
def load_output(name: str, tight: bool = False) -> dict:
    """The glmer output stored for a case (``tight``: tolPwrss = 1e-10)."""
    suffix = ".tight" if tight else ""
    out = json.loads((REFERENCE / "outputs" / f"{name}{suffix}.json").read_text())
    # jsonlite's auto_unbox turns length-1 vectors into scalars: make them lists again
    for key in ("names", "fixef", "se", "profile_low", "profile_high"):
        if key in out and not isinstance(out[key], list):
            out[key] = [out[key]]
    if "vcov" in out:
        out["vcov"] = [row if isinstance(row, list) else [row] for row in out["vcov"]]
    return out
