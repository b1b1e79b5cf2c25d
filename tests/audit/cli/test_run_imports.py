"""`audit run` imports neither scipy.stats nor scipy.optimize (the fixed cost of every run).

``import scipy.stats`` alone costs ~0.5 s (it pulls scipy.optimize, scipy.integrate, scipy.interpolate,
scipy.spatial); the run's distributions, rank correlations and root searches come from
:mod:`judge_transfer_audit.statistics.distributions` and :mod:`judge_transfer_audit.statistics.roots` instead,
bit-equal to scipy's (tests/audit/statistics/test_distributions.py,
tests/audit/statistics/test_roots.py). scipy.optimize's ``linprog`` is imported only when a separation
check needs the linear programme, which the fixture never does.
The check runs the real command in a fresh interpreter on the fixture, every input given (judge, humans,
pairs, stories, development set: every default section and the surface and dev-set ones), then once
more without the optional inputs, and reads ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures"
SLOW_IMPORTS = ("scipy.stats", "scipy.optimize")
PROBE = """
import json, sys
from judge_transfer_audit.cli import main
statuses = [int(main(argv)) for argv in json.loads(sys.argv[1])]
loaded = sorted(m for m in sys.modules if m in json.loads(sys.argv[2]))
print(json.dumps({"statuses": statuses, "loaded": loaded}))
"""


def _probe(runs: list[list[str]], preamble: str = "") -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", preamble + PROBE, json.dumps(runs), json.dumps(SLOW_IMPORTS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_audit_run_imports_no_scipy_stats_or_optimize(tmp_path):
    deployment, dev = FIXTURES / "deployment", FIXTURES / "dev"
    inputs = [str(deployment / "judge.csv"), str(deployment / "humans.csv")]
    every_input = [
        *inputs,
        *("--pairs", str(deployment / "pairs.csv"), "--stories", str(deployment / "stories.csv")),
        *("--dev-judge", str(dev / "judge.csv"), "--dev-humans", str(dev / "humans.csv")),
    ]
    common = ["--jobs", "1", "-q"]
    probe = _probe(
        [
            ["run", *every_input, "--out", str(tmp_path / "all"), *common],
            ["run", *inputs, "--out", str(tmp_path / "bare"), *common],
        ]
    )
    assert probe["statuses"] == [0, 0]
    assert (tmp_path / "all" / "result.json").exists() and (tmp_path / "bare" / "report.html").exists()
    assert probe["loaded"] == []


def test_the_probe_sees_scipy_stats():
    """The check can fail: after one ``import scipy.stats`` the probe lists it and scipy.optimize."""
    probe = _probe([["run", "--help"]], preamble="import scipy.stats\n")
    assert probe["statuses"] == [0]
    assert probe["loaded"] == ["scipy.optimize", "scipy.stats"]
