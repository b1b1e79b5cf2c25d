"""audit/sections/: one folder per section of the result, each with compute, checks where it gates, and
its renderers, every one of them named by the section's entry in the table."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_every_section_has_a_folder_with_compute_and_render_and_the_gating_ones_checks():
    import importlib

    from judge_transfer_audit.results.result import AuditResult
    from judge_transfer_audit.sections.registry import entries

    gating = {"dev", "uncertainty", "readers", "surface", "judge_position", "agreement_decision"}
    assert tuple(e.name for e in entries()) == AuditResult.section_names()
    for e in entries():
        folder = ROOT / "audit" / "sections" / e.name
        assert (folder / "compute.py").is_file() and (folder / "render.py").is_file(), e.name
        assert (folder / "checks.py").is_file() == (e.name in gating), e.name
        assert (e.checks is not None) == (e.name in gating), e.name
        compute = importlib.import_module(f"judge_transfer_audit.sections.{e.name}.compute")
        assert compute.NAME == e.name and e.step.compute is compute.compute, e.name
        assert e.step.compute.__module__ == compute.__name__
        render = importlib.import_module(f"judge_transfer_audit.sections.{e.name}.render")
        shown = [f for f in (e.terminal and e.terminal.lines, e.report and e.report.contexts) if f]
        assert shown and all(f.__module__ == render.__name__ for f in shown), e.name


def test_no_two_sections_share_a_seed_slot_or_take_the_runs_own():
    from judge_transfer_audit.sections.registry import RUN_SEEDS, entries

    keys = [e.seed for e in entries() if e.seed is not None] + list(RUN_SEEDS.values())
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            n = min(len(a), len(b))
            assert a[:n] != b[:n], (a, b)


def test_every_section_folder_is_a_package_the_distribution_installs():
    """pyproject.toml lists its packages one by one (the folders are mapped onto one import name)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    folders = {p.parent.name for p in (ROOT / "audit" / "sections").glob("*/__init__.py")}
    assert folders and {f"judge_transfer_audit.sections.{name}" for name in folders} <= listed
