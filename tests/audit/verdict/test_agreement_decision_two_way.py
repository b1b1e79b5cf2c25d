"""The agreement decision's two-way variance (judge_transfer_audit.verdict.agreement_decision._two_way): its resampling
counts are drawn as indices and counted, so its variance is compared with the straightforward computation that
draws them with ``Generator.multinomial`` over the whole (replicates x pairs) grid: the same distribution, so
the two variances agree within their Monte Carlo error on a seeded study (and a scheme that left the readers
out would not)."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from judge_transfer_audit.statistics.uncertainty.two_way import correct_two_way
from judge_transfer_audit.verdict.agreement_decision import JACKKNIFE_GROUPS, _left_out, _two_way


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
