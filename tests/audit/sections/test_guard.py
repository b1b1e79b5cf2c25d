"""audit/sections/_guard.py: a section's AuditError becomes Failed (redacted), anything else propagates."""

from __future__ import annotations

import pytest

from judge_transfer_audit.core.errors import AuditError, WorkerLostError
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.section_result import Computed, Failed, Skipped
from judge_transfer_audit.sections._guard import failed_check, guarded, not_requested


def test_guarded_turns_an_audit_error_into_failed_and_keeps_other_errors():
    def raises_audit():
        raise AuditError("no readers left")

    section = guarded(raises_audit, "reader analysis")
    assert isinstance(section, Failed) and section.error == "AuditError"
    assert section.reason == "reader analysis could not be computed: no readers left"
    assert guarded(lambda: (1,), "x") == Computed((1,))
    with pytest.raises(WorkerLostError):
        guarded(lambda: (_ for _ in ()).throw(WorkerLostError("lost")), "x")
    with pytest.raises(ZeroDivisionError):  # a bug is not a section that could not be computed
        guarded(lambda: 1 / 0, "x")
    check = failed_check("readers", section)
    assert check is not None and check.name == "readers.computed" and check.status is Status.ERROR
    assert failed_check("readers", not_requested("--no-readers")) is None
    assert not_requested("--no-readers") == Skipped("not requested (--no-readers)")


def test_guarded_redacts_a_key_in_the_reason():
    def leaks():
        raise AuditError("GET https://api.example.com/v1?api_key=sk-secret123 failed")

    section = guarded(leaks, "surface features")
    assert "sk-secret123" not in section.reason and section.error == "AuditError"
