"""The generation commands (score, generate, labelstudio export/import/push/pull) write through the
same guarded writer as `audit run`: an output that is an input (also through a link or a hard link)
or a symbolic link is refused with exit 2 before any work, and nothing is changed.

Every case runs the command in-process through ``judge_transfer_audit.cli.main`` (``run_cli``: no status 70, no
traceback, the protected files byte-identical afterwards).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.hostile.conftest import run_cli
from tests.hostile.study import digest

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"
#: a provider no test contacts: every refusal below happens before the first request
RUBRIC = '[judge.provider]\nprovider = "openai"\nmodel = "judge"\nbase_url = "http://127.0.0.1:9/v1"\n'
PROTOCOL = (
    'max_attempts = 1\n[systems.alpha.provider]\nprovider = "openai"\nmodel = "alpha"\nbase_url = "http://127.0.0.1:9/v1"\n'
    '[systems.beta.provider]\nprovider = "openai"\nmodel = "beta"\nbase_url = "http://127.0.0.1:9/v1"\n'
    '[[matchups]]\nfocal = "alpha"\nother = "beta"\n'
)


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(FIXTURE / "out" / "pairs.csv", folder / "pairs.csv")
    shutil.copy(FIXTURE / "out" / "stories.csv", folder / "stories.csv")
    shutil.copy(FIXTURE / "sample_export.json", folder / "export.json")
    (folder / "r.toml").write_text(RUBRIC)
    (folder / "p.toml").write_text(PROTOCOL)
    pd.DataFrame({"premise_id": ["w1", "w2"], "premise": ["A lamp.", "A river."]}).to_csv(
        folder / "premises.csv", index=False
    )
    (folder / "p2.txt").write_text("someone else's file\n")
    return {p.stem if p.suffix != ".toml" else p.name: p for p in folder.iterdir()}


def _refused(argv, capsys, protect, *expected: str) -> str:
    status, _, err = run_cli([str(a) for a in argv], capsys, protect=protect)
    assert status == 2, err
    for text in expected:
        assert text in err, err
    return err


def _score(files, out, *extra):
    return ["score", files["stories"], "--rubric", files["r.toml"], "-o", out, *extra]


@pytest.mark.parametrize("target", ["stories", "r.toml"])
def test_score_never_replaces_its_inputs(files, capsys, target):
    _refused(_score(files, files[target]), capsys, files.values(), "would overwrite the input file")


def test_score_refuses_a_hard_link_to_an_input_and_its_journal_onto_an_input(files, tmp_path, capsys):
    os.link(files["stories"], tmp_path / "judge.csv")
    _refused(_score(files, tmp_path / "judge.csv"), capsys, files.values(), "would overwrite the input file")
    _refused(
        _score(files, tmp_path / "new.csv", "--raw", files["r.toml"]),
        capsys,
        files.values(),
        "would overwrite the input file",
    )
    # the default journal <out>_raw.jsonl is guarded too
    link = tmp_path / "j_raw.jsonl"
    os.link(files["stories"], link)
    _refused(_score(files, tmp_path / "j.csv"), capsys, files.values(), "would overwrite the input file")


def test_score_never_writes_through_or_replaces_a_symlink(files, tmp_path, capsys):
    (tmp_path / "judge.csv").symlink_to(files["p2"])
    _refused(_score(files, tmp_path / "judge.csv"), capsys, files.values(), "is a symbolic link")
    assert (tmp_path / "judge.csv").is_symlink()


def _generate(files, out):
    return ["generate", files["premises"], "--protocol", files["p.toml"], "--out", out]


@pytest.mark.parametrize("name, role", [("pairs.csv", "premises"), ("run.json", "p.toml"), ("stories.csv", "p.toml")])
def test_generate_never_replaces_an_input_in_its_folder(files, tmp_path, capsys, name, role):
    out = tmp_path / "gen"
    out.mkdir()
    shutil.copy(files[role], out / name)
    argv = _generate(files, out)
    argv[1 if role == "premises" else 3] = out / name
    _refused(argv, capsys, [*files.values(), out / name], "would overwrite the input file")


def test_generate_refuses_a_foreign_file_and_a_link_in_its_folder(files, tmp_path, capsys):
    out = tmp_path / "gen"
    out.mkdir()
    (out / "stories.csv").write_text("my own stories\n")
    _refused(_generate(files, out), capsys, [*files.values(), out / "stories.csv"], "did not write", "stories.csv")
    (out / "stories.csv").unlink()
    (out / "pairs.csv").symlink_to(files["p2"])
    _refused(_generate(files, out), capsys, files.values(), "is a symbolic link")
    assert (out / "pairs.csv").is_symlink()


def test_generate_resumes_in_a_folder_written_before_manifests(files, tmp_path, capsys):
    """A folder with run.json and the tables but no manifest is recognised as generate's own."""
    from judge_transfer_audit.generation.generate import check_output_dir

    out = tmp_path / "gen"
    shutil.copytree(FIXTURE / "out", out)
    check_output_dir(out, [files["premises"], files["p.toml"]])  # no error: the files are ours


