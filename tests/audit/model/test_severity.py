"""What a breach means is decided in one place: judge_transfer_audit.model.checks.apply_severity.

A policy's ``[severity]`` entry for one check changes the JSON, the terminal summary, JUnit and
the gate together, because they all read the statuses apply_severity leaves; and no other
module reads a severity table.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.model.checks import DEFAULT_SEVERITY, Check, Status, apply_severity

ROOT = Path(__file__).resolve().parents[3]
CHECK = "agreement.human_alpha"  # WARN by default; the study below breaches it (readers vote at random)


def _study(folder: Path) -> Path:
    """40 pairs, 7 readers choosing the focal story ~30% of the time at random (alpha near 0),
    a judge at the same rate: the cell PASSes, the agreement check WARNs."""
    from tests.audit.cli.test_run import _failing_study

    return _failing_study(folder, judge_p=0.3)


def _run(folder: Path, out: Path, level: str | None) -> dict:
    # the agreement decision is off: on readers voting at random it is INCONCLUSIVE, which would
    # set the run's status whatever this check's severity
    policy = out.parent / f"{out.name}.toml"
    line = f'"{CHECK}" = "{level}"\n' if level is not None else ""
    policy.write_text(f'[severity]\n"agreement.decision" = "OFF"\n{line}', encoding="utf-8")
    extra = ["--policy", str(policy)]
    args = ["run", str(folder / "judge.csv"), str(folder / "humans.csv"), "--pairs", str(folder / "pairs.csv")]
    args += ["--out", str(out), "--no-uncertainty", "--no-readers", "--no-surface", "--no-html", "--gate", *extra]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(args)
        gate = main(["gate", str(out / "result.json")])
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    cases = {c.get("name"): c for c in ET.parse(out / "junit.xml").getroot().iter("testcase")}
    checks = [c for c in result["checks"] if c["name"] == CHECK]
    terminal = buffer.getvalue()
    return {"status": status, "terminal": terminal, "result": result, "cases": cases, "gate": gate, "checks": checks}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = _study(tmp_path_factory.mktemp("severity"))
    return {level: _run(folder, folder / f"out-{level}", level) for level in (None, "FAIL", "OFF")}


def test_by_default_the_breach_warns_everywhere(runs):
    run = runs[None]
    assert [c["status"] for c in run["checks"]] == ["WARN"]
    assert run["result"]["status"] == "WARN"
    assert run["terminal"].startswith("judge-audit: WARN") and " 1 WARN" in run["terminal"]
    case = run["cases"][f"{CHECK}[overall]"]
    assert case.find("failure") is None and case.find("system-out").text.startswith("WARN")
    assert run["status"] == ExitStatus.OK and run["gate"] == ExitStatus.OK


def test_a_fail_override_fails_the_json_the_terminal_junit_and_the_gate(runs):
    run = runs["FAIL"]
    (check,) = run["checks"]
    assert check["status"] == "FAIL" and f"[severity] {CHECK} = FAIL" in check["reason"]
    assert run["result"]["status"] == "FAIL"
    assert run["terminal"].startswith("judge-audit: FAIL") and "Checks: 1 FAIL" in run["terminal"]
    failure = run["cases"][f"{CHECK}[overall]"].find("failure")
    assert failure is not None and failure.get("type") == "FAIL"
    # `audit run --gate` and `audit gate` (re-deriving from the recorded policy) agree
    assert run["status"] == ExitStatus.GATE_FAILED and run["gate"] == ExitStatus.GATE_FAILED


def test_off_removes_the_check_everywhere(runs):
    run = runs["OFF"]
    assert run["checks"] == [] and f"{CHECK}[overall]" not in run["cases"]
    assert run["result"]["status"] == "PASS" and run["terminal"].startswith("judge-audit: PASS")
    assert " 0 WARN" in run["terminal"]
    assert run["status"] == ExitStatus.OK and run["gate"] == ExitStatus.OK


def test_apply_severity_relabels_breaches_only_and_twice_is_once():
    checks = [
        Check("dev.spearman", Status.WARN, reason="low"),
        Check("dev.spearman", Status.PASS, reason="fine", scope="other"),
        Check("transfer.decision", Status.INCONCLUSIVE, reason="undecided"),
        Check("transfer.decision", Status.FAIL, reason="outside"),
        Check("readers.computed", Status.ERROR, reason="broke"),
    ]
    severity = {"dev.spearman": "FAIL", "transfer.decision": "WARN", "readers.computed": "WARN"}
    once = apply_severity(checks, severity)
    assert [c.status for c in once] == [Status.FAIL, Status.PASS, Status.INCONCLUSIVE, Status.WARN, Status.ERROR]
    assert once[0].reason == "low (reported as FAIL: [severity] dev.spearman = FAIL)"
    assert apply_severity(once, severity) == once
    assert apply_severity(checks, {"dev.spearman": "OFF"}) == checks[2:]
    assert apply_severity(checks, None) == checks


def test_every_default_is_a_status_a_breach_or_an_error():
    assert set(DEFAULT_SEVERITY.values()) <= {Status.FAIL, Status.WARN, Status.ERROR}


#: the one module that reads a severity table (Policy.severity or a mapping like it)
OWNER = "audit/model/checks.py"


def _reads_severity(tree: ast.AST) -> list[int]:
    """Lines that look into a severity table: ``x.severity.get(...)``, ``severity[...]``,
    ``severity.get(...)``, ``x.breach(...)``."""
    lines = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "breach"):
            target = node.func.value if node.func.attr == "get" else node.func
        elif isinstance(node, ast.Subscript):
            target = node.value
        if target is None:
            continue
        names = {
            n.attr if isinstance(n, ast.Attribute) else n.id
            for n in ast.walk(target)
            if isinstance(n, (ast.Attribute, ast.Name))
        }
        if names & {"severity", "breach"}:
            lines.append(node.lineno)
    return lines


def test_no_module_but_the_owner_reads_a_severity_table():
    found = []
    for package in ("audit", "reports"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == OWNER:
                continue
            found += [f"{rel}:{n}" for n in _reads_severity(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == [], "decide severity through judge_transfer_audit.model.checks.apply_severity: " + ", ".join(found)


@pytest.mark.parametrize(
    "source",
    [
        'if policy.severity.get("judge.position_bias") == "OFF":\n    pass\n',
        'level = (severity or {}).get(name, "WARN")\n',
        'status = Status(policy.breach("dev.spearman", "WARN"))\n',
        "level = policy.severity[check.name]\n",
    ],
)
def test_the_guard_finds_the_old_second_places(source):
    assert _reads_severity(ast.parse(source))


def test_docs_policy_lists_every_check_with_a_default():
    text = (ROOT / "docs" / "policy.md").read_text(encoding="utf-8")
    documented = [
        f"`{name}`" in text or (name.endswith(".computed") and "`<section>.computed`" in text)
        for name in DEFAULT_SEVERITY
    ]
    assert [name for name, ok in zip(DEFAULT_SEVERITY, documented) if not ok] == []
