"""Shared test fixtures: the real public datasets beside the repository (marker ``external``).

../shared/datasets is converted once per session into a tmp directory by its own
convert.py; nothing from, or derived from, those files is ever written inside the repo.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: ../shared/datasets beside the repository; JUDGE_AUDIT_DATASETS points elsewhere (e.g. from a worktree)
SHARED_DATASETS = Path(
    os.environ.get("JUDGE_AUDIT_DATASETS") or Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
)


@pytest.fixture(scope="session")
def converted_datasets(tmp_path_factory) -> Path:
    """The datasets in the data contract's shape (pds/, summeval/, mtbench/); skips when absent."""
    if not (SHARED_DATASETS / "convert.py").exists():
        pytest.skip(f"{SHARED_DATASETS} is absent")
    out = tmp_path_factory.mktemp("datasets")
    subprocess.run(
        [sys.executable, str(SHARED_DATASETS / "convert.py"), str(out)], check=True, capture_output=True, timeout=300
    )
    return out
