"""Checks derived from a :class:`~judge_transfer_audit.statistics.readers.analysis.ReaderAnalysis`.

Check names (stable; policy files refer to them) and their defaults:

``readers.judge_outside_reader_range`` (per judge x matchup x criterion)
    WARN when the judge's even-split rate lies more than ``outside_range_margin`` (0.0)
    outside [min, max] of the individual readers' rates in that cell *and* the judge is
    not behaving like one more reader: over all its cells it is further from the readers
    than a reader is from the others (one test per judge, :func:`judge_transfer_audit.statistics.readers.rates.
    judge_deviation_test`), or this cell's own prediction t-test survives the adjustment
    across the judge's cells. value = distance outside the range.
``readers.separation`` (overall)
    WARN when at least one reader's overall vote is separated by the criteria (Firth fit).
``readers.fast_reader`` (per reader)
    WARN when a reader is flagged fast; the reason says whether leaving them out moves a
    pooled rate by more than ``fast_reader_max_loo_shift`` (0.05).
``readers.fatigue`` (per reader)
    WARN when the fitted time at the last pair is below ``fatigue_min_end_to_start`` (0.5)
    of the first and the slope's p-value, adjusted across readers, is below ``alpha`` (0.05).
``readers.position_bias`` (overall)
    WARN when the pooled cluster-robust Wald test of the first-shown rate against 0.5 gives
    p below the check's level (with one check: the 95% interval excludes 0.5).
``readers.group_difference`` (per matchup x criterion)
    WARN when the groups' permutation p-value, adjusted across cells, is below ``alpha``.

Multiplicity: a check that is evaluated in many scopes (cells, readers) warns when *any*
scope is flagged, so its p-values are adjusted across its scopes (``adjust``: ``holm``
by default, family-wise error at most ``alpha`` per check; ``bh`` controls the false
discovery rate instead; ``none`` reads each scope alone, as before). The check's value and
reason give the unadjusted and adjusted p-values. The reader and surface checks that test
something also share one family-wise budget: with ``families`` such checks computed, each
tests at ``alpha / families`` (``reader_checks(..., families=)``; the pipeline passes the
count), so that an aligned judge with unremarkable readers gets no diagnostic WARN in about
``1 - alpha`` of studies. docs/detectors.md has the simulation.

Every reader check is a diagnostic, so none FAILs by default (judge_transfer_audit.model.checks.DEFAULT_SEVERITY);
``severity`` (the policy's ``[severity]`` table, e.g. FAIL in a strict CI policy) changes the
status a flagged check gets, through :func:`judge_transfer_audit.model.checks.apply_severity`, the one place.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from judge_transfer_audit.model.checks import Check, Status, apply_severity, breach_status
from judge_transfer_audit.model.policy import ReadersPolicy, policy_from_mapping
from judge_transfer_audit.statistics.readers._common import COMPUTED
from judge_transfer_audit.statistics.readers.analysis import ReaderAnalysis
from judge_transfer_audit.statistics.uncertainty.multiplicity import benjamini_hochberg, holm

#: The reader checks' thresholds are the policy's ``[readers]`` section: one class, one owner.
ReaderThresholds = ReadersPolicy


def resolve_thresholds(thresholds: ReadersPolicy | Mapping[str, object] | None) -> ReadersPolicy:
    """Accept a ReadersPolicy, a mapping of its keys (``readers.`` prefix allowed; validated by
    the policy loader: same ranges, same messages) or None (the defaults)."""
    if thresholds is None:
        return ReadersPolicy()
    if isinstance(thresholds, ReadersPolicy):
        return thresholds
    section = {str(key).removeprefix("readers."): value for key, value in thresholds.items()}
    return policy_from_mapping({"readers": section}, "policy").readers


def adjusted(p_values, method: str) -> np.ndarray:
    """Adjust a family of p-values (NaN stays NaN and is not counted)."""
    p = np.asarray(list(p_values), float)
    if method == "holm":
        return holm(p)
    if method == "bh":
        return benjamini_hochberg(p)
    return p


def _skipped(name: str, reason: str) -> Check:
    return Check(name=name, status=Status.SKIPPED, reason=reason)


def reader_check_families(analysis: ReaderAnalysis) -> int:
    """How many of the reader checks that *test* something are computed here (range, fatigue,
    position bias, group difference): each spends a share of the diagnostics' error budget."""
    timing = analysis.timing
    return int(
        sum(
            [
                analysis.rates.status is COMPUTED and not analysis.rates.judge_range.empty,
                timing.status is COMPUTED and timing.fatigue_status is COMPUTED,
                analysis.position_bias.status is COMPUTED and not math.isnan(analysis.position_bias.pooled_lo),
                analysis.groups.status is COMPUTED,
            ]
        )
    )


