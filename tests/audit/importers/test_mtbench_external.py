"""The MT-Bench reader on the real MT-Bench human judgments (../shared/datasets/mtbench_alttest,
Zheng et al. 2023, CC-BY-4.0, as repackaged by AltTest; marker ``external``).

The repackaged files hold ``{annotator: {"<question>__<model_a>__<model_b>__<turn>": winner}}``
for 3 human annotators and 6 LLM judges. The test writes them back in the layout FastChat
released the votes in (one JSON object per vote: question_id, model_a, model_b, winner, judge,
turn) into a temporary folder, imports them with the LLM judges as ``--as-judge``, and checks
the tables against counts taken directly from the raw files. Nothing is written in the repo.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.inputs import load_audit_data
from tests.conftest import SHARED_DATASETS

pytestmark = pytest.mark.external
MTBENCH = SHARED_DATASETS / "mtbench_alttest"


@pytest.fixture(scope="module")
def raw():
    if not (MTBENCH / "human_annotations.json").exists():
        pytest.skip(f"{MTBENCH} is absent")
    humans = json.loads((MTBENCH / "human_annotations.json").read_text())
    llms = json.loads((MTBENCH / "llm_annotations.json").read_text())
    return humans, llms


def _votes(by_annotator):
    for who, votes in by_annotator.items():
        for key, winner in votes.items():
            q, a, b, turn = key.split("__")
            yield {"question_id": int(q), "model_a": a, "model_b": b, "winner": winner, "judge": who, "turn": int(turn)}


def test_real_mtbench_votes_import_and_load(raw, tmp_path, capsys):
    humans, llms = raw
    src = tmp_path / "mt_bench_votes.jsonl"
    src.write_text("".join(json.dumps(v) + "\n" for v in [*_votes(humans), *_votes(llms)]))
    out = tmp_path / "study"
    code = main(["import", "mtbench", str(src), "--out", str(out), *[a for j in llms for a in ("--as-judge", j)]])
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "import-report.json").read_text())
    (c,) = report["files"]
    n_human = sum(len(v) for v in humans.values())
    n_llm = sum(len(v) for v in llms.values())
    keys_h = set().union(*map(set, humans.values()))
    keys_j = set().union(*map(set, llms.values()))
    assert c["read"] == n_human + n_llm
    assert c["used"] + sum(c["excluded_by_reason"].values()) == c["read"]
    n_j_unvoted = sum(1 for v in llms.values() for k in v if k not in keys_h)
    assert c["used"] == n_human - sum(1 for v in humans.values() for k in v if k not in keys_j) + n_llm - n_j_unvoted
    assert report["tables"]["humans.csv"] == n_human
    data = load_audit_data(out / "judge.csv", out / "humans.csv", pairs=out / "pairs.csv")
    assert len(data.votes) == n_human
    assert set(data.pairs["pair_id"]) == keys_h & keys_j  # the pair ids are the released keys
    raw_ties = Counter(w for v in humans.values() for w in v.values())["tie"]
    assert int(data.votes["y"].isna().sum()) == raw_ties
    assert set(data.judge_verdicts["judge"]) == set(llms)
    assert len(data.judge_verdicts) == n_llm - n_j_unvoted
