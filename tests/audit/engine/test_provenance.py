"""The provenance records every setting that changes the figures, the GLMM engine included."""

from __future__ import annotations

from pathlib import Path

from judge_transfer_audit.engine.provenance import build_provenance
from judge_transfer_audit.inputs import load_audit_data
from judge_transfer_audit.model.spec import AuditSpec

DEPLOY = Path(__file__).resolve().parents[3] / "fixtures" / "deployment"


def test_glmm_backend_is_recorded():
    data = load_audit_data(DEPLOY / "judge.csv", DEPLOY / "humans.csv", pairs=DEPLOY / "pairs.csv")
    for backend in ("native", "lme4"):
        prov = build_provenance(data, AuditSpec(glmm_backend=backend), seed=0, primary_judge="judge")
        assert prov.glmm_backend == backend
    assert "pymer4" in prov.package_versions  # the lme4 engine's bridge: its version is provenance too
