"""Annotation timing: per-reader times, caps, fatigue, fast readers, leave-one-reader-out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.readers._common import check_votes
from judge_transfer_audit.statistics.readers.timing import annotation_timing, leave_one_reader_out, pair_times

from .conftest import make_votes


def _timed(times: dict[str, list[float]], per_judgment: bool = False) -> pd.DataFrame:
    rows, order = [], 0
    for reader, ts in times.items():
        for i, t in enumerate(ts):
            for crit, y in (("empathy", float(i % 2)), ("overall", 1.0)):
                rows.append(
                    dict(
                        pair_id=f"p{i}",
                        reader_id=reader,
                        criterion=crit,
                        y=y,
                        seconds=t / 2 if per_judgment else t,
                        order=order,
                    )
                )
                order += 1
    return check_votes(pd.DataFrame(rows))


def test_pair_times_collapse_repeats_and_sum_per_judgment_times():
    same = pair_times(_timed({"a": [100.0, 200.0]}))
    assert list(same["seconds"]) == [100.0, 200.0]
    per = pair_times(
        _timed({"a": [100.0, 200.0]}, per_judgment=True).assign(
            seconds=lambda d: d["seconds"] + np.where(d["criterion"] == "overall", 1.0, 0.0)
        )
    )
    assert list(per["seconds"]) == [101.0, 201.0]  # 50 + 51, 100 + 101


def test_reader_summary_by_hand():
    times = {"a": [100, 200, 300, 700, 900.0], "b": [50, 60, 40, 55, 45.0], "c": [250, 260, 240, 255, 245.0]}
    res = annotation_timing(_timed(times), seconds_cap=600)
    r = res.readers.set_index("reader_id")
    assert r.loc["a", "median_seconds"] == 300
    assert r.loc["a", "n_capped"] == 2
    assert r.loc["a", "mean_seconds_capped"] == pytest.approx(np.mean([100, 200, 300, 600, 600]))
    assert r.loc["a", "mean_seconds_raw"] == pytest.approx(440)
    lr = stats.linregress(np.arange(5), [100, 200, 300, 600, 600])
    assert r.loc["a", "fatigue_slope"] == pytest.approx(lr.slope)
    assert r.loc["a", "end_to_start"] == pytest.approx((lr.intercept + 4 * lr.slope) / lr.intercept)
    # b's median 50 < 0.5 x median(300, 250) = 137.5
    assert res.fast_readers == ("b",)
    assert bool(r.loc["b", "fast_reader"]) and not bool(r.loc["c", "fast_reader"])
    assert res.overall_median_seconds == pytest.approx(np.median(sum(times.values(), [])))


def test_quantiles_by_hand():
    """The distribution the report draws: by hand, linear interpolation between order statistics."""
    times = {"a": [100, 200, 300, 700, 900.0], "b": [50, 60, 40, 55, 45.0]}
    q = annotation_timing(_timed(times)).quantiles.set_index("reader_id")
    # a sorted: 100 200 300 700 900; position p * (n - 1): 0.2 -> 120, 1 -> 200, 2 -> 300, 3 -> 700, 3.8 -> 860
    assert q.loc["a", ["q05", "q25", "q50", "q75", "q95"]].tolist() == pytest.approx([120, 200, 300, 700, 860])
    # b sorted: 40 45 50 55 60 -> 41, 45, 50, 55, 59
    assert q.loc["b", ["q05", "q25", "q50", "q75", "q95"]].tolist() == pytest.approx([41, 45, 50, 55, 59])
    assert q.loc["a", "n_pairs"] == 5 and q.loc["b", "n_pairs"] == 5


def test_cap_and_factor_are_configurable():
    times = {"a": [100, 200, 300.0], "b": [80, 90, 100.0], "c": [150, 160, 170.0]}
    votes = _timed(times)
    assert annotation_timing(votes).fast_readers == ()
    assert annotation_timing(votes, fast_reader_factor=0.8).fast_readers == ("b",)
    assert annotation_timing(votes, seconds_cap=150).readers.set_index("reader_id").loc["a", "n_capped"] == 2
    with pytest.raises(InputError):
        annotation_timing(votes, seconds_cap=0)


def test_leave_one_reader_out_by_hand():
    votes = check_votes(
        pd.DataFrame(
            [
                dict(pair_id="p", reader_id="a", criterion="c", y=1.0),
                dict(pair_id="q", reader_id="a", criterion="c", y=1.0),
                dict(pair_id="p", reader_id="b", criterion="c", y=0.0),
                dict(pair_id="p", reader_id="c", criterion="c", y=np.nan),
            ]
        )
    )
    loo = leave_one_reader_out(votes).set_index("reader_id")
    assert loo.loc["a", "rate_all"] == pytest.approx(2.5 / 4)
    assert loo.loc["a", "rate_without"] == pytest.approx(0.25)
    assert loo.loc["b", "shift"] == pytest.approx(2.5 / 3 - 2.5 / 4)


def test_fast_reader_in_generated_votes_and_its_loo_impact():
    votes = check_votes(make_votes(5, 20, fast_reader="r3"))
    res = annotation_timing(votes)
    assert res.fast_readers == ("r3",)
    assert res.readers.set_index("reader_id").loc["r1", "n_capped"] == 1
    assert res.readers["loo_max_abs_shift"].notna().all()
    assert "FAST" in str(res)


def test_skips():
    votes = check_votes(make_votes(3, 10, optional=False))
    assert annotation_timing(votes).status is Status.SKIPPED
    no_order = check_votes(make_votes(3, 10)).drop(columns="order")
    res = annotation_timing(no_order)
    assert res.status is Status.PASS and res.fatigue_status is Status.SKIPPED
    assert res.readers["fatigue_slope"].isna().all()


def test_timestamp_column_sets_the_chronology():
    times = {"a": [100.0, 200.0, 300.0, 400.0]}
    votes = _timed(times)
    # timestamps run backwards relative to the row order: the slope changes sign
    stamp = {f"p{i}": f"2026-01-0{4 - i}T10:00:00Z" for i in range(4)}
    with_stamp = votes.assign(timestamp=votes["pair_id"].map(stamp))
    by_order = annotation_timing(votes).readers.iloc[0]["fatigue_slope"]
    by_stamp = annotation_timing(with_stamp).readers.iloc[0]["fatigue_slope"]
    assert by_order == pytest.approx(100.0) and by_stamp == pytest.approx(-100.0)
