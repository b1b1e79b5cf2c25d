"""Chance-corrected agreement of the judge with the human readers, with two-way intervals.

:func:`judge_agreement` reads the normalised ``votes`` frame of :mod:`audit.data` and one
judge configuration's per-pair verdicts (``pair_id, criterion, y_judge`` with 1 = focal,
0 = other, 0.5 = tie, NaN = no verdict) and returns, per cell (matchup x criterion), per
criterion pooled over matchups and over everything:

* ``kappa_majority``: Cohen's kappa of the judge against the readers' majority (ties
  abstain from the majority; a split unit is not scored; categories focal / other / tie);
* ``kappa_readers``: Cohen's kappa of the judge against each reader on that reader's
  units, averaged over readers (each reader's own kappa is in ``readers``);
* ``alpha_human``: Krippendorff's nominal alpha among the readers (as in
  :func:`audit.agreement.agreement_table`), ``alpha_judge_human``: nominal alpha of the
  two-coder data (judge, reader) stacked over every reader's vote, and
  ``alpha_difference`` = judge-human minus human-human;
* ``raw_human`` (share of agreeing reader pairs), ``raw_judge_human`` (share of reader
  votes equal to the judge's verdict) and ``raw_difference``.

The human-human and judge-human alpha and raw agreement are computed on the same units:
those with at least two human votes (the only units with human-human information).

Intervals: the pairs x readers bootstrap of :mod:`audit.uncertainty.bootstrap` (pairs
resampled within matchups, readers resampled, the product of the two weights) gives each
statistic's method-of-moments two-way variance ``V`` and its degrees of freedom ``df``
(:func:`audit.uncertainty.two_way.correct_two_way`); the interval is
``estimate -/+ t_df sqrt(V)`` (centred on the estimate: see :func:`_interval`). A resampled
reader's copies are never paired with each other (a reader does not agree with itself).
With fewer than two readers the interval resamples pairs only (``scheme = "pairs"``).
The two-way correction is exact for a mean; for kappa and alpha (smooth functions of
means) it is the first-order (delta-method) version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri
from scipy.stats import t as student_t

from audit.agreement import POOLED, _check_judge, _check_votes
from audit.estimate import Estimate
from audit.rng import resolve_rng
from audit.uncertainty.bootstrap import multinomial_weights
from audit.uncertainty.two_way import correct_two_way

STATISTICS = ("kappa_majority", "kappa_readers", "alpha_judge_human", "alpha_human", "alpha_difference",
              "raw_judge_human", "raw_human", "raw_difference")
_CHUNK = 256  #: replicates computed at once (bounds memory at ~ 3 x chunk x units floats)
#: the range of each statistic: the rescaled two-way replicates can leave it, the interval cannot
_RANGE = dict(kappa_majority=(-1.0, 1.0), kappa_readers=(-1.0, 1.0), raw_judge_human=(0.0, 1.0),
              raw_human=(0.0, 1.0), raw_difference=(-1.0, 1.0))


# ----------------------------------------------------------------------------- statistics
def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _kappa(po: np.ndarray, pe: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1.0 - 1e-12, (po - pe) / (1.0 - pe), np.nan)


def _alpha(o: np.ndarray) -> np.ndarray:
    """Nominal alpha from coincidence matrices ``o`` (B x 3 x 3): ``1 - (n-1) D_o / D_e``."""
    nc = o.sum(axis=2)
    n = nc.sum(axis=1)
    d_o = n - np.trace(o, axis1=1, axis2=2)
    d_e = n**2 - np.sum(nc**2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((d_e > 0) & (n > 1), 1.0 - (n - 1.0) * d_o / np.where(d_e > 0, d_e, 1.0), np.nan)


def agreement_statistics(ind: np.ndarray, judge: np.ndarray, pairable: np.ndarray, wu: np.ndarray,
                         wr: np.ndarray) -> dict[str, np.ndarray]:
    """Every statistic of :data:`STATISTICS` under unit weights ``wu`` and reader weights ``wr``.

    ``ind`` is (3, U, R): ``ind[c, u, r] = 1`` when reader ``r`` voted category ``c`` (0 other,
    1 focal, 2 tie) on unit ``u``; ``judge`` (U,) the judge's category (-1: no verdict);
    ``pairable`` (U,) units with at least two human votes; ``wu`` (B, U) and ``wr`` (B, R)
    integer resampling counts (all ones for the estimate). Returns arrays of length B.
    """
    n = np.stack([wr @ ind[c].T for c in range(3)])  # weighted votes per category (3, B, U)
    s = np.stack([(wr**2) @ ind[c].T for c in range(3)])  # self-pairs of resampled copies
    m = n.sum(axis=0)
    has_j = judge >= 0
    jcat = [(judge == c)[None, :] for c in range(3)]

    # Cohen's kappa against the majority (ties abstain; a split is not scored)
    majority = np.where(n[1] > n[0], 1, np.where(n[0] > n[1], 0, -1))
    w = wu * ((majority >= 0) & has_j[None, :])
    tot = w.sum(axis=1)
    po = _ratio((w * (majority == judge[None, :])).sum(axis=1), tot)
    pe = sum(_ratio((w * jcat[c]).sum(axis=1), tot) * _ratio((w * (majority == c)).sum(axis=1), tot)
             for c in (0, 1))
    kappa_majority = _kappa(po, pe)

    # Cohen's kappa against each reader, averaged over (resampled) readers
    table = np.stack([np.stack([(wu * jcat[j]) @ ind[c] for c in range(3)]) for j in range(3)])  # (3,3,B,R)
    n_r = table.sum(axis=(0, 1))
    po_r = _ratio(sum(table[c, c] for c in range(3)), n_r)
    pe_r = sum(_ratio(table[c].sum(axis=0), n_r) * _ratio(table[:, c].sum(axis=0), n_r) for c in range(3))
    kappa_r = _kappa(po_r, pe_r)
    ok_r = np.isfinite(kappa_r)
    kappa_readers = _ratio(np.where(ok_r, kappa_r * wr, 0.0).sum(axis=1), np.where(ok_r, wr, 0.0).sum(axis=1))

    # human-human: Krippendorff's coincidences (copies of one reader never pair with each other)
    ok = pairable[None, :] & (m > 1)
    f = np.where(ok, wu / np.where(ok, m - 1.0, 1.0), 0.0)
    o_h = np.empty((wu.shape[0], 3, 3))
    fn = f[None] * n
    for c in range(3):
        o_h[:, c, c] = (fn[c] * n[c] - f * s[c]).sum(axis=1)
        for k in range(c + 1, 3):
            o_h[:, c, k] = o_h[:, k, c] = (fn[c] * n[k]).sum(axis=1)
    alpha_human = _alpha(o_h)
    agree_pairs = sum(n[c] ** 2 - s[c] for c in range(3))
    all_pairs = m**2 - s.sum(axis=0)
    g = np.where(ok, wu, 0.0)
    raw_human = _ratio((g * agree_pairs).sum(axis=1), (g * all_pairs).sum(axis=1))

    # judge-human: two-coder units (judge, one reader vote), on the same pairable units
    gj = wu * (pairable & has_j)[None, :]
    onehot = np.stack([(judge == c).astype(float) for c in range(3)], axis=1)  # (U, 3)
    a = np.stack([(gj * n[k]) @ onehot for k in range(3)], axis=2)  # a[b, c, k]: judge c, reader votes k
    o_j = a + a.transpose(0, 2, 1)
    alpha_judge_human = _alpha(o_j)
    raw_judge_human = _ratio(np.trace(a, axis1=1, axis2=2), a.sum(axis=(1, 2)))

    return dict(kappa_majority=kappa_majority, kappa_readers=kappa_readers, alpha_judge_human=alpha_judge_human,
                alpha_human=alpha_human, alpha_difference=alpha_judge_human - alpha_human,
                raw_judge_human=raw_judge_human, raw_human=raw_human, raw_difference=raw_judge_human - raw_human)


def reader_kappas(ind: np.ndarray, judge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each reader's Cohen's kappa with the judge (R,) and the number of units it uses (R,)."""
    table = np.stack([np.stack([(judge == j).astype(float) @ ind[c] for c in range(3)]) for j in range(3)])
    n_r = table.sum(axis=(0, 1))
    po = _ratio(sum(table[c, c] for c in range(3)), n_r)
    pe = sum(_ratio(table[c].sum(axis=0), n_r) * _ratio(table[:, c].sum(axis=0), n_r) for c in range(3))
    return _kappa(po, pe), n_r.astype(int)


