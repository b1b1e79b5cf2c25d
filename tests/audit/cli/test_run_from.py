"""`audit run --from FORMAT SRC...`: another tool's files imported into OUT/imported/, then audited."""

from __future__ import annotations

import json

import pytest

from judge_transfer_audit.cli import main
from tests.audit.importers import formats


@pytest.mark.slow
def test_run_from_mtbench_audits_the_imported_files_with_both_orders(tmp_path):
    paths = formats.write_mtbench(tmp_path, formats.study())
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--from",
            "mtbench",
            *map(str, paths),
            "--out",
            str(out),
            "--no-uncertainty",
            "--no-readers",
            "--no-html",
            "-q",
        ]
    )
    assert code == 0
    result = json.loads((out / "result.json").read_text())
    roles = {s["role"]: s["path"] for s in result["provenance"]["sources"]}
    assert roles["judge"] == str(out / "imported" / "judge.csv")
    assert roles["pairs"] == str(out / "imported" / "pairs.csv")
    (row,) = result["judge_position"]["payload"]["rows"]
    assert row["n_ordered"] == 34  # both games of the 17 judged pairs that readers voted on
    report = json.loads((out / "imported" / "import-report.json").read_text())
    assert report["format"] == "mtbench"


def test_run_without_from_takes_two_files(tmp_path, capsys):
    paths = formats.write_mtbench(tmp_path, formats.study())
    assert main(["run", *map(str, paths), str(paths[0]), "--out", str(tmp_path / "o")]) == 3
    assert "--from FORMAT" in capsys.readouterr().err


def test_run_from_a_format_without_human_labels_says_so(tmp_path, capsys):
    path = formats.write_arenahard(tmp_path, formats.study())
    assert main(["run", "--from", "arena-hard", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "hold no human labels" in err
    assert not (tmp_path / "o" / "imported").exists()
