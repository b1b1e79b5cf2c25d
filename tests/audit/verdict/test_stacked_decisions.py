"""The verdict on stacked arrays decides every cell as the per-cell path does: decisions, p-values,
intervals, Monte Carlo SEs and the human estimands, bit for bit (judge_transfer_audit.verdict.stacked,
judge_transfer_audit.verdict.stacked_bootstrap against compare_cell, paired_bootstrap and scalar readings)."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT
from judge_transfer_audit.verdict import assess, compare, decision
from judge_transfer_audit.verdict.assess import CellInput, decide_cells, human_estimands
from judge_transfer_audit.verdict.batched import decide_configurations
from judge_transfer_audit.verdict.paired_bootstrap import paired_bootstrap
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell, simulate_judge


def _per_cell(monkeypatch) -> None:
    """Every cell bootstrapped on its own and every reading made by the distribution itself."""
    monkeypatch.setattr(decision, "prefetch", lambda **_: None)
    monkeypatch.setattr(decision, "materialize", lambda _: None)
    monkeypatch.setattr(assess, "prefetch", lambda **_: None)
    monkeypatch.setattr(assess, "materialize", lambda _: None)
    monkeypatch.setattr(compare, "materialize", lambda _: None)
    monkeypatch.setattr(
        compare,
        "stacked_bootstraps",
        lambda tables, replicates, rngs: [paired_bootstrap(t, replicates, r) for t, r in zip(tables, rngs)],
    )


def _cell(rng, k: int, n_pairs: int, n_readers: int, *, design=None, ties=0.0, invalid=0.0, once=False, judge=True):
    design = design or CellDesign(float(rng.uniform(-1, 1)), float(rng.uniform(0, 1.2)), float(rng.uniform(0, 0.8)))
    cell = simulate_cell(design, n_pairs, n_readers, rng)
    y = cell.y.copy()
    y[rng.random(y.size) < ties] = np.nan
    pair, reader = cell.pair_id, cell.reader_id
    if once:  # every pair read by one reader
        first = np.unique(pair, return_index=True)[1]
        pair, reader, y = pair[first], reader[first], y[first]
    credit = simulate_judge(["majority", "reader-like", "reversed", "skewed"][k % 4], cell, rng).credit.copy()
    credit[rng.random(credit.size) < invalid] = np.nan
    return CellInput(
        key=("a", "b", f"criterion {k}"),
        orientation=-1.0 if k % 4 == 1 else 1.0,
        pair_id=pair,
        reader_id=reader,
        y=y,
        judge_pairs=cell.pairs if judge else None,
        judge_credit=credit if judge else None,
    )


def _study(seed: int) -> list[CellInput]:
    """Mixed shapes: tiny cells (INSUFFICIENT by the policy), assessed cells with ties and invalid judge
    outputs, flipped orientations, a cell without judge outputs, one whose votes are all ties (ERROR),
    one reader, pairs read once."""
    rng = np.random.default_rng(seed)
    cells = [_cell(rng, k, 6, 3) for k in range(8)]
    cells += [_cell(rng, 8 + k, 20, 6, ties=0.15, invalid=0.1 * (k % 2)) for k in range(10)]
    cells += [_cell(rng, 18 + k, 30, 9, ties=0.05) for k in range(4)]
    cells += [
        _cell(rng, 22, 20, 6, judge=False),
        _cell(rng, 23, 20, 6, ties=1.0),
        _cell(rng, 24, 20, 1),
        _cell(rng, 25, 24, 8, once=True),
        _cell(rng, 26, 20, 6, design=CellDesign(3.0, 0.0, 0.0)),
    ]
    return cells


def _decided(inputs, policy, tie_rule, seed):
    transfers, comparisons = decide_cells(inputs, tie_rule=tie_rule, policy=policy, seed=seed)
    return [repr(t) for t in transfers], [repr(h) for h in human_estimands(comparisons, policy.level)]


@pytest.mark.parametrize(
    ("seed", "tie_rule", "n_boot"), [(0, EVEN_SPLIT, 199), (1, DECISIVE, 199), (2, EVEN_SPLIT, 49)]
)
def test_stacked_decisions_are_the_per_cell_decisions(monkeypatch, seed, tie_rule, n_boot):
    policy = TransferPolicy(n_boot=n_boot)
    inputs = _study(seed)
    stacked = _decided(inputs, policy, tie_rule, seed)
    statuses = {t.split("status=<Status.")[1].split(":")[0] for t in stacked[0]}
    with monkeypatch.context() as m:
        _per_cell(m)
        alone = _decided(inputs, policy, tie_rule, seed)
    assert stacked == alone
    assert {"INSUFFICIENT", "ERROR"} <= statuses and statuses & {"PASS", "FAIL", "INCONCLUSIVE"}
    if n_boot == 49:  # a few replicates: some cells re-run by the sequential Monte Carlo
        assert any("sequential Monte Carlo" in t for t in stacked[0])


def test_configurations_with_a_missing_cell_decide_as_alone(monkeypatch):
    """Judge configurations sharing stacked bootstraps, one without outputs on a cell, equal each judge's
    per-cell run."""
    policy = TransferPolicy(n_boot=99)
    rng = np.random.default_rng(5)
    humans = _study(5)
    judges = {}
    for name in ("first", "second", "partial"):
        rows = []
        for k, c in enumerate(humans):
            pairs = np.unique(np.asarray(c.pair_id).astype(str))
            if name == "partial" and k == 9:
                rows.append(c.with_judge(None, None))
            else:
                rows.append(c.with_judge(pairs, rng.choice([0.0, 0.5, 1.0], pairs.size)))
        judges[name] = rows
    together = decide_configurations(judges, tie_rule=EVEN_SPLIT, policy=policy, seed=5)
    with monkeypatch.context() as m:
        _per_cell(m)
        for name, inputs in judges.items():
            alone, _ = decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=5)
            assert [repr(t) for t in together[name][0]] == [repr(t) for t in alone], name
