"""Every importer on the typical mistakes: one message naming the file, the record and the
field with the fix, exit status 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge_transfer_audit.cli import main

FORMATS = ["mtbench", "arena-hard", "alpacaeval", "promptfoo", "inspect", "argilla"]


def _records(path: Path, fmt: str):
    """(records list, save function) of the file's records, in place."""
    if path.suffix == ".jsonl":
        recs = [json.loads(s) for s in path.read_text().splitlines() if s.strip()]

        def save():
            path.write_text("".join(json.dumps(r) + "\n" for r in recs))

        return recs, save
    data = json.loads(path.read_text())
    recs = {"promptfoo": lambda d: d["results"]["results"], "inspect": lambda d: d["samples"]}.get(fmt, lambda d: d)(
        data
    )

    def save():
        path.write_text(json.dumps(data))

    return recs, save


def _run(fmt, paths, tmp_path, capsys, *extra):
    out = tmp_path / "out"
    code = main(["import", fmt, *map(str, paths), "--out", str(out), *extra])
    err = capsys.readouterr().err
    assert code == 2, err
    assert not out.exists()  # nothing written
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_file(fmt, files, tmp_path, capsys):
    path = files[fmt][0]
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * 0.6)])
    err = _run(fmt, files[fmt], tmp_path, capsys)
    assert str(path) in err and "truncated" in err and "Fix:" in err
    assert err.count(str(path)) == 1  # one message


@pytest.mark.parametrize("fmt", FORMATS)
def test_wrong_format_for_the_command(fmt, files, tmp_path, capsys):
    other = files["promptfoo" if fmt == "mtbench" else "mtbench"][0]
    err = _run(fmt, [other], tmp_path, capsys)
    assert str(other) in err and "not a" in err and "audit import --help" in err
    assert err.count("  - ") == 1  # one message for the file, not one per record


WRONG_TYPE = {
    "mtbench": ("turn", "one", "turn"),
    "arena-hard": ("games", [{"score": 3}, {"score": "A>B"}], "games[0].score"),
    "alpacaeval": ("preference", "2", "preference"),
    "promptfoo": ("testIdx", "0", "testIdx"),
    "inspect": ("epoch", "1", "epoch"),
    "argilla": ("responses", ["x"], "responses"),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_field_of_the_wrong_type(fmt, files, tmp_path, capsys):
    key, value, field = WRONG_TYPE[fmt]
    recs, save = _records(files[fmt][0], fmt)
    recs[2][key] = value
    save()
    err = _run(fmt, files[fmt], tmp_path, capsys)
    assert err.count("  - ") == 1, err
    assert f"column '{field}'" in err and "Fix:" in err
    assert ("record 3" in err) or ("line 3" in err) or ("[2]" in err)


NO_ID = {
    "mtbench": "question_id",
    "arena-hard": "uid",
    "alpacaeval": "instruction",
    "promptfoo": "testIdx",
    "inspect": "id",
    "argilla": "id",
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_record_with_no_id(fmt, files, tmp_path, capsys):
    recs, save = _records(files[fmt][0], fmt)
    del recs[1][NO_ID[fmt]]
    save()
    err = _run(fmt, files[fmt], tmp_path, capsys)
    assert err.count("  - ") == 1, err
    assert f"no '{NO_ID[fmt]}'" in err and f"column '{NO_ID[fmt]}'" in err
    assert ("record 2" in err) or ("line 2" in err) or ("[1]" in err)


@pytest.mark.parametrize("fmt", FORMATS)
def test_duplicate_records(fmt, files, tmp_path, capsys):
    recs, save = _records(files[fmt][0], fmt)
    recs.append(json.loads(json.dumps(recs[0])))
    save()
    err = _run(fmt, files[fmt], tmp_path, capsys)
    assert err.count("  - ") == 1, err
    assert "duplicate" in err and "Fix:" in err
    n = len(recs)
    assert (f"record {n}" in err) or (f"line {n}" in err) or (f"[{n - 1}]" in err)


def test_unknown_model_name_in_a_votes_file(files, tmp_path, capsys):
    judgments, votes = files["mtbench"]
    recs, save = _records(votes, "mtbench")
    recs[4]["model_a"] = recs[4]["model_a"].upper()  # a misspelt model
    save()
    err = _run("mtbench", [judgments, votes], tmp_path, capsys)
    assert err.count("  - ") == 1, err
    assert str(votes) in err and "line 5" in err and "column 'model_a'" in err and "named in no judgment file" in err


def test_unknown_winner_in_a_votes_file(files, tmp_path, capsys):
    _, votes = files["mtbench"]
    recs, save = _records(votes, "mtbench")
    recs[0]["winner"] = "model_c"
    save()
    err = _run("mtbench", [votes], tmp_path, capsys)
    assert "unknown model name 'model_c'" in err and "column 'winner'" in err


def test_unknown_model_name_in_argilla_answers(files, tmp_path, capsys):
    recs, save = _records(files["argilla"][0], "argilla")
    recs[0]["responses"]["preference"] = [{"value": "delta-1b", "user_id": "u1", "status": "submitted"}]
    save()
    err = _run("argilla", files["argilla"], tmp_path, capsys)
    assert "unknown model name 'delta-1b'" in err and "record 1" in err


def test_alpacaeval_human_output_matching_no_annotation(files, tmp_path, capsys):
    annotations, human = files["alpacaeval"]
    recs, save = _records(human, "alpacaeval")
    recs[0]["output_1"] = "an output no judge saw"
    save()
    err = _run("alpacaeval", [annotations, human], tmp_path, capsys)
    assert "record 1" in err and "column 'generator_1'" in err


LABELSTUDIO = Path(__file__).resolve().parents[3] / "fixtures" / "labelstudio"


def test_labelstudio_truncated_export(tmp_path, capsys):
    export = tmp_path / "export.json"
    raw = (LABELSTUDIO / "sample_export.json").read_bytes()
    export.write_bytes(raw[: len(raw) // 2])
    err = _run("labelstudio", [export], tmp_path, capsys, "--import-pairs", str(LABELSTUDIO / "out" / "pairs.csv"))
    assert str(export) in err and err.count("  - ") == 1


def test_labelstudio_wrong_format(files, tmp_path, capsys):
    other = files["alpacaeval"][0]
    err = _run("labelstudio", [other], tmp_path, capsys, "--import-pairs", str(LABELSTUDIO / "out" / "pairs.csv"))
    assert str(other) in err and "annotations" in err
