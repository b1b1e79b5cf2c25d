"""A benchmark run as ``python benchmarks/X.py`` puts benchmarks/ first on sys.path: a script named
like one of our packages (generation.py, audit.py, ...) would shadow it and break every import."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}


def test_no_benchmark_script_shadows_a_package():
    assert {"audit", "detectors", "generation", "reports"} <= PACKAGES
    scripts = {p.stem for p in (ROOT / "benchmarks").glob("*.py")}
    assert scripts & (PACKAGES | {"judge_transfer_audit"}) == set()