# ----------------------------------------------------------------------------- result
@dataclass(frozen=True)
class JudgeAgreementRow:
    """Judge-human agreement in one scope (see the module docstring for each statistic).

    ``level`` is ``"cell"``, ``"criterion"`` (pooled over matchups) or ``"all"``; ``scope``
    is ``"matchup/criterion"`` with ``all`` where pooled. ``n_units_scored`` counts the
    units with a judge verdict and a decisive reader majority (the units of
    ``kappa_majority``); ``n_units_pairable`` those with at least two human votes (the
    units of the alpha and raw comparisons). ``scheme`` is the interval's resampling
    (``two-way``, ``pairs`` or ``none``) and ``df`` the two-way degrees of freedom of
    ``kappa_majority`` (NaN for other schemes).
    """

    level: str
    scope: str
    matchup: str
    criterion: str
    n_pairs: int
    n_readers: int
    n_units: int
    n_units_scored: int
    n_units_pairable: int
    kappa_majority: Estimate
    kappa_readers: Estimate
    alpha_judge_human: Estimate
    alpha_human: Estimate
    alpha_difference: Estimate
    raw_judge_human: Estimate
    raw_human: Estimate
    raw_difference: Estimate
    scheme: str
    df: float


@dataclass(frozen=True)
class JudgeAgreement:
    """Judge-human agreement per scope with bootstrap intervals (see :func:`judge_agreement`).

    ``readers`` has one row per scope x reader: ``scope``, ``reader_id``, ``n_units`` (units
    where both the reader and the judge gave a verdict) and ``kappa``.
    """

    rows: tuple[JudgeAgreementRow, ...]
    readers: pd.DataFrame
    judge: str
    n_boot: int
    level: float
    seed: int | None

    def to_frame(self) -> pd.DataFrame:
        out = []
        for r in self.rows:
            flat = {k: getattr(r, k) for k in JudgeAgreementRow.__dataclass_fields__ if k not in STATISTICS}
            for name in STATISTICS:
                e = getattr(r, name)
                flat.update({name: e.estimate, f"{name}_ci_low": e.ci_low, f"{name}_ci_high": e.ci_high})
            out.append(flat)
        return pd.DataFrame(out)

    def row(self, scope: str = f"{POOLED}/{POOLED}") -> JudgeAgreementRow:
        for r in self.rows:
            if r.scope == scope:
                return r
        raise KeyError(scope)

    def __str__(self) -> str:
        lines = [f"Judge-human agreement of {self.judge or 'the judge'} ({self.level:.0%} intervals, "
                 f"{self.n_boot} pairs x readers bootstrap replicates)"]
        for r in self.rows:
            lines.append(f"  {r.scope}: kappa vs majority {r.kappa_majority}; alpha judge-human minus "
                         f"human-human {r.alpha_difference}; raw agreement difference {r.raw_difference}")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- computation
