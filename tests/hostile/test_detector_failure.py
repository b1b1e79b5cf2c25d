"""A requested detector that fails while running is an ERROR check (exit 6 from `audit run`, see test_secrets)."""

from __future__ import annotations

import pytest

import judge_transfer_audit.detectors.features as features_module
from judge_transfer_audit.core.errors import ProviderError
from judge_transfer_audit.detectors.lexical import LexicalDetector
from judge_transfer_audit.engine.pipeline import run_audit
from judge_transfer_audit.inputs import load_audit_data
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.spec import AuditSpec
from tests.hostile.study import write_study


@pytest.fixture
def failing_lexical(monkeypatch):
    def compute(self, texts):
        raise ProviderError("the lexical service at http://h/?token=abcdefgh123 is down")

    monkeypatch.setattr(LexicalDetector, "compute", compute)
    monkeypatch.setattr(features_module, "DEFAULT_DETECTORS", ("length", "lexical"))


def _audit(tmp_path, policy=Policy()):
    files = write_study(tmp_path / "in")
    data = load_audit_data(files["judge"], files["humans"], pairs=files["pairs"], stories=files["stories"])
    return run_audit(data, AuditSpec(uncertainty=False, readers=False, policy=policy))


def test_a_failing_detector_is_an_error_check_with_a_redacted_reason(tmp_path, failing_lexical):
    result = _audit(tmp_path)
    errors = [c for c in result.checks if c.status is Status.ERROR]
    assert [(c.name, c.scope) for c in errors] == [("surface.detector", "lexical")]
    assert "is down" in errors[0].reason and "abcdefgh123" not in errors[0].reason
    assert result.status is Status.ERROR  # an ERROR check makes the run ERROR (schema 2.0)
    assert "surface.detector" in result.verdict
    record = {d.name: d for d in result.surface.payload.feature_detectors}["lexical"]
    assert record.status is Status.ERROR


def test_surface_detector_off_accepts_the_failure_knowingly(tmp_path, failing_lexical):
    result = _audit(tmp_path, Policy(severity={"surface.detector": "OFF"}))
    assert not [c for c in result.checks if c.name == "surface.detector"]
    record = {d.name: d for d in result.surface.payload.feature_detectors}["lexical"]
    assert record.status is Status.ERROR  # still recorded in the section
