"""The same command twice gives byte-identical result.json and report.html; timings live in timings.json."""

from __future__ import annotations

import json

import pytest

from judge_transfer_audit.cli import main
from tests.hostile.study import run_args, write_study


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The tiny study with every section and surface features, run twice into the same folder."""
    root = tmp_path_factory.mktemp("twice")
    files = write_study(root / "in")
    out = root / "out"
    runs = []
    for _ in range(2):
        assert main(run_args(files, out, "--seed", "11")) == 0
        runs.append({name: (out / name).read_bytes() for name in ("result.json", "report.html", "timings.json")})
    return runs


def test_two_identical_runs_give_byte_identical_result_and_report(two_runs):
    first, second = two_runs
    assert first["result.json"] == second["result.json"]
    assert first["report.html"] == second["report.html"]


def test_the_result_holds_no_timing_and_timings_json_does(two_runs):
    result = json.loads(two_runs[0]["result.json"])
    detectors = result["surface"]["payload"]["feature_detectors"]
    assert {d["name"] for d in detectors} >= {"length", "sentences", "lexical", "perplexity"}
    for record in detectors:
        assert not {"seconds", "tokens_per_second", "n_computed", "n_cached", "n_tokens"} & set(record)
    timings = json.loads(two_runs[0]["timings.json"])
    assert timings["total_seconds"] > 0
    assert [s["stage"] for s in timings["stages"]][:2] == ["loading inputs", "judge verdicts"]
    assert {d["detector"] for d in timings["detectors"]} == {d["name"] for d in detectors}
    assert all(d["seconds"] >= 0 for d in timings["detectors"])
