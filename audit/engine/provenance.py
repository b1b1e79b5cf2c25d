"""Provenance of a run: versions, seed, policy, input hashes, the exact command."""

from __future__ import annotations

import dataclasses
from importlib import metadata

from judge_transfer_audit import __version__
from judge_transfer_audit.model.data import AuditData
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.results.result import Provenance

_PACKAGES = (
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "krippendorff",
    "lexicalrichness",
    "spacy",
    "matplotlib",
    "jinja2",
    "click",
    "torch",
    "transformers",
    "pymer4",
)


def package_versions() -> dict[str, str]:
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def build_provenance(data: AuditData, spec: AuditSpec, *, seed: int | None, primary_judge: str) -> Provenance:
    return Provenance(
        package_version=__version__,
        package_versions=package_versions(),
        command=spec.command,
        seed=seed,
        tie_rule=spec.tie_rule.name,
        policy=spec.policy.to_dict(),
        policy_source=spec.policy_source,
        sources=tuple(dataclasses.asdict(s) for s in data.sources),
        exclusions=tuple(dataclasses.asdict(e) for e in data.exclusions),
        focal_source=data.focal_source,
        human_shape=data.human_shape,
        primary_judge=primary_judge,
        notes=tuple(data.notes),
        rows=tuple(
            {"role": r.role, "unit": r.unit, "read": r.read, "used": r.used, "excluded_by_reason": dict(r.excluded)}
            for r in data.rows
        ),
        orientation=tuple(dataclasses.asdict(o) for o in data.orientation),
        glmm_backend=spec.glmm_backend,
    )