def reader_checks(
    analysis: ReaderAnalysis,
    thresholds: ReadersPolicy | Mapping[str, object] | None = None,
    families: int = 1,
    severity: Mapping[str, str] | None = None,
    focal: Mapping[str, str] | None = None,
) -> list[Check]:
    """Turn a reader analysis into checks (names and defaults in the module docstring).

    ``focal``: each matchup's focal system, which the rates in the reasons are of (they name it;
    without it, "the focal system").

    ``families``: the number of diagnostic checks (reader and surface) that share one
    family-wise error budget ``alpha``; each tests at ``alpha / families`` (Bonferroni across
    checks, ``adjust`` across each check's scopes). :func:`judge_transfer_audit.sections.registry.section_checks`
    passes the count of computed ones. ``severity``: the policy's ``[severity]`` table.
    """
    return apply_severity(_reader_checks(analysis, resolve_thresholds(thresholds), families, focal or {}), severity)


def _for(focal: Mapping[str, str], matchup: str) -> str:
    """``for <system>``: what a rate of ``matchup`` is the share of (a pooled row: the focal system
    its scope names, the one focal system of every matchup, else each matchup's own)."""
    pooled = "(all matchups, focal "
    if matchup in focal:
        return f"for {focal[matchup]}"
    if matchup.startswith(pooled) and matchup.endswith(")"):
        return f"for {matchup[len(pooled) : -1]}"
    systems = set(focal.values())
    return f"for {systems.pop()}" if len(systems) == 1 else "for each matchup's focal system"


