"""Vectorised cluster bootstrap of each cell's preference rate: pairs, readers, two-way.

How it works
------------
A cell's votes are summarised by two pair x reader tables ``S`` (focal votes) and ``N``
(decisive votes; ties excluded). A bootstrap replicate draws, with replacement, as many pairs
as the cell has (multinomial counts ``w_p``, one row per replicate) and/or as many readers
(``w_r``); every vote of a drawn pair / reader comes along, so votes from one cluster stay
together. The replicate rate is a ratio of weighted sums:

* pairs:    ``(W_p @ S.sum(1)) / (W_p @ N.sum(1))``
* readers:  ``(W_r @ S.sum(0)) / (W_r @ N.sum(0))``
* two-way-product:  ``rowsum((W_p @ S) * W_r) / rowsum((W_p @ N) * W_r)`` -- a vote of pair
  i and reader r gets weight ``w_p[i] * w_r[r]`` (Owen's "pigeonhole" product bootstrap), and
  the double sum collapses to one ``(B x pairs) @ (pairs x readers)`` product per cell.
* two-way (the default two-way interval): the product replicates rescaled around the estimate
  so that their variance is the method-of-moments two-way variance built from the pairs,
  readers and product replicates of the *same* draws, with Student-t calibrated tails
  (:mod:`audit.uncertainty.two_way`). The product bootstrap counts the vote-level variance
  three times and covers ~99% at a nominal 95%; the corrected one is close to nominal.

So all ``n_boot`` replicates of a cell cost a few small matrix products, with no Python loop
over replicates. Weight matrices are drawn once per distinct set of pairs (or readers) and
shared by every cell with that set: the six criteria of a matchup see the same resampled
pairs, every cell sees the same resampled readers, the two-way scheme reuses the pair and
reader draws of the one-way schemes, and the judge's rate is resampled with the *same* pair
weights as the humans (so the judge-minus-human gap gets a paired interval).

Intervals: percentile (``numpy.quantile``, linear interpolation) and BCa (Efron and
Tibshirani 1993, eq. 14.10-14.15), with bias correction ``z0`` from the share of replicates
below the estimate (ties counted half) and acceleration from the leave-one-cluster-out
jackknife. For the two-way scheme the acceleration combines the leave-one-pair-out and
leave-one-reader-out jackknives with the multi-sample formula scipy uses
(``scipy.stats.bootstrap``, ``_bca_interval``). Validated against ``scipy.stats.bootstrap``
(same draws, one vote per pair) and against a replicate-by-replicate loop (same weights).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from audit.errors import InputError, InputProblem
from audit.rng import resolve_rng
from audit.uncertainty._cells import cell_tables, validate_judge_credits
from audit.uncertainty.two_way import (  # noqa: F401 - cgm_interval re-exported
    cgm_interval, correct_two_way, t_calibrated_level, t_calibrated_p_value)

SCHEMES = ("pairs", "readers", "two-way", "two-way-product")
DEFAULT_SCHEMES = ("pairs", "readers", "two-way")
INTERVALS = ("percentile", "bca", "cgm")


# ---------------------------------------------------------------------------- primitives
def multinomial_weights(rng: np.random.Generator, n_clusters: int, n_boot: int) -> np.ndarray:
    """``n_boot x n_clusters`` resampling counts (each row sums to ``n_clusters``).

    Drawn as ``rng.integers(0, n, (n_boot, n))`` -- the same stream ``scipy.stats.bootstrap``
    uses -- and counted, so replicate ``b`` resamples exactly the clusters scipy's would.
    """
    idx = rng.integers(0, n_clusters, (n_boot, n_clusters))
    flat = (idx + n_clusters * np.arange(n_boot)[:, None]).ravel()
    return np.bincount(flat, minlength=n_boot * n_clusters).reshape(n_boot, n_clusters).astype(float)


def weighted_sums(W: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``W @ A`` as one matrix-vector product per column of ``A``.

    Mathematically the same product; done column by column because OpenBLAS runs a
    ``(10000 x 20) @ (20 x 14)`` gemm on several threads, which on a busy two-core machine is
    ~100 times slower (thread contention) than the single-threaded gemv calls.
    """
    if A.ndim == 1:
        return W @ A
    return np.column_stack([W @ A[:, j] for j in range(A.shape[1])]) if A.shape[1] else np.zeros((W.shape[0], 0))


