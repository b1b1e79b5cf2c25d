"""`audit gate -q` and `audit run --gate -q`: silent when the gate passes, one line per failing check when it fails."""

from __future__ import annotations

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.results.result import read_result
from tests.reports.study import write_study


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate-q")
    files = write_study(root / "in", n_matchups=1, n_pairs=12, n_readers=4)
    argv = [
        "run",
        str(files["judge"]),
        str(files["humans"]),
        "--pairs",
        str(files["pairs"]),
        "--out",
        str(root / "out"),
        "--n-boot",
        "100",
        "--no-html",
        "--no-surface",
        "--no-readers",
        "-q",
    ]
    return root, files, argv


def _gate(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_gate_quiet_is_silent_on_success_and_names_each_failing_check(saved, capsys):
    root, _, argv = saved
    assert main(argv) == ExitStatus.OK
    capsys.readouterr()
    path = root / "out" / "result.json"
    result = read_result(path)
    outcomes = set()
    for extra, fail_on in (((), ()), (("--fail-on", "inconclusive", "--fail-on-warn"), ("INCONCLUSIVE", "WARN"))):
        status, out, err = _gate(capsys, "gate", "-q", *extra, str(path))
        failing = result.failing(fail_on)
        if failing:
            assert status == ExitStatus.GATE_FAILED
            lines = out.splitlines()
            assert len(lines) == len(failing) and err == ""
            for line, check in zip(lines, failing):
                assert line.startswith(f"[{check.status.value}] {check.name} ({check.scope})")
            assert "gate:" not in out  # -q: no summary line, only the failing checks
        else:
            assert status == ExitStatus.OK and out == "" and err == ""
        outcomes.add(bool(failing))
    assert outcomes == {False, True}, "the study must pass the plain gate and fail it with --fail-on"


@pytest.mark.slow
def test_run_gate_quiet_prints_the_failing_checks(saved, capsys, tmp_path):
    _, files, argv = saved
    argv = [a if a != str(saved[0] / "out") else str(tmp_path / "o") for a in argv]
    status, out, err = _gate(capsys, *argv, "--gate")
    assert status == ExitStatus.OK and out == ""  # passes: silent
    status, out, err = _gate(capsys, *argv, "--gate", "--fail-on", "inconclusive")
    result = read_result(tmp_path / "o" / "result.json")
    failing = result.failing(("INCONCLUSIVE",))
    assert status == ExitStatus.GATE_FAILED and failing
    lines = out.splitlines()
    assert len(lines) == len(failing)
    for line, check in zip(lines, failing):
        assert line.startswith(f"[{check.status.value}] {check.name} ({check.scope})") and check.reason in line
