"""Shared pieces of the hostile-input suite: a tiny seeded study and a runner that checks the basics."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge_transfer_audit.cli import main
from tests.hostile.study import digest, write_study

#: Options that skip the slow optional sections (the hostile cases are about inputs and outputs).
FAST = ["--no-uncertainty", "--no-readers", "--no-surface", "-q"]


@pytest.fixture
def study(tmp_path) -> dict[str, Path]:
    """The tiny study's files in tmp_path/in."""
    return write_study(tmp_path / "in")


def fast_args(files: dict[str, Path], out: Path, *extra: str) -> list[str]:
    return [
        "run",
        str(files["judge"]),
        str(files["humans"]),
        "--pairs",
        str(files["pairs"]),
        "--out",
        str(out),
        *FAST,
        *extra,
    ]


def run_cli(argv: list[str], capsys, *, protect=()) -> tuple[int, str, str]:
    """``main(argv)``: assert no internal error, no traceback and no protected file changed; return status, out, err."""
    before = digest(protect)
    status = main(argv)
    captured = capsys.readouterr()
    assert status != 70, captured.err
    assert "Traceback" not in captured.err and "Internal error" not in captured.err, captured.err
    assert digest(protect) == before, "an input file was changed"
    return status, captured.out, captured.err
