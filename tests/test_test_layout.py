"""The tests mirror the package: a folder of tests under tests/audit, tests/detectors, tests/generation or
tests/reports is named after the package folder whose modules it tests (tests/audit/statistics/glmm/ tests
audit/statistics/glmm/), so a module's tests are found where the module is. Cross-cutting suites keep their
own top-level folders (tests/hostile, tests/reference, tests/support, tests/ci, tests/fixtures)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIRRORED = ("audit", "detectors", "generation", "reports")


def _test_folders(top: Path) -> list[Path]:
    return sorted({p.parent for p in top.rglob("test_*.py")})


def test_every_test_folder_names_a_package_folder():
    strays = []
    for name in MIRRORED:
        for folder in _test_folders(ROOT / "tests" / name):
            package = ROOT / folder.relative_to(ROOT / "tests")
            if not (package / "__init__.py").is_file():
                strays.append(str(folder.relative_to(ROOT)))
    assert not strays, f"test folders without a package folder of the same path: {strays}"


def test_the_audit_tests_top_level_holds_only_the_top_level_modules_tests():
    # a test of a module in a layer folder lives in that folder's mirror, not at the top
    top_modules = {p.stem for p in (ROOT / "audit").glob("*.py")}
    loose = [
        p.name for p in (ROOT / "tests" / "audit").glob("test_*.py") if p.stem.removeprefix("test_") not in top_modules
    ]
    assert not loose, f"tests at the top of tests/audit that belong in a layer folder: {loose}"
