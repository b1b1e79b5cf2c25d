"""The reusable GitHub Action (action.yml) and the pre-commit hook (.pre-commit-hooks.yaml):
parsed, and the action's shell steps run as a runner would run them (inputs substituted,
`uses:` steps and the pip install left out, `audit` pointing at this checkout)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from judge_transfer_audit.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "deployment"
EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


@pytest.fixture(scope="module")
def action():
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _value(expr: str, inputs: dict, outputs: dict) -> str:
    if expr.startswith("inputs."):
        return inputs[expr[len("inputs.") :]]
    if expr.startswith("steps.audit.outputs."):
        return outputs.get(expr.rsplit(".", 1)[1], "")
    raise AssertionError(f"unexpected expression in a run step: {expr}")


def run_action(action, given: dict, tmp_path: Path) -> tuple[list[int], dict]:
    """Run the shell steps; return their exit statuses and the audit step's outputs."""
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, unknown
    inputs.update(given)
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "audit").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m judge_transfer_audit "$@"\n')
    (shim / "audit").chmod(0o755)
    outputs: dict = {}
    statuses = []
    for step in action["runs"]["steps"]:
        if "uses" in step or step.get("id") == "install":
            continue
        out_file = tmp_path / "github_output"
        out_file.write_text("")
        env = {
            **os.environ,
            "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(ROOT),
            "GITHUB_OUTPUT": str(out_file),
            "GITHUB_ACTION_PATH": str(ROOT),
        }
        for k, v in (step.get("env") or {}).items():
            env[k] = EXPR.sub(lambda m: _value(m.group(1), inputs, outputs), str(v))
        assert "${{" not in step["run"], "run scripts read inputs through env, never inline"
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        statuses.append(proc.returncode)
        for line in out_file.read_text().splitlines():
            k, _, v = line.partition("=")
            outputs[k] = v
    return statuses, outputs


def test_action_declares_what_its_steps_use(action):
    assert action["runs"]["using"] == "composite"
    text = (ROOT / "action.yml").read_text()
    used = {re.match(r"inputs\.([\w-]+)", m).group(1) for m in EXPR.findall(text) if m.startswith("inputs.")}
    assert used <= set(action["inputs"]), used - set(action["inputs"])
    for name in ("judge", "humans", "policy", "fail-on", "from", "sources"):
        assert name in action["inputs"]
    uses = [s["uses"] for s in action["runs"]["steps"] if "uses" in s]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    install = next(s for s in action["runs"]["steps"] if s.get("id") == "install")
    assert "$GITHUB_ACTION_PATH" in install["run"]  # judge-transfer-audit from the action's own checkout


def test_action_bad_input_fails_the_job_with_status_2(action, tmp_path):
    statuses, outputs = run_action(
        action, {"judge": str(tmp_path / "missing.csv"), "humans": str(FIXTURE / "humans.csv")}, tmp_path
    )
    assert outputs["status"] == "2"
    assert statuses == [0, 2]  # the audit step records the status; the gate step fails the job with it


@pytest.mark.slow
def test_action_runs_the_fixture_and_gates(action, tmp_path):
    statuses, outputs = run_action(
        action,
        {
            "judge": str(FIXTURE / "judge.csv"),
            "humans": str(FIXTURE / "humans.csv"),
            "pairs": str(FIXTURE / "pairs.csv"),
            "fail-on": "inconclusive",
            "args": "--no-uncertainty --no-readers --no-surface -q",
        },
        tmp_path,
    )
    assert outputs["status"] == "1"  # the fixture's judge does not transfer: the gate fails
    assert statuses[-1] == 1
    assert (tmp_path / outputs["junit"]).exists() and (tmp_path / outputs["report"]).exists()
    junit = (tmp_path / outputs["junit"]).read_text()
    assert 'type="INCONCLUSIVE"' in junit  # --fail-on inconclusive reached the run


def test_pre_commit_hook_runs_audit_gate(tmp_path, capsys):
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "audit-gate" and hook["language"] == "python"
    command = hook["entry"].split()
    assert command[:2] == ["audit", "gate"]
    # the hook's command line, on a result that is not there: the gate's own bad-input status
    assert main([*command[1:], str(tmp_path / "result.json")]) == 2
    assert "result.json" in capsys.readouterr().err
