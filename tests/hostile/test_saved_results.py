"""`audit diff` and `audit report` verify a saved result as `audit gate` does, and redact what they render.

A hand-edited result (cells turned PASS, a verdict sentence rewritten) is refused with exit 2 by
every command that reads it; a key edited into the recorded command is never shown.
"""

from __future__ import annotations

import json

import pytest

from judge_transfer_audit.cli import main
from tests.hostile.conftest import fast_args, run_cli
from tests.hostile.study import write_study

SECRET = "sk-live0123456789abcdef"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("saved")
    files = write_study(root / "in")
    assert main(fast_args(files, root / "out", "--no-html")) == 0
    path = root / "out" / "result.json"
    return path, json.loads(path.read_text(encoding="utf-8"))


def _edited(saved, tmp_path, edit, name="edited.json"):
    data = json.loads(json.dumps(saved[1]))
    edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _every_cell_pass(data):
    """What a person hiding FAILs would edit: each cell's decision, the counts and the checks."""
    for cell in data["cells"]:
        cell["transfer"]["status"] = "PASS"
    n = sum(data["counts"].values())
    data["counts"] = {k: (n if k == "PASS" else 0) for k in data["counts"]}
    for check in data["checks"]:
        check["status"] = "PASS"
    data["status"] = "PASS"


def _all_good_sentence(data):
    data["verdict"] = data["verdict"].rstrip(".") + " ... ALL GOOD."


@pytest.mark.parametrize("edit", [_every_cell_pass, _all_good_sentence])
def test_diff_refuses_an_edited_result_as_gate_does(saved, tmp_path, capsys, edit):
    path, _ = saved
    edited = _edited(saved, tmp_path, edit)
    for argv in (["gate", str(edited)], ["diff", "--gate", str(path), str(edited)], ["diff", str(edited), str(path)]):
        status, out, err = run_cli(argv, capsys, protect=[path, edited])
        assert status == 2, (argv, err)
        assert str(edited) in err and "Fix:" in err and "better" not in out


def test_diff_of_two_genuine_results_is_unchanged(saved, tmp_path, capsys):
    path, _ = saved
    status, out, err = run_cli(["diff", "--gate", str(path), str(path)], capsys, protect=[path])
    assert status == 0, err


def test_report_refuses_an_edited_verdict_sentence(saved, tmp_path, capsys):
    edited = _edited(saved, tmp_path, _all_good_sentence)
    target = tmp_path / "report.html"
    status, _, err = run_cli(["report", str(edited), "-o", str(target)], capsys, protect=[edited])
    assert status == 2 and "verdict sentence" in err, err
    assert not target.exists()


def test_report_and_diff_redact_a_key_edited_into_the_recorded_command(saved, tmp_path, capsys):
    path, _ = saved

    def with_key(data):
        data["provenance"]["command"] += (
            f" --perplexity-api-key {SECRET} --x-token hunter22 https://u:pw@h/x?key=abc123"
        )

    edited = _edited(saved, tmp_path, with_key)
    target = tmp_path / "report.html"
    status, _, err = run_cli(["report", str(edited), "-o", str(target)], capsys, protect=[edited])
    assert status == 0, err
    html = target.read_text(encoding="utf-8")
    for secret in (SECRET, "hunter22", "u:pw@", "abc123"):
        assert secret not in html
    assert "REDACTED" in html
    status, out, err = run_cli(
        ["diff", str(path), str(edited), "--all", "--json", str(tmp_path / "d.json"), "--html", str(tmp_path / "d.h")],
        capsys,
        protect=[path, edited],
    )
    assert status == 0, err
    for text in (out, err, (tmp_path / "d.json").read_text(), (tmp_path / "d.h").read_text()):
        assert SECRET not in text and "hunter22" not in text
