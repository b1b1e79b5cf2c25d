"""Output paths: a bad -o is an input error (exit 2) before any work, never an internal error."""

from pathlib import Path

import pandas as pd
import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.generation.tables import prepare_output, write_csv

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"


def test_prepare_output_creates_folders(tmp_path):
    target = tmp_path / "a" / "b" / "out.csv"
    assert prepare_output(target, "table") == target and target.parent.is_dir()
    assert prepare_output(tmp_path / "d1" / "d2", "dir", directory=True).is_dir()
    write_csv(pd.DataFrame({"x": [1]}), tmp_path / "c" / "t.csv")
    assert (tmp_path / "c" / "t.csv").read_text() == "x\n1\n"


def test_prepare_output_names_the_file_in_the_way(tmp_path):
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(InputError, match="blocker is a file, not a folder"):
        prepare_output(tmp_path / "blocker" / "out.csv", "table")
    with pytest.raises(InputError, match="the output path is a folder"):
        prepare_output(tmp_path, "table")
    with pytest.raises(InputError):
        write_csv(pd.DataFrame({"x": [1]}), tmp_path / "blocker" / "t.csv")


@pytest.mark.parametrize(
    "argv",
    [
        [
            "labelstudio",
            "export",
            str(FIXTURE / "out" / "pairs.csv"),
            str(FIXTURE / "out" / "stories.csv"),
            "-o",
            "{bad}/t.json",
        ],
        [
            "labelstudio",
            "import",
            str(FIXTURE / "sample_export.json"),
            "--pairs",
            str(FIXTURE / "out" / "pairs.csv"),
            "-o",
            "{bad}/h.csv",
        ],
        ["score", str(FIXTURE / "out" / "stories.csv"), "-o", "{bad}/j.csv"],
        ["generate", str(FIXTURE / "premises.csv"), "--protocol", "{protocol}", "--out", "{bad}/study"],
        ["features", str(FIXTURE / "out" / "stories.csv"), "-o", "{bad}/f.csv"],
    ],
)
def test_commands_refuse_an_unwritable_output_before_working(tmp_path, argv, capsys):
    bad = tmp_path / "blocker"
    bad.write_text("x")
    protocol = tmp_path / "p.toml"
    protocol.write_text(
        '[systems.a.provider]\nprovider = "openai"\nmodel = "a"\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[systems.b.provider]\nprovider = "openai"\nmodel = "b"\nbase_url = "http://127.0.0.1:9/v1"\n'
        '[[matchups]]\nfocal = "a"\nother = "b"\n'
    )
    args = [a.format(bad=bad, protocol=protocol) for a in argv]
    if args[0] == "score":  # the default rubric has no provider: give one (never reached)
        rubric = tmp_path / "r.toml"
        rubric.write_text('[judge.provider]\nprovider = "openai"\nmodel = "j"\nbase_url = "http://127.0.0.1:9/v1"\n')
        args += ["--rubric", str(rubric)]
    assert main(args) == ExitStatus.INPUT_ERROR
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and "Internal error" not in err
