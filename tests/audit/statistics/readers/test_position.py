"""Position bias from shown_first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.readers._common import check_votes, wilson_interval
from judge_transfer_audit.statistics.readers.position import cluster_robust_interval, position_bias

from .conftest import make_votes


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (57, 120), (1, 1)])
def test_wilson_matches_statsmodels(k, n):
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert wilson_interval(k, n) == pytest.approx((lo, hi), abs=1e-12)


def test_cluster_robust_matches_statsmodels_ols():
    """Intercept-only OLS with cluster-robust (CR1) covariance gives the same standard error."""
    import statsmodels.api as sm

    rng = np.random.default_rng(4)
    groups = np.repeat(np.arange(6), [5, 9, 7, 12, 4, 8])
    y = (rng.random(len(groups)) < 0.3 + 0.08 * groups).astype(float)
    k = np.bincount(groups, weights=y)
    n = np.bincount(groups)
    lo, hi = cluster_robust_interval(k, n)
    fit = sm.OLS(y, np.ones(len(y))).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": True}, use_t=True
    )
    # CR1 factor G/(G-1) x (N-1)/(N-K) with K = 1 is ours; with use_t statsmodels refers it to t(G - 1)
    assert (lo, hi) == pytest.approx(tuple(fit.conf_int(alpha=0.05)[0]), rel=1e-10)
    centred = sm.OLS(y - 0.5, np.ones(len(y))).fit(
        cov_type="cluster", use_t=True, cov_kwds={"groups": groups, "use_correction": True}
    )
    from judge_transfer_audit.statistics.readers.position import cluster_robust_p_value

    assert cluster_robust_p_value(k, n) == pytest.approx(float(centred.pvalues[0]), rel=1e-10)


def test_rates_by_hand():
    rows = []
    # reader a: 3 decisive votes, first-shown chosen twice; one tie; reader b: 2 of 2
    for i, (shown, y) in enumerate([("F", 1.0), ("O", 1.0), ("O", 0.0), ("F", np.nan), ("X", 1.0)]):
        rows.append(
            dict(pair_id=f"p{i}", reader_id="a", criterion="overall", focal="F", other="O", y=y, shown_first=shown)
        )
    for i, (shown, y) in enumerate([("F", 1.0), ("O", 0.0)]):
        rows.append(
            dict(pair_id=f"p{i}", reader_id="b", criterion="overall", focal="F", other="O", y=y, shown_first=shown)
        )
    res = position_bias(check_votes(pd.DataFrame(rows)))
    t = res.table.set_index(["scope", "label"])
    assert t.loc[("reader", "a"), "n_votes"] == 3 and t.loc[("reader", "a"), "n_first"] == 2
    assert t.loc[("reader", "b"), "rate_first"] == 1.0
    assert res.pooled_rate == pytest.approx(4 / 5)
    assert res.n_ties == 1 and res.n_unusable == 1
    assert (res.pooled_lo, res.pooled_hi) == cluster_robust_interval(np.array([2, 2]), np.array([3, 2]))


def test_generated_votes_show_no_bias():
    res = position_bias(check_votes(make_votes(4, 30)))
    assert res.status is Status.PASS
    assert res.pooled_lo < 0.5 < res.pooled_hi
    assert set(res.table["scope"]) == {"reader", "criterion", "pooled"}


def test_skipped_without_shown_first():
    res = position_bias(check_votes(make_votes(3, 10, optional=False)))
    assert res.status is Status.SKIPPED and "shown_first" in res.reason
