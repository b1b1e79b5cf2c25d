"""The agreement decision: is the judge at least as good as a reader at reproducing the other
readers, pair by pair?

This is the question of the alternative annotator test (Calderon, Reichart and Dror 2025, "The
Alternative Annotator Test for LLM-as-a-Judge", ACL; github nitaytech/AltTest), asked with the
audit's own error control. docs/agreement.md ("The agreement decision") is the method's page.

**The statistic.** A *unit* is a pair x criterion with a valid judge verdict and at least two
reader votes; categories are focal, other and tie (ties are their own category when the run's
tie rule counts them, else tie votes and judge ties leave the comparison). For every vote of
reader ``j`` on unit ``i`` the other readers' votes on ``i`` are the reference: ``a_j`` is the
share of them equal to reader ``j``'s vote, ``a_J`` the share equal to the judge's verdict. The
judge's **advantage** is ``mean(a_J - a_j)`` over every scored vote: how many points more (or
fewer) often the judge agrees with the other readers than a reader does. A judge that votes
like one more reader has expected advantage 0; one that picks the readers' majority more; a
judge whose per-pair choices are noise less.

**The decision**, per cell (matchup x criterion), per matchup (its criteria pooled: a pair
brings all its criteria) and for the study (everything pooled), with ``margin`` (``[agreement]
margin``):

* PASS: non-inferiority, H0 ``advantage <= -margin`` rejected at ``alpha`` (one-sided t test on
  the two-way standard error, the lower end of the ``1 - 2 alpha`` interval above ``-margin``);
* FAIL: H0 ``advantage >= -margin`` rejected at ``alpha`` by the closed test of
  :func:`_closed_test_p` over the cells' hypotheses (``[transfer] adjust``, Holm by default, over the
  matchups), whose local tests pool the criteria of a matchup and, for every cell, the study; the
  familywise error rate over cells, matchups and the study is at most ``alpha``. The judge is
  then demonstrably worse than a reader by more than the margin;
* INCONCLUSIVE otherwise; INSUFFICIENT with fewer than ``min_pairs`` pairs or ``min_readers``
  readers scored.

**The interval** includes the judge's and the readers' sampling error: pairs (within matchups)
and readers are resampled with the cluster bootstrap's multinomial weights, the advantage is
recomputed under the pair weights, the reader weights and their product, and the method-of-moments
two-way variance and its degrees of freedom
(:func:`judge_transfer_audit.statistics.uncertainty.two_way.correct_two_way`) give ``estimate -/+ t_df sqrt(V)``.

**Monte Carlo error.** The variance and its df rest on ``n_boot`` replicates. Each p-value's Monte Carlo
standard error is the delete-a-group jackknife over ``JACKKNIFE_GROUPS`` groups of them
(:func:`_monte_carlo_se`). Where moving one scope's p by two of its standard errors would change a
decision (:func:`_monte_carlo_borderline`), that scope is re-run on ``SEQUENTIAL_FACTOR`` times the
replicates (its own stream, keyed by the scope and the count) and the scopes decided again, at most
``SEQUENTIAL_ROUNDS`` times, as the rate decision does (:mod:`judge_transfer_audit.verdict.assess`);
a scope still borderline then is flagged (``monte_carlo_borderline``) and its reason says to read it
as undecided.

**One vote per pair.** Where fewer than ``min_pairs`` pairs have two votes on a criterion, a
reader's agreement with the other readers cannot be estimated (it needs two readers on the same
pair). What is identifiable is the judge's agreement with the readers' votes ``A_J`` and a lower
bound of a reader's: two readers agree at least as often as chance at the readers' own vote shares,
``sum_k pi_k^2`` (Jensen's inequality over pairs), the **chance baseline**. The advantage is then
bounded above by ``A_J - chance``: its interval entirely below ``-margin`` is a FAIL (the judge
agrees with a reader's vote less often than two readers would by chance, by more than the
margin); otherwise INCONCLUSIVE, never PASS, and the reason says what replicate votes would add.

**AltTest's own figures** are reported beside each scope (descriptive, not the decision):
per reader with at least ``ALTTEST_MIN_UNITS`` scored votes, the one-sided t test of their
indicator differences at ``epsilon = margin`` (:func:`alt_test`), Benjamini-Yekutieli at ``q =
alpha`` across the readers, the winning rate (share of readers rejected) and the advantage
probability. :func:`alt_test` is validated against the reference procedure on AltTest's shipped
data (tests/reference/alttest/).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # SciPy is imported where it is used: `audit report` reads this module's result types
    from scipy import sparse

from judge_transfer_audit.model.estimate import Estimate

LEVELS = ("study", "matchup", "cell")
#: AltTest skips a reader with fewer instances than this (its ``min_instances_per_human``)
ALTTEST_MIN_UNITS = 30
#: the categories of a vote or a verdict: focal, other, tie
_FOCAL, _OTHER, _TIE = 0, 1, 2
#: the replicates are cut into this many consecutive groups for the jackknife of a p-value's Monte Carlo error
JACKKNIFE_GROUPS = 20


# --------------------------------------------------------------------------- AltTest procedure


def by_rejections(p_values: np.ndarray, q: float) -> np.ndarray:
    """Benjamini-Yekutieli step-up at FDR level ``q``: a boolean mask of the rejected hypotheses."""
    p = np.asarray(p_values, float)
    m = p.size
    out = np.zeros(m, bool)
    if m == 0:
        return out
    order = np.argsort(p, kind="stable")
    c_m = float(np.sum(1.0 / np.arange(1, m + 1)))
    below = p[order] <= np.arange(1, m + 1) / m * q / c_m
    if below.any():
        k = int(np.flatnonzero(below).max())
        out[order[: k + 1]] = True
    return out


def _accuracy(pred: object, annotations: list) -> float:
    return float(np.mean([pred == a for a in annotations]))


def _neg_rmse(pred: float, annotations: list) -> float:
    return -float(np.sqrt(np.mean([(pred - a) ** 2 for a in annotations])))


SCORING: Mapping[str, Callable] = {"accuracy": _accuracy, "neg_rmse": _neg_rmse}


@dataclass(frozen=True)
class AltTestResult:
    """The alternative annotator test on one judge (Calderon et al. 2025)."""

    winning_rate: float  #: share of the tested readers whose null (judge worse by epsilon) is rejected
    advantage_probability: float  #: mean over tested readers of P(judge's score >= the reader's)
    passed: bool  #: winning_rate >= 0.5
    readers: tuple[str, ...]  #: the readers tested (in the order given)
    p_values: tuple[float, ...]
    rejected: tuple[bool, ...]
    epsilon: float
    q: float


def alt_test(
    judge: Mapping,
    readers: Mapping[str, Mapping],
    *,
    scoring: str = "accuracy",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_readers_per_instance: int = 2,
    min_instances_per_reader: int = ALTTEST_MIN_UNITS,
) -> AltTestResult:
    """The alternative annotator test: ``judge`` maps instance -> label, ``readers`` reader -> {instance: label}.

    For each reader ``h`` (with at least ``min_instances_per_reader`` instances that have the
    judge's label and ``min_readers_per_instance`` readers), on each instance the judge's and
    ``h``'s scores against the other readers' labels (``scoring``: ``accuracy`` or ``neg_rmse``)
    give the indicators ``W_J = [s_J >= s_h]`` and ``W_h = [s_h >= s_J]``; H0 ``mean(W_h - W_J)
    >= epsilon`` is tested by a one-sided one-sample t test; Benjamini-Yekutieli at ``q`` across
    the readers; the winning rate is the share rejected, the advantage probability the mean
    over readers of ``mean(W_J)``. This is the procedure of the AltTest reference code, written
    from its description and checked against it in tests/reference/alttest/.
    """
    score = SCORING[scoring]
    on: dict[object, list[str]] = {}
    for h, labels in readers.items():
        for i in labels:
            on.setdefault(i, []).append(h)
    keep = {i for i, hs in on.items() if len(hs) >= min_readers_per_instance and i in judge}
    names, p_values, adv = [], [], []
    for h, labels in readers.items():
        instances = [i for i in labels if i in keep]
        if len(instances) < min_instances_per_reader:
            continue
        w_j, w_h = [], []
        for i in instances:
            others = [readers[g][i] for g in on[i] if g != h]
            s_h, s_j = score(labels[i], others), score(judge[i], others)
            w_j.append(1.0 if s_j >= s_h else 0.0)
            w_h.append(1.0 if s_h >= s_j else 0.0)
        diff = np.asarray(w_h) - np.asarray(w_j)
        p_values.append(_t_test_less(diff, epsilon))
        adv.append(float(np.mean(w_j)))
        names.append(h)
    rejected = by_rejections(np.asarray(p_values), q)
    n = len(names)
    rate = float(rejected.sum() / n) if n else math.nan
    return AltTestResult(
        winning_rate=rate,
        advantage_probability=float(np.mean(adv)) if adv else math.nan,
        passed=bool(n and rate >= 0.5),
        readers=tuple(names),
        p_values=tuple(p_values),
        rejected=tuple(bool(r) for r in rejected),
        epsilon=float(epsilon),
        q=float(q),
    )


# --------------------------------------------------------------------------- the decision


@dataclass(frozen=True)
class AgreementScope:
    """The agreement decision of one scope (a cell, a matchup or the study)."""

    scope: str  #: "matchup/criterion", "matchup/all" or "all/all"
    level: str  #: "cell", "matchup" or "study"
    matchup: str
    criterion: str
    status: str  #: PASS, FAIL, INCONCLUSIVE or INSUFFICIENT
    basis: str  #: "pair by pair" (two or more votes per pair) or "votes" (one vote per pair)
    n_pairs: int  #: pairs with a scored vote
    n_units: int  #: pair x criterion units scored
    n_readers: int  #: readers with a scored vote
    n_votes: int  #: scored votes
    n_single_vote_units: int  #: units with a valid verdict but one vote (no reference on them)
    judge_agreement: float  #: mean share of the other readers' votes equal to the judge's ("votes": of the votes)
    reader_agreement: float  #: mean share of the other readers' votes equal to the reader's (NaN for "votes")
    chance: float  #: agreement of two votes drawn independently at the readers' vote shares
    advantage: Estimate  #: judge minus reader agreement ("votes": judge minus chance, an upper bound), 1 - 2 alpha
    df: float  #: degrees of freedom of the two-way variance
    p_pass: float  #: H0 advantage <= -margin
    p_fail: float  #: H0 advantage >= -margin, unadjusted
    p_fail_adjusted: float  #: within the level's family
    winning_rate: float  #: AltTest's (descriptive): share of readers with H0 rejected, BY at alpha
    advantage_probability: float  #: AltTest's rho
    n_readers_tested: int  #: readers with >= ALTTEST_MIN_UNITS scored votes (AltTest's rule)
    reason: str
    #: replicates of its two-way variance: the section's, or more where the sequential Monte Carlo re-ran the
    #: scope (0: no bootstrap, or a result written before this was recorded)
    n_boot: int = 0
    p_pass_mc_se: float = math.nan  #: Monte Carlo standard error of ``p_pass`` (jackknife over the replicates)
    p_fail_mc_se: float = math.nan  #: Monte Carlo standard error of ``p_fail``
    #: the bootstrap's own noise could still move its status: a p-value it rests on (its own or, through the
    #: closed test, another scope's) is within two Monte Carlo standard errors of where the status changes
    monte_carlo_borderline: bool = False


@dataclass(frozen=True)
class AgreementDecision:
    """The agreement decision per cell, matchup and study (:func:`agreement_decision`)."""

    rows: tuple[AgreementScope, ...]
    margin: float
    alpha: float
    adjust: str
    n_boot: int
    seed: int | None
    ties: str  #: "category" (ties are their own category) or "excluded" (the tie rule drops them)
    multiplicity: str  #: the rule, in words

    def row(self, scope: str) -> AgreementScope:
        for r in self.rows:
            if r.scope == scope:
                return r
        raise KeyError(scope)

    def level(self, level: str) -> tuple[AgreementScope, ...]:
        return tuple(r for r in self.rows if r.level == level)

    def to_frame(self) -> pd.DataFrame:
        out = []
        for r in self.rows:
            d = {k: getattr(r, k) for k in AgreementScope.__dataclass_fields__ if k != "advantage"}
            d["advantage"] = r.advantage.estimate
            d["advantage_ci_low"] = r.advantage.ci_low
            d["advantage_ci_high"] = r.advantage.ci_high
            out.append(d)
        return pd.DataFrame(out)


def _categories(y: np.ndarray) -> np.ndarray:
    """1 focal, 0 other, NaN or 0.5 tie -> category codes."""
    y = np.asarray(y, float)
    return np.where(y == 1.0, _FOCAL, np.where(y == 0.0, _OTHER, _TIE)).astype(np.int64)


@dataclass(frozen=True)
class _Votes:
    """The scored votes as arrays, one row per vote: the multi-vote units' votes, then the single-vote units'
    (:func:`_scored_votes`); a scope is the positions of its votes, in this order."""

    pair: np.ndarray  #: pair codes
    reader: np.ndarray  #: reader codes, numbered in the sorted order of the reader ids
    matchup: np.ndarray  #: matchup codes
    cell: np.ndarray  #: matchup x criterion codes
    unit: np.ndarray  #: pair x criterion codes
    cat: np.ndarray  #: the vote's category
    jcat: np.ndarray  #: the judge's category
    a_judge: np.ndarray  #: share of the other readers' votes equal to the judge's (NaN on a single vote)
    a_reader: np.ndarray  #: share of the other readers' votes equal to this one (NaN on a single vote)
    w: np.ndarray  #: AltTest indicator difference W_J - W_h, the sign of a_judge - a_reader


def _votes_of(multi: pd.DataFrame, single: pd.DataFrame, matchup: np.ndarray) -> _Votes:
    """:class:`_Votes` of the multi-vote and single-vote rows (``matchup``: their matchup codes, in that order)."""
    both = pd.concat([multi, single], ignore_index=True)
    nan = np.full(len(single), np.nan)
    return _Votes(
        pair=pd.factorize(both["pair_id"])[0],
        reader=pd.factorize(both["reader_id"], sort=True)[0],
        matchup=np.asarray(matchup),
        cell=both["cell"].to_numpy(),
        unit=both["unit"].to_numpy(),
        cat=both["cat"].to_numpy(),
        jcat=both["jcat"].to_numpy(),
        **{
            k: np.concatenate([multi[k].to_numpy(float) if k in multi else np.empty(0), nan])
            for k in ("a_judge", "a_reader", "w")
        },
    )


def _prepare(votes: pd.DataFrame, choices: pd.DataFrame, ties_counted: bool):
    v = votes[["pair_id", "reader_id", "criterion", "matchup", "y"]].copy()
    v["cat"] = _categories(v["y"].to_numpy())
    j = choices[["pair_id", "criterion", "y_judge"]].copy()
    j = j[np.isfinite(j["y_judge"].to_numpy(float))]
    j["jcat"] = _categories(j["y_judge"].to_numpy())
    if not ties_counted:
        v = v[v["cat"] != _TIE]
        j = j[j["jcat"] != _TIE]
    v = v.merge(j[["pair_id", "criterion", "jcat"]], on=["pair_id", "criterion"], how="inner")
    # each vote's cell (matchup x criterion) as a code, once: every scope's chance agreement groups by it
    v["cell"] = pd.factorize(v["matchup"].astype(str) + "\x1f" + v["criterion"].astype(str))[0]
    return v


def _scored_votes(v: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(multi-vote rows with a_judge, a_reader, w; single-vote rows) of the prepared votes."""
    key = v["pair_id"].astype(str) + "\x1f" + v["criterion"].astype(str)
    unit, _ = pd.factorize(key)
    cat = v["cat"].to_numpy()
    counts = np.zeros((unit.max() + 1 if unit.size else 0, 3))
    np.add.at(counts, (unit, cat), 1.0)
    n = counts.sum(axis=1)[unit]
    jc = v["jcat"].to_numpy()
    same_j = counts[unit, jc] - (cat == jc)  # other readers equal to the judge
    same_r = counts[unit, cat] - 1.0  # other readers equal to this reader
    multi = n >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        a_j = same_j / (n - 1)
        a_r = same_r / (n - 1)
    out = v.assign(a_judge=a_j, a_reader=a_r, w=np.sign(a_j - a_r), unit=unit)
    return out[multi].reset_index(drop=True), out[~multi].reset_index(drop=True)


@dataclass(frozen=True)
class _Spread:
    """The two-way variance of a scope's advantage, its degrees of freedom, and the same computed with each
    of ``JACKKNIFE_GROUPS`` consecutive groups of replicates left out (the Monte Carlo error's jackknife)."""

    variance: float
    df: float
    left_out: tuple[tuple[float, float], ...]  #: (variance, df) without each group of replicates


def _two_way(
    num: sparse.csr_matrix, den: sparse.csr_matrix, strata: np.ndarray, n_boot: int, rng: np.random.Generator
) -> _Spread:
    """The variance and df of ``sum(num) / sum(den)`` under pairs x readers resampling, with their
    delete-a-group jackknife over the replicates (:class:`_Spread`).

    ``num``/``den`` are pairs x readers sums; pairs are resampled within ``strata`` (matchups).
    The resampling counts are drawn as indices and counted (:func:`_resampling_counts`: the
    equal-probability multinomial), the readers' first, then each stratum's in blocks of replicates; each
    stratum's share of the replicates' sums is added in turn, so no (replicates x pairs) array spans the strata.
    """
    from judge_transfer_audit.core.threads import single_threaded_blas
    from judge_transfer_audit.statistics.uncertainty.two_way import correct_two_way

    n_p, n_r = num.shape
    est = float(num.sum() / den.sum())
    r = _resampling_counts(rng, n_r, n_boot)
    r_t = np.ascontiguousarray(r.T)  # (readers, replicates): what the sparse products read
    num, den = num.tocsr(), den.tocsr()
    num_p = np.asarray(num.sum(axis=1)).ravel()
    den_p = np.asarray(den.sum(axis=1)).ravel()
    num_q = np.asarray(num.sum(axis=0)).ravel()
    den_q = np.asarray(den.sum(axis=0)).ravel()
    sums = np.zeros((4, n_boot))  # product numerator, denominator; pairs numerator, denominator
    with single_threaded_blas():  # many small products: OpenBLAS thread hand-offs cost more than the work
        _add_strata(sums, num, den, num_p, den_p, r_t, strata, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        product, pairs = sums[0] / sums[1], sums[2] / sums[3]
        readers = (r @ num_q) / (r @ den_q)
    c = correct_two_way(est, product, pairs, readers, n_p, n_r)
    return _Spread(float(c.variance), float(c.df), _left_out(product, pairs, readers, n_p, n_r))


#: draws counted per bincount call in :func:`_resampling_counts`: small enough that the counts stay in cache
_COUNT_CHUNK = 2**15


def _resampling_counts(rng: np.random.Generator, n_clusters: int, n_boot: int) -> np.ndarray:
    """``n_boot x n_clusters`` resampling counts: the draws and counts of
    :func:`~judge_transfer_audit.statistics.uncertainty.bootstrap.multinomial_weights`
    (``rng.integers(0, n, (n_boot, n))``, the stream ``scipy.stats.bootstrap`` uses), counted a few rows at a
    time. The draws are taken as 32-bit integers, the values the 64-bit ones have: numpy draws a range below
    2**32 from 32-bit words either way."""
    dtype = np.int32 if n_clusters < 2**31 else np.int64
    draws = rng.integers(0, n_clusters, (n_boot, n_clusters), dtype=dtype)
    out = np.empty((n_boot, n_clusters))
    step = max(1, _COUNT_CHUNK // max(n_clusters, 1))
    offsets = n_clusters * np.arange(step, dtype=np.int64)[:, None]
    for b0 in range(0, n_boot, step):
        rows = draws[b0 : b0 + step]
        k = rows.shape[0]
        out[b0 : b0 + k] = np.bincount((rows + offsets[:k]).ravel(), minlength=k * n_clusters).reshape(k, n_clusters)
    return out


def _left_out(
    product: np.ndarray, pairs: np.ndarray, readers: np.ndarray, n_p: int, n_r: int
) -> tuple[tuple[float, float], ...]:
    """:func:`correct_two_way`'s (variance, df) with each of ``JACKKNIFE_GROUPS`` consecutive groups of
    replicates left out, from the groups' sums of the centred replicates (no replicate array is copied per
    group); replicates NaN in any of the three are left out, as there. Empty below four usable replicates
    or two pairs or readers."""
    from judge_transfer_audit.statistics.uncertainty.two_way import two_way_constants

    ok = np.isfinite(product) & np.isfinite(pairs) & np.isfinite(readers)
    n_groups = min(JACKKNIFE_GROUPS, int(ok.sum()) // 2)
    if n_groups < 2 or n_p < 2 or n_r < 2:
        return ()
    x = np.stack([product, pairs, readers, product - pairs - readers])[:, ok]
    x = x - x.mean(axis=1, keepdims=True)
    n = x.shape[1]
    group = np.arange(n) * n_groups // n
    count = np.bincount(group, minlength=n_groups).astype(float)
    s1 = np.stack([np.bincount(group, row, minlength=n_groups) for row in x])
    s2 = np.stack([np.bincount(group, row * row, minlength=n_groups) for row in x])
    rest = n - count
    var = ((x * x).sum(axis=1, keepdims=True) - s2 - (x.sum(axis=1, keepdims=True) - s1) ** 2 / rest) / (rest - 1)
    out = []
    for g in range(n_groups):
        variance, _, df, *_ = two_way_constants(var[0, g], var[1, g], var[2, g], var[3, g], n_p, n_r)
        out.append((variance, df))
    return tuple(out)


def _add_strata(sums, num, den, num_p, den_p, r_t, strata, rng) -> None:
    """Add each stratum's share of the product and pairs replicates' sums to ``sums`` (4 x replicates).

    A stratum's product sums read only its own readers' counts (the columns its votes touch), and its
    replicate sums ``sum_p u[b, p] (num @ r)[p, b]`` are taken with the counts transposed to (pairs,
    replicates), which adds the same terms in the same order (pair by pair) as the row-wise sum."""
    from scipy import sparse

    n_boot = sums.shape[1]
    order = np.argsort(strata, kind="stable")
    size = np.bincount(strata)
    starts = np.cumsum(size) - size
    for s in np.flatnonzero(size):
        idx = order[starts[s] : starts[s] + size[s]]
        block = max(1, min(n_boot, 2_000_000 // idx.size))  # replicates per block: memory ~ block x pairs
        num_s, den_s = num[idx], den[idx]
        used = np.zeros(num.shape[1], bool)
        used[num_s.indices] = used[den_s.indices] = True
        readers = np.flatnonzero(used)
        column = np.cumsum(used) - 1  # a used reader's column among the stratum's readers
        num_s, den_s = (
            sparse.csr_matrix((m.data, column[m.indices], m.indptr), shape=(idx.size, readers.size))
            for m in (num_s, den_s)
        )
        for b0 in range(0, n_boot, block):
            b1 = min(n_boot, b0 + block)
            u = _resampling_counts(rng, idx.size, b1 - b0)
            u_t = np.ascontiguousarray(u.T)
            rb = np.ascontiguousarray(r_t[:, b0:b1] if readers.size == r_t.shape[0] else r_t[readers, b0:b1])
            sums[0, b0:b1] += np.einsum("pb,pb->b", u_t, np.asarray(num_s @ rb))
            sums[1, b0:b1] += np.einsum("pb,pb->b", u_t, np.asarray(den_s @ rb))
            sums[2, b0:b1] += u @ num_p[idx]
            sums[3, b0:b1] += u @ den_p[idx]


def _t_test_less(x: np.ndarray, popmean: float) -> float:
    """The p-value of ``scipy.stats.ttest_1samp(x, popmean, alternative="less")``: the one-sample t
    statistic's lower tail on n - 1 degrees of freedom (NaN for a constant sample at ``popmean``),
    from :mod:`judge_transfer_audit.statistics.distributions` so that a run does not import scipy.stats."""
    from judge_transfer_audit.statistics.distributions import t as t_dist

    x = np.asarray(x, float)
    n = x.size
    if n < 2:
        return math.nan
    d = float(np.mean(x)) - popmean
    se = math.sqrt(float(np.var(x, ddof=1)) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.float64(d) / np.float64(se)
    return float(t_dist.cdf(t, n - 1))


def _t_tests(est: float, var: float, df: float, margin: float, alpha: float) -> tuple[Estimate, float, float]:
    """The 1 - 2 alpha interval and the one-sided p-values of H0 <= -margin (pass) and >= -margin (fail)."""
    from judge_transfer_audit.statistics.distributions import t as t_dist

    if not (np.isfinite(est) and np.isfinite(var)):
        return Estimate(est), math.nan, math.nan
    df = df if np.isfinite(df) and df > 0 else 1e9
    se = math.sqrt(max(var, 0.0))
    if se == 0.0:
        p_pass = 0.0 if est > -margin else 1.0
        return Estimate(est, est, est), p_pass, 1.0 - p_pass if est != -margin else 1.0
    t = float(t_dist.ppf(1.0 - alpha, df))
    z = (est + margin) / se
    return (
        Estimate(est, est - t * se, est + t * se),
        float(t_dist.sf(z, df)),
        float(t_dist.cdf(z, df)),
    )


def _alt_test_of(reader: np.ndarray, w: np.ndarray, margin: float, alpha: float) -> tuple[float, float, int]:
    """AltTest's winning rate and advantage probability on a scope's scored votes (per reader, in the order
    of the reader codes; ``w`` the votes' indicator differences)."""
    order = np.argsort(reader, kind="stable")
    counts = np.bincount(reader)
    starts = np.cumsum(counts) - counts
    p_values, rho = [], []
    for start, count in zip(starts, counts):
        if count < ALTTEST_MIN_UNITS:  # readers of other scopes (count 0) included
            continue
        w_reader = w[order[start : start + count]]
        diff = (w_reader < 0).astype(float) - (w_reader > 0).astype(float)  # W_h - W_J
        p_values.append(_t_test_less(diff, margin))
        rho.append(float(np.mean(w_reader >= 0)))
    if not p_values:
        return math.nan, math.nan, 0
    p = np.asarray(p_values)
    p = np.where(np.isfinite(p), p, 1.0)  # a constant difference: no test, not a rejection
    return float(by_rejections(p, alpha).mean()), float(np.mean(rho)), len(p_values)


def _n_distinct(codes: np.ndarray) -> int:
    return len(pd.unique(codes))  # a hash table: np.unique sorts


def _scope_row(
    scope: str,
    level: str,
    matchup: str,
    criterion: str,
    votes: _Votes,
    multi: np.ndarray,
    single: np.ndarray,
    *,
    margin: float,
    alpha: float,
    min_pairs: int,
    min_readers: int,
    n_boot: int,
    rng: np.random.Generator,
) -> AgreementScope:
    """The scope whose multi-vote and single-vote votes are at positions ``multi`` and ``single`` of ``votes``."""
    from scipy import sparse

    nan = math.nan
    n_single_units = _n_distinct(votes.unit[single])
    multi_pairs = _n_distinct(votes.pair[multi])
    every = np.concatenate([multi, single])
    chance_per_vote = _chance_per_vote(votes.cell[every], votes.cat[every])
    chance = float(np.mean(chance_per_vote)) if every.size else nan
    base = dict(scope=scope, level=level, matchup=matchup, criterion=criterion, chance=chance)
    if multi_pairs >= min_pairs:
        rows, basis = multi, "pair by pair"
    elif _n_distinct(votes.pair[every]) >= min_pairs:
        rows, basis = every, "votes"
    else:
        rows, basis = multi, "pair by pair"
    pair, reader = votes.pair[rows], votes.reader[rows]
    n_pairs = _n_distinct(pair)
    n_readers = _n_distinct(reader)
    counts = dict(
        n_pairs=n_pairs,
        n_units=_n_distinct(votes.unit[rows]),
        n_readers=n_readers,
        n_votes=int(rows.size),
        n_single_vote_units=n_single_units,
    )
    if n_pairs < min_pairs or n_readers < min_readers:
        why = (
            f"{n_pairs} pairs with a valid verdict and two or more reader votes (at least {min_pairs} needed)"
            if n_pairs < min_pairs
            else f"{n_readers} readers on them (at least {min_readers} needed)"
        )
        return AgreementScope(
            **base,
            status="INSUFFICIENT",
            basis=basis,
            **counts,
            judge_agreement=nan,
            reader_agreement=nan,
            advantage=Estimate(nan),
            df=nan,
            p_pass=nan,
            p_fail=nan,
            p_fail_adjusted=nan,
            winning_rate=nan,
            advantage_probability=nan,
            n_readers_tested=0,
            reason=f"INSUFFICIENT: {why}",
        )
    # codes in the order of first appearance: the order of the resampling counts' columns
    pc, pair_ids = pd.factorize(pair)
    rc, reader_ids = pd.factorize(reader)
    n_p, n_r = len(pair_ids), len(reader_ids)
    strata = np.zeros(n_p, np.int64)
    strata[pc] = pd.factorize(votes.matchup[rows])[0]
    # the means as pandas takes them (the sums' order is the votes')
    if basis == "pair by pair":
        a_judge, a_reader = votes.a_judge[rows], votes.a_reader[rows]
        judge_agree = float(pd.Series(a_judge).mean())
        reader_agree = float(pd.Series(a_reader).mean())
        d = a_judge - a_reader
    else:
        same = votes.cat[rows] == votes.jcat[rows]
        judge_agree = float(pd.Series(same).mean())
        reader_agree = nan
        d = same.astype(float) - chance_per_vote
    est = float(pd.Series(d).mean())
    shape = (n_p, n_r)
    num = sparse.csr_matrix((d, (pc, rc)), shape=shape)
    den = sparse.csr_matrix((np.ones(rows.size), (pc, rc)), shape=shape)
    spread = _two_way(num, den, strata, n_boot, rng)
    ci, p_pass, p_fail = _t_tests(est, spread.variance, spread.df, margin, alpha)
    se_pass, se_fail = _monte_carlo_se(est, spread, margin, alpha)
    if basis == "votes":
        p_pass, se_pass = 1.0, 0.0  # a reader's own agreement is not identifiable: never PASS
    wr, rho, n_tested = _alt_test_of(reader, votes.w[rows], margin, alpha) if basis == "pair by pair" else (nan, nan, 0)
    return AgreementScope(
        **base,
        status="",
        basis=basis,
        **counts,
        judge_agreement=judge_agree,
        reader_agreement=reader_agree,
        advantage=ci,
        df=spread.df,
        p_pass=p_pass,
        p_fail=p_fail,
        p_fail_adjusted=nan,
        winning_rate=wr,
        advantage_probability=rho,
        n_readers_tested=n_tested,
        reason="",
        n_boot=int(n_boot),
        p_pass_mc_se=se_pass,
        p_fail_mc_se=se_fail,
    )


def _monte_carlo_se(est: float, spread: _Spread, margin: float, alpha: float) -> tuple[float, float]:
    """The Monte Carlo standard errors of (p_pass, p_fail): the delete-a-group jackknife of the two p-values
    over the groups of replicates (the variance and its df recomputed without each group), which carries the
    replicates' noise through the two-way correction, its truncation and the degrees of freedom."""
    from judge_transfer_audit.statistics.distributions import t as t_dist

    g = len(spread.left_out)
    if g < 2 or not np.isfinite(est):
        return math.nan, math.nan
    var, df = np.array(spread.left_out, float).T
    if not (np.isfinite(var).all() and (var > 0).all()):
        return math.nan, math.nan
    df = np.where(np.isfinite(df) & (df > 0), df, 1e9)  # as in _t_tests
    z = (est + margin) / np.sqrt(var)
    p = np.stack([t_dist.sf(z, df), t_dist.cdf(z, df)])
    se = np.sqrt((g - 1) / g * ((p - p.mean(axis=1, keepdims=True)) ** 2).sum(axis=1))
    return float(se[0]), float(se[1])


def _chance_per_vote(cell: np.ndarray, cat: np.ndarray) -> np.ndarray:
    """Per vote, sum_k pi_k^2 with pi the vote shares of its cell (matchup x criterion)."""
    code, uniques = pd.factorize(cell)
    counts = np.bincount(code * 3 + cat, minlength=3 * len(uniques)).reshape(-1, 3).astype(float)
    share = counts / counts.sum(axis=1, keepdims=True)
    return (share**2).sum(axis=1)[code]


def _closed_test_p(rows: list[AgreementScope], live: list[int], adjust: str) -> dict[int, float]:
    """The FAIL p of every live scope adjusted by the closed test of :func:`multiplicity_rule`.

    The elementary hypotheses are the cells' ("the cell's advantage is at least ``-margin``"); a
    matchup's hypothesis is that of all its cells, the study's that of every cell. The closure is
    :func:`judge_transfer_audit.verdict.hierarchy.closure` (the rate decision's): within a matchup, a single cell is
    tested on its own p, the set of all its assessed cells by ``min(1, 2 min(p_matchup, k min p_c))``
    (the matchup's pooled test, when every cell of the matchup is assessed, and the Bonferroni test of
    its ``k`` cells), any other set by Bonferroni over its cells; across matchups, Bonferroni over the
    matchups a set touches, which gives Holm over the matchups (``adjust``). The set of every cell is
    tested by ``min(1, 2 min(p_study, K min_g p_g))`` (the study's pooled test and the Bonferroni test
    over its ``K`` matchups; with one matchup, that matchup's test): every adjusted p is at least that.
    """
    from judge_transfer_audit.verdict.hierarchy import AdjustedAcross, GroupPool, closure

    if adjust == "none":
        return {k: rows[k].p_fail for k in live}
    by_level: dict[str, list[int]] = {level: [k for k in live if rows[k].level == level] for level in LEVELS}
    cells = [k for k in by_level["cell"] if np.isfinite(rows[k].p_fail)]
    matchup_row = {rows[k].matchup: k for k in by_level["matchup"]}
    # a live matchup without an assessed cell stands for its cells in the family (its own pooled test)
    covered = {rows[k].matchup for k in cells}
    members = cells + [k for m, k in matchup_row.items() if m not in covered and np.isfinite(rows[k].p_fail)]
    groups = [rows[k].matchup for k in members]
    p_family = np.array([rows[k].p_fail for k in members], float)
    n_cells: dict[str, int] = {}
    for r in rows:
        if r.level == "cell":
            n_cells[r.matchup] = n_cells.get(r.matchup, 0) + 1
    cell_positions: dict[str, list[int]] = {}
    for i, k in enumerate(members):
        if rows[k].level == "cell":
            cell_positions.setdefault(groups[i], []).append(i)
    pools = {}
    for m, k in matchup_row.items():
        positions = tuple(cell_positions.get(m, ()))
        if len(positions) >= 2 and len(positions) == n_cells.get(m, 0) and np.isfinite(rows[k].p_fail):
            pools[m] = GroupPool(positions, {(1 << len(positions)) - 1: float(rows[k].p_fail)})
    cl = closure(p_family, groups, pools)
    study = by_level["study"]
    p_study = float(rows[study[0]].p_fail) if study else float("nan")
    # the study's local test (the set of every cell): with several matchups, the Bonferroni combination
    # of its pooled test and the Bonferroni test over the matchups; with one matchup, that matchup's
    parts = [v for v in cl.group_p.values() if np.isfinite(v)]
    if len(parts) >= 2:
        bonferroni = min(1.0, len(parts) * min(parts))
        study_local = min(1.0, 2.0 * min(p_study, bonferroni)) if np.isfinite(p_study) else bonferroni
    elif parts:
        study_local = parts[0]
    else:
        study_local = p_study
    floor = study_local if np.isfinite(study_local) else 0.0
    out = {k: float("nan") for k in live}
    adjusted = AdjustedAcross(cl.group_closure, adjust)
    for i, k in enumerate(members):
        out[k] = max(adjusted(cl.cell_closure[i], groups[i]), floor)
    for m, k in matchup_row.items():
        if k in out and m in cl.group_p:
            out[k] = max(adjusted(cl.group_p[m], m), floor)
    for k in study:
        out[k] = float(study_local)
    return out


def _decide(
    rows: list[AgreementScope], margin: float, alpha: float, adjust: str, min_pairs: int
) -> list[AgreementScope]:
    import dataclasses

    out = list(rows)
    live = [k for k, r in enumerate(out) if r.status == ""]
    adjusted_p = _closed_test_p(out, live, adjust)
    for k in live:
        pa = adjusted_p[k]
        r = out[k]
        a = r.advantage
        where = f"advantage {a.estimate:+.3f} [{a.ci_low:+.3f}, {a.ci_high:+.3f}] (margin {margin:g})"
        if r.basis == "votes":
            what = (
                f"one vote per pair: the judge agrees with {r.judge_agreement:.1%} of the readers' votes, "
                f"chance at their vote shares {r.chance:.1%}; a reader's own agreement is not identifiable"
            )
        else:
            what = (
                f"the judge agrees with the other readers on {r.judge_agreement:.1%} of their votes, "
                f"a reader on {r.reader_agreement:.1%}"
            )
        if np.isfinite(pa) and pa < alpha:
            status = "FAIL"
            why = f"{what}; {where}: worse than a reader by more than the margin (adjusted p {pa:.3g})"
        elif r.p_pass < alpha:
            status = "PASS"
            why = f"{what}; {where}: at least as good as a reader within the margin (p {r.p_pass:.3g})"
        else:
            status = "INCONCLUSIVE"
            why = f"{what}; {where}: neither"
            if r.basis == "votes":
                why += (
                    f"; {min_pairs} or more of its pairs read by two or more readers would identify a "
                    "reader's agreement (the decision is then made pair by pair on them) and allow a PASS"
                )
        out[k] = dataclasses.replace(r, status=status, p_fail_adjusted=float(pa), reason=f"{status}: {why}")
    return out


def _monte_carlo_borderline(
    rows: list[AgreementScope], alpha: float, adjust: str
) -> tuple[set[int], dict[int, tuple[str, ...]]]:
    """Could the bootstrap's Monte Carlo error alone change a decided scope's status?

    Each decided scope's FAIL p is moved down and up by ``MC_SES`` of its Monte Carlo standard errors (the
    others kept) and the closed test adjusted again; the scopes whose FAIL decision then changes are
    borderline (the FAIL test), and the moved scope is one to re-run. A pair-by-pair scope whose PASS p
    (never adjusted) lies within ``MC_SES`` standard errors of alpha is borderline (the PASS test) and
    re-run itself. Returns (the scopes to re-run, the borderline scopes with their tests).

    Two properties of the closed test keep this to a few dozen closed tests, not two per scope. Each local
    test is the smallest of its terms, each a p-value times a factor between 1 and ``C`` (four times the
    scopes bounds the factors: Bonferroni within and across matchups, the pooled tests' 2), and a
    hypothesis is rejected when every local test containing it is below alpha: so a move whose range lies
    wholly below ``alpha / C`` or wholly at or above alpha changes no rejection. And the adjusted p-values
    do not decrease when any p increases, so the decisions under a single move lie between those with a
    whole set of scopes moved down and moved up at once: a set whose two envelopes agree holds no scope
    whose move changes anything. The remaining scopes, in the order of their p, are searched by halving
    such sets."""
    import dataclasses

    from judge_transfer_audit.verdict.decision import MC_SES

    live = [k for k, r in enumerate(rows) if r.status in ("PASS", "FAIL", "INCONCLUSIVE")]
    fails = {k: rows[k].status == "FAIL" for k in live}
    rerun: set[int] = set()
    tests: dict[int, list[str]] = {}
    moves: dict[int, tuple[float, float]] = {}
    for k in live:
        p, se = rows[k].p_fail, rows[k].p_fail_mc_se
        if np.isfinite(p) and np.isfinite(se) and se > 0:
            moves[k] = (max(p - MC_SES * se, 0.0), min(p + MC_SES * se, 1.0))

    def moved(scopes: list[int], side: int) -> dict[int, bool]:
        trial = list(rows)
        for k in scopes:
            trial[k] = dataclasses.replace(rows[k], p_fail=moves[k][side])
        adjusted_p = _closed_test_p(trial, live, adjust)
        return {j: bool(np.isfinite(adjusted_p[j]) and adjusted_p[j] < alpha) for j in live}

    floor = alpha / (4.0 * len(live) + 4.0)
    near = sorted(
        (k for k, (low, high) in moves.items() if high >= floor and low < alpha), key=lambda k: rows[k].p_fail
    )
    pending = [near] if near else []
    while pending:
        scopes = pending.pop()
        down, up = moved(scopes, 0), moved(scopes, 1)
        if down == up:
            continue
        if len(scopes) > 1:
            half = len(scopes) // 2
            pending += [scopes[half:], scopes[:half]]
            continue
        rerun.add(scopes[0])
        for j in live:
            if down[j] != fails[j] or up[j] != fails[j]:
                tests.setdefault(j, []).append("FAIL")
    for k in live:
        r = rows[k]
        p, se = r.p_pass, r.p_pass_mc_se
        if r.status != "FAIL" and np.isfinite(p) and np.isfinite(se) and se > 0:
            if (p - MC_SES * se < alpha) != (p + MC_SES * se < alpha):
                rerun.add(k)
                tests.setdefault(k, []).append("PASS")
    return rerun, {k: tuple(dict.fromkeys(t)) for k, t in tests.items()}


_BORDERLINE = {
    "FAIL": (
        "a FAIL p-value it rests on (its own or, through the closed test, another scope's) is within two Monte "
        "Carlo standard errors of where its FAIL decision changes"
    ),
    "PASS": "its PASS p-value is within two Monte Carlo standard errors of alpha",
}


def _sequential_note(r: AgreementScope, extended: bool, borderline: tuple[str, ...], n_boot: int) -> AgreementScope:
    """The scope with its sequential Monte Carlo said: the replicates it was decided on when re-run, and
    whether it is still borderline (the ``monte_carlo_borderline`` flag and its reason)."""
    import dataclasses

    reason = r.reason
    if extended:
        reason += (
            f"; decided on {r.n_boot:,} bootstrap replicates (sequential Monte Carlo: at {n_boot:,} the "
            "bootstrap's own noise could have changed a decision its p-values enter)"
        )
    if borderline:
        why = " and ".join(_BORDERLINE[t] for t in borderline)
        reason += (
            f"; Monte Carlo borderline ({', '.join(borderline)}): {why}, so the bootstrap's own noise, not the data, "
            "could move it: read it as undecided"
        )
    if reason == r.reason:
        return r
    return dataclasses.replace(r, reason=reason, monte_carlo_borderline=bool(borderline))


def data_supports_agreement(votes: pd.DataFrame) -> bool:
    """True when some pair has two or more votes on the same criterion (a reader's agreement is identifiable)."""
    if votes.empty:
        return False
    return bool(votes.duplicated(["pair_id", "criterion"]).any())


def agreement_decision(
    votes: pd.DataFrame,
    choices: pd.DataFrame,
    *,
    ties_counted: bool = True,
    margin: float = 0.05,
    alpha: float = 0.05,
    adjust: str = "holm",
    min_pairs: int = 10,
    min_readers: int = 3,
    n_boot: int = 999,
    rng: int | None = None,
) -> AgreementDecision:
    """The agreement decision per cell, matchup and study (module docstring).

    ``votes``: pair_id, reader_id, criterion, matchup, y (1 focal, 0 other, NaN tie);
    ``choices``: pair_id, criterion, y_judge (1, 0, 0.5 tie, NaN invalid).
    """
    v = _prepare(votes, choices, ties_counted)
    multi, single = _scored_votes(v) if len(v) else (v.assign(unit=0).iloc[:0], v.assign(unit=0).iloc[:0])
    from judge_transfer_audit.verdict.assess import SEQUENTIAL_FACTOR, SEQUENTIAL_ROUNDS

    seq = np.random.SeedSequence(rng)
    entropy = seq.entropy if seq.entropy is not None else 0
    kw = dict(margin=margin, alpha=alpha, min_pairs=min_pairs, min_readers=min_readers)
    m_all, s_all = multi["matchup"].astype(str).to_numpy(), single["matchup"].astype(str).to_numpy()
    c_all, sc_all = multi["criterion"].astype(str).to_numpy(), single["criterion"].astype(str).to_numpy()
    matchups = sorted(set(m_all) | set(s_all))
    criteria = sorted(set(c_all) | set(sc_all))
    # integer codes of the matchups and criteria, the multi-vote rows' then the single-vote rows'
    matchup_code = np.concatenate(_shared_codes(m_all, s_all, matchups))
    criterion_code = np.concatenate(_shared_codes(c_all, sc_all, criteria))
    scored = _votes_of(multi, single, matchup_code)
    n_multi = len(multi)
    every = np.arange(matchup_code.size)
    # a scope is the positions of its votes: the multi-vote ones, then the single-vote ones
    scopes: list[tuple[str, str, str, str, np.ndarray, np.ndarray]] = [
        ("all/all", "study", "all", "all", every[:n_multi], every[n_multi:])
    ]
    order = np.argsort(matchup_code, kind="stable")
    starts = np.r_[0, np.cumsum(np.bincount(matchup_code, minlength=len(matchups)))]
    in_matchup = [order[starts[k] : starts[k + 1]] for k in range(len(matchups))]
    for m, at in zip(matchups, in_matchup):
        scopes.append((f"{m}/all", "matchup", m, "all", at[at < n_multi], at[at >= n_multi]))
    for m, at in zip(matchups, in_matchup):
        for i in np.unique(criterion_code[at]):
            cell = at[criterion_code[at] == i]
            scopes.append((f"{m}/{criteria[i]}", "cell", m, criteria[i], cell[cell < n_multi], cell[cell >= n_multi]))

    def scope_row(k: int, replicates: int) -> AgreementScope:
        """Scope ``k`` on its own stream (keyed by the scope, and by the count when the re-runs raise it)."""
        scope, level, m, c, multi_at, single_at = scopes[k]
        key = [entropy, k] if replicates == n_boot else [entropy, k, replicates]
        gen = np.random.default_rng(np.random.SeedSequence(key))
        return _scope_row(scope, level, m, c, scored, multi_at, single_at, rng=gen, n_boot=replicates, **kw)

    rows = [scope_row(k, n_boot) for k in range(len(scopes))]
    decided = _decide(rows, margin, alpha, adjust, min_pairs)
    replicates, extended = n_boot, set()
    for round_ in range(SEQUENTIAL_ROUNDS + 1):
        rerun, flagged = _monte_carlo_borderline(decided, alpha, adjust)
        if not rerun or round_ == SEQUENTIAL_ROUNDS:  # nothing to re-run (then nothing is flagged), or no round left
            break
        replicates *= SEQUENTIAL_FACTOR
        for k in sorted(rerun):
            rows[k] = scope_row(k, replicates)
            extended.add(k)
        decided = _decide(rows, margin, alpha, adjust, min_pairs)
    decided = [_sequential_note(r, k in extended, flagged.get(k, ()), n_boot) for k, r in enumerate(decided)]
    return AgreementDecision(
        rows=tuple(decided),
        margin=float(margin),
        alpha=float(alpha),
        adjust=adjust,
        n_boot=int(n_boot),
        seed=rng,
        ties="category" if ties_counted else "excluded",
        multiplicity=multiplicity_rule(adjust),
    )


def _shared_codes(a: np.ndarray, b: np.ndarray, values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``a``'s and ``b``'s strings in the sorted ``values`` (every one of them is there)."""
    order = np.asarray(values, dtype=object)
    return np.searchsorted(order, a), np.searchsorted(order, b)


def multiplicity_rule(adjust: str) -> str:
    """The FAIL decision's multiplicity rule, in words (the ``multiplicity`` field)."""
    if adjust == "none":
        return (
            "FAIL: each scope's own one-sided test at alpha, no adjustment; "
            "PASS: one-sided non-inferiority at alpha per scope, never adjusted"
        )
    word = {"holm": "Holm", "bonferroni": "Bonferroni"}.get(adjust, adjust)
    return (
        "FAIL: a closed test over the cells; a matchup's criteria pooled in the test of all its cells, "
        "the study's pooled test in the test of every cell (each combined with the Bonferroni test of "
        f"the parts), {word} over the matchups; the familywise error rate over the cells, the matchups "
        "(all their cells) and the study (every cell) is at most alpha; "
        "PASS: one-sided non-inferiority at alpha per scope, never adjusted"
    )


__all__ = [
    "AgreementDecision",
    "AgreementScope",
    "AltTestResult",
    "agreement_decision",
    "alt_test",
    "by_rejections",
    "data_supports_agreement",
    "multiplicity_rule",
]
