"""judge_transfer_audit.verdict.batched: every configuration decided on one shared bootstrap per cell equals its own
unbatched run (:func:`judge_transfer_audit.verdict.assess.decide_cells`), bit for bit, sequential re-runs included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.assess import cell_input, decide_cells
from judge_transfer_audit.verdict.batched import decide_configurations
from tests.audit.synthetic import make_audit_data


def _inputs(seed: int):
    """Cells of a seeded study and five judges on them: aligned, reversed, noisy, one with invalid
    outputs on some pairs (another compared table), one with no outputs on one criterion."""
    data = make_audit_data(n_pairs=24, n_readers=6, human_p=0.6, judge_p=0.7, matchups=("a vs b", "c vs d"))
    rng = np.random.default_rng(seed)
    humans, share = [], []
    for (matchup, criterion), part in data.votes.groupby(["matchup", "criterion"], sort=False):
        humans.append(cell_input(str(matchup), str(criterion), part, None))
        share.append(part.groupby("pair_id", sort=True)["y"].mean())
    judges: dict[str, list] = {name: [] for name in ("aligned", "reversed", "noisy", "invalid", "partial")}
    for k, (human, s) in enumerate(zip(humans, share)):
        pairs = s.index.to_numpy()
        aligned = np.where(s.to_numpy() > 0.5, 1.0, np.where(s.to_numpy() < 0.5, 0.0, 0.5))
        credits = {
            "aligned": aligned,
            "reversed": 1.0 - aligned,
            "noisy": np.where(rng.random(len(pairs)) < 0.3, rng.choice([0.0, 0.5, 1.0], len(pairs)), aligned),
            "invalid": np.where(rng.random(len(pairs)) < 0.2, np.nan, aligned),
            "partial": aligned,
        }
        for name, c in credits.items():
            if name == "partial" and k == 0:
                judges[name].append(human.with_judge(None, None))
            else:
                judges[name].append(human.with_judge(pairs, c))
    return judges


def _same(a, b) -> bool:
    """Two transfers equal field by field, floats to the last bit (``repr`` round-trips; NaN equals NaN)."""
    return repr(a) == repr(b)


@pytest.mark.parametrize("seed,pool", [(1, True), (7, True), (7, False)])
@pytest.mark.slow
def test_each_configuration_decides_as_its_own_run(seed, pool):
    policy = TransferPolicy(n_boot=199, pool_criteria=pool)
    judges = _inputs(seed)
    batched = decide_configurations(judges, tie_rule=EVEN_SPLIT, policy=policy, seed=seed)
    assert list(batched) == list(judges)
    statuses = set()
    for name, inputs in judges.items():
        alone, _ = decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=seed)
        together, comparisons = batched[name]
        assert len(together) == len(alone) == len(inputs)
        for t, u in zip(together, alone):
            assert _same(t, u), (name, t.reason, u.reason)
            statuses.add(t.status.value)
        assert len(comparisons) == len(inputs)
    assert "INSUFFICIENT" in statuses  # the partial judge has a cell without outputs
    if not pool:  # Holm over the cells: the reversed judge fails (pooled, its 2 x 3 cells at 24 pairs may not)
        assert "FAIL" in statuses


def test_the_humans_are_bootstrapped_once_per_cell_and_replicate_count():
    from judge_transfer_audit.verdict.batched import SharedBootstraps

    policy = TransferPolicy(n_boot=99)
    judges = {k: v for k, v in _inputs(3).items() if k in ("aligned", "reversed", "noisy")}
    shared = SharedBootstraps(judges)
    asked: list[tuple[int, int]] = []

    def counting(name):
        hook = shared.for_judge(name)

        def of_cells(indices, tables, replicates, rngs):
            asked.extend((index, replicates) for index in indices)
            return hook(indices, tables, replicates, rngs)

        return of_cells

    for name, inputs in judges.items():
        decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=3, bootstrap=counting(name))
    # the three judges compare the same pairs: one bootstrap per (cell, replicates) asked, not one per judge
    assert shared.n_bootstraps == len(set(asked)) < len(asked)
    assert len(set(asked)) >= len(judges["aligned"])


def test_a_sequential_rerun_is_shared_and_still_exact():
    """A policy with few replicates puts cells near their level, so the re-runs (4x, 16x) are exercised."""
    policy = TransferPolicy(n_boot=49)
    judges = _inputs(11)
    batched = decide_configurations(judges, tie_rule=EVEN_SPLIT, policy=policy, seed=5)
    extended = 0
    for name, inputs in judges.items():
        alone, _ = decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=5)
        for t, u in zip(batched[name][0], alone):
            assert _same(t, u), name
            extended += t.n_boot > policy.n_boot
    assert extended > 0


def test_a_cell_frame_without_judge_rows_stays_unshared():
    judges = _inputs(2)
    judges = {"partial": judges["partial"], "aligned": judges["aligned"]}
    policy = TransferPolicy(n_boot=99)
    got = decide_configurations(judges, tie_rule=EVEN_SPLIT, policy=policy, seed=2)
    assert got["partial"][0][0].status.value == "INSUFFICIENT"
    assert isinstance(pd.Series([t.status.value for t in got["aligned"][0]]).iloc[0], str)


def test_the_matchups_joint_bootstraps_are_shared_and_exact():
    """Judges on the same compared pairs share one joint bootstrap per matchup; each reads the pooled p-values of
    its own :func:`group_pools` call to the bit; a judge with other compared pairs gets its own joint draw."""
    from judge_transfer_audit.verdict.batched import SharedBootstraps
    from judge_transfer_audit.verdict.hierarchy import group_pools

    policy = TransferPolicy(n_boot=99)
    judges = {k: v for k, v in _inputs(4).items() if k in ("aligned", "reversed", "noisy", "invalid")}
    shared = SharedBootstraps(judges)
    compared = {}
    for name, inputs in judges.items():
        _, compared[name] = decide_cells(
            inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=4, pooled=shared.pools_for_judge(name)
        )
    assert shared.n_pools == 2 * 2  # two matchups: once for the three judges on the same pairs, once for "invalid"
    again = SharedBootstraps(judges)
    for name, inputs in judges.items():
        groups = [c.group for c in inputs]
        alone = group_pools(compared[name], groups, policy, 4)
        hooked = group_pools(compared[name], groups, policy, 4, again.pools_for_judge(name))
        assert len(alone) == 2
        assert repr(alone) == repr(hooked), name
    assert again.n_pools == 2 * 2
