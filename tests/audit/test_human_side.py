import numpy as np
import pandas as pd
import pytest

from audit.checks import Status
from audit.human_side import human_side, reader_rates


def _votes(ys, n_readers=3):
    return pd.DataFrame(
        [{"pair_id": f"p{i // n_readers}", "reader_id": f"r{i % n_readers}", "y": y} for i, y in enumerate(ys)]
    )


def test_raw_share_excludes_ties_and_even_split_counts_them():
    h = human_side(_votes([1, 1, 0, np.nan, 1, 0, 1, np.nan, 0, 1, 1, 0]))
    assert (h.n_focal, h.n_other, h.n_ties) == (6, 4, 2)
    assert h.rate == pytest.approx(0.6) and h.rate_even_split == pytest.approx(7 / 12)


def test_unanimous_readers_get_a_one_sided_profile_interval():
    h = human_side(_votes([1.0] * 36))
    g = h.glmm
    assert g.separation and g.status is Status.WARN and "profile" in g.reason
    assert g.ci_high == 1.0 and 0.5 < g.ci_low < 1.0  # not the uninformative Wald [0, 1]
    assert not g.degenerate  # separation has its own flag and interval


def test_a_cell_of_ties_is_skipped_not_an_error():
    h = human_side(_votes([np.nan] * 6))
    assert h.glmm.status is Status.SKIPPED and "all ties" in h.glmm.reason
    # the cell decision of an all-tie cell is an ERROR (tests/audit/verdict/test_compare.py)


def test_reader_rates_exclude_ties():
    rates = reader_rates(_votes([1, 1, 0, np.nan, 1, 0, 1, np.nan, 0, 1, 1, 0]))
    assert list(rates) == pytest.approx([1.0, 1.0, 0.0])  # r0: 1, tie, 1, 1; r1: 1, 1, tie, 1; r2: all 0


def test_the_cell_payload_names_the_glmm_path():
    rng = np.random.default_rng(3)
    h = human_side(_votes(list(rng.integers(0, 2, 60).astype(float)), n_readers=4))
    assert h.glmm.factorization == "dense"  # a small cell: the exact dense path (docs/glmm.md)
    assert human_side(_votes([np.nan] * 6)).glmm.factorization == ""


def test_majority_plugin_at_sd_pair_zero_ignores_the_sign_of_rounding():
    from audit.human_side import B0_ZERO, majority_plugin

    # 9 of 18 votes each way: b0 is 0 up to rounding, whichever engine's last digit
    assert majority_plugin(-8.1e-16, 0.0) == majority_plugin(2.2e-15, 0.0) == 0.5
    assert majority_plugin(10 * B0_ZERO, 0.0) == 1.0 and majority_plugin(-10 * B0_ZERO, 0.0) == 0.0
    assert majority_plugin(0.3, 0.6) == pytest.approx(0.6914624612740131)
