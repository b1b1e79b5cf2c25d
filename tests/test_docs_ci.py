"""docs/ci.md: its install lines name this distribution, and its drift example quotes what the
commands print today (the example is run here and every quoted line and exit status compared)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from judge_transfer_audit.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ci.md"
FIX = ROOT / "fixtures" / "deployment"
# a scenario of the example: the extra `audit run` options of its new side, by the folder the doc names
OPTIONS = {"llama": ["--judge", "llama-3.3"], "focal": ["--focal", "v3,gpt4o"]}


def _distribution() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^\[project\]\nname = "([^"]+)"', text, flags=re.M).group(1)


def test_every_install_line_of_the_docs_names_this_distribution():
    name = _distribution()
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"pip install\s+(?:-\S+\s+)*[\"']?(judge[\w.-]*)\s*(@|\[|[\"'])", text):
            found.append((path.name, m.group(1)))
    assert [f for f in found if f[1] != name] == []
    assert sum(f[0] == "ci.md" for f in found) >= 2  # the GitHub Actions and GitLab lines


def _run(out: Path, judge: Path, humans: Path, pairs: Path, *extra: str) -> Path:
    args = ["run", str(judge), str(humans), "--pairs", str(pairs), "--seed", "1", "-q", "--no-html", "--out", str(out)]
    assert main([*args, *extra]) == 0
    return out / "result.json"


def _quoted_blocks(text: str):
    """(new side's folder, exit status, quoted lines) of each `audit diff` output block."""
    pattern = r"```text\n\$ audit diff base/result\.json (\S+)/result\.json --gate\s+# exit (\d)\n(.*?)```"
    return [(new, int(status), body.rstrip("\n").split("\n")) for new, status, body in re.findall(pattern, text, re.S)]


@pytest.mark.slow
def test_the_drift_example_quotes_what_the_commands_print(tmp_path, capsys):
    text = DOC.read_text(encoding="utf-8")
    base = _run(tmp_path / "base", FIX / "judge.csv", FIX / "humans.csv", FIX / "pairs.csv")
    capsys.readouterr()
    from judge_transfer_audit.api import load_result

    result = load_result(base)
    status, fails, undecided = re.search(r"baseline status (\w+): (\d+) FAIL, (\d+) INCONCLUSIVE", text).groups()
    assert (result.status.value, result.counts["FAIL"], result.counts["INCONCLUSIVE"]) == (
        status,
        int(fails),
        int(undecided),
    )
    blocks = _quoted_blocks(text)
    assert [b[0] for b in blocks] == ["s7", "llama", "focal"]
    for new, exit_status, quoted in blocks:
        if new == "s7":
            sample = tmp_path / "s7"
            subprocess.run(
                [sys.executable, str(ROOT / "fixtures" / "simulate.py"), "--seed", "7", "--out", str(sample)],
                check=True,
                capture_output=True,
            )
            d = sample / "deployment"
            other = _run(tmp_path / "s7-out", d / "judge.csv", d / "humans.csv", d / "pairs.csv")
        else:
            other = _run(tmp_path / new, FIX / "judge.csv", FIX / "humans.csv", FIX / "pairs.csv", *OPTIONS[new])
        capsys.readouterr()
        diff_json = tmp_path / f"{new}-diff.json"
        assert main(["diff", str(base), str(other), "--gate", "--json", str(diff_json)]) == exit_status, new
        printed = capsys.readouterr().out.rstrip("\n").split("\n")
        # every quoted line is printed, in the quoted order
        at = 0
        for line in quoted:
            assert line in printed[at:], f"{new}: docs/ci.md quotes {line!r}; audit diff printed:\n" + "\n".join(
                printed
            )
            at = printed.index(line, at) + 1
        if new == "focal":  # "every cell is matched and flagged as turned round, every estimate's change is 0"
            import json

            cells = json.loads(diff_json.read_text(encoding="utf-8"))["cells"]
            assert len(cells) == 18 and all(c["flipped"] for c in cells)
            changes = [ch["change"] for c in cells for ch in c["changes"].values() if ch["change"] == ch["change"]]
            assert max(abs(v) for v in changes) < 1e-10


@pytest.mark.slow
def test_the_junit_example_quotes_what_the_fixture_writes(tmp_path):
    """The quoted test case of "How the JUnit file is built" is the fixture's (README line 1's data,
    the default seed); the parts elided as ``(...)`` or ``...`` aside, every quoted piece is in junit.xml."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"## How the JUnit file is built.*?```xml\n(.*?)```", text, re.S).group(1)
    args = ["run", str(FIX / "judge.csv"), str(FIX / "humans.csv"), "--pairs", str(FIX / "pairs.csv")]
    assert main([*args, "--no-surface", "-q", "--no-html", "--out", str(tmp_path)]) == 0
    written = (tmp_path / "junit.xml").read_text(encoding="utf-8")
    pieces = [p.strip() for line in block.splitlines() for p in re.split(r"\(\.\.\.\)|\.\.\.", line)]
    assert [p for p in pieces if p and p not in written] == []
