"""The quick `audit run` on the shipped deployment fixture that the parallel tests compare
across runners (no surface features, 500 bootstrap replicates, JSON only)."""

from __future__ import annotations

import json
from pathlib import Path

DEPLOY = Path(__file__).resolve().parents[2] / "fixtures" / "deployment"


def fixture_run_args(out: Path, *extra: str) -> list[str]:
    """`audit run` arguments on the deployment fixture writing to ``out``, then ``extra``."""
    return [
        "run",
        str(DEPLOY / "judge.csv"),
        str(DEPLOY / "humans.csv"),
        "--pairs",
        str(DEPLOY / "pairs.csv"),
        "--no-surface",
        "--n-boot",
        "500",
        "-q",
        "--no-html",
        "--out",
        str(out),
        *extra,
    ]


def run_result(out: Path) -> dict:
    """The result.json a run wrote to ``out``, without the command line (which names ``out``)."""
    result = json.loads((out / "result.json").read_text())
    result["provenance"].pop("command")
    return result
