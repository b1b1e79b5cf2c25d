"""`audit gate` trusts nothing it can re-derive: an inconsistent result.json is refused (exit 2)."""

from __future__ import annotations

import json

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.results.derive import derive_status, verify_result
from judge_transfer_audit.results.result import read_result
from tests.hostile.conftest import fast_args, run_cli
from tests.hostile.study import write_study


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A genuine result.json (readers section included) and its parsed JSON."""
    root = tmp_path_factory.mktemp("gate")
    files = write_study(root / "in")
    args = [a for a in fast_args(files, root / "out", "--no-html") if a != "--no-readers"]
    assert main(args) == 0
    path = root / "out" / "result.json"
    return path, json.loads(path.read_text(encoding="utf-8"))


def _edited(saved, tmp_path, edit):
    data = json.loads(json.dumps(saved[1]))
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_genuine_result_is_gated_on_its_rederived_checks(saved, capsys):
    path, data = saved
    result = read_result(path)
    assert derive_status(result) is result.status
    assert [c.name for c in verify_result(result)] == [c["name"] for c in data["checks"]]
    status, out, _ = run_cli(["gate", str(path)], capsys, protect=[path])
    failing = result.status in (Status.FAIL, Status.ERROR)
    assert status == (1 if failing else 0) and ("gate: FAILED" if failing else "gate: passed") in out
    status, out, _ = run_cli(["gate", "--fail-on", "inconclusive", str(path)], capsys, protect=[path])
    assert status == (1 if failing or result.counts["INCONCLUSIVE"] else 0)


def _fail_to_pass(data):
    for check in data["checks"]:
        if check["status"] != "PASS":
            check["status"] = "PASS"


def _drop_readers_checks(data):
    data["checks"] = [c for c in data["checks"] if not c["name"].startswith("readers.")]


def _invent_a_check(data):
    data["checks"].append(
        {
            "name": "transfer.decision",
            "status": "PASS",
            "value": 0.0,
            "threshold": 0.1,
            "reason": "all good",
            "scope": "somewhere",
        }
    )


def _flip_a_cell(data):
    transfer = data["cells"][0]["transfer"]
    transfer["status"] = "FAIL" if transfer["status"] != "FAIL" else "PASS"


def _recount(data):
    data["counts"]["PASS"] += 1


def _loosen_the_recorded_policy(data):
    data["provenance"]["policy"]["transfer"]["margin"] = 5.0


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda d: d.update(checks=[]), ["check(s) missing from the recorded checks"]),
        (lambda d: d.update(status="PASS"), ["recorded status is PASS but the result's own data give"]),
        (_fail_to_pass, ["is recorded as PASS but the result's data give"]),
        (_drop_readers_checks, ["missing from the recorded checks: readers."]),
        (_invent_a_check, ["recorded but not given by the result's data: transfer.decision [somewhere]"]),
        (_flip_a_cell, ["the recorded transfer decision does not follow", "status"]),
        (_recount, ["the recorded cell counts"]),
        (_loosen_the_recorded_policy, ["transfer.margin' must lie in (0.0, 0.5)"]),
        (lambda d: d["provenance"].update(policy={"transfer": 5}), ["'transfer' must be a [transfer] table"]),
    ],
)
def test_an_inconsistent_result_is_refused(saved, tmp_path, capsys, edit, words):
    path = _edited(saved, tmp_path, edit)
    for argv in (["gate", str(path)], ["gate", "--fail-on-warn", "-q", str(path)]):
        status, out, err = run_cli(argv, capsys, protect=[path])
        assert status == 2 and out == ""
        assert str(path) in err and "Fix:" in err
        for word in words:
            assert word in err


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 100_000,
        b'{"schema_version": "1.0", "cells": ' + b"[" * 100_000,
        b"\xff\xfe{}",
        b"",
        b'{"schema_version": "1.0"}',
    ],
)
def test_what_is_not_a_result_is_refused(tmp_path, capsys, content):
    path = tmp_path / "r.json"
    path.write_bytes(content)
    for command in ("gate", "report"):
        status, _, err = run_cli([command, str(path)], capsys, protect=[path])
        assert status == 2 and "r.json" in err


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda d: d.update(checks=[]), "check(s) missing from the recorded checks"),
        (_flip_a_cell, "the recorded transfer decision does not follow"),
        (_recount, "recorded cell counts"),
    ],
)
def test_report_refuses_an_inconsistent_result_as_gate_does(saved, tmp_path, capsys, edit, words):
    path = _edited(saved, tmp_path, edit)
    target = tmp_path / "report.html"
    status, _, err = run_cli(["report", str(path), "-o", str(target)], capsys, protect=[path])
    assert status == 2, err
    assert words in err and "Traceback" not in err
    assert not target.exists()  # nothing rendered from a verdict the data do not give


def test_report_renders_a_genuine_result(saved, tmp_path, capsys):
    path, _ = saved
    target = tmp_path / "report.html"
    status, _, err = run_cli(["report", str(path), "-o", str(target)], capsys, protect=[path])
    assert status == 0, err
    assert target.stat().st_size > 0
