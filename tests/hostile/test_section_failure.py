"""A section without checks of its own that fails (judge configurations, judge agreement, leaderboard)
is an ERROR check and exit status 6, as every other section's failure is; `audit gate` agrees."""

from __future__ import annotations

import json

import pytest

from judge_transfer_audit.core.errors import ConvergenceError
from tests.hostile.conftest import fast_args, run_cli


@pytest.mark.parametrize(
    "section, target",
    [
        ("judge_configurations", "judge_transfer_audit.verdict.judge_configurations.rank_judge_configurations"),
        ("judge_agreement", "judge_transfer_audit.statistics.judge.agreement.judge_agreement"),
    ],
)
def test_a_failed_section_is_an_error_check_and_exit_6(study, tmp_path, capsys, monkeypatch, section, target):
    def fail(*args, **kwargs):
        raise ConvergenceError("the fit did not converge")

    monkeypatch.setattr(target, fail)
    out = tmp_path / "out"
    status, _, err = run_cli(fast_args(study, out, "--jobs", "1", "--no-html"), capsys, protect=study.values())
    assert status == 6, err
    assert f"error: {section}.computed" in err and "could not be computed" in err
    checks = json.loads((out / "result.json").read_text())["checks"]
    assert [c["status"] for c in checks if c["name"] == f"{section}.computed"] == ["ERROR"]
    monkeypatch.undo()
    status, stdout, err = run_cli(["gate", str(out / "result.json")], capsys)
    assert status == 1 and f"{section}.computed" in stdout, err  # verified (not refused) and failing
