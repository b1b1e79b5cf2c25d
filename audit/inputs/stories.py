"""Read the story texts (optional): pair_id or item_id, system, text, extra numeric features."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.inputs.formats import Table
from judge_transfer_audit.inputs.layout import blank_ids, duplicates, require
from judge_transfer_audit.inputs.problems import ProblemLog

BASE = ("pair_id", "item_id", "system", "text")


def read_stories(table: Table, log: ProblemLog, key: str, notes: list[str]) -> pd.DataFrame | None:
    """Read stories keyed by ``key`` ("pair_id" or "item_id").

    Extra columns whose every non-empty value is a number are kept as float columns
    (precomputed surface features, NaN where empty); other extra columns are ignored and
    named in ``notes``.
    """
    has = set(table.columns)
    if key not in has:
        alt = "item_id" if key == "pair_id" else "pair_id"
        if alt in has:
            log.add(
                table.path,
                f"the stories file is keyed by {alt} but the judgments by {key}",
                f"key the stories by {key}",
                line=1 if table.format in ("csv", "tsv") else None,
                column=alt,
            )
            return None
    if not require(table, [key, "system", "text"], log, "a stories file"):
        return None
    f = table.frame.copy()
    f["line"] = table.lines
    lines = f["line"].to_numpy()
    bad = blank_ids(f, [key, "system"], table, log, "stories")
    empty = (f["text"] == "").to_numpy()
    bad |= log.rows(
        table.path,
        "stories",
        empty,
        lines,
        None,
        "text",
        "the story text is empty",
        "give the text, or remove the row",
        "empty text",
    )
    extras, ignored = [], []
    for c in f.columns:
        if c in BASE or c == "line":
            continue
        col = f[c]
        nonempty = col != ""
        # 'nan', 'inf' are numbers to pandas but not usable feature values: a numeric column
        # holding them gets one problem per cell instead of being ignored or poisoning the fits
        nonfinite = col.str.lower().str.lstrip("+-").isin(NON_FINITE).to_numpy()
        nums = pd.to_numeric(col.where(nonempty & ~nonfinite), errors="coerce")
        if nonempty.any() and not (nums.isna() & nonempty & ~nonfinite).any() and (nonempty & ~nonfinite).any():
            log.rows(
                table.path,
                "stories",
                nonfinite,
                lines,
                col.to_numpy(),
                c,
                f"precomputed feature '{c}' is not a finite number",
                "leave the cell empty to mark a missing value",
                f"non-finite value of feature '{c}' (kept as missing)",
            )
            f[c] = nums.astype(float)
            extras.append(c)
        else:
            ignored.append(c)
    if ignored:
        notes.append(f"stories: non-numeric extra column(s) ignored: {', '.join(ignored)}")
    f = f[~bad]
    dup = duplicates(
        f, [key, "system"], table, log, "stories", "duplicate story for the same id and system", "give each story once"
    )
    f = f[~dup]
    return f[[key, "system", "text"] + extras + ["line"]].reset_index(drop=True)


NON_FINITE = {"nan", "inf", "infinity"}


def stories_by_pair(s: pd.DataFrame, pairs: pd.DataFrame, path: str, log: ProblemLog) -> pd.DataFrame:
    m = s.merge(pairs[["pair_id", "system_a", "system_b"]], on="pair_id", how="left", sort=False)
    ok = ((m["system"] == m["system_a"]) | (m["system"] == m["system_b"])).to_numpy()
    known = m["system_a"].notna().to_numpy()
    bad = log.rows(
        path,
        "stories",
        known & ~ok,
        m["line"].to_numpy(),
        m["system"].to_numpy(),
        "system",
        "system is not one of the pair's two systems",
        "check the pair_id and system",
        "system not in the pair",
    )
    m = m[known & ~bad].drop(columns=["system_a", "system_b"])
    m.insert(2, "item_id", m["pair_id"] + ":" + m["system"])
    return m.reset_index(drop=True)


def stories_by_item(s: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per (pair, side) for stories keyed by item_id (an item's text repeats across its pairs)."""
    sides = pd.concat(
        [
            pairs[["pair_id", "item_a", "system_a"]].set_axis(["pair_id", "item_id", "side"], axis=1),
            pairs[["pair_id", "item_b", "system_b"]].set_axis(["pair_id", "item_id", "side"], axis=1),
        ]
    )
    sides["_p"] = np.tile(np.arange(len(pairs)), 2)
    sides["_o"] = np.repeat([0, 1], len(pairs))
    m = sides.merge(s.drop(columns=["system"]), on="item_id", sort=False).sort_values(["_p", "_o"], kind="stable")
    m = m.rename(columns={"side": "system"})
    cols = ["pair_id", "system", "item_id", "text"] + [c for c in s.columns if c not in BASE and c != "line"] + ["line"]
    return m[cols].reset_index(drop=True)
