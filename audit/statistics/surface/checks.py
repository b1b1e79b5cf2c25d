"""Surface-sensitivity checks: is the judge's score explained by style the readers ignore?"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from judge_transfer_audit.model.checks import Check, Status, apply_severity, breach_status
from judge_transfer_audit.statistics.surface.associations import SurfaceResult

#: Defaults of the policy keys read by :func:`surface_checks` (section ``[surface]``).
DEFAULT_SURFACE_THRESHOLDS: dict[str, float] = {
    #: largest |story-level Pearson r| between any feature and any judge criterion
    "max_abs_judge_feature_r": 0.5,
    #: smallest |within-pair beta| that counts as the judge tracking a feature
    "min_abs_within_pair_beta": 0.3,
}


def _threshold(thresholds: Any, key: str) -> float:
    if thresholds is None:
        return DEFAULT_SURFACE_THRESHOLDS[key]
    if isinstance(thresholds, Mapping):
        for k in (key, f"surface.{key}"):
            if k in thresholds:
                return float(thresholds[k])
        return DEFAULT_SURFACE_THRESHOLDS[key]
    return float(getattr(thresholds, key, DEFAULT_SURFACE_THRESHOLDS[key]))


def surface_check_families(result: SurfaceResult) -> int:
    """How many surface checks that test something will be computed (each spends a share of
    the diagnostics' error budget): the story-level one, and the within-pair one with votes."""
    with_votes = len(result.side_by_side) and not (result.side_by_side["pattern"] == "humans not analysed").all()
    return 1 + int(bool(with_votes))


def surface_checks(
    result: SurfaceResult, thresholds: Any = None, severity: Mapping[str, str] | None = None, families: int = 1
) -> list[Check]:
    """Surface-sensitivity checks, one of each per scope (matchup or pooled).

    ``surface.judge_feature_r``
        Some story-level Pearson r between a feature and a judge criterion exceeds
        ``max_abs_judge_feature_r`` (default 0.5) in size *and* is significant after the
        multiplicity adjustment across every scope x criterion x feature (``p_adjusted``;
        Holm by default): a large r from 40 stories and 100 comparisons is often chance.
    ``surface.judge_only_feature``
        Some feature is tracked by the judge within pairs (beta interval excludes 0, the
        adjusted p-value is below 1 - level, and |beta| >= ``min_abs_within_pair_beta``,
        default 0.3) but not by the readers (their pointwise GLMM interval includes 0), or
        by both in opposite directions. SKIPPED without votes. The readers' side stays
        pointwise: adjusting it would call more features "judge only", not fewer.

    Parameters
    ----------
    result : SurfaceResult
    thresholds : mapping or object, optional
        Keys (optionally prefixed ``surface.``) or attributes named as in
        :data:`DEFAULT_SURFACE_THRESHOLDS`, e.g. the policy's ``surface`` section.
    severity : mapping, optional
        Check name -> "FAIL" | "WARN" | "OFF": what a breach reports (default WARN:
        judge_transfer_audit.model.checks.DEFAULT_SEVERITY; OFF drops the check), applied by
        :func:`judge_transfer_audit.model.checks.apply_severity`.
    families : int
        The number of diagnostic checks (surface and reader) sharing one family-wise error
        budget ``1 - level``: each tests at ``(1 - level) / families`` (Bonferroni across
        checks, the result's ``adjust`` across each check's scopes).

    Returns
    -------
    list[Check]
        PASS, the breach status, or SKIPPED with the reason. Because the adjustment spans
        every scope, an aligned judge is warned in about ``1 - level`` of studies at most
        (docs/detectors.md gives the simulated rate).
    """
    alpha = (1.0 - result.level) / max(int(families), 1)
    max_r = _threshold(thresholds, "max_abs_judge_feature_r")
    min_beta = _threshold(thresholds, "min_abs_within_pair_beta")
    checks: list[Check] = []
    for scope in result.scopes:
        name = "surface.judge_feature_r"
        breach = breach_status(name)
        c = result.correlations[(result.correlations["scope"] == scope) & result.correlations["pearson_r"].notna()]
        if c.empty:
            checks.append(
                Check(name, Status.SKIPPED, reason="no story-level correlation could be computed", scope=scope)
            )
        else:
            top = c.loc[c["pearson_r"].abs().idxmax()]
            value = float(abs(top["pearson_r"]))
            p_adj = _p_adjusted(c, top)
            what = (
                f"{top['judge']}/{top['criterion']} vs {top['feature']}: r = {top['pearson_r']:+.2f} "
                f"(n={top['n_stories']}, adjusted p={_fmt_p(p_adj)})"
            )
            large = c[(c["pearson_r"].abs() > max_r) & (_adjusted(c) < alpha)]
            if len(large):
                top = large.loc[large["pearson_r"].abs().idxmax()]
                value = float(abs(top["pearson_r"]))
                what = (
                    f"{top['judge']}/{top['criterion']} vs {top['feature']}: r = {top['pearson_r']:+.2f} "
                    f"(n={top['n_stories']}, adjusted p={_fmt_p(_p_adjusted(c, top))})"
                )
                checks.append(
                    Check(
                        name,
                        breach,
                        value,
                        max_r,
                        scope=scope,
                        reason=(
                            f"judge scores correlate with a surface feature beyond |r| = {max_r:g}: {what}; "
                            "inspect whether the judge rewards style rather than the criterion"
                        ),
                    )
                )
            else:
                chance = " (not significant after the multiplicity adjustment)" if value > max_r else ""
                checks.append(
                    Check(
                        name,
                        Status.PASS,
                        value,
                        max_r,
                        scope=scope,
                        reason=f"largest story-level |r| is {value:.2f} ({what}){chance}",
                    )
                )
        name = "surface.judge_only_feature"
        breach = breach_status(name)
        s = result.side_by_side[result.side_by_side["scope"] == scope]
        if s.empty or (s["pattern"] == "humans not analysed").all():
            checks.append(
                Check(
                    name,
                    Status.SKIPPED,
                    scope=scope,
                    reason="no human votes to compare with: give the humans' overall preferences",
                )
            )
            continue
        candidates = s[
            s["pattern"].isin(["judge only", "both, opposite directions"]) & (s["judge_beta"].abs() >= min_beta)
        ]
        flagged = candidates[_tracks_adjusted(candidates, alpha)]
        if flagged.empty:
            strongest = float(np.nanmax(s["judge_beta"].abs())) if s["judge_beta"].notna().any() else float("nan")
            chance = (
                f"; {len(candidates)} pointwise association(s) not significant after the {result.adjust} adjustment"
                if len(candidates)
                else ""
            )
            checks.append(
                Check(
                    name,
                    Status.PASS,
                    None if np.isnan(strongest) else strongest,
                    min_beta,
                    scope=scope,
                    reason="no feature is tracked by the judge and not by the readers" + chance,
                )
            )
            continue
        top = flagged.loc[flagged["judge_beta"].abs().idxmax()]
        checks.append(
            Check(
                name,
                breach,
                float(abs(top["judge_beta"])),
                min_beta,
                scope=scope,
                reason=(
                    f"{len(flagged)} judge criterion x feature association(s) the readers do not share, strongest "
                    f"{top['judge']}/{top['criterion']} ~ {top['feature']} (beta = {top['judge_beta']:+.2f}, "
                    f"{result.adjust}-adjusted p={_fmt_p(top.get('judge_p_adjusted', float('nan')))}, readers: "
                    f"{top['pattern']}); the judge may be scoring style"
                ),
            )
        )
    return apply_severity(checks, severity)


def _adjusted(frame) -> np.ndarray:
    """The adjusted p-values of a table (results saved before they existed: treated as significant,
    i.e. the pointwise decision, so that an old result re-checks as it was)."""
    if "p_adjusted" not in frame.columns:
        return np.zeros(len(frame))
    return np.nan_to_num(frame["p_adjusted"].to_numpy(float), nan=1.0)


def _p_adjusted(frame, row) -> float:
    return float(row["p_adjusted"]) if "p_adjusted" in frame.columns else float("nan")


def _tracks_adjusted(frame, alpha: float) -> np.ndarray:
    """Judge-side association significant after the adjustment at ``alpha`` (and its pointwise
    interval excluding 0)."""
    if "judge_p_adjusted" not in frame.columns:
        return np.ones(len(frame), dtype=bool)
    return (np.nan_to_num(frame["judge_p_adjusted"].to_numpy(float), nan=1.0) < alpha) & frame["judge_tracks"].to_numpy(
        bool
    )


def _fmt_p(p: float) -> str:
    return "n/a" if p is None or not np.isfinite(p) else f"{p:.2g}"
