"""Every CSV judge-audit writes is one it reads back: a name holding a control character is refused at
the source (with the fix), never written raw into a table that `audit run` would then refuse."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from judge_transfer_audit.inputs.formats import read_frame
from judge_transfer_audit.inputs.layout import CONTROL
from tests.hostile.conftest import run_cli

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"
EMAIL = "ann\x1b[31m@lab\x07.org"
COMMENT = "too\x00long"


@pytest.fixture
def hostile_export(tmp_path) -> dict[str, Path]:
    tasks = json.loads((FIXTURE / "sample_export.json").read_text())
    annotation = tasks[0]["annotations"][0]
    annotation["completed_by"] = {"id": 11, "email": EMAIL}
    annotation["result"].append(
        {"value": {"text": [COMMENT]}, "from_name": "comment", "to_name": "premise", "type": "textarea"}
    )
    (tmp_path / "export.json").write_text(json.dumps(tasks))
    shutil.copy(FIXTURE / "out" / "pairs.csv", tmp_path / "pairs.csv")
    return {"export": tmp_path / "export.json", "pairs": tmp_path / "pairs.csv"}


def _import(files, out, *extra):
    return ["labelstudio", "import", str(files["export"]), "--pairs", str(files["pairs"]), "-o", str(out), *extra]


def test_labelstudio_import_refuses_an_annotator_with_escape_codes(hostile_export, tmp_path, capsys):
    out = tmp_path / "humans.csv"
    status, _, err = run_cli(_import(hostile_export, out), capsys, protect=hostile_export.values())
    assert status == 2, err
    assert "annotation 1001" in err and "control character" in err and "--anonymise-readers" in err
    assert "\x1b" not in err and "\\x1b[31m" in err  # shown escaped
    assert not out.exists()


def test_labelstudio_import_anonymised_is_read_back_exactly(hostile_export, tmp_path, capsys):
    out = tmp_path / "humans.csv"
    argv = _import(hostile_export, out, "--anonymise-readers")
    status, _, err = run_cli(argv, capsys, protect=hostile_export.values())
    assert status == 0, err
    humans = read_frame(out, "humans")
    for column in ("pair_id", "reader_id", "criterion", "choice", "shown_first"):
        assert not any(CONTROL.search(str(v)) for v in humans[column])
    assert COMMENT in set(humans["comment"])  # free text is kept and read back as written


def test_generate_refuses_a_premise_id_with_escape_codes_before_any_request(tmp_path, capsys):
    pd.DataFrame({"premise_id": ["w1\x1b]0;x\x07", "w2"], "premise": ["A lamp.", "A river."]}).to_csv(
        tmp_path / "premises.csv", index=False
    )
    (tmp_path / "p.toml").write_text(
        "".join(
            f'[systems.{s}.provider]\nprovider = "openai"\nmodel = "{s}"\nbase_url = "http://127.0.0.1:9/v1"\n'
            for s in ("alpha", "beta")
        )
        + '[[matchups]]\nfocal = "alpha"\nother = "beta"\n'
    )
    argv = ["generate", str(tmp_path / "premises.csv"), "--protocol", str(tmp_path / "p.toml")]
    status, _, err = run_cli([*argv, "--out", str(tmp_path / "out")], capsys, protect=[tmp_path / "premises.csv"])
    assert status == 2, err
    assert "premise_id holds a control character" in err and "line 2" in err and "\x1b" not in err
    assert not (tmp_path / "out" / "pairs.csv").exists()


def test_every_table_writer_refuses_a_control_character_in_a_name(tmp_path):
    from judge_transfer_audit.core.errors import InputError
    from judge_transfer_audit.generation.tables import write_csv

    with pytest.raises(InputError, match="reader_id 'r\\\\x1b1' \\(row 2\\) holds a control character"):
        write_csv(pd.DataFrame({"reader_id": ["r0", "r\x1b1"], "comment": ["a", "b\x00"]}), tmp_path / "h.csv")
    assert not (tmp_path / "h.csv").exists()
    write_csv(pd.DataFrame({"reader_id": ["r0"], "comment": ["b\x00"]}), tmp_path / "h.csv")
    assert read_frame(tmp_path / "h.csv", "humans")["comment"].tolist() == ["b\x00"]
