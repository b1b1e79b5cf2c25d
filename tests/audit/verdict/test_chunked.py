"""judge_transfer_audit.verdict.chunked: the verdict made from chunks of cells compared apart (frozen, pickled as a
worker returns them) decides every cell as the one call does: transfers and human estimands, bit for bit."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT
from judge_transfer_audit.verdict import chunked
from judge_transfer_audit.verdict.assess import decide_cells, human_estimands
from judge_transfer_audit.verdict.chunked import chunks, compare_frozen, decide_compared
from tests.audit.verdict.test_stacked_decisions import _study


def _whole(inputs, policy, tie_rule, seed):
    transfers, comparisons = decide_cells(inputs, tie_rule=tie_rule, policy=policy, seed=seed)
    return [repr(t) for t in transfers], [repr(h) for h in human_estimands(comparisons, policy.level)]


def _chunked(inputs, policy, tie_rule, seed, size):
    compared = []
    for start in range(0, len(inputs), size):
        part = compare_frozen(inputs[start : start + size], tie_rule=tie_rule, policy=policy, seed=seed)
        compared.append(pickle.loads(pickle.dumps(part)))  # as a worker returns it
    transfers, estimands = decide_compared(inputs, compared, tie_rule=tie_rule, policy=policy, seed=seed)
    return [repr(t) for t in transfers], [repr(h) for h in estimands]


@pytest.mark.parametrize(
    ("seed", "tie_rule", "n_boot", "size"),
    [(0, EVEN_SPLIT, 199, 4), (1, DECISIVE, 199, 7), (2, EVEN_SPLIT, 49, 5), (3, EVEN_SPLIT, 99, 1)],
)
@pytest.mark.slow
def test_chunked_verdict_is_the_one_call(seed, tie_rule, n_boot, size):
    policy = TransferPolicy(n_boot=n_boot)
    inputs = _study(seed)
    whole = _whole(inputs, policy, tie_rule, seed)
    assert _chunked(inputs, policy, tie_rule, seed, size) == whole
    statuses = {t.split("status=<Status.")[1].split(":")[0] for t in whole[0]}
    assert {"INSUFFICIENT", "ERROR"} <= statuses and statuses & {"PASS", "FAIL", "INCONCLUSIVE"}
    if n_boot == 49:  # a few replicates: some cells re-run by the sequential Monte Carlo from their votes
        assert any("sequential Monte Carlo" in t for t in whole[0])


def test_frozen_comparisons_hold_no_replicates_and_fail_loudly_on_a_new_reading():
    policy = TransferPolicy(n_boot=99)
    frozen = compare_frozen(_study(4), tie_rule=EVEN_SPLIT, policy=policy, seed=4)
    assessed = [c for c in frozen if c.assessed]
    assert assessed
    d = assessed[0].boot["vote_share"]
    base = getattr(d, "base", d)
    assert base._reps is None
    with pytest.raises(TypeError):
        d.quantile(0.123456)  # not read by the decision: not cached


def test_the_chunks_depend_on_the_number_of_cells_alone(monkeypatch):
    monkeypatch.setattr(chunked, "CHUNK_CELLS", 10)
    assert chunks(0) == [range(0)] and chunks(19) == [range(19)]
    assert chunks(20) == [range(0, 10), range(10, 20)]
    assert chunks(29) == [range(0, 10), range(10, 29)]
    assert chunks(31) == [range(0, 10), range(10, 20), range(20, 31)]
    covered = np.concatenate([np.arange(r.start, r.stop) for r in chunks(1234)])
    assert np.array_equal(covered, np.arange(1234))


def _one_vote_study(seed: int, n_cells: int = 4, n_pairs: int = 300) -> list:
    """Cells whose pairs are read once each (the vote-share decision: the majority rate is not identified)."""
    from judge_transfer_audit.verdict.assess import CellInput

    rng = np.random.default_rng(seed)
    inputs = []
    for k in range(n_cells):
        pair = np.array([f"c{k}p{i}" for i in range(n_pairs)])
        reader = np.array([f"r{i % 40}" for i in range(n_pairs)])
        share = 0.3 + 0.1 * k
        y = (rng.random(n_pairs) < share).astype(float)
        judge = (rng.random(n_pairs) < share + (0.3 if k == 0 else 0.0)).astype(float)
        inputs.append(CellInput(("m", f"c{k}"), 1.0, pair, reader, y).with_judge(pair, judge))
    return inputs


def test_one_vote_cells_keep_the_vote_share_decision_through_the_chunks():
    policy = TransferPolicy(n_boot=199)
    inputs = _one_vote_study(5)
    frozen = compare_frozen(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=5)
    assert all(c.vote_share_only for c in frozen)
    whole = _whole(inputs, policy, EVEN_SPLIT, 5)
    assert _chunked(inputs, policy, EVEN_SPLIT, 5, 2) == whole
    assert all("majority rate not identified" in t for t in whole[0])
