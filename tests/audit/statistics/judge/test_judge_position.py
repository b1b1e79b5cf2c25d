"""judge_transfer_audit.statistics.judge.position: exact intervals against R binom.test, swap consistency, the
``shown_first`` column of the judge file, the check and its severity, the section."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.statistics.judge.position import clopper_pearson, judge_position_bias

REF = Path(__file__).resolve().parents[3] / "reference" / "clopper_pearson"


def test_clopper_pearson_matches_r_binom_test():
    """R binom.test (make_reference.R), tol 1e-9 (scipy inverts the beta quantiles)."""
    for row in pd.read_csv(REF / "binom_test.csv").itertuples():
        e = clopper_pearson(int(row.k), int(row.n), row.level)
        assert e.estimate == row.k / row.n
        assert e.ci_low == pytest.approx(row.low, abs=1e-9) and e.ci_high == pytest.approx(row.high, abs=1e-9)


def _verdicts(n_pairs=60, p_first=0.5, both_orders=True, seed=0, flip_second=0.0):
    """A judge whose verdict for the truly better system is 'a'; a position effect makes it pick
    the output shown first with probability p_first (when not following quality)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_pairs):
        orders = ("a", "b") if both_orders else (("a",) if i % 2 == 0 else ("b",))
        first_verdict = None
        for first in orders:
            choice = first if rng.random() < p_first else ("b" if first == "a" else "a")
            if first_verdict is not None and rng.random() < flip_second:
                choice = "tie"
            first_verdict = choice
            rows.append(
                dict(
                    pair_id=f"p{i}",
                    criterion="overall",
                    judge="j",
                    sample=0,
                    choice=choice,
                    shown_first=first,
                    line=len(rows) + 2,
                )
            )
    return pd.DataFrame(rows)


def test_first_rate_and_swap_consistency_by_hand():
    v = pd.DataFrame(
        dict(
            pair_id=["p1", "p1", "p2", "p2", "p3", "p4"],
            criterion="overall",
            judge="j",
            sample=0,
            choice=["a", "a", "a", "b", "tie", "invalid"],
            shown_first=["a", "b", "a", "b", "a", "b"],
            line=range(6),
        )
    )
    row = judge_position_bias(v, n_boot=100, rng=1).row("j")
    # decisive with order: p1 a(first), p1 a(second), p2 a(first), p2 b(first) -> 3 of 4 first
    assert (row.n_ordered, row.n_decisive, row.n_first) == (6, 4, 3)
    assert row.first_rate.estimate == 0.75
    # both orders: p1 consistent (a, a), p2 inconsistent (a, b)
    assert (row.n_swapped_units, row.n_consistent) == (2, 1) and row.swap_consistency.estimate == 0.5


def test_a_position_biased_judge_is_found_and_an_unbiased_one_is_not():
    biased = judge_position_bias(_verdicts(n_pairs=150, p_first=0.75), n_boot=200, rng=2).row("j")
    assert biased.first_rate.ci_low > 0.5
    assert biased.swap_consistency.estimate < 0.6
    fair = judge_position_bias(_verdicts(n_pairs=150, p_first=0.5, seed=3), n_boot=200, rng=2).row("j")
    assert fair.first_rate.ci_low < 0.5 < fair.first_rate.ci_high
    lo, hi = fair.swap_consistency.ci_low, fair.swap_consistency.ci_high
    assert lo < fair.swap_consistency.estimate < hi


def test_one_order_per_pair_has_no_swap_units():
    row = judge_position_bias(_verdicts(both_orders=False), n_boot=50, rng=0).row("j")
    assert row.n_swapped_units == 0 and np.isnan(row.swap_consistency.estimate)
    assert np.isfinite(row.first_rate.ci_low)


def _files(tmp_path, shown=("A", "B")):
    pairs = pd.DataFrame(dict(pair_id=[f"p{i}" for i in range(20)], system_a="x", system_b="y"))
    humans = pd.DataFrame(
        [
            dict(pair_id=f"p{i}", reader_id=f"r{r}", criterion="overall", choice="x" if (i + r) % 3 else "y")
            for i in range(20)
            for r in range(3)
        ]
    )
    judge = pd.DataFrame(
        [
            dict(pair_id=f"p{i}", criterion="overall", choice=first if first in "AB" else "A", shown_first=first)
            for i in range(20)
            for first in shown
        ]
    )
    for name, frame in (("pairs", pairs), ("humans", humans), ("judge", judge)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    return tmp_path / "judge.csv", tmp_path / "humans.csv", tmp_path / "pairs.csv"


def test_judge_file_shown_first_both_orders_load(tmp_path):
    judge, humans, pairs = _files(tmp_path)
    data = load_audit_data(judge, humans, pairs=pairs)
    v = data.judge_verdicts
    assert len(v) == 40 and set(v["shown_first"]) == {"x", "y"}  # A/B resolved to system names


def test_shown_first_not_in_the_pair_is_an_input_error(tmp_path):
    judge, humans, pairs = _files(tmp_path, shown=("A", "zz"))
    with pytest.raises(InputError) as info:
        load_audit_data(judge, humans, pairs=pairs)
    text = str(info.value)
    assert "shown_first names a system that is not in the pair" in text and "zz" in text


def test_pipeline_check_warns_by_default_and_follows_the_policy(tmp_path):
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.model.policy import Policy
    from judge_transfer_audit.model.spec import AuditSpec
    from judge_transfer_audit.results.result import result_from_json, result_to_json

    judge, humans, pairs = _files(tmp_path)  # the judge always picks the first shown: rate 1
    data = load_audit_data(judge, humans, pairs=pairs)
    spec = AuditSpec(uncertainty=False, readers=False, surface=False)
    res = run_audit(data, spec)
    check = next(c for c in res.checks if c.name == "judge.position_bias")
    assert check.status is Status.WARN and check.value == 1.0 and "shown first" in check.reason
    assert res.judge_position.payload.row("judge").swap_consistency.estimate == 0.0
    strict = run_audit(data, dataclasses.replace(spec, policy=Policy(severity={"judge.position_bias": "FAIL"})))
    assert next(c for c in strict.checks if c.name == "judge.position_bias").status is Status.FAIL
    off = run_audit(data, dataclasses.replace(spec, policy=Policy(severity={"judge.position_bias": "OFF"})))
    assert not any(c.name == "judge.position_bias" for c in off.checks)
    back = result_from_json(result_to_json(res))
    assert back.judge_position.payload.to_frame().equals(res.judge_position.payload.to_frame())
    from judge_transfer_audit.results.derive import verify_result

    assert any(c.name == "judge.position_bias" for c in verify_result(back))  # `audit gate` re-derives it
    from judge_transfer_audit.reports.terminal import render_summary

    assert "chose the output shown first 1.000" in render_summary(res)


def test_scalar_judge_skips_the_section():
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.model.spec import AuditSpec
    from tests.audit.synthetic import make_audit_data

    res = run_audit(make_audit_data(n_pairs=6, n_readers=3), AuditSpec(uncertainty=False, readers=False, surface=False))
    assert res.judge_position.status is Status.SKIPPED and "scores" in res.judge_position.reason
    assert not any(c.name == "judge.position_bias" for c in res.checks)


@pytest.mark.r
def test_binom_reference_rerun_live(tmp_path):
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    shutil.copy(REF / "make_reference.R", tmp_path / "make_reference.R")
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    np.testing.assert_allclose(
        pd.read_csv(tmp_path / "binom_test.csv")[["low", "high"]],
        pd.read_csv(REF / "binom_test.csv")[["low", "high"]],
        atol=1e-12,
    )