def _pair_weights(rng: np.random.Generator, strata: np.ndarray, n_boot: int) -> np.ndarray:
    """Pairs resampled within each stratum (matchup): (n_boot x pairs) counts."""
    out = np.zeros((n_boot, len(strata)))
    for stratum in dict.fromkeys(strata):
        cols = np.flatnonzero(strata == stratum)
        out[:, cols] = multinomial_weights(rng, len(cols), n_boot)
    return out


def _scopes(units: pd.DataFrame, pooled_only: bool = False):
    if pooled_only:
        yield "all", POOLED, POOLED, np.ones(len(units), dtype=bool)
        return
    cells = list(dict.fromkeys(zip(units["matchup"], units["criterion"])))
    if len(cells) > 1:
        for matchup, criterion in cells:
            yield "cell", matchup, criterion, ((units["matchup"] == matchup) & (units["criterion"] == criterion)).to_numpy()
    if units["matchup"].nunique() > 1 and units["criterion"].nunique() > 1:
        for criterion in dict.fromkeys(units["criterion"]):
            yield "criterion", POOLED, criterion, (units["criterion"] == criterion).to_numpy()
    yield "all", POOLED, POOLED, np.ones(len(units), dtype=bool)


def _replicates(ind, judge, pairable, wu_all, wr_all) -> dict[str, np.ndarray]:
    from audit.glmm._threads import single_threaded_blas

    chunks = []
    with single_threaded_blas():  # many small products: OpenBLAS thread hand-offs cost more than the work
        for start in range(0, wu_all.shape[0], _CHUNK):
            stop = start + _CHUNK
            chunks.append(agreement_statistics(ind, judge, pairable, wu_all[start:stop], wr_all[start:stop]))
    return {k: np.concatenate([c[k] for c in chunks]) for k in STATISTICS}


