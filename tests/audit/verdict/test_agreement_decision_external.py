"""The alternative annotator test on AltTest's own shipped data (marker ``external``).

The expected figures are computed here by the checked-in reference procedure
(tests/reference/alttest/make_reference.py) on the raw files in ../shared/datasets, never typed in:
our :func:`judge_transfer_audit.verdict.agreement_decision.alt_test` must give the same winning rates, decisions,
p-values and advantage probabilities at AltTest's epsilon (0.2 for both data sets), and the run's own
study-level figures on MT-Bench (through the data contract) must equal the reference's.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.agreement_decision import agreement_decision, alt_test
from tests.conftest import SHARED_DATASETS

pytestmark = pytest.mark.external

REFERENCE = Path(__file__).resolve().parents[2] / "reference" / "alttest" / "make_reference.py"
#: data set -> AltTest's scoring function and epsilon for it (its example notebook's settings)
SETTINGS = {"mtbench_alttest": ("accuracy", 0.2), "summeval_alttest": ("neg_rmse", 0.2)}


def _reference():
    spec = importlib.util.spec_from_file_location("alttest_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _folder(name: str) -> Path:
    folder = SHARED_DATASETS / name
    if not (folder / "human_annotations.json").exists():
        pytest.skip(f"{folder} is absent")
    return folder


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_winning_rates_and_decisions_equal_the_reference(name):
    folder = _folder(name)
    scoring, epsilon = SETTINGS[name]
    expected = _reference().run_directory(folder, scoring, epsilon)
    humans = json.loads((folder / "human_annotations.json").read_text())
    judges = json.loads((folder / "llm_annotations.json").read_text())
    assert set(judges) == set(expected) and len(judges) == 6
    for judge, labels in judges.items():
        got, ref = alt_test(labels, humans, scoring=scoring, epsilon=epsilon), expected[judge]
        assert got.winning_rate == ref["winning_rate"], judge
        assert got.passed == ref["passed"], judge
        assert list(got.readers) == ref["readers"] and len(got.readers) == 3
        np.testing.assert_allclose(got.p_values, ref["p_values"], rtol=1e-10, atol=1e-300)
        assert got.advantage_probability == pytest.approx(ref["advantage_probability"], abs=1e-12)


def test_the_run_reproduces_the_reference_on_mtbench(converted_datasets):
    """The same figures from the run's own votes (the data contract, focal / other / tie)."""
    from judge_transfer_audit.engine.pipeline import judge_choices
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes

    folder = _folder("mtbench_alttest")
    expected = _reference().run_directory(folder, "accuracy", 0.2)
    d = converted_datasets / "mtbench"
    data = load_audit_data(d / "judge.csv", d / "humans.csv", pairs=d / "pairs.csv")
    outcomes = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    for judge in data.judges:
        choices = judge_choices(outcomes, judge, data.criteria)
        row = agreement_decision(data.votes, choices, margin=0.2, n_boot=100, rng=0).row("all/all")
        assert row.n_readers_tested == 3
        assert row.winning_rate == expected[judge]["winning_rate"], judge
        assert row.advantage_probability == pytest.approx(expected[judge]["advantage_probability"], abs=1e-12)