def replicate_rates(S: np.ndarray, N: np.ndarray, scheme: str, wp: np.ndarray | None,
                    wr: np.ndarray | None) -> np.ndarray:
    """Replicate rates of one cell (NaN where a replicate has no decisive vote).

    ``scheme`` is ``"pairs"``, ``"readers"`` or ``"two-way-product"`` (the raw product
    replicates); the corrected ``"two-way"`` replicates come from :func:`two_way_replicates`.
    """
    if scheme == "pairs":
        num, den = wp @ S.sum(1), wp @ N.sum(1)
    elif scheme == "readers":
        num, den = wr @ S.sum(0), wr @ N.sum(0)
    elif scheme == "two-way-product":
        k = S.shape[1]
        m = weighted_sums(wp, np.hstack([S, N]))  # (B x pairs) @ (pairs x 2 readers)
        num, den = (m[:, :k] * wr).sum(1), (m[:, k:] * wr).sum(1)
    else:
        raise ValueError(f"{scheme!r}: use 'pairs', 'readers' or 'two-way-product' (two_way_replicates for 'two-way')")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def two_way_replicates(S: np.ndarray, N: np.ndarray, wp: np.ndarray, wr: np.ndarray):
    """Variance-corrected two-way replicates of one cell (a :class:`TwoWayCorrection`).

    Uses the pairs, readers and product replicates of the same weights ``wp`` and ``wr``.
    """
    n = N.sum()
    est = float(S.sum() / n) if n > 0 else float("nan")
    return correct_two_way(est, replicate_rates(S, N, "two-way-product", wp, wr), replicate_rates(S, N, "pairs", wp, wr),
                           replicate_rates(S, N, "readers", wp, wr), S.shape[0], S.shape[1])


def jackknife_rates(S: np.ndarray, N: np.ndarray, scheme: str) -> list[np.ndarray]:
    """Leave-one-cluster-out rates: one array per resampled factor."""
    st, nt = S.sum(), N.sum()
    axes = {"pairs": (1,), "readers": (0,), "two-way": (1, 0), "two-way-product": (1, 0)}[scheme]
    out = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for ax in axes:
            s, n = S.sum(ax), N.sum(ax)
            out.append(np.where(nt - n > 0, (st - s) / np.where(nt - n > 0, nt - n, 1.0), np.nan))
    return out


def acceleration(jackknives: list[np.ndarray]) -> float:
    """BCa acceleration from one or several jackknife samples (scipy's multi-sample formula)."""
    num = den = 0.0
    for theta in jackknives:
        theta = theta[np.isfinite(theta)]
        n = theta.size
        if n < 2:
            continue
        u = (n - 1) * (theta.mean() - theta)
        num += float(np.sum(u**3)) / n**3
        den += float(np.sum(u**2)) / n**2
    return num / (6.0 * den**1.5) if den > 0 else 0.0


