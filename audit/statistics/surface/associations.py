"""Is the judge scoring surface features? Associations of features with judge and human preferences.

For each scope (every matchup, and ``pooled (within matchup)`` over all pairs when there are
several matchups), each judge configuration, each judge criterion and each feature:

1. **Story level**: Pearson and Spearman correlation between the feature and the judge's
   story score over the stories of the scope (``n`` stories with both values). Premise
   effects are *not* removed here (as in the paper's Table 8).
2. **Within pair**: the judge's score difference (focal minus other) against the feature
   difference, one point per pair. Differencing within a pair removes everything the two
   stories share (premise, prompt); standardising both differences across pairs makes the
   regression slope the standardised coefficient beta, which for one predictor with an
   intercept equals the Pearson correlation of the differences (the paper's Table 9).
   Interval: percentile cluster bootstrap over pairs (or over premise groups with
   ``cluster="group"``).
3. **Humans**: the readers' votes on ``human_criterion`` (default ``overall``; ties left out
   and counted) in the crossed GLMM ``logit P(focal) = b0 + b1 z(feature difference) +
   u_pair + v_reader``; ``b1`` is the change in log-odds per standard deviation of the
   feature difference, with its Wald interval. Also the pair-level correlation of the
   share of readers preferring the focal story with the feature difference (the paper's
   r = -0.59 for mean sentence length), bootstrapped with the same pair draws as the judge.
4. **Side by side**: does the judge track a feature (beta interval excludes 0) that the
   readers do not (GLMM interval includes 0), or track it in the opposite direction?

The pooled scope does not depend on which system of each matchup is focal: the judge's and
the feature's pair differences (and the pairs' vote shares) are centred within each matchup
before pooling, and the humans' GLMM has one intercept per matchup and a reader effect per
reader x matchup (a reader's lean towards "the focal system" is not one lean across
matchups with different focal systems). (Flipping a matchup
negates its centred differences, which leaves correlations and slopes unchanged.) Story-level
correlations do not involve the orientation at all. The bootstrap resamples pairs with the
matchup means held at their full-sample values.

Intervals are pointwise; the p-values come with a multiplicity-adjusted version across every
scope x judge x criterion x feature (Holm by default), which is what the checks read. The
associations are descriptive, not causal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import AuditError, InputError, InputProblem
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.detectors.features import DetectorRecord
from judge_transfer_audit.model.data import HUMAN_OVERALL
from judge_transfer_audit.statistics.surface._inputs import (
    feature_frame,
    judge_story_scores,
    pair_differences,
    pair_table,
)
from judge_transfer_audit.statistics.uncertainty.bootstrap import multinomial_weights, percentile_interval

#: the scope pooling every matchup; its within-pair fits centre the differences within each
#: matchup (and the humans' GLMM has one intercept per matchup), so they do not depend on
#: which system of a matchup is focal
POOLED = "pooled (within matchup)"


@dataclass(frozen=True)
class SurfaceResult:
    """Associations between surface features and judge / human preferences.

    Attributes
    ----------
    correlations : pandas.DataFrame
        Story level: scope, judge, criterion, feature, n_stories, pearson_r, spearman_rho,
        p_value (t-test of r, n - 2 df), p_adjusted (``adjust`` across every row).
    within_pair : pandas.DataFrame
        scope, judge, criterion, feature, n_pairs, beta (standardised slope = Pearson r of
        the differences), beta_low, beta_high (percentile bootstrap), slope (score points per
        feature unit), slope_low, slope_high, n_boot_valid (replicates with non-zero
        variance), p_value (t-test of beta over independent pairs: n - 2 df, n - 1 - k in the
        pooled scope of k matchups), p_adjusted (``adjust`` across every row).
    humans : pandas.DataFrame
        scope, criterion (the human one), feature, n_votes, n_pairs, n_readers,
        coef (log-odds per SD of the feature difference), se, coef_low, coef_high (Wald),
        p_value (Wald),
        converged, singular, separation, pair_share_r (Pearson r of the pair's focal vote
        share with the feature difference), share_r_low, share_r_high, share_slope (the pair's focal vote share per
        unit of feature difference, least squares; what the report draws as the humans' line), note.
    side_by_side : pandas.DataFrame
        scope, judge, criterion, feature, judge_beta, judge_low, judge_high, judge_tracks
        (pointwise interval excludes 0), judge_p, judge_p_adjusted, judge_tracks_adjusted
        (also significant after the adjustment: what the checks use), human_coef, human_low,
        human_high, humans_track (pointwise), difference_p and difference_p_adjusted (the judge's
        within-pair r against the readers' pair-share r: two-sided, adjusted as ``p_adjusted``),
        pattern ("judge only": the judge tracks the feature, the readers do not, and the two
        associations differ significantly after the adjustment; "judge; readers not
        distinguishable": the judge tracks it, the readers' test does not reject, but the
        difference is not significant, so nothing says the readers do not; "humans only",
        "both, same direction", "both, opposite directions", "neither", or "humans not analysed").
    scatter_points : pandas.DataFrame
        pair_id, matchup, judge, criterion, feature, feature_diff, score_diff (focal minus
        other) for the judge's aggregate criterion (or its only one), and human_share (the
        pair's share of decisive votes for the focal story on the human criterion, ties left
        out; NaN without votes): what the report plots, judge and humans side by side.
    features, judges, criteria : tuple[str, ...]
        What was analysed.
    human_criterion : str
        The human criterion used ("" when no votes were given).
    scopes : tuple[str, ...]
        Matchups, then ``pooled`` when there are several.
    n_boot : int
    level : float
        Level of every interval.
    cluster : str
        Bootstrap cluster: "pair" or "group".
    seed : int | None
        Seed of the bootstrap (None when a Generator was passed).
    exclusions : dict[str, int]
        Rows left out, by reason.
    notes : tuple[str, ...]
    feature_detectors : tuple[DetectorRecord, ...]
        The detector records of the FeatureTable analysed (statuses, versions, parameters,
        e.g. perplexity SKIPPED and why; no timings, so the result is reproducible); empty
        when a plain frame was given.
    adjust : str
        Multiplicity adjustment of ``p_adjusted``: "holm" (default), "bh" or "none".
    """

    correlations: pd.DataFrame
    within_pair: pd.DataFrame
    humans: pd.DataFrame
    side_by_side: pd.DataFrame
    scatter_points: pd.DataFrame
    features: tuple[str, ...]
    judges: tuple[str, ...]
    criteria: tuple[str, ...]
    human_criterion: str
    scopes: tuple[str, ...]
    n_boot: int
    level: float
    cluster: str
    seed: int | None
    exclusions: dict[str, int]
    notes: tuple[str, ...]
    feature_detectors: tuple[DetectorRecord, ...] = ()
    adjust: str = "holm"

    def to_frame(self) -> pd.DataFrame:
        """The side-by-side table (one tidy row per scope x judge x criterion x feature)."""
        return self.side_by_side.copy()

    def __str__(self) -> str:
        lines = [
            f"SurfaceResult: {len(self.features)} features x {len(self.criteria)} judge criteria, "
            f"scopes {', '.join(self.scopes)}; {self.n_boot} bootstrap replicates ({self.cluster} clusters), "
            f"level {self.level:g}"
        ]
        if len(self.within_pair):
            top = self.within_pair.reindex(self.within_pair["beta"].abs().sort_values(ascending=False).index).head(5)
            lines.append("  strongest within-pair associations (beta [interval]):")
            for r in top.itertuples():
                lines.append(
                    f"    {r.scope} / {r.judge} / {r.criterion} ~ {r.feature}: "
                    f"{r.beta:+.3f} [{r.beta_low:+.3f}, {r.beta_high:+.3f}] (n={r.n_pairs})"
                )
        flagged = self.side_by_side[self.side_by_side["pattern"].isin(["judge only", "both, opposite directions"])]
        if len(flagged):
            lines.append(
                f"  judge tracks a feature the readers do not: {len(flagged)} row(s), e.g. "
                + "; ".join(f"{r.scope}/{r.criterion}~{r.feature}" for r in flagged.head(3).itertuples())
            )
        for key, value in self.exclusions.items():
            if value:
                lines.append(f"  left out: {value} {key}")
        lines.extend(f"  note: {n}" for n in self.notes)
        lines.extend(
            f"  detector {d.name}: {d.status.value} {d.reason}".rstrip() for d in self.feature_detectors if d.reason
        )
        return "\n".join(lines)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3:
        return float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    den = np.sqrt((dx * dx).sum() * (dy * dy).sum())
    return float((dx * dy).sum() / den) if den > 0 else float("nan")


def _r_p_value(r: float, df: int) -> float:
    """Two-sided p-value of a Pearson correlation: t = r sqrt(df / (1 - r^2)) on ``df`` degrees
    of freedom (df = n - 2, or n - 1 - k after centring within k matchups); NaN when undefined."""
    from scipy.special import stdtr

    if not np.isfinite(r) or df < 1:
        return float("nan")
    if abs(r) >= 1.0:
        return 0.0
    return float(2 * stdtr(df, -(abs(r) * np.sqrt(df / (1.0 - r * r)))))  # t.sf(x, df) is stdtr(df, -x)


def _weighted_r_and_slope(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson r and OLS slope of y on x in every bootstrap replicate (rows of weights W)."""
    sw = W.sum(axis=1)
    mx = (W @ x) / sw
    my = (W @ y) / sw
    dx = x[None, :] - mx[:, None]
    dy = y[None, :] - my[:, None]
    sxx = (W * dx * dx).sum(axis=1)
    syy = (W * dy * dy).sum(axis=1)
    sxy = (W * dx * dy).sum(axis=1)
    tiny = 1e-12 * np.maximum(1.0, np.maximum(sxx, syy))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where((sxx > tiny) & (syy > tiny), sxy / np.sqrt(sxx * syy), np.nan)
        slope = np.where(sxx > tiny, sxy / sxx, np.nan)
    return r, slope


def _cluster_weights(pairs: pd.DataFrame, cluster: str, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    labels = (
        pairs["pair_id"] if cluster == "pair" else pairs["group_id"].where(pairs["group_id"] != "", pairs["pair_id"])
    )
    codes, uniques = pd.factorize(labels)
    return multinomial_weights(rng, len(uniques), n_boot)[:, codes]


def _option_problem(column: str, value, message: str, fix: str) -> InputProblem:
    return InputProblem(file="options", column=column, value=str(value), message=message, fix=fix)


class _Replicates:
    """One scope's bootstrap weights ``W`` and the per-variable parts of
    :func:`_weighted_r_and_slope`, kept for every feature and score of the scope: each replicate's
    mean, deviations, weighted deviations and sum of squares are computed once per variable (and
    set of usable pairs), the cross products once per (feature, score). The same arithmetic, in
    the same order, as :func:`_weighted_r_and_slope`: bit for bit its numbers."""

    def __init__(self, W: np.ndarray):
        self.W = W
        self._weights: dict = {}
        self._moments: dict = {}
        self._intervals: dict = {}

    def prepare_intervals(self, level: float, pairs: list[tuple]) -> None:
        """The percentile intervals of :func:`_boot_summary` for many ``(x_name, x, y_name, y)`` at once:
        ``np.quantile`` of the replicate vectors of one length stacked (row by row the same numbers as
        one vector at a time), kept for :func:`_boot_summary` to read."""
        by_size: dict[int, list] = {}
        for x_name, x, y_name, y in pairs:
            ok = ~(np.isnan(x) | np.isnan(y))
            if ok.sum() < 3 or not self.W.shape[0]:
                continue
            r, slope = self.r_and_slope(x_name, x[ok], y_name, y[ok], ok)
            r, slope = r[np.isfinite(r)], slope[np.isfinite(slope)]
            self._intervals[(x_name, y_name)] = {"n_boot_valid": int(len(r))}
            for key, v in (("beta", r), ("slope", slope)):
                by_size.setdefault(v.size, []).append(((x_name, y_name), key, v))
        alpha = (1.0 - level) / 2.0
        for size, members in by_size.items():
            if size:
                lo, hi = np.quantile(np.stack([v for *_, v in members]), [alpha, 1.0 - alpha], axis=1).tolist()
            else:
                lo = hi = [float("nan")] * len(members)
            for (names, key, _), low, high in zip(members, lo, hi):
                self._intervals[names].update({f"{key}_low": float(low), f"{key}_high": float(high)})

    def prepared(self, names) -> dict | None:
        return self._intervals.get(tuple(names)) if names is not None else None

    def _kept(self, ok: np.ndarray):
        key = ok.tobytes()
        if key not in self._weights:
            Wk = self.W[:, ok]
            self._weights[key] = Wk[Wk.sum(axis=1) > 0]
        return key, self._weights[key]

    def _moment(self, name, v: np.ndarray, ok: np.ndarray):
        key, Wk = self._kept(ok)
        if (name, key) not in self._moments:
            sw = Wk.sum(axis=1)
            m = (Wk @ v) / sw
            d = v[None, :] - m[:, None]
            Wd = Wk * d
            self._moments[(name, key)] = (Wd, d, (Wd * d).sum(axis=1))
        return self._moments[(name, key)]

    def r_and_slope(self, x_name, x, y_name, y, ok) -> tuple[np.ndarray, np.ndarray]:
        """:func:`_weighted_r_and_slope` of the usable pairs ``ok`` (``x``, ``y``: already cut to them)."""
        Wdx, _, sxx = self._moment(x_name, x, ok)
        _, dy, syy = self._moment(y_name, y, ok)
        sxy = (Wdx * dy).sum(axis=1)
        tiny = 1e-12 * np.maximum(1.0, np.maximum(sxx, syy))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where((sxx > tiny) & (syy > tiny), sxy / np.sqrt(sxx * syy), np.nan)
            slope = np.where(sxx > tiny, sxy / sxx, np.nan)
        return r, slope


class _Ranks:
    """The average ranks (pandas' ``rank()``) of a scope's variables on the stories usable for a pair
    of them, computed once per variable and set of stories (most pairs use every story)."""

    def __init__(self):
        self._kept: dict = {}

    def __call__(self, name, v: np.ndarray, ok: np.ndarray) -> np.ndarray:
        key = (name, ok.tobytes())
        if key not in self._kept:
            from judge_transfer_audit.statistics.distributions import (
                rankdata,  # not at import: `audit report` imports this module
            )

            self._kept[key] = rankdata(v[ok])
        return self._kept[key]


def _boot_summary(W, x: np.ndarray, y: np.ndarray, level: float, names: tuple | None = None) -> dict:
    """Point estimates and percentile intervals of beta (r) and the slope. ``W``: the replicate
    weights, or a scope's :class:`_Replicates` with ``names`` naming ``x`` and ``y`` in it."""
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    out = {"n_pairs": int(ok.sum()), "beta": _pearson(x, y)}
    sxx = ((x - x.mean()) ** 2).sum() if len(x) else 0.0
    out["slope"] = float(((x - x.mean()) * (y - y.mean())).sum() / sxx) if len(x) >= 3 and sxx > 0 else float("nan")
    n_replicates = W.W.shape[0] if isinstance(W, _Replicates) else W.shape[0]
    done = W.prepared(names) if isinstance(W, _Replicates) and len(x) >= 3 and n_replicates else None
    if done is not None:
        keys = ("beta_low", "beta_high", "slope_low", "slope_high", "n_boot_valid")
        return {**out, **{k: done[k] for k in keys}}
    if len(x) >= 3 and n_replicates:
        if isinstance(W, _Replicates):
            r, slope = W.r_and_slope(names[0], x, names[1], y, ok)
        else:
            Wk = W[:, ok]
            keep = Wk.sum(axis=1) > 0
            r, slope = _weighted_r_and_slope(Wk[keep], x, y)
        r, slope = r[np.isfinite(r)], slope[np.isfinite(slope)]
    else:
        r = slope = np.zeros(0)
    out["beta_low"], out["beta_high"] = percentile_interval(r, level)
    out["slope_low"], out["slope_high"] = percentile_interval(slope, level)
    out["n_boot_valid"] = int(len(r))
    return out


def surface_associations(
    features,
    judge_scores: pd.DataFrame,
    pairs: pd.DataFrame,
    votes: pd.DataFrame | None,
    *,
    judge: str | None = None,
    n_boot: int = 2000,
    rng: int | np.random.Generator | None = None,
    level: float = 0.95,
    cluster: str = "pair",
    human_criterion: str = HUMAN_OVERALL,
    glmm_backend: str = "native",
    adjust: str = "holm",
) -> SurfaceResult:
    """Associations of surface features with the judge's scores and the readers' preferences.

    Parameters
    ----------
    features : FeatureTable or pandas.DataFrame
        pair_id, system and numeric feature columns (``detectors.compute_features``).
    judge_scores : pandas.DataFrame
        pair_id, system, criterion, judge, sample, score (judge_transfer_audit.model.data contract).
    pairs : pandas.DataFrame
        pair_id, focal, other, matchup, group_id.
    votes : pandas.DataFrame or None
        pair_id, reader_id, criterion, y (1 focal, 0 other, NaN tie); None skips the humans.
    judge : str, optional
        Analyse only this judge configuration (default: every configuration).
    n_boot : int
        Bootstrap replicates (0 gives point estimates only).
    rng : int, numpy Generator or None
        Bootstrap randomness; the seed is recorded.
    level : float
        Interval level.
    cluster : {"pair", "group"}
        Resample pairs, or premise groups (``group_id``; a pair without one is its own group).
    human_criterion : str
        The human criterion analysed (default ``overall``; a single criterion is used as is).
    glmm_backend : str
        Passed to :func:`judge_transfer_audit.statistics.glmm.fit_crossed_glmm`.
    adjust : {"holm", "bh", "none"}
        Multiplicity adjustment of the judge-side p-values (``p_adjusted``) across every
        scope x judge x criterion x feature of the table (story-level and within-pair
        families separately): Holm by default, because a check that warns when *any*
        association is flagged needs family-wise control (docs/detectors.md).

    Returns
    -------
    SurfaceResult

    Notes
    -----
    beta equals the Pearson r of the pair differences; it is validated against
    ``statsmodels`` OLS on standardised differences and the bootstrap against a
    replicate-by-replicate loop (tests/audit/statistics/surface/test_surface.py). The GLMM is
    :func:`judge_transfer_audit.statistics.glmm.fit_crossed_glmm` (validated against lme4 by its own tests).
    Invalid when a scope has fewer than 3 pairs (NaN) or a feature difference is constant.
    """
    problems = []
    if cluster not in ("pair", "group"):
        problems.append(_option_problem("cluster", cluster, "unknown bootstrap cluster", "use 'pair' or 'group'"))
    if not 0 < level < 1:
        problems.append(_option_problem("level", level, "interval level must be in (0, 1)", "e.g. 0.95"))
    if problems:
        raise InputError(problems)
    gen, seed = resolve_rng(rng)
    feats, names = feature_frame(features)
    wide, exclusions = judge_story_scores(judge_scores, judge)
    ptab = pair_table(pairs)
    notes: list[str] = []
    unknown = ~ptab["pair_id"].isin(feats.index.get_level_values(0))
    exclusions["pairs without features"] = int(unknown.sum())
    ptab_f = ptab[~unknown].reset_index(drop=True)
    matchups = tuple(dict.fromkeys(ptab_f["matchup"]))
    scopes = matchups + ((POOLED,) if len(matchups) > 1 else ())
    judge_cols = list(wide.columns)
    judges = tuple(dict.fromkeys(j for j, _ in judge_cols))
    criteria = tuple(dict.fromkeys(c for _, c in judge_cols))

    dF_all = pair_differences(feats, ptab_f)
    dS_all = pair_differences(wide, ptab_f)
    humans_in = _human_votes(votes, human_criterion, ptab_f, exclusions, notes)
    hcrit = humans_in[1] if humans_in else ""

    corr_rows, wp_rows, human_rows, points = [], [], [], []
    for scope in scopes:
        in_scope = np.ones(len(ptab_f), bool) if scope == POOLED else (ptab_f["matchup"] == scope).to_numpy()
        sp = ptab_f[in_scope].reset_index(drop=True)
        dF, dS = dF_all[in_scope], dS_all[in_scope]
        if scope == POOLED:  # orientation-free: each matchup's differences about their own mean
            dF, dS = _centre_within(dF, sp["matchup"]), _centre_within(dS, sp["matchup"])
        W = _cluster_weights(sp, cluster, n_boot, gen) if n_boot > 0 else np.zeros((0, len(sp)))
        stories = pd.MultiIndex.from_arrays(
            [np.concatenate([sp["pair_id"], sp["pair_id"]]), np.concatenate([sp["focal"], sp["other"]])]
        ).unique()
        reps = _Replicates(W)  # each feature's and score's replicate moments computed once
        f_st = feats.reindex(stories).to_numpy(dtype=float)
        s_st = wide.reindex(stories).to_numpy(dtype=float)
        ranked = _Ranks()  # each variable's average ranks once per set of usable stories
        reps.prepare_intervals(
            level,
            [
                (("feature", m), dF[:, m], ("score", k), dS[:, k])
                for k in range(len(judge_cols))
                for m in range(len(names))
            ],
        )
        for k, (j, c) in enumerate(judge_cols):
            for m, feature in enumerate(names):
                x, y = f_st[:, m], s_st[:, k]
                ok = ~(np.isnan(x) | np.isnan(y))
                rho = _pearson(ranked(("feature", m), x, ok), ranked(("score", k), y, ok))
                r_story = _pearson(x[ok], y[ok])
                corr_rows.append(
                    {
                        "scope": scope,
                        "judge": j,
                        "criterion": c,
                        "feature": feature,
                        "n_stories": int(ok.sum()),
                        "pearson_r": r_story,
                        "spearman_rho": rho,
                        "p_value": _r_p_value(r_story, int(ok.sum()) - 2),
                    }
                )
                summary = _boot_summary(reps, dF[:, m], dS[:, k], level, (("feature", m), ("score", k)))
                used = ~(np.isnan(dF[:, m]) | np.isnan(dS[:, k]))
                k_means = sp.loc[used, "matchup"].nunique() if scope == POOLED else 1
                summary["p_value"] = _r_p_value(summary["beta"], summary["n_pairs"] - 1 - k_means)
                wp_rows.append({"scope": scope, "judge": j, "criterion": c, "feature": feature, **summary})
        if humans_in is not None:
            human_rows.extend(_human_rows(scope, sp, dF, names, humans_in, reps, level, glmm_backend))
        if scope != POOLED or len(matchups) == 1:
            points.append(_scatter(sp, dF, dS, names, judge_cols, _pair_shares(sp, humans_in)))

    correlations = pd.DataFrame(
        corr_rows,
        columns=["scope", "judge", "criterion", "feature", "n_stories", "pearson_r", "spearman_rho", "p_value"],
    )
    within = pd.DataFrame(
        wp_rows,
        columns=[
            "scope",
            "judge",
            "criterion",
            "feature",
            "n_pairs",
            "beta",
            "beta_low",
            "beta_high",
            "slope",
            "slope_low",
            "slope_high",
            "n_boot_valid",
            "p_value",
        ],
    )
    adjuster = _adjuster(adjust)
    correlations["p_adjusted"] = adjuster(correlations["p_value"].to_numpy(float))
    within["p_adjusted"] = adjuster(within["p_value"].to_numpy(float))
    humans = pd.DataFrame(human_rows, columns=list(_HUMAN_COLUMNS))
    return SurfaceResult(
        correlations=correlations,
        within_pair=within,
        humans=humans,
        side_by_side=_side_by_side(within, humans, 1.0 - level, adjust),
        scatter_points=_concat(points, _SCATTER_COLUMNS),
        features=names,
        judges=judges,
        criteria=criteria,
        human_criterion=hcrit,
        scopes=scopes,
        n_boot=int(n_boot),
        level=float(level),
        cluster=cluster,
        seed=seed,
        exclusions=exclusions,
        notes=tuple(notes),
        feature_detectors=tuple(run.record() for run in getattr(features, "detectors", ())),
        adjust=adjust,
    )


def readjust(result: SurfaceResult, adjust: str) -> SurfaceResult:
    """The same associations with the p-values adjusted by another method ("holm", "bh",
    "none"): ``p_adjusted`` and the side-by-side decisions are recomputed, nothing else."""
    from dataclasses import replace

    adjuster = _adjuster(adjust)
    correlations = result.correlations.assign(p_adjusted=adjuster(result.correlations["p_value"].to_numpy(float)))
    within = result.within_pair.assign(p_adjusted=adjuster(result.within_pair["p_value"].to_numpy(float)))
    return replace(
        result,
        correlations=correlations,
        within_pair=within,
        adjust=adjust,
        side_by_side=_side_by_side(within, result.humans, 1.0 - result.level, adjust),
    )


def _adjuster(adjust: str):
    from judge_transfer_audit.statistics.uncertainty.multiplicity import ADJUSTMENTS, benjamini_hochberg, holm

    if adjust not in ADJUSTMENTS:
        raise InputError(
            InputProblem(
                file="options",
                column="adjust",
                value=str(adjust),
                message="unknown multiplicity adjustment",
                fix=f"use one of {', '.join(ADJUSTMENTS)}",
            )
        )
    return {"none": lambda p: np.asarray(p, float), "holm": holm, "bh": benjamini_hochberg}[adjust]


_SCATTER_COLUMNS = ("pair_id", "matchup", "judge", "criterion", "feature", "feature_diff", "score_diff", "human_share")
_HUMAN_COLUMNS = (
    "scope",
    "criterion",
    "feature",
    "n_votes",
    "n_pairs",
    "n_readers",
    "coef",
    "se",
    "coef_low",
    "coef_high",
    "p_value",
    "converged",
    "singular",
    "separation",
    "pair_share_r",
    "share_r_low",
    "share_r_high",
    "share_slope",
    "note",
)


def _concat(frames: list[pd.DataFrame], columns) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(columns))


def _scatter(sp, dF, dS, names, judge_cols, share) -> pd.DataFrame:
    from judge_transfer_audit.model.data import JUDGE_AGGREGATE

    rows = []
    for k, (j, c) in enumerate(judge_cols):
        crits = [cc for jj, cc in judge_cols if jj == j]
        if c != (JUDGE_AGGREGATE if JUDGE_AGGREGATE in crits else crits[0]):
            continue
        for m, feature in enumerate(names):
            rows.append(
                pd.DataFrame(
                    {
                        "pair_id": sp["pair_id"],
                        "matchup": sp["matchup"],
                        "judge": j,
                        "criterion": c,
                        "feature": feature,
                        "feature_diff": dF[:, m],
                        "score_diff": dS[:, k],
                        "human_share": share,
                    }
                )
            )
    return _concat(rows, _SCATTER_COLUMNS)


def _pair_shares(sp: pd.DataFrame, humans_in) -> np.ndarray:
    """Each pair's share of decisive human votes for the focal story (ties left out; NaN without votes)."""
    if humans_in is None:
        return np.full(len(sp), np.nan)
    v = humans_in[0]
    return v.groupby("pair_id")["y"].mean().reindex(sp["pair_id"]).to_numpy(dtype=float)


def _human_votes(votes, criterion, ptab, exclusions, notes):
    """(decisive votes of the human criterion on known pairs, the criterion) or None."""
    if votes is None or len(votes) == 0:
        notes.append("no human votes given: the humans' side is not analysed")
        return None
    v = votes.assign(pair_id=votes["pair_id"].astype(str), criterion=votes["criterion"].astype(str))
    crits = list(dict.fromkeys(v["criterion"]))
    if criterion not in crits:
        if len(crits) == 1:
            criterion = crits[0]
        else:
            notes.append(f"no human criterion '{criterion}' among {', '.join(crits)}: the humans' side is not analysed")
            return None
    v = v[v["criterion"] == criterion]
    exclusions["human votes that are ties (y NaN)"] = int(v["y"].isna().sum())
    v = v[v["y"].notna()]
    known = v["pair_id"].isin(ptab["pair_id"])
    exclusions["human votes on pairs without features"] = int((~known).sum())
    return v[known], criterion


def _centre_within(values: np.ndarray, matchup: pd.Series) -> np.ndarray:
    """Columns of ``values`` (one row per pair) minus their mean within each matchup (NaN-aware)."""
    frame = pd.DataFrame(values)
    return (frame - frame.groupby(matchup.to_numpy()).transform("mean")).to_numpy(dtype=float)


def _human_rows(scope, sp, dF, names, humans_in, W, level, backend) -> list[dict]:
    v, criterion = humans_in
    v = v[v["pair_id"].isin(sp["pair_id"])]
    pos = pd.Series(np.arange(len(sp)), index=sp["pair_id"]).reindex(v["pair_id"]).to_numpy()
    share = (v.groupby("pair_id")["y"].mean()).reindex(sp["pair_id"]).to_numpy(dtype=float)
    strata = pd.factorize(sp["matchup"])[0]
    if scope == POOLED:  # the share of a pair flips with its matchup's orientation: centre it too
        share = _centre_within(share[:, None], sp["matchup"])[:, 0]
    rows, todo = [], []
    for m, feature in enumerate(names):
        x = dF[:, m]
        row = {
            "scope": scope,
            "criterion": criterion,
            "feature": feature,
            "n_votes": 0,
            "n_pairs": 0,
            "n_readers": 0,
            "coef": np.nan,
            "se": np.nan,
            "coef_low": np.nan,
            "coef_high": np.nan,
            "p_value": np.nan,
            "converged": False,
            "singular": False,
            "separation": False,
            "note": "",
        }
        s = _boot_summary(W, x, share, level, (("feature", m), ("share", 0)))
        row.update(
            pair_share_r=s["beta"], share_r_low=s["beta_low"], share_r_high=s["beta_high"], share_slope=s["slope"]
        )
        ok_pairs = ~np.isnan(x)
        sd = np.nanstd(x[ok_pairs], ddof=1) if ok_pairs.sum() >= 2 else 0.0
        use = ok_pairs[pos]
        vv = v[use]
        row.update(n_votes=int(len(vv)), n_pairs=int(vv["pair_id"].nunique()), n_readers=int(vv["reader_id"].nunique()))
        if not sd > 0 or row["n_pairs"] < 3:
            row["note"] = "feature difference constant or fewer than 3 pairs: GLMM not fitted"
            rows.append(row)
            continue
        z = (x - np.nanmean(x[ok_pairs])) / sd
        k_strata = int(strata.max()) + 1 if scope == POOLED and len(strata) else 1
        if k_strata > 1:
            # one intercept per matchup, x already centred within matchups: flipping a matchup's
            # focal system negates its intercept and its z, and leaves the slope unchanged
            codes = strata[pos[use]]
            X = np.column_stack([(codes == k).astype(float) for k in range(k_strata)] + [z[pos[use]]])
            x_names = [f"(Intercept: {m})" for m in dict.fromkeys(sp["matchup"])] + [feature]
        else:
            X = np.column_stack([np.ones(len(vv)), z[pos[use]]])
            x_names = ["(Intercept)", feature]
        slope = X.shape[1] - 1
        readers = vv["reader_id"].astype(str).to_numpy()
        if k_strata > 1:  # a reader's lean towards "the focal system" means something within one matchup only
            readers = np.char.add(np.char.add(sp["matchup"].to_numpy(dtype=str)[pos[use]], "\x1f"), readers)
        rows.append(row)
        todo.append(
            (
                row,
                slope,
                (vv["y"].to_numpy(dtype=float), {"pair": vv["pair_id"].to_numpy(), "reader": readers}, X, x_names),
            )
        )
    for (row, slope, _), fit in zip(todo, _fit_features([args for *_, args in todo], level, backend)):
        if isinstance(fit, AuditError):  # one failed fit is a recorded value, not a crashed analysis
            row["note"] = f"GLMM failed: {fit}"
            continue
        from judge_transfer_audit.statistics.distributions import norm

        se = float(fit.se[slope])
        row.update(
            coef=float(fit.b[slope]),
            se=se,
            coef_low=float(fit.wald_low[slope]),
            coef_high=float(fit.wald_high[slope]),
            p_value=float(2 * norm.sf(abs(fit.b[slope]) / se)) if np.isfinite(se) and se > 0 else np.nan,
            converged=bool(fit.converged),
            singular=bool(fit.singular),
            separation=bool(fit.separation),
            note="; ".join(fit.notes),
        )
    return rows


def _fit_features(fits: list, level: float, backend: str) -> list:
    """The GLMM of every feature (``(y, factors, X, x_names)`` each): a GlmmResult, or the
    AuditError its fit raised. With the native engine they are fitted together
    (:func:`judge_transfer_audit.statistics.glmm.batch.fit_many`: one scope's features share the votes and levels, so
    their fits are evaluated at once; each fit makes the per-fit engine's decisions)."""
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    def one(y, factors, X, x_names):
        try:
            return fit_crossed_glmm(y, factors, X=X, x_names=x_names, level=level, backend=backend)
        except AuditError as exc:
            return exc

    if backend != "native" or not 0.0 < level < 1.0:
        return [one(*args) for args in fits]
    from judge_transfer_audit.statistics.glmm.batch import fit_many
    from judge_transfer_audit.statistics.glmm.design import build_design

    out: list = [None] * len(fits)
    designs, where = [], []
    for i, (y, factors, X, x_names) in enumerate(fits):
        try:
            designs.append(build_design(y, factors, X, x_names))
            where.append(i)
        except AuditError as exc:
            out[i] = exc
    try:
        fitted = fit_many(designs, level=level)
    except AuditError:  # fit each on its own, so that each failure is recorded on its own row
        fitted = [one(*fits[i]) for i in where]
    for i, fit in zip(where, fitted):
        out[i] = fit
    return out


def _excludes_zero(low, high) -> np.ndarray:
    low, high = np.asarray(low, float), np.asarray(high, float)
    return (low > 0) | (high < 0)


def _difference_p(out: pd.DataFrame, alpha: float) -> np.ndarray:
    """Two-sided p of "the judge's within-pair r differs from the readers' pair-share r" per row.

    Both are Pearson correlations of a pair-level difference with the feature difference over the
    scope's pairs; each standard error is read off its percentile interval at level ``1 - alpha``
    (``(high - low) / (2 z)``) and the two are combined as if independent (they share the pairs, whose
    positive dependence would make the difference's variance smaller: the test is conservative for it).
    The readers' share is a noisy per-pair mean of a few votes, which pulls its r towards 0; that
    attenuation is not corrected. NaN where either side has no interval.
    """
    from scipy.special import ndtr, ndtri

    z = float(ndtri(1.0 - alpha / 2.0))
    se_j = (out["judge_high"].to_numpy(float) - out["judge_low"].to_numpy(float)) / (2.0 * z)
    se_h = (out["share_r_high"].to_numpy(float) - out["share_r_low"].to_numpy(float)) / (2.0 * z)
    r_h = (out["share_r_high"].to_numpy(float) + out["share_r_low"].to_numpy(float)) / 2.0
    if "share_r" in out.columns:
        r_h = np.where(np.isfinite(out["share_r"].to_numpy(float)), out["share_r"].to_numpy(float), r_h)
    se = np.sqrt(se_j**2 + se_h**2)
    diff = out["judge_beta"].to_numpy(float) - r_h
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.abs(diff) / se
    p = 2.0 * ndtr(-stat)
    return np.where(np.isfinite(p) & (se > 0), p, np.nan)


def _side_by_side(
    within: pd.DataFrame, humans: pd.DataFrame, alpha: float = 0.05, adjust: str = "holm"
) -> pd.DataFrame:
    out = within[
        ["scope", "judge", "criterion", "feature", "beta", "beta_low", "beta_high", "p_value", "p_adjusted"]
    ].rename(
        columns={
            "beta": "judge_beta",
            "beta_low": "judge_low",
            "beta_high": "judge_high",
            "p_value": "judge_p",
            "p_adjusted": "judge_p_adjusted",
        }
    )
    out["judge_tracks"] = _excludes_zero(out["judge_low"], out["judge_high"])
    out["judge_tracks_adjusted"] = (out["judge_p_adjusted"].to_numpy(float) < alpha) & out["judge_tracks"]
    h = humans[["scope", "feature", "coef", "coef_low", "coef_high", "pair_share_r", "share_r_low", "share_r_high"]]
    h = h.rename(
        columns={"coef": "human_coef", "coef_low": "human_low", "coef_high": "human_high", "pair_share_r": "share_r"}
    )
    out = out.merge(h, on=["scope", "feature"], how="left")
    numeric = ["human_coef", "human_low", "human_high", "share_r", "share_r_low", "share_r_high"]
    out[numeric] = out[numeric].astype(float)
    glmm_ok = out["human_coef"].notna()
    tracks = np.where(
        glmm_ok,
        _excludes_zero(out["human_low"], out["human_high"]),
        _excludes_zero(out["share_r_low"], out["share_r_high"]),
    )
    analysed = glmm_ok | out["share_r_low"].notna()
    out["humans_track"] = tracks & analysed.to_numpy()
    human_sign = np.sign(np.where(glmm_ok, out["human_coef"], out["share_r_low"] + out["share_r_high"]))
    same = np.sign(out["judge_beta"]) == human_sign
    # "judge only" claims a difference: the judge's and the readers' associations must differ significantly
    # (the same adjustment as the judge's side), not merely the readers' own test fail to reject
    difference_p = _difference_p(out, alpha)
    out["difference_p"] = difference_p
    out["difference_p_adjusted"] = _adjuster(adjust)(difference_p)
    differs = np.nan_to_num(out["difference_p_adjusted"].to_numpy(float), nan=1.0) < alpha
    pattern = np.select(
        [
            ~analysed,
            out["judge_tracks"] & ~out["humans_track"] & ~differs,
            out["judge_tracks"] & ~out["humans_track"],
            ~out["judge_tracks"] & out["humans_track"],
            out["judge_tracks"] & out["humans_track"] & same,
            out["judge_tracks"] & out["humans_track"],
        ],
        [
            "humans not analysed",
            "judge; readers not distinguishable",
            "judge only",
            "humans only",
            "both, same direction",
            "both, opposite directions",
        ],
        default="neither",
    )
    out["pattern"] = pattern
    return out.drop(columns=["share_r", "share_r_low", "share_r_high"])[
        [
            "scope",
            "judge",
            "criterion",
            "feature",
            "judge_beta",
            "judge_low",
            "judge_high",
            "judge_tracks",
            "judge_p",
            "judge_p_adjusted",
            "judge_tracks_adjusted",
            "human_coef",
            "human_low",
            "human_high",
            "humans_track",
            "difference_p",
            "difference_p_adjusted",
            "pattern",
        ]
    ]
