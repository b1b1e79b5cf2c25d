"""`audit report` loads a saved result and renders it without importing the heavy statistics stack.

Re-rendering a result must stay fast (under 1.5 s), so nothing on the report's path --
the CLI, the result types and their loader, the verification, every section renderer and figure --
may import SciPy, statsmodels, scikit-learn, spaCy, matplotlib or torch at module level: those are
for computing an audit, not for drawing one. The check runs the real command in a fresh
interpreter on the fixture's real result (every section present) and reads ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy", "statsmodels", "sklearn", "spacy", "matplotlib", "torch", "transformers", "dask")

PROBE = """
import json, sys
from judge_transfer_audit.cli import main
status = main(["report", sys.argv[1], "--output", sys.argv[2], "--junit", sys.argv[3]])
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[4])))
engine = sorted(m for m in sys.modules if m.startswith(tuple(json.loads(sys.argv[5]))))
wanted = json.loads(sys.argv[6])
unneeded = sorted(m for m in sys.modules if m in wanted or m.startswith(tuple(w + "." for w in wanted)))
print(json.dumps({"status": int(status), "heavy": heavy, "engine": engine, "unneeded": unneeded}))
"""
#: the parts of judge-audit that compute an audit: a re-render reads the saved result and needs none of them
ENGINE = (
    "judge_transfer_audit.engine.pipeline",
    "judge_transfer_audit.statistics.glmm",
    "judge_transfer_audit.inputs",
    "judge_transfer_audit.reports.outputs",
    "judge_transfer_audit.verdict.human_side",
    "judge_transfer_audit.verdict.judge_side",
)
#: light but not needed to draw a saved result, each once on the path and made lazy: the LLM providers
#: (detectors' perplexity backend imported them at module level) and urllib.request + http.client + email
#: (xml.sax.saxutils imports them; the SVG canvas escapes with html.escape instead)
UNNEEDED = ("judge_transfer_audit.generation", "urllib.request", "http.client", "email")


def _run_report(result_json: Path, tmp_path: Path, preamble: str = "") -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [
        str(result_json),
        str(tmp_path / "r.html"),
        str(tmp_path / "j.xml"),
        json.dumps(HEAVY),
        json.dumps(ENGINE),
        json.dumps(UNNEEDED),
    ]
    out = subprocess.run(
        [sys.executable, "-c", preamble + PROBE, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def result_json(result, tmp_path_factory) -> Path:
    from judge_transfer_audit.results.result import result_to_json

    path = tmp_path_factory.mktemp("saved") / "result.json"
    path.write_text(result_to_json(result), encoding="utf-8")
    return path


@pytest.mark.slow
def test_audit_report_imports_no_heavy_package(result_json, tmp_path):
    probe = _run_report(result_json, tmp_path)
    assert probe["status"] == 0
    assert (tmp_path / "r.html").stat().st_size > 100_000  # the whole report was drawn, every section
    assert probe["heavy"] == []
    assert probe["engine"] == []  # nor the orchestrator, the GLMM engine or the input loaders
    assert probe["unneeded"] == []  # nor the LLM providers or the HTTP client


@pytest.mark.slow
def test_the_probe_sees_an_engine_import(result_json, tmp_path):
    """The engine check can fail: after ``import judge_transfer_audit.statistics.glmm`` the probe lists it."""
    probe = _run_report(result_json, tmp_path, preamble="import judge_transfer_audit.statistics.glmm\n")
    assert probe["status"] == 0 and "judge_transfer_audit.statistics.glmm" in probe["engine"]


@pytest.mark.slow
def test_the_probe_sees_an_unneeded_import(result_json, tmp_path):
    """The unneeded check can fail: after importing the LLM providers and saxutils the probe lists them."""
    probe = _run_report(
        result_json, tmp_path, preamble="import judge_transfer_audit.generation.providers, xml.sax.saxutils\n"
    )
    assert probe["status"] == 0
    assert {
        "judge_transfer_audit.generation",
        "judge_transfer_audit.generation.providers",
        "urllib.request",
        "http.client",
        "email",
    } <= set(probe["unneeded"])


@pytest.mark.slow
def test_the_probe_sees_a_heavy_import(result_json, tmp_path):
    """The check can fail: the same probe after one top-level ``import scipy.stats`` lists scipy."""
    probe = _run_report(result_json, tmp_path, preamble="import scipy.stats\n")
    assert probe["status"] == 0 and probe["heavy"] == ["scipy"]
