"""`audit run` with a perplexity model: the feature reaches the surface section (marker ``lm``)."""

from pathlib import Path

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.results.result import result_from_json

pytestmark = pytest.mark.lm
DEPLOY = Path(__file__).resolve().parents[3] / "fixtures" / "deployment"


def test_perplexity_options_reach_the_detector(tmp_path):
    pytest.importorskip("torch")
    from tests.detectors._tiny_lm import build_tiny_gpt2

    model = build_tiny_gpt2(tmp_path / "tiny-gpt2", n_positions=64)
    out = tmp_path / "out"
    status = main(
        [
            "run",
            str(DEPLOY / "judge.csv"),
            str(DEPLOY / "humans.csv"),
            "--pairs",
            str(DEPLOY / "pairs.csv"),
            "--stories",
            str(DEPLOY / "stories.csv"),
            "--no-uncertainty",
            "--no-readers",
            "--no-html",
            "-q",
            "--perplexity-model",
            str(model),
            "--perplexity-stride",
            "16",
            "--perplexity-batch-size",
            "4",
            "--out",
            str(out),
        ]
    )
    assert status == ExitStatus.OK
    surface = result_from_json((out / "result.json").read_text(encoding="utf-8")).surface
    assert "perplexity" in surface.payload.correlations["feature"].unique()
    runs = {run.name: run for run in surface.payload.feature_detectors}
    assert str(runs["perplexity"].params["stride"]) == "16" and runs["perplexity"].revision.startswith("sha256:")