def percentile_interval(reps: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    if reps.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def bca_interval(reps: np.ndarray, estimate: float, accel: float, level: float) -> tuple[float, float, float]:
    """``(low, high, z0)``; NaN bounds when every replicate falls on one side of the estimate."""
    if reps.size == 0 or not np.isfinite(estimate):
        return float("nan"), float("nan"), float("nan")
    share = (np.count_nonzero(reps < estimate) + np.count_nonzero(reps <= estimate)) / (2.0 * reps.size)
    z0 = float(ndtri(share))
    if not np.isfinite(z0):
        return float("nan"), float("nan"), z0
    alpha = (1.0 - level) / 2.0
    za = ndtri(np.array([alpha, 1.0 - alpha]))
    q = ndtr(z0 + (z0 + za) / (1.0 - accel * (z0 + za)))
    lo, hi = np.quantile(reps, q)
    return float(lo), float(hi), z0


def bootstrap_p_value(reps: np.ndarray, null: float) -> float:
    """Two-sided bootstrap p-value of ``rate = null``: ``2 min(P*(<= null), P*(>= null))``.

    Uses the ``(count + 1) / (B + 1)`` convention so it is never 0; it is the smallest
    two-sided level at which the percentile interval would exclude ``null`` (up to the
    interpolation of the quantiles).
    """
    if reps.size == 0:
        return float("nan")
    b = reps.size
    lo = (np.count_nonzero(reps <= null) + 1) / (b + 1)
    hi = (np.count_nonzero(reps >= null) + 1) / (b + 1)
    return float(min(1.0, 2.0 * min(lo, hi)))


# ---------------------------------------------------------------------------- result
@dataclass(frozen=True)
class BootstrapResult:
    """Cluster-bootstrap intervals of every cell's rate, per resampling scheme.

    Attributes
    ----------
    cells : DataFrame
        One row per cell x scheme: the ``by`` columns, ``cell`` ("matchup/criterion"),
        ``scheme`` (pairs / readers / two-way / two-way-product), ``rate`` (focal votes / decisive votes, ties
        excluded), ``n_votes`` (decisive), ``n_ties`` (excluded), ``n_pairs``, ``n_readers``,
        ``se`` (SD of the replicates, ddof=1; for ``two-way`` the square root of the corrected
        variance), ``ci_low_percentile``/``ci_high_percentile``,
        ``ci_low_bca``/``ci_high_bca`` (NaN when not requested or degenerate), ``z0`` and
        ``acceleration`` (BCa constants), ``p_value`` (two-sided bootstrap p of rate = null),
        ``ci_low_cgm``/``ci_high_cgm``/``se_cgm``/``p_value_cgm`` (two-way rows only: the
        Cameron-Gelbach-Miller two-way cluster interval built from the one-way bootstrap
        variances, see :func:`cgm_interval`; NaN on other rows), ``df`` and ``product_scale``
        (``two-way`` rows only: the Satterthwaite degrees of freedom whose Student-t quantile
        sets the tails of the percentile / BCa intervals and the p-value, and the factor
        ``sqrt(V_corrected / V_product)`` applied to the product replicates; NaN elsewhere),
        ``n_boot``, ``n_invalid`` (replicates with no decisive vote, left out), ``seed``.
    judge : DataFrame or None
        One row per cell x judge configuration, pairs resampled: ``rate`` (mean credit over
        valid pairs), ``n_pairs``, ``n_invalid`` (NaN credits, excluded), ``se``, the four CI
        bounds, ``p_value``, ``human_rate``, ``gap`` (judge minus human rate), ``gap_ci_low``,
        ``gap_ci_high`` (percentile CI of the gap with both rates on the same pair draws;
        NaN when the judge's pairs differ from the humans'), ``paired``, ``n_boot``, ``seed``.
    by, schemes, intervals : tuple of str
    n_boot : int
    level : float
    null : float
        The no-preference rate the p-values test (0.5).
    seed : int or None
        The seed that reproduces the run (None when a Generator was passed).
    n_votes, n_ties_excluded, n_judge_invalid : int
    notes : tuple of str
    """

    cells: pd.DataFrame
    judge: pd.DataFrame | None
    by: tuple[str, ...]
    schemes: tuple[str, ...]
    intervals: tuple[str, ...]
    n_boot: int
    level: float
    null: float
    seed: int | None
    n_votes: int
    n_ties_excluded: int
    n_judge_invalid: int
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return self.cells.copy()

    def interval(self, cell: str, scheme: str = "two-way", kind: str = "percentile") -> tuple[float, float]:
        """The ``kind`` interval of ``cell`` ("matchup/criterion") under ``scheme``."""
        row = self.cells[(self.cells["cell"] == cell) & (self.cells["scheme"] == scheme)]
        if row.empty:
            raise KeyError(f"no cell {cell!r} with scheme {scheme!r}")
        return float(row[f"ci_low_{kind}"].iloc[0]), float(row[f"ci_high_{kind}"].iloc[0])

    def __str__(self) -> str:
        pct = f"{self.level:.0%}"
        lines = [f"Cluster bootstrap ({self.n_boot} replicates, seed {self.seed}, pointwise {pct} intervals; "
                 f"{self.n_ties_excluded} tie vote(s) excluded)"]
        for _, r in self.cells.iterrows():
            bca = "" if np.isnan(r["ci_low_bca"]) else f"  BCa [{r['ci_low_bca']:.3f}, {r['ci_high_bca']:.3f}]"
            lines.append(f"  {r['cell']:<40} {r['scheme']:<15} rate {r['rate']:.3f}  "
                         f"pct [{r['ci_low_percentile']:.3f}, {r['ci_high_percentile']:.3f}]{bca}")
        if self.judge is not None:
            for _, r in self.judge.iterrows():
                lines.append(f"  judge {r['judge']:<12} {r['cell']:<34} rate {r['rate']:.3f}  "
                             f"pct [{r['ci_low_percentile']:.3f}, {r['ci_high_percentile']:.3f}]")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


# ---------------------------------------------------------------------------- driver
_INTERVAL_COLUMNS = ("se", "ci_low_percentile", "ci_high_percentile", "ci_low_bca", "ci_high_bca", "z0",
                     "acceleration", "p_value", "ci_low_cgm", "ci_high_cgm", "se_cgm", "p_value_cgm", "df",
                     "product_scale")


def _too_few_clusters(scheme: str, n_pairs: int, n_readers: int) -> bool:
    return ((scheme != "readers" and n_pairs < 2) or (scheme != "pairs" and n_readers < 2))

class _WeightBank:
    """Resampling weights drawn once per distinct cluster set, in first-request order."""

    def __init__(self, rng: np.random.Generator, n_boot: int):
        self.rng, self.n_boot, self.bank = rng, n_boot, {}

    def get(self, kind: str, ids: tuple[str, ...]) -> np.ndarray:
        key = (kind, ids)
        if key not in self.bank:
            self.bank[key] = multinomial_weights(self.rng, len(ids), self.n_boot)
        return self.bank[key]


def _check_options(schemes, intervals, n_boot, level) -> None:
    problems = []
    for s in schemes:
        if s not in SCHEMES:
            problems.append(InputProblem("bootstrap", f"unknown scheme {s!r}", f"choose from {', '.join(SCHEMES)}"))
    for k in intervals:
        if k not in INTERVALS:
            problems.append(InputProblem("bootstrap", f"unknown interval {k!r}", f"choose from {', '.join(INTERVALS)}"))
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 2:
        problems.append(InputProblem("bootstrap", f"n_boot must be an integer >= 2, got {n_boot!r}", "e.g. 10000"))
    if not (0.0 < float(level) < 1.0):
        problems.append(InputProblem("bootstrap", f"level must be in (0, 1), got {level!r}", "e.g. 0.95"))
    if problems:
        raise InputError(problems)


def _summary(reps: np.ndarray, estimate: float, jack: list[np.ndarray], level: float,
             intervals: tuple[str, ...], null: float, df: float = float("inf")) -> dict:
    """SE, intervals and p-value of one set of replicates.

    With finite ``df`` the percentile / BCa tails are read at the Student-t calibrated level
    and the p-value is mapped to the same t (see :func:`t_calibrated_level`).
    """
    finite = reps[np.isfinite(reps)]
    tail_level = t_calibrated_level(level, df)
    out = {"se": float(finite.std(ddof=1)) if finite.size > 1 else float("nan"),
           "ci_low_percentile": float("nan"), "ci_high_percentile": float("nan"),
           "ci_low_bca": float("nan"), "ci_high_bca": float("nan"),
           "z0": float("nan"), "acceleration": float("nan"),
           "ci_low_cgm": float("nan"), "ci_high_cgm": float("nan"), "se_cgm": float("nan"),
           "p_value_cgm": float("nan"), "df": float("nan"), "product_scale": float("nan"),
           "p_value": t_calibrated_p_value(bootstrap_p_value(finite, null), df),
           "n_invalid": int(reps.size - finite.size)}
    if "percentile" in intervals:
        out["ci_low_percentile"], out["ci_high_percentile"] = percentile_interval(finite, tail_level)
    if "bca" in intervals:
        a = acceleration(jack)
        out["ci_low_bca"], out["ci_high_bca"], out["z0"] = bca_interval(finite, estimate, a, tail_level)
        out["acceleration"] = a
    return out


def _judge_tables(credits: pd.DataFrame, by: tuple[str, ...]) -> list[tuple]:
    """Per cell x judge: (key, judge, sorted pair ids, credit sums, valid counts, n invalid)."""
    frame = pd.DataFrame({
        "pair_id": credits["pair_id"].astype(str).to_numpy(),
        "judge": credits["judge"].astype(str).to_numpy(),
        "credit": pd.to_numeric(credits["credit"], errors="coerce").to_numpy(float),
        **{f"_by{k}": credits[c].astype(str).to_numpy() for k, c in enumerate(by)},
    })
    keys = [f"_by{k}" for k in range(len(by))]
    out = []
    for key, g in frame.groupby([*keys, "judge"], sort=True):
        pairs, pi = np.unique(g["pair_id"].to_numpy(), return_inverse=True)
        c = g["credit"].to_numpy()
        ok = ~np.isnan(c)
        csum = np.bincount(pi[ok], weights=c[ok], minlength=len(pairs))
        ccnt = np.bincount(pi[ok], minlength=len(pairs)).astype(float)
        out.append((tuple(str(k) for k in key[:-1]), str(key[-1]), tuple(str(p) for p in pairs), csum, ccnt,
                    int((~ok).sum())))
    return out


def cluster_bootstrap(
    votes: pd.DataFrame,
    *,
    by: tuple[str, ...] = ("matchup", "criterion"),
    schemes: tuple[str, ...] = DEFAULT_SCHEMES,
    n_boot: int = 10_000,
    level: float = 0.95,
    intervals: tuple[str, ...] = INTERVALS,
    judge_credits: pd.DataFrame | None = None,
    null: float = 0.5,
    rng: int | np.random.Generator | None = None,
) -> BootstrapResult:
    """Cluster-bootstrap every cell's human preference rate (and the judge's) at once.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (``audit.data``): needs ``pair_id``, ``reader_id``, ``y`` (1 focal,
        0 other, NaN tie) and the ``by`` columns. Tie votes are excluded from the rate (the
        motivating study used forced choice; a tie carries no direction) and counted.
    by : tuple of str
        Columns defining a cell.
    schemes : tuple of str
        Any of ``"pairs"``, ``"readers"``, ``"two-way"`` (variance-corrected, the default
        two-way interval) and ``"two-way-product"`` (the raw product / pigeonhole bootstrap,
        conservative; not computed unless asked for).
    n_boot : int
        Replicates per cell and scheme.
    level : float
        Two-sided confidence level of the (pointwise) intervals.
    intervals : tuple of str
        ``"percentile"``, ``"bca"`` and/or ``"cgm"`` (two-way rows only).
    judge_credits : DataFrame, optional
        Per-pair judge outcomes: ``pair_id``, ``matchup``, ``criterion``, ``judge``,
        ``credit`` in {1, 0.5, 0, NaN}; NaN (invalid output) is excluded and counted.
        The judge's rate per cell is bootstrapped over pairs with the humans' pair weights.
    null : float
        Rate tested by ``p_value`` (0.5 = no preference).
    rng : int, Generator or None
        Seed or generator; the seed used is recorded.

    Returns
    -------
    BootstrapResult

    Notes
    -----
    Validated against a replicate-by-replicate loop with identical weights, against
    ``scipy.stats.bootstrap`` (percentile and BCa, identical draws, one vote per pair), and
    by simulation (docs/uncertainty.md): over 500 fixture-shaped studies the ``two-way``
    percentile interval covers the true (marginal) rate close to 95%, the ``two-way-product``
    one ~99% (it counts the vote-level noise three times); one-way schemes under-cover when
    both pairs and readers vary.
    """
    by, schemes, intervals = tuple(by), tuple(schemes), tuple(intervals)
    _check_options(schemes, intervals, n_boot, level)
    n_boot = int(n_boot)
    tables = cell_tables(votes, by)
    judge_tabs = None
    if judge_credits is not None:
        validate_judge_credits(judge_credits, by)
        judge_tabs = _judge_tables(judge_credits, by)
    generator, seed = resolve_rng(rng)
    bank = _WeightBank(generator, n_boot)

    rows, human_pairs_reps, degenerate = [], {}, []
    two_way_wanted = bool({"two-way", "two-way-product"} & set(schemes))
    for t in tables:
        wp = bank.get("pair", t.pairs) if (two_way_wanted or "pairs" in schemes) else None
        wr = bank.get("reader", t.readers) if (two_way_wanted or "readers" in schemes) else None
        est = t.rate
        raw: dict[str, np.ndarray] = {}

        def raw_reps(name: str) -> np.ndarray:
            # the same pair / reader draws feed the one-way, product and corrected schemes
            if name not in raw:
                raw[name] = replicate_rates(t.S, t.N, name, wp, wr)
            return raw[name]

        for scheme in schemes:
            corr = None
            if scheme == "two-way":
                corr = correct_two_way(est, raw_reps("two-way-product"), raw_reps("pairs"), raw_reps("readers"),
                                       len(t.pairs), len(t.readers))
                reps = corr.replicates
            else:
                reps = raw_reps(scheme)
            if scheme == "pairs":
                human_pairs_reps[t.key] = (t.pairs, reps)
            row = {**dict(zip(by, t.key)), "cell": t.label, "scheme": scheme, "rate": est,
                   "n_votes": int(t.N.sum()), "n_ties": t.n_ties, "n_pairs": len(t.pairs),
                   "n_readers": len(t.readers)}
            row.update(_summary(reps, est, jackknife_rates(t.S, t.N, scheme), level, intervals, null,
                                df=corr.df if corr is not None else float("inf")))
            if corr is not None:
                row.update({"df": corr.df, "product_scale": corr.scale})
                if "cgm" in intervals:
                    one_way = {k: raw_reps(k)[np.isfinite(raw_reps(k))] for k in ("pairs", "readers")}
                    v = {k: float(r.var(ddof=1)) if r.size > 1 else float("nan") for k, r in one_way.items()}
                    lo, hi, se_c, p_c = cgm_interval(est, v["pairs"], v["readers"], t.S, t.N, level, null)
                    row.update({"ci_low_cgm": lo, "ci_high_cgm": hi, "se_cgm": se_c, "p_value_cgm": p_c})
            if _too_few_clusters(scheme, len(t.pairs), len(t.readers)):
                # one cluster resampled is always the same data: a zero-width interval would mislead
                row.update({k: float("nan") for k in _INTERVAL_COLUMNS})
                degenerate.append(f"{t.label} ({scheme})")
            row.update({"n_boot": n_boot, "seed": seed})
            rows.append(row)
    cells = pd.DataFrame(rows)

    judge_frame, n_judge_invalid = None, 0
    if judge_tabs is not None:
        human_by_key = {t.key: t for t in tables}
        jrows = []
        for key, judge, pairs, csum, ccnt, n_inv in judge_tabs:
            wp = bank.get("pair", pairs)
            with np.errstate(invalid="ignore", divide="ignore"):
                num, den = wp @ csum, wp @ ccnt
                reps = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
            est = float(csum.sum() / ccnt.sum()) if ccnt.sum() > 0 else float("nan")
            n_judge_invalid += n_inv
            with np.errstate(invalid="ignore", divide="ignore"):
                jack = [np.where(ccnt.sum() - ccnt > 0, (csum.sum() - csum) / np.where(ccnt.sum() - ccnt > 0, ccnt.sum() - ccnt, 1.0), np.nan)]
            row = {**dict(zip(by, key)), "cell": "/".join(key), "judge": judge, "rate": est,
                   "n_pairs": int(np.count_nonzero(ccnt)), "n_invalid": n_inv}
            summ = _summary(reps, est, jack, level, intervals, null)
            for k in ("n_invalid", "ci_low_cgm", "ci_high_cgm", "se_cgm", "p_value_cgm", "df", "product_scale"):
                summ.pop(k)
            row.update(summ)
            human = human_by_key.get(key)
            row["human_rate"] = human.rate if human is not None else float("nan")
            row["gap"] = est - row["human_rate"]
            paired = key in human_pairs_reps and human_pairs_reps[key][0] == pairs
            lo = hi = float("nan")
            if paired:
                diff = reps - human_pairs_reps[key][1]
                lo, hi = percentile_interval(diff[np.isfinite(diff)], level)
            row.update({"gap_ci_low": lo, "gap_ci_high": hi, "paired": bool(paired),
                        "n_boot": n_boot, "seed": seed})
            jrows.append(row)
        judge_frame = pd.DataFrame(jrows)

    notes = ["intervals are pointwise (one per cell), not adjusted for multiplicity",
             "tie votes are excluded from the human rate (forced-choice design); see n_ties"]
    if "two-way" in schemes:
        notes.append("two-way = pairs and readers resampled independently (vote weight = product), spread "
                     "rescaled to the method-of-moments two-way variance, t-calibrated tails (see df)")
    if "two-way-product" in schemes:
        notes.append("two-way-product = the uncorrected product (pigeonhole) bootstrap: conservative, it counts "
                     "the vote-level variance three times")
    if degenerate:
        notes.append("intervals not computed where a resampled factor has a single cluster: " + ", ".join(degenerate))
    if judge_frame is not None and "pairs" not in schemes:
        notes.append("judge-minus-human gap intervals need the 'pairs' scheme; not computed")
    n_votes = int(sum(t.N.sum() for t in tables))
    return BootstrapResult(cells=cells, judge=judge_frame, by=by, schemes=schemes, intervals=intervals,
                           n_boot=n_boot, level=float(level), null=float(null), seed=seed,
                           n_votes=n_votes, n_ties_excluded=int(sum(t.n_ties for t in tables)),
                           n_judge_invalid=n_judge_invalid, notes=tuple(notes))
