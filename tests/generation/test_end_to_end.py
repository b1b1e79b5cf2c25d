"""generate -> Label Studio export -> simulated study -> import -> score -> the audit's loader."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd

from judge_transfer_audit.cli import main
from judge_transfer_audit.inputs import load_audit_data
from tests.generation.conftest import FAST, protocol_toml
from tests.support.openai_server import Reply, story

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "labelstudio"
CRITERIA = ["authenticity", "empathy", "engagement", "emotion_provocation", "narrative_complexity"]


def _maker():
    spec = importlib.util.spec_from_file_location("make_sample_export", FIXTURE / "make_sample_export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _answers(body):
    if body["model"] != "judge":
        return Reply(story(int(np.random.default_rng(len(body["messages"][1]["content"])).integers(420, 580))))
    text = body["messages"][1]["content"]
    if "<think>" in text:
        return None
    score = 2 + len(text) % 3
    answer = {c: score for c in CRITERIA}
    if int(hashlib.sha256(body["messages"][0]["content"].encode() + text.encode()).hexdigest(), 16) % 4 == 0:
        return Reply("{broken")
    return Reply(json.dumps(answer))


def test_study_outputs_load_through_the_audit_loader(server, tmp_path, premises):
    server.responder = _answers
    (tmp_path / "p.toml").write_text(protocol_toml(server.url, concurrency=2))
    premises.to_csv(tmp_path / "premises.csv", index=False)
    out = tmp_path / "out"
    assert (
        main(
            [
                "generate",
                str(tmp_path / "premises.csv"),
                "--protocol",
                str(tmp_path / "p.toml"),
                "--out",
                str(out),
                "--seed",
                "8",
                "-q",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "labelstudio",
                "export",
                str(out / "pairs.csv"),
                str(out / "stories.csv"),
                "-o",
                str(tmp_path / "tasks.json"),
            ]
        )
        == 0
    )
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    pairs = pd.read_csv(out / "pairs.csv", dtype=str)
    export = _maker().simulate_export(tasks, pairs, CRITERIA, seed=3)
    (tmp_path / "export.json").write_text(json.dumps(export))
    assert (
        main(
            [
                "labelstudio",
                "import",
                str(tmp_path / "export.json"),
                "--pairs",
                str(out / "pairs.csv"),
                "-o",
                str(tmp_path / "humans.csv"),
            ]
        )
        == 0
    )
    rubric = tmp_path / "rubric.toml"
    options = "\n".join(f"{k} = {json.dumps(v)}" for k, v in FAST.items())
    rubric.write_text(f'[judge.provider]\nprovider = "openai"\nmodel = "judge"\nbase_url = "{server.url}"\n{options}\n')
    assert main(["score", str(out / "stories.csv"), "--rubric", str(rubric), "-o", str(tmp_path / "judge.csv")]) == 0

    data = load_audit_data(
        tmp_path / "judge.csv", tmp_path / "humans.csv", pairs=out / "pairs.csv", stories=out / "stories.csv"
    )
    assert set(data.pairs["pair_id"]) == set(pairs["pair_id"])
    assert (data.pairs.set_index("pair_id")["focal"] == "alpha").all()
    assert set(data.criteria) == set(CRITERIA) | {"overall"}
    assert len(data.votes) == (3 * len(tasks) - 1) * 6  # one cancelled annotation; the redo replaces one
    assert data.judge_scores is not None and set(data.judge_scores["criterion"]) == set(CRITERIA)
    judge = pd.read_csv(tmp_path / "judge.csv")
    assert judge["score"].isna().sum() > 0
    assert data.judge_scores["score"].isna().sum() == judge["score"].isna().sum()  # invalid kept as missing
    assert data.stories is not None and len(data.stories) == 8
    assert set(data.votes["shown_first"]) == {"alpha", "beta"}