def _interval(estimate: float, variance: float, df: float, level: float, statistic: str) -> tuple[float, float]:
    """``estimate -/+ t_df sqrt(variance)``, kept inside the statistic's range.

    Centred on the estimate rather than read off the replicates' percentiles: resampling
    readers gives each replicate a noisier majority than the data's, so the replicates of
    the majority-based statistics sit systematically below the estimate (a judge that tracks
    the readers' majority shows it most); their spread is still the spread we need.
    """
    if not (np.isfinite(estimate) and np.isfinite(variance)):
        return math.nan, math.nan
    q = float(student_t.ppf(0.5 + level / 2.0, df)) if np.isfinite(df) and df > 0 else float(ndtri(0.5 + level / 2.0))
    half = q * math.sqrt(max(variance, 0.0))
    low, high = _RANGE.get(statistic, (-math.inf, math.inf))
    return float(max(estimate - half, low)), float(min(estimate + half, high))


def judge_agreement(votes: pd.DataFrame, judge_choice: pd.DataFrame, *, judge: str = "", n_boot: int = 1000,
                    level: float = 0.95, rng: int | np.random.Generator | None = None,
                    pooled_only: bool = False) -> JudgeAgreement:
    """Cohen's kappa and judge-minus-human alpha / raw agreement, per scope, with intervals.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (pair_id, reader_id, criterion, matchup, y: 1 focal, 0 other, NaN tie).
    judge_choice : DataFrame
        One configuration's verdicts: pair_id, criterion, y_judge (1, 0, 0.5 tie, NaN none).
    judge : str
        The configuration's name (recorded).
    n_boot : int
        Bootstrap replicates (0: estimates only). Only their variances are used, so a few
        hundred suffice (500 replicates estimate a standard error to ~3%).
    level : float
        Interval level.
    rng : int, Generator or None
        Seed of the bootstrap (recorded in ``seed``).
    pooled_only : bool
        Only the ``all/all`` row (what ranking configurations needs).

    Returns
    -------
    JudgeAgreement
        One :class:`JudgeAgreementRow` per scope (cells, criteria pooled over matchups when
        there are several of each, ``all``) and each reader's kappa per scope.

    Raises
    ------
    InputError
        As :func:`audit.agreement.reader_baseline` (missing columns, votes or verdicts out of
        range, repeated votes or verdicts).

    Notes
    -----
    Statistics are NaN (never an error) where undefined: every vote in one category, no
    judge verdict, no unit with two human votes. Validated against R ``psych::cohen.kappa``
    (kappa against the majority and against each reader) and the ``krippendorff`` package
    (both alphas) in ``tests/reference/judge_agreement/``.
    """
    frame = _check_votes(votes, ("matchup", "criterion"))
    verdicts = _check_judge(judge_choice)
    rng, seed = resolve_rng(rng)

    pair_ids, pair_code = np.unique(frame["pair_id"].to_numpy(), return_inverse=True)
    reader_ids, reader_code = np.unique(frame["reader_id"].to_numpy(), return_inverse=True)
    pair_matchup = frame.groupby("pair_id")["matchup"].first().reindex(pair_ids).to_numpy()
    units = frame.drop_duplicates("unit")[["unit", "pair_id", "criterion", "matchup"]].reset_index(drop=True)
    unit_code = pd.Index(units["unit"]).get_indexer(frame["unit"])
    ind_all = np.zeros((3, len(units), len(reader_ids)))
    ind_all[frame["category"].to_numpy(), unit_code, reader_code] = 1.0
    judged = units.merge(verdicts, on=["pair_id", "criterion"], how="left")["y_judge"].to_numpy(float)
    judge_all = np.where(np.isnan(judged), -1, np.where(judged == 0.5, 2, judged)).astype(int)
    unit_pair = pd.Index(pair_ids).get_indexer(units["pair_id"])
    pairable_all = ind_all.sum(axis=(0, 2)) >= 2

    wp = _pair_weights(rng, pair_matchup, n_boot) if n_boot > 0 else np.zeros((0, len(pair_ids)))
    wr = multinomial_weights(rng, len(reader_ids), n_boot) if n_boot > 0 else np.zeros((0, len(reader_ids)))

    rows, reader_rows = [], []
    for level_name, matchup, criterion, mask in _scopes(units, pooled_only):
        readers_in = np.flatnonzero(ind_all[:, mask].sum(axis=(0, 1)) > 0)
        ind = ind_all[:, mask][:, :, readers_in]
        jc, pairable = judge_all[mask], pairable_all[mask]
        scope_pairs = np.unique(unit_pair[mask])
        n_p, n_r, n_u = len(scope_pairs), len(readers_in), int(mask.sum())
        point = agreement_statistics(ind, jc, pairable, np.ones((1, n_u)), np.ones((1, n_r)))
        scheme, df = "none", math.nan
        bounds = {k: (math.nan, math.nan) for k in STATISTICS}
        if n_boot > 0 and n_p >= 2:
            wu = wp[:, unit_pair[mask]]
            ones_u, ones_r = np.ones_like(wu), np.ones((n_boot, n_r))
            by_pairs = _replicates(ind, jc, pairable, wu, ones_r)
            if n_r >= 2:
                scheme = "two-way"
                by_readers = _replicates(ind, jc, pairable, ones_u, wr[:, readers_in])
                product = _replicates(ind, jc, pairable, wu, wr[:, readers_in])
                for k in STATISTICS:
                    est = float(point[k][0])
                    corr = correct_two_way(est, product[k], by_pairs[k], by_readers[k], n_p, n_r)
                    if k == "kappa_majority":
                        df = corr.df
                    bounds[k] = _interval(est, corr.variance, corr.df, level, k)
            else:
                scheme = "pairs"
                for k in STATISTICS:
                    reps = by_pairs[k][np.isfinite(by_pairs[k])]
                    var = float(reps.var(ddof=1)) if reps.size >= 2 else math.nan
                    bounds[k] = _interval(float(point[k][0]), var, math.inf, level, k)
        estimates = {k: Estimate(float(point[k][0]), *bounds[k]) for k in STATISTICS}
        n_i = ind.sum(axis=(0, 2))
        majority_decisive = ind[1].sum(axis=1) != ind[0].sum(axis=1)
        rows.append(JudgeAgreementRow(
            level=level_name, scope=f"{matchup}/{criterion}", matchup=str(matchup), criterion=str(criterion),
            n_pairs=n_p, n_readers=n_r, n_units=n_u, n_units_scored=int(np.sum(majority_decisive & (jc >= 0))),
            n_units_pairable=int(np.sum(n_i >= 2)), scheme=scheme, df=float(df), **estimates))
        kappas, n_used = reader_kappas(ind, jc)
        for r, k, nu in zip(reader_ids[readers_in], kappas, n_used):
            reader_rows.append(dict(scope=f"{matchup}/{criterion}", reader_id=str(r), n_units=int(nu), kappa=float(k)))
    readers = pd.DataFrame(reader_rows, columns=["scope", "reader_id", "n_units", "kappa"])
    return JudgeAgreement(rows=tuple(rows), readers=readers, judge=judge, n_boot=int(n_boot), level=float(level),
                          seed=seed)
