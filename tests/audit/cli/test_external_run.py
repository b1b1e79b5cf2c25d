"""`audit run` end to end on real public data (../shared/datasets; marker ``external``).

PDS (Harel-Canada et al. 2024): scalar 1-5 ratings by 5 readers of 97 stories in 15
premise groups become 274 same-premise pairs and 6,850 per-reader votes of which 1,552 are
ties (../shared/datasets/README.md). Nothing derived from the data is written in the repo.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus

pytestmark = pytest.mark.external


@pytest.fixture(scope="module")
def pds(converted_datasets) -> Path:
    return converted_datasets / "pds"


def test_pds_through_audit_run(pds, tmp_path):
    out = tmp_path / "out"
    status = main(
        [
            "run",
            str(pds / "judge.csv"),
            str(pds / "humans.csv"),
            "--stories",
            str(pds / "stories.csv"),
            "--judge",
            "gpt-4o",
            "--n-boot",
            "500",
            "--out",
            str(out),
            "-q",
        ]
    )
    assert status == ExitStatus.OK
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    cells = result["cells"]
    # 6,850 votes and 1,552 ties, less the 16 same-system pairs (400 votes, 105 ties) left out as
    # self-matchups and counted (tests/audit/inputs/test_data_external.py checks the loader's counts)
    assert sum(c["n_votes"] for c in cells) == 6850 - 400
    assert sum(c["human"]["n_ties"] for c in cells) == 1552 - 105
    assert result["provenance"]["human_shape"] == "scalar"
    assert result["provenance"]["primary_judge"] == "gpt-4o"
    for section in ("uncertainty", "readers", "surface"):
        assert result[section]["status"] == "PASS", (section, result[section]["reason"])
    assert result["dev"]["status"] == "SKIPPED"
    assert (out / "report.html").stat().st_size > 0
