"""audit/sections/: one module per section of the result, each with compute (and checks where it gates)."""

from __future__ import annotations


def test_every_section_module_has_compute_and_the_gating_ones_checks():
    import importlib

    from judge_transfer_audit.results.result import AuditResult

    gating = {"dev", "uncertainty", "readers", "surface", "judge_position", "agreement_decision"}
    for name in AuditResult.section_names():
        module = importlib.import_module(f"judge_transfer_audit.sections.{name}")
        assert module.NAME == name and callable(module.compute), name
        assert callable(getattr(module, "checks", None)) == (name in gating), name