def _import(files, out, *extra):
    return ["labelstudio", "import", files["export"], "--pairs", files["pairs"], "-o", out, *extra]


@pytest.mark.parametrize("target", ["export", "pairs"])
def test_labelstudio_import_never_replaces_its_inputs(files, capsys, target):
    _refused(_import(files, files[target]), capsys, files.values(), "would overwrite the input file")


def test_labelstudio_import_never_replaces_a_symlink(files, tmp_path, capsys):
    (tmp_path / "humans.csv").symlink_to(files["p2"])
    _refused(_import(files, tmp_path / "humans.csv"), capsys, files.values(), "is a symbolic link")
    assert (tmp_path / "humans.csv").is_symlink()


def _export(files, out, *extra):
    return ["labelstudio", "export", files["pairs"], files["stories"], "-o", out, *extra]


def test_labelstudio_export_never_replaces_its_inputs(files, tmp_path, capsys):
    _refused(_export(files, files["stories"]), capsys, files.values(), "would overwrite the input file")
    _refused(
        _export(files, tmp_path / "t.json", "--config-out", files["pairs"]),
        capsys,
        files.values(),
        "would overwrite the input file",
    )
    _refused(
        _export(files, tmp_path / "t.json", "--config-out", tmp_path / "t.json"),
        capsys,
        files.values(),
        "would overwrite the input file",
    )
    assert not (tmp_path / "t.json").exists()


def test_labelstudio_export_never_writes_through_a_symlink(files, tmp_path, capsys):
    (tmp_path / "t.json").symlink_to(files["p2"])
    _refused(_export(files, tmp_path / "t.json"), capsys, files.values(), "is a symbolic link")
    assert files["p2"].read_text() == "someone else's file\n"


def test_labelstudio_export_and_import_write_atomically_and_read_back(files, tmp_path, capsys):
    """The allowed path: outputs written (no temporary file left), the inputs unchanged."""
    before = digest(files.values())
    status, _, err = run_cli([str(a) for a in _export(files, tmp_path / "t.json")], capsys, protect=files.values())
    assert status == 0, err
    assert json.loads((tmp_path / "t.json").read_text()) and (tmp_path / "t_config.xml").is_file()
    status, _, err = run_cli([str(a) for a in _import(files, tmp_path / "humans.csv")], capsys, protect=files.values())
    assert status == 0, err
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]
    assert digest(files.values()) == before


def test_labelstudio_push_and_pull_refuse_an_input_as_manifest_or_output(files, capsys):
    push = ["labelstudio", "push", files["pairs"], files["stories"], "--url", "http://127.0.0.1:9"]
    _refused([*push, "--manifest", files["stories"]], capsys, files.values(), "would overwrite the input file")
    pull = ["labelstudio", "pull", "--pairs", files["pairs"], "--url", "http://127.0.0.1:9"]
    _refused([*pull, "-o", files["pairs"]], capsys, files.values(), "would overwrite the input file")
