"""Shape the inputs of the surface analysis: feature table, judge story scores, pair differences."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.model.data import JUDGE_AGGREGATE

_KEYS = ("pair_id", "system")


def feature_frame(features) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """``(frame indexed by (pair_id, system), feature names)`` from a FeatureTable or a frame."""
    frame = features.frame if hasattr(features, "frame") and hasattr(features, "detectors") else features
    if not isinstance(frame, pd.DataFrame):
        raise TypeError("features must be a FeatureTable or a pandas DataFrame")
    missing = [c for c in _KEYS if c not in frame.columns]
    if missing:
        raise InputError(
            InputProblem(
                file="features",
                message=f"missing column(s) {', '.join(missing)}",
                fix="the feature table needs pair_id, system and numeric feature columns",
            )
        )
    names = tuple(
        c
        for c in frame.columns
        if c not in _KEYS and pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
    )
    if not names:
        raise InputError(
            InputProblem(
                file="features",
                message="no numeric feature column",
                fix="compute features with detectors.compute_features first",
            )
        )
    out = frame.assign(pair_id=frame["pair_id"].astype(str), system=frame["system"].astype(str))
    dup = out.duplicated(list(_KEYS))
    if dup.any():
        row = out[dup].iloc[0]
        raise InputError(
            InputProblem(
                file="features",
                message="duplicate feature row for a story",
                value=f"{row['pair_id']}/{row['system']}",
                fix="one row per pair_id and system",
            )
        )
    return out.set_index(list(_KEYS))[list(names)].astype(float), names


def judge_story_scores(judge_scores: pd.DataFrame, judge: str | None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Wide story scores: index (pair_id, system), columns (judge, criterion).

    A story's score is the mean over the judge's samples of its non-NaN scores (NaN =
    unparsable output, counted in the returned exclusions). With two or more criteria and
    no ``aggregate`` criterion in the data, ``aggregate`` (the mean over criteria, NaN
    unless every criterion has a score) is added.
    """
    needed = ("pair_id", "system", "criterion", "judge", "score")
    missing = [c for c in needed if c not in judge_scores.columns]
    if missing:
        raise InputError(
            InputProblem(
                file="judge",
                message=f"missing column(s) {', '.join(missing)}",
                fix="judge scores need pair_id, system, criterion, judge, score",
            )
        )
    scores = judge_scores.assign(
        pair_id=judge_scores["pair_id"].astype(str),
        system=judge_scores["system"].astype(str),
        judge=judge_scores["judge"].astype(str),
        criterion=judge_scores["criterion"].astype(str),
    )
    if judge is not None:
        known = sorted(scores["judge"].unique())
        if judge not in known:
            raise InputError(
                InputProblem(
                    file="judge",
                    column="judge",
                    value=judge,
                    message="unknown judge",
                    fix=f"use one of: {', '.join(known)}",
                )
            )
        scores = scores[scores["judge"] == judge]
    exclusions = {"judge scores that are NaN (unparsable)": int(scores["score"].isna().sum())}
    scores = scores[scores["score"].notna()]
    wide = scores.pivot_table(
        index=["pair_id", "system"], columns=["judge", "criterion"], values="score", aggfunc="mean", sort=False
    )
    for j in dict.fromkeys(wide.columns.get_level_values(0)):
        crits = [c for (jj, c) in wide.columns if jj == j]
        if len(crits) >= 2 and JUDGE_AGGREGATE not in crits:
            wide[(j, JUDGE_AGGREGATE)] = wide[[(j, c) for c in crits]].mean(axis=1, skipna=False)
    wide = wide.reindex(
        columns=pd.MultiIndex.from_tuples(
            sorted(
                wide.columns,
                key=lambda jc: (
                    list(dict.fromkeys(wide.columns.get_level_values(0))).index(jc[0]),
                    jc[1] == JUDGE_AGGREGATE,
                ),
            )
        )
    )
    return wide, exclusions


def pair_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """pair_id, focal, other, matchup, group_id (as strings), one row per pair."""
    missing = [c for c in ("pair_id", "focal", "other", "matchup") if c not in pairs.columns]
    if missing:
        raise InputError(
            InputProblem(
                file="pairs",
                message=f"missing column(s) {', '.join(missing)}",
                fix="pairs need pair_id, focal, other, matchup (judge_transfer_audit.model.data normalises them)",
            )
        )
    out = pairs[["pair_id", "focal", "other", "matchup"]].astype(str).copy()
    # A missing group (NaN from a hand-built frame) must stay "no group", not become one
    # shared "nan" cluster in the bootstrap.
    out["group_id"] = (
        pairs["group_id"].astype(object).where(pairs["group_id"].notna(), "").astype(str)
        if "group_id" in pairs.columns
        else ""
    )
    return out.drop_duplicates("pair_id").reset_index(drop=True)


def pair_differences(wide: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    """Focal minus other for every column of ``wide`` (rows: ``pairs`` in order); NaN when missing."""
    focal = wide.reindex(pd.MultiIndex.from_arrays([pairs["pair_id"], pairs["focal"]])).to_numpy(dtype=float)
    other = wide.reindex(pd.MultiIndex.from_arrays([pairs["pair_id"], pairs["other"]])).to_numpy(dtype=float)
    return focal - other
