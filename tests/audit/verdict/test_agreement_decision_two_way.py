"""The agreement decision's two-way variance (judge_transfer_audit.verdict.agreement_decision._two_way): its resampling
counts are drawn as indices and counted, so its variance is compared with the straightforward computation that
draws them with ``Generator.multinomial`` over the whole (replicates x pairs) grid: the same distribution, so
the two variances agree within their Monte Carlo error on a seeded study (and a scheme that left the readers
out would not)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from judge_transfer_audit.statistics.uncertainty.bootstrap import multinomial_weights
from judge_transfer_audit.statistics.uncertainty.two_way import correct_two_way
from judge_transfer_audit.verdict.agreement_decision import (
    JACKKNIFE_GROUPS,
    _left_out,
    _resampling_counts,
    _Spread,
    _two_way,
)


def _study(seed: int, n_strata: int = 4, per_stratum: int = 60, n_readers: int = 25):
    """One vote per pair, matchups with very different agreement, readers with different leniency."""
    rng = np.random.default_rng(seed)
    n_p = n_strata * per_stratum
    strata = np.repeat(np.arange(n_strata), per_stratum)
    reader = rng.integers(0, n_readers, n_p)
    level = np.clip(np.where(strata % 2 == 0, 0.9, -0.9) + rng.normal(0, 0.1, n_readers)[reader], -1, 1)
    d = (rng.random(n_p) < 0.5 + level / 2).astype(float) - 0.5
    num = sparse.csr_matrix((d, (np.arange(n_p), reader)), shape=(n_p, n_readers))
    den = sparse.csr_matrix((np.ones(n_p), (np.arange(n_p), reader)), shape=(n_p, n_readers))
    return num, den, strata


def _reference_two_way(num, den, strata, n_boot, rng, readers_resampled=True):
    """Readers' and pairs' counts from Generator.multinomial, pairs within their stratum, all replicates at once
    (``readers_resampled`` False: the readers' counts all ones, a wrong scheme the test must tell apart)."""
    n_p, n_r = num.shape
    r = rng.multinomial(n_r, np.full(n_r, 1.0 / n_r), size=n_boot).astype(float)
    if not readers_resampled:
        r = np.ones_like(r)
    u = np.empty((n_boot, n_p))
    for s in np.unique(strata):
        idx = np.flatnonzero(strata == s)
        u[:, idx] = rng.multinomial(idx.size, np.full(idx.size, 1.0 / idx.size), size=n_boot)
    dense_num, dense_den = num.toarray(), den.toarray()
    product = np.einsum("bp,pr,br->b", u, dense_num, r) / np.einsum("bp,pr,br->b", u, dense_den, r)
    pairs = (u @ dense_num.sum(1)) / (u @ dense_den.sum(1))
    readers = (r @ dense_num.sum(0)) / (r @ dense_den.sum(0))
    est = float(num.sum() / den.sum())
    c = correct_two_way(est, product, pairs, readers, n_p, n_r)
    return float(c.variance)


def test_two_way_variance_agrees_with_the_multinomial_reference_within_monte_carlo_error():
    num, den, strata = _study(0)
    n_boot, runs = 999, 6
    new = np.array([_two_way(num, den, strata, n_boot, np.random.default_rng(100 + k)).variance for k in range(runs)])
    ref = np.array([_reference_two_way(num, den, strata, n_boot, np.random.default_rng(200 + k)) for k in range(runs)])
    wrong = np.array(
        [_reference_two_way(num, den, strata, n_boot, np.random.default_rng(300 + k), False) for k in range(runs)]
    )
    # the runs' spread is each mean's Monte Carlo error; the two schemes' means within 4 standard errors
    se = np.sqrt(new.var(ddof=1) / runs + ref.var(ddof=1) / runs)
    assert abs(new.mean() - ref.mean()) < 4 * se, (new.mean(), ref.mean(), se)
    # and the test can tell: leaving the readers out moves the variance by many standard errors
    se_wrong = np.sqrt(wrong.var(ddof=1) / runs + ref.var(ddof=1) / runs)
    assert abs(wrong.mean() - ref.mean()) > 4 * se_wrong, (wrong.mean(), ref.mean(), se_wrong)


def test_two_way_is_reproducible_and_blocks_do_not_matter():
    """The same seed gives the same (variance, df); a stratum larger than one block of replicates is drawn
    block by block from the same stream."""
    num, den, strata = _study(1)
    a = _two_way(num, den, strata, 300, np.random.default_rng(5))
    b = _two_way(num, den, strata, 300, np.random.default_rng(5))
    assert a == b and np.isfinite(a.variance) and a.variance > 0


def test_the_left_out_variances_are_the_correction_recomputed_without_each_group():
    """The jackknife's (variance, df) from the groups' sums equal correct_two_way run on the replicates that
    remain when each group of consecutive replicates is left out (NaN replicates left out as there)."""
    rng = np.random.default_rng(4)
    n_boot, n_p, n_r = 307, 40, 9
    pairs = 0.3 + rng.normal(0, 0.04, n_boot)
    readers = 0.3 + rng.normal(0, 0.02, n_boot)
    product = pairs + readers - 0.3 + rng.normal(0, 0.01, n_boot)
    product[[5, 100]] = np.nan
    got = _left_out(product, pairs, readers, n_p, n_r)
    ok = np.flatnonzero(np.isfinite(product))
    group = np.arange(ok.size) * JACKKNIFE_GROUPS // ok.size
    assert len(got) == JACKKNIFE_GROUPS
    for g, (variance, df) in enumerate(got):
        keep = ok[group != g]
        ref = correct_two_way(0.3, product[keep], pairs[keep], readers[keep], n_p, n_r)
        np.testing.assert_allclose([variance, df], [ref.variance, ref.df], rtol=1e-9)
    assert _left_out(product[:3], pairs[:3], readers[:3], n_p, n_r) == ()  # too few replicates to group


def test_the_resampling_counts_are_multinomial_weights_from_the_same_draws():
    """The counts (32-bit draws, counted a few rows at a time) equal multinomial_weights' from the same generator,
    and leave the generator where it does: the next draws are the same too."""
    for n, n_boot in [(1, 5), (7, 999), (526, 999), (5000, 13), (40000, 3)]:
        ours, theirs = np.random.default_rng(n), np.random.default_rng(n)
        assert np.array_equal(_resampling_counts(ours, n, n_boot), multinomial_weights(theirs, n, n_boot))
        assert ours.integers(0, 2**40) == theirs.integers(0, 2**40)


def _row_wise_two_way(num, den, strata, n_boot, rng):
    """The two-way variance with each stratum's product sums taken row by row over every reader's counts
    (``sum_p u[b, p] (num @ r)[p, b]`` as an einsum over the (replicates, pairs) counts)."""
    n_p, n_r = num.shape
    r = multinomial_weights(rng, n_r, n_boot)
    r_t = np.ascontiguousarray(r.T)
    num_p, den_p = np.asarray(num.sum(axis=1)).ravel(), np.asarray(den.sum(axis=1)).ravel()
    sums = np.zeros((4, n_boot))
    for s in np.unique(strata):
        idx = np.flatnonzero(strata == s)
        block = max(1, min(n_boot, 2_000_000 // idx.size))
        for b0 in range(0, n_boot, block):
            b1 = min(n_boot, b0 + block)
            u = multinomial_weights(rng, idx.size, b1 - b0)
            sums[0, b0:b1] += np.einsum("bp,pb->b", u, np.asarray(num[idx] @ r_t[:, b0:b1]))
            sums[1, b0:b1] += np.einsum("bp,pb->b", u, np.asarray(den[idx] @ r_t[:, b0:b1]))
            sums[2, b0:b1] += u @ num_p[idx]
            sums[3, b0:b1] += u @ den_p[idx]
    product, pairs = sums[0] / sums[1], sums[2] / sums[3]
    readers = (r @ np.asarray(num.sum(axis=0)).ravel()) / (r @ np.asarray(den.sum(axis=0)).ravel())
    c = correct_two_way(float(num.sum() / den.sum()), product, pairs, readers, n_p, n_r)
    return _Spread(float(c.variance), float(c.df), _left_out(product, pairs, readers, n_p, n_r))


def test_the_two_way_sums_are_the_row_wise_sums_to_the_last_bit():
    """Each stratum's product sums over its own readers, with the counts transposed, add the same terms in the
    same order as the row-wise sums over every reader: the same variance, df and jackknife, bit for bit (a
    stratum larger than one block of replicates included, and a pair read by several readers)."""
    num, den, strata = _study(2, n_strata=3, per_stratum=300, n_readers=40)
    extra = np.random.default_rng(3).integers(0, 40, num.shape[0])  # a second reader on every pair
    num = num + sparse.csr_matrix((np.full(num.shape[0], 0.25), (np.arange(num.shape[0]), extra)), shape=num.shape)
    den = den + sparse.csr_matrix((np.ones(num.shape[0]), (np.arange(num.shape[0]), extra)), shape=num.shape)
    for n_boot in (1, 7, 999, 8000):
        got = _two_way(num, den, strata, n_boot, np.random.default_rng(n_boot))
        want = _row_wise_two_way(num.tocsr(), den.tocsr(), strata, n_boot, np.random.default_rng(n_boot))
        assert repr(got) == repr(want), n_boot
