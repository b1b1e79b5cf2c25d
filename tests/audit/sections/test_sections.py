"""The optional sections on the shipped fixture: computed, typed, checked, and round-tripped."""

from pathlib import Path

import pytest

from judge_transfer_audit.engine.pipeline import run_audit
from judge_transfer_audit.inputs import load_audit_data
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.results.result import result_from_json, result_to_json

ROOT = Path(__file__).resolve().parents[3]
D, DEV = ROOT / "fixtures" / "deployment", ROOT / "fixtures" / "dev"


@pytest.fixture(scope="module")
def full():
    data = load_audit_data(
        D / "judge.csv",
        D / "humans.csv",
        pairs=D / "pairs.csv",
        stories=D / "stories.csv",
        dev_judge=DEV / "judge.csv",
        dev_humans=DEV / "humans.csv",
    )
    return run_audit(data, AuditSpec(n_boot=200, seed=4))


def test_every_section_is_computed(full):
    for name in ("dev", "uncertainty", "readers", "surface"):
        section = getattr(full, name)
        assert section.status is Status.PASS, (name, section.reason)
        assert section.payload is not None


def test_sections_contribute_checks(full):
    names = {c.name for c in full.checks}
    assert "dev.spearman" in names and "uncertainty.loro_max_shift" in names
    assert any(n.startswith("readers.") for n in names) and any(n.startswith("surface.") for n in names)


def test_dev_headline_contrast(full):
    dev_check = next(c for c in full.checks if c.name == "dev.spearman")
    # the fixture's judge looked valid on its development set and fails on deployment
    assert dev_check.status is Status.PASS and dev_check.value > 0.5
    assert full.status is Status.FAIL


def test_round_trip_keeps_typed_sections(full):
    text = result_to_json(full)
    again = result_from_json(text)
    assert type(again.uncertainty.payload) is type(full.uncertainty.payload)
    assert type(again.readers.payload) is type(full.readers.payload)
    assert result_to_json(again) == text


def test_missing_inputs_skip_with_a_reason():
    data = load_audit_data(D / "judge.csv", D / "humans.csv", pairs=D / "pairs.csv")
    result = run_audit(data, AuditSpec(uncertainty=False, readers=False))
    assert result.surface.status is Status.SKIPPED and "--stories" in result.surface.reason
    assert result.dev.status is Status.SKIPPED and "--dev-judge" in result.dev.reason
    assert result.uncertainty.status is Status.SKIPPED and "--no-uncertainty" in result.uncertainty.reason


def test_reader_analysis_sees_every_judge_configuration_but_gates_on_the_primary(full):
    rates = full.readers.payload.rates.rates
    judges = set(rates.loc[rates["row_kind"] == "judge", "row_label"])
    assert len(judges) == 5 and full.provenance.primary_judge in judges
    scoped = [c.scope for c in full.checks if c.name == "readers.judge_outside_reader_range"]
    assert scoped and all(s.endswith(f"[{full.provenance.primary_judge}]") for s in scoped)
