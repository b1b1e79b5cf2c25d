"""Loading the inputs draws one "loading inputs" bar: a step per file read and per checking step, every
step counted once, and the bar closed when the load fails too (the error is not drawn over)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data
from tests.support.progress import RecordingBars

FIX = Path(__file__).resolve().parents[3] / "fixtures"


@pytest.mark.parametrize(
    "extra, files",
    [({}, 2), ({"pairs": "deployment/pairs.csv", "stories": "deployment/stories.csv"}, 4)],
)
def test_the_bar_counts_each_file_and_step_once(extra, files):
    bars = RecordingBars()
    d = FIX / "deployment"
    load_audit_data(d / "judge.csv", d / "humans.csv", **{k: FIX / v for k, v in extra.items()}, progress_bar=bars)
    (bar,) = bars.bars
    assert bar.description == "loading inputs"
    # the files, the human and the judge rows checked, the files combined, and the stories when given
    assert bar.total == files + 3 + ("stories" in extra) == bar.n
    assert bar.closed


def test_a_failed_load_closes_its_bar(tmp_path):
    bad = tmp_path / "judge.csv"
    bad.write_text("pair_id,system,criterion,score\np01,a,overall,good\n", encoding="utf-8")
    bars = RecordingBars()
    with pytest.raises(InputError):
        load_audit_data(bad, FIX / "deployment" / "humans.csv", progress_bar=bars)
    (bar,) = bars.bars
    assert bar.closed and bar.n <= bar.total
