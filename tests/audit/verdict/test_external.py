"""The verdict on real public data (../shared/datasets; marker ``external``).

MT-Bench (native pairwise votes, 3 readers), PDS (scalar ratings by 5 readers turned into
same-premise pairs), SummEval (scalar ratings by 3 experts, heavy ties) through
../shared/datasets/convert.py, and HANNA (3 human ratings per story, rater slots) through
:func:`_convert_hanna` below, into pytest's tmp directory: nothing derived from the data is
written in the repository. Each asserts that the audit completes with a decision per cell
and that no cell shows a human estimate more than 15 points from its raw share without the
``degenerate`` flag (the vote share is compared with the raw share under the same tie rule,
the GLMM's expit(b0), which leaves ties out, with the raw share of decisive votes).
docs/audit.md records each dataset's verdict.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from audit.checks import CELL_STATUSES
from audit.data import load_audit_data
from audit.pipeline import run_audit
from audit.spec import AuditSpec

pytestmark = pytest.mark.external

SPEC = AuditSpec(uncertainty=False, readers=False, surface=False)
HANNA = Path(__file__).resolve().parents[3].parent / "shared" / "datasets" / "hanna" / "hanna_metric_scores_llm.csv"
HANNA_CRITERIA = {"RE": "relevance", "CH": "coherence", "EM": "empathy", "SU": "surprise", "EG": "engagement",
                  "CX": "complexity"}
HANNA_SYSTEMS = ("Human", "GPT-2", "BertGeneration", "CTRL", "XLNet")  # 10 matchups: keeps the test in minutes


def _convert_hanna(out: Path) -> Path:
    """HANNA's per-system lists of 96 values into scalar ratings and scores (judge -1 = unparsable)."""
    import pandas as pd

    frame = pd.read_csv(HANNA)
    frame = frame[frame["Model"].isin(HANNA_SYSTEMS)]
    humans, judges = [], []
    llms = sorted({c.rsplit(" ", 2)[0] for c in frame.columns
                   if c.split()[-1] in "1234" and not c.startswith("Human") and len(c.split()) >= 3
                   and c.split()[-2] in HANNA_CRITERIA})
    for _, row in frame.iterrows():
        system = row["Model"]
        for code, criterion in HANNA_CRITERIA.items():
            for slot in (1, 2, 3):
                for prompt, rating in enumerate(ast.literal_eval(row[f"Human {slot} {code}"])):
                    humans.append((f"{system}__{prompt}", f"slot{slot}", criterion, rating, f"prompt{prompt}"))
            for llm in llms:
                column = f"{llm} {code} 1"
                if column not in frame.columns:
                    continue
                for prompt, score in enumerate(ast.literal_eval(row[column])):
                    judges.append((f"{system}__{prompt}", system, criterion, score if score >= 1 else "", llm))
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(humans, columns=["item_id", "reader_id", "criterion", "rating", "group_id"]).to_csv(
        out / "humans.csv", index=False)
    pd.DataFrame(judges, columns=["item_id", "system", "criterion", "score", "judge"]).to_csv(
        out / "judge.csv", index=False)
    return out


def _check(result):
    assert len(result.cells) > 0
    for c in result.cells:
        assert c.transfer.status in CELL_STATUSES and c.transfer.reason
        h, g = c.human, c.human.glmm
        if math.isfinite(h.vote_share.estimate) and math.isfinite(h.rate_even_split):
            assert abs(h.vote_share.estimate - h.rate_even_split) <= 0.15, (c.matchup, c.criterion)
        if math.isfinite(g.estimate) and math.isfinite(h.rate) and abs(g.estimate - h.rate) > 0.15:
            assert g.degenerate, (c.matchup, c.criterion, g.estimate, h.rate, g.sd_pair)
    assert sum(result.counts.values()) == len(result.cells)
    return result


def test_mtbench(converted_datasets):
    d = converted_datasets / "mtbench"
    result = _check(run_audit(load_audit_data(d / "judge.csv", d / "humans.csv", pairs=d / "pairs.csv"), SPEC))
    assert any(c.human.glmm.degenerate for c in result.cells)  # the gpt-3.5-turbo vs vicuna-13b shape
    assert result.counts["INSUFFICIENT"] > 0  # few pairs per matchup: most cells cannot be decided


def test_pds(converted_datasets):
    d = converted_datasets / "pds"
    data = load_audit_data(d / "judge.csv", d / "humans.csv", scale=(1, 5))
    _check(run_audit(data, AuditSpec(uncertainty=False, readers=False, surface=False, judge="gpt-4o")))


def test_summeval(converted_datasets):
    d = converted_datasets / "summeval"
    _check(run_audit(load_audit_data(d / "judge.csv", d / "humans.csv"), SPEC))


def test_hanna(tmp_path_factory):
    if not HANNA.exists():
        pytest.skip(f"{HANNA} is absent")
    d = _convert_hanna(tmp_path_factory.mktemp("hanna"))
    data = load_audit_data(d / "judge.csv", d / "humans.csv", drop_invalid=True)
    _check(run_audit(data, AuditSpec(uncertainty=False, readers=False, surface=False, judge="ChatGPT")))
