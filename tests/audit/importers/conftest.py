"""The seeded study and its files in each tool's layout (tests/audit/importers/formats.py)."""

from __future__ import annotations

import pytest

from tests.audit.importers import formats


@pytest.fixture(scope="module")
def study():
    return formats.study()


@pytest.fixture
def files(tmp_path, study):
    """format -> the paths of its files, written fresh for the test."""
    return {
        "mtbench": list(formats.write_mtbench(tmp_path, study)),
        "arena-hard": [formats.write_arenahard(tmp_path / "ah", study)],
        "alpacaeval": list(formats.write_alpacaeval(tmp_path, study)),
        "promptfoo": [formats.write_promptfoo(tmp_path, study)],
        "inspect": formats.write_inspect(tmp_path, study),
        "argilla": [formats.write_argilla(tmp_path, study)],
    }