def _reader_checks(analysis: ReaderAnalysis, t: ReadersPolicy, families: int, focal: Mapping[str, str]) -> list[Check]:
    alpha = t.alpha / max(int(families), 1)
    level = f"{alpha:.3g}" + (f" (alpha {t.alpha:g} shared by {families} diagnostic checks)" if families > 1 else "")
    out: list[Check] = []

    name = "readers.judge_outside_reader_range"
    rng_frame = analysis.rates.judge_range
    if analysis.rates.status is not COMPUTED:
        out.append(_skipped(name, analysis.rates.reason))
    elif rng_frame.empty:
        out.append(_skipped(name, "no judge credits to compare with the readers"))
    else:
        multi = rng_frame["judge"].nunique() > 1
        p_raw = rng_frame["p_value"].to_numpy(float) if "p_value" in rng_frame.columns else np.zeros(len(rng_frame))
        p_adj = np.full(len(rng_frame), np.nan)
        for judge in dict.fromkeys(rng_frame["judge"]):  # each configuration's cells are one family
            mine = (rng_frame["judge"] == judge).to_numpy()
            p_adj[mine] = adjusted(p_raw[mine], t.adjust)
        deviation = getattr(analysis.rates, "judge_deviation", None)
        overall = (
            {}
            if deviation is None or deviation.empty or t.adjust == "none"
            else dict(zip(deviation["judge"], deviation["p_value"]))
        )
        for r, p, pa in zip(rng_frame.itertuples(index=False), p_raw, p_adj):
            scope = f"{r.matchup}/{r.criterion}" + (f" [{r.judge}]" if multi else "")
            target = (
                f" (judge '{r.judge_criterion}' vs readers' '{r.criterion}': different targets)"
                if r.different_target
                else ""
            )
            beyond = bool(r.outside) and r.distance > t.outside_range_margin
            p_all = overall.get(r.judge, math.nan)
            if np.isfinite(p_all):
                # gatekeeping: the cells outside the range are flagged when the judge, over all
                # its cells, is further from the readers than a reader is (one test per judge)
                significant = p_all < alpha or (np.isfinite(pa) and pa < alpha)
                side = "further from the readers than" if p_all < alpha else "as far from the readers as"
                test = (
                    f"; over all cells the judge is {side} a reader is "
                    f"(p={_p(p_all)}, flagged below {level}); this cell alone: p={_p(p)}, {t.adjust}-adjusted {_p(pa)}"
                )
            else:
                significant = np.isfinite(pa) and pa < alpha
                test = f"; as one more reader: p={_p(p)}, {t.adjust}-adjusted {_p(pa)} (flagged below {level})"
            flagged = beyond and significant
            rate = f"judge rate {_for(focal, r.matchup)} {r.judge_rate:.3f}"
            span = f"the readers' range [{r.reader_min:.3f}, {r.reader_max:.3f}]"
            reason = (
                f"{rate} is outside {span} of {r.n_readers} readers{target}{test}"
                if flagged
                else f"{rate} outside {span} but within chance for one more reader{target}{test}"
                if beyond
                else f"{rate} within {span}{target}"
            )
            out.append(
                Check(
                    name=name,
                    status=breach_status(name) if flagged else Status.PASS,
                    value=float(r.distance),
                    threshold=t.outside_range_margin,
                    reason=reason,
                    scope=scope,
                )
            )

    name = "readers.separation"
    w = analysis.weights
    if w.status is not COMPUTED:
        out.append(_skipped(name, w.reason))
    else:
        n_sep = len(w.separated_readers)
        out.append(
            Check(
                name=name,
                status=breach_status(name) if n_sep else Status.PASS,
                value=float(n_sep),
                threshold=0.0,
                reason=(
                    f"readers {', '.join(w.separated_readers)} follow the criteria perfectly: weights are "
                    "Firth penalised estimates"
                    if n_sep
                    else "no reader's overall vote is separated"
                ),
            )
        )

    timing = analysis.timing
    if timing.status is not COMPUTED:
        out.append(_skipped("readers.fast_reader", timing.reason))
        out.append(_skipped("readers.fatigue", timing.reason))
    else:
        for r in timing.readers.itertuples(index=False):
            shift = r.loo_max_abs_shift
            big = not math.isnan(shift) and shift > t.fast_reader_max_loo_shift
            reason = (
                f"median {r.median_seconds:.0f} s is below {timing.fast_reader_factor:g} x the other readers'; "
                f"leaving them out moves a pooled rate by {shift:.3f} "
                f"({'more' if big else 'no more'} than {t.fast_reader_max_loo_shift:g})"
                if r.fast_reader
                else f"median {r.median_seconds:.0f} s"
            )
            out.append(
                Check(
                    name="readers.fast_reader",
                    status=breach_status("readers.fast_reader") if r.fast_reader else Status.PASS,
                    value=float(shift),
                    threshold=t.fast_reader_max_loo_shift,
                    reason=reason,
                    scope=str(r.reader_id),
                )
            )
        if timing.fatigue_status is not COMPUTED:
            out.append(_skipped("readers.fatigue", timing.fatigue_reason))
        else:
            p_fat = adjusted(
                np.where(
                    np.isnan(timing.readers["end_to_start"].to_numpy(float)),
                    np.nan,
                    timing.readers["fatigue_p_value"].to_numpy(float),
                ),
                t.adjust,
            )
            for r, pa in zip(timing.readers.itertuples(index=False), p_fat):
                if math.isnan(r.end_to_start):
                    out.append(
                        Check(
                            name="readers.fatigue",
                            status=Status.SKIPPED,
                            scope=str(r.reader_id),
                            reason="too few timed pairs for a trend",
                        )
                    )
                    continue
                flagged = r.end_to_start < t.fatigue_min_end_to_start and pa < alpha
                out.append(
                    Check(
                        name="readers.fatigue",
                        status=breach_status("readers.fatigue") if flagged else Status.PASS,
                        value=float(r.end_to_start),
                        threshold=t.fatigue_min_end_to_start,
                        scope=str(r.reader_id),
                        reason=(
                            f"time per pair fell to {r.end_to_start:.2f} of its start "
                            f"(slope {r.fatigue_slope:.2f} s/pair, p={r.fatigue_p_value:.3g}, "
                            f"{t.adjust}-adjusted across readers {_p(pa)}, flagged below {level})"
                        ),
                    )
                )

    name = "readers.position_bias"
    pb = analysis.position_bias
    if pb.status is not COMPUTED:
        out.append(_skipped(name, pb.reason))
    elif math.isnan(pb.pooled_lo):
        out.append(_skipped(name, "the pooled interval needs >= 2 readers"))
    else:
        p_pos = getattr(pb, "pooled_p_value", math.nan)
        flagged = (p_pos < alpha) if not math.isnan(p_pos) else (pb.pooled_lo > 0.5 or pb.pooled_hi < 0.5)
        out.append(
            Check(
                name=name,
                status=breach_status(name) if flagged else Status.PASS,
                value=pb.pooled_rate,
                threshold=0.5,
                reason=(
                    f"first-shown story chosen in {pb.pooled_rate:.3f} of decisive votes "
                    f"[{pb.pooled_lo:.3f}, {pb.pooled_hi:.3f}], p={_p(p_pos)} against 0.5 "
                    f"(flagged below {level})"
                ),
            )
        )

    name = "readers.group_difference"
    g = analysis.groups
    if g.status is not COMPUTED:
        out.append(_skipped(name, g.reason))
    else:
        p_grp = adjusted(g.comparison["p_value"].to_numpy(float), t.adjust)
        for r, pa in zip(g.comparison.itertuples(index=False), p_grp):
            scope = f"{r.matchup}/{r.criterion}"
            if math.isnan(r.p_value):
                out.append(Check(name=name, status=Status.SKIPPED, scope=scope, reason="a group has no reader here"))
                continue
            flagged = pa < alpha
            out.append(
                Check(
                    name=name,
                    status=breach_status(name) if flagged else Status.PASS,
                    value=float(r.p_value),
                    threshold=alpha,
                    scope=scope,
                    reason=(
                        f"{r.groups}: {r.kind} of mean reader rates {_for(focal, r.matchup)} {r.statistic:.3f}, "
                        "permutation "
                        f"p={r.p_value:.3g}, {t.adjust}-adjusted across cells {_p(pa)} (flagged below "
                        f"{level})"
                    ),
                )
            )
    return out


def _p(p: float) -> str:
    return "n/a" if p is None or not np.isfinite(p) else f"{p:.3g}"
