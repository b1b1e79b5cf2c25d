"""The verdict on real public data (../shared/datasets; marker ``external``).

MT-Bench (native pairwise votes, 3 readers), PDS (scalar ratings by 5 readers turned into
same-premise pairs), SummEval (scalar ratings by 3 experts, heavy ties) through
../shared/datasets/convert.py, and HANNA (3 human ratings per story, rater slots) through
:func:`tests.support.hanna.convert_hanna`, into pytest's tmp directory: nothing derived from the data is
written in the repository. Each runs the default policy (the closed test that pools the criteria of
a matchup) and asserts that the audit completes with a decision per cell, per matchup and for the
study, that the three levels agree (a FAIL cell FAILs its matchup, a FAIL matchup the study; a
matchup without an assessed cell is INSUFFICIENT) and that no cell shows a human estimate more than
15 points from its raw share without the ``degenerate`` flag (the vote share is compared with the
raw share under the same tie rule, the GLMM's expit(b0), which leaves ties out, with the raw share
of decisive votes). docs/audit.md records each dataset's verdict.
"""

from __future__ import annotations

import math

import pytest

from judge_transfer_audit.engine.pipeline import run_audit
from judge_transfer_audit.inputs import load_audit_data
from judge_transfer_audit.model.checks import CELL_STATUSES
from judge_transfer_audit.model.spec import AuditSpec
from tests.conftest import SHARED_DATASETS
from tests.support.hanna import convert_hanna

pytestmark = pytest.mark.external

SPEC = AuditSpec(uncertainty=False, readers=False, surface=False)
HANNA = SHARED_DATASETS / "hanna" / "hanna_metric_scores_llm.csv"


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
    _check_levels(result)
    return result


def _check_levels(result):
    """The matchup and study decisions of the default policy, consistent with the cells'."""
    cells: dict[str, list[str]] = {}
    for c in result.cells:
        cells.setdefault(c.matchup, []).append(c.transfer.status.value)
    matchups = {m.matchup: m.status.value for m in result.matchup_transfers}
    assert set(matchups) == set(cells) and len(result.matchup_transfers) == len(cells)
    for name, statuses in cells.items():
        if "FAIL" in statuses:
            assert matchups[name] == "FAIL", name
        if not set(statuses) & {"PASS", "FAIL", "INCONCLUSIVE"}:
            assert matchups[name] == "INSUFFICIENT", name
        elif set(statuses) == {"PASS"}:
            assert matchups[name] == "PASS", name
    study = result.study_transfer
    assert study is not None and study.reason
    assessed = [s for s in matchups.values() if s != "INSUFFICIENT"]
    assert study.n_matchups == len(assessed)
    if not assessed:
        assert study.status.value == "INSUFFICIENT"
    elif "FAIL" in assessed:
        assert study.status.value == "FAIL"
    elif assessed and all(s == "PASS" for s in assessed):
        assert study.status.value == "PASS"
    else:  # the study test may reject where no matchup does
        assert study.status.value in ("INCONCLUSIVE", "FAIL")


def test_mtbench(converted_datasets):
    d = converted_datasets / "mtbench"
    result = _check(run_audit(load_audit_data(d / "judge.csv", d / "humans.csv", pairs=d / "pairs.csv"), SPEC))
    assert any(c.human.glmm.degenerate for c in result.cells)  # the gpt-3.5-turbo vs vicuna-13b shape
    assert result.counts["INCONCLUSIVE"] == len(result.cells)  # 20-34 pairs and 3 readers a cell: not enough
    # one criterion per matchup: each matchup's closed test is its one cell's test (Holm over the cells)
    assert [m.status.value for m in result.matchup_transfers] == ["INCONCLUSIVE"] * len(result.cells)


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
    d = convert_hanna(HANNA, tmp_path_factory.mktemp("hanna"))
    data = load_audit_data(d / "judge.csv", d / "humans.csv", drop_invalid=True)
    _check(run_audit(data, AuditSpec(uncertainty=False, readers=False, surface=False, judge="ChatGPT")))
