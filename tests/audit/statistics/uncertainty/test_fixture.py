"""End to end on the deployment fixture (fixtures/deployment): every tool runs and agrees."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from judge_transfer_audit.core.serialize import to_jsonable
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.statistics.uncertainty import (
    cluster_bootstrap,
    glmm_cells,
    judge_configuration_rates,
    leave_one_reader_out,
    significance_tally,
)

FIXTURE = Path(__file__).resolve().parents[4] / "fixtures" / "deployment"


@pytest.fixture(scope="module")
def fixture_data():
    if not (FIXTURE / "humans.csv").exists():
        pytest.skip("deployment fixture not present")
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

    data = load_audit_data(FIXTURE / "judge.csv", FIXTURE / "humans.csv", pairs=FIXTURE / "pairs.csv")
    return data, judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))


def test_fixture_bootstrap_tally_and_judge_configs(fixture_data):
    data, judge_pairs = fixture_data
    boot = cluster_bootstrap(data.votes, judge_credits=judge_pairs, n_boot=999, rng=1)
    assert len(boot.cells) == 18 * 3 and boot.n_votes + boot.n_ties_excluded == len(data.votes)
    # judge criteria: the five dimensions pair with the humans' cells; 'aggregate' has no human cell
    assert boot.judge["paired"].sum() == 15 * len(data.judges)
    tally = significance_tally(boot, glmm_cells(data.votes))
    assert set(tally.counts) == {"glmm", "pairs", "readers", "two-way", "two-way-cgm"}
    assert all(0 <= n <= 18 for n in tally.counts.values())
    configs = judge_configuration_rates(judge_pairs)
    assert configs.n_configurations == len(data.judges) and configs.excluded_criteria == ("aggregate",)
    assert json.dumps(to_jsonable(boot)) == json.dumps(
        to_jsonable(cluster_bootstrap(data.votes, judge_credits=judge_pairs, n_boot=999, rng=1))
    )


def test_fixture_loro_raw(fixture_data):
    data, _ = fixture_data
    loro = leave_one_reader_out(data.votes, glmm=False)
    assert len(loro.shifts) == 18 * 7
    assert 0 <= loro.aggregate_shift_min <= loro.aggregate_shift_max < 0.1
