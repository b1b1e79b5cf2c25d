"""judge_transfer_audit.verdict.hierarchy: the closed test that pools the criteria of a matchup, its joint bootstrap,
the matchup and study levels, and their re-derivation from a result's recorded numbers."""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import numpy as np
import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.assess import decide_cells
from judge_transfer_audit.verdict.decision import adjust_components, hierarchical_components, redecide
from judge_transfer_audit.verdict.hierarchy import (
    AdjustedAcross,
    GroupPool,
    adjusted,
    closure,
    joint_bootstraps,
    levels,
    piece_p,
)
from judge_transfer_audit.verdict.hierarchy_study import DESIGNS, simulate_study
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell
from judge_transfer_audit.verdict.tables import comparison_table


def test_one_criterion_per_matchup_is_holm_over_the_cells_exactly():
    rng = np.random.default_rng(0)
    p_out, p_conf = rng.random(12) ** 3, rng.random(12)
    groups = [(f"m{i}",) for i in range(12)]
    for method in ("holm", "bonferroni", "none"):
        a, b, _ = hierarchical_components(p_out, p_conf, groups, method)
        c, d = adjust_components(p_out, p_conf, method)
        np.testing.assert_allclose(a, c, rtol=0, atol=1e-15)
        np.testing.assert_allclose(b, d, rtol=0, atol=1e-15)


def _brute_force_closure(p, groups, pooled, alpha):
    """Closed testing by enumerating every set of cells (its local test: Bonferroni over the matchups it
    touches, each piece by :func:`piece_p`): the cells rejected at ``alpha``."""
    cells = list(range(len(p)))
    members = {g: [i for i in cells if groups[i] == g] for g in dict.fromkeys(groups)}

    def rejects(subset):
        touched = {groups[i] for i in subset}
        for g in touched:
            piece = tuple(i for i in subset if groups[i] == g)
            pool = pooled.get(g)
            mask = None
            if pool is not None:
                pos = {c: b for b, c in enumerate(pool.cells)}
                mask = sum(1 << pos[i] for i in piece)
            if piece_p(piece, np.asarray(p), None if pool is None else pool.p, mask) <= alpha / len(touched):
                return True
        return False

    rejected = []
    for c in cells:
        others = [i for i in cells if i != c]
        if all(rejects((c, *rest)) for k in range(len(others) + 1) for rest in combinations(others, k)):
            rejected.append(c)
    assert members
    return rejected


@pytest.mark.parametrize("seed", range(6))
def test_the_shortcut_is_the_closed_test_enumerated(seed):
    """Holm over [Pi_c] + the other matchups' Pi_g rejects exactly the cells full closed testing rejects."""
    rng = np.random.default_rng(seed)
    groups = ["a", "a", "a", "b", "b", "c"]
    p = np.where(rng.random(6) < 0.6, rng.random(6) * 0.02, rng.random(6))
    pooled = {}
    for g, cells in (("a", (0, 1, 2)), ("b", (3, 4))):
        masks = [m for m in range(1, 2 ** len(cells)) if bin(m).count("1") >= 2]
        pooled[g] = GroupPool(cells, {m: float(rng.random() * 0.05) for m in masks})
    cl = closure(p, groups, pooled)
    alpha = 0.05
    from judge_transfer_audit.verdict.hierarchy import adjusted

    shortcut = [i for i in range(6) if adjusted(cl.cell_closure[i], groups[i], cl.group_closure, "holm") <= alpha]
    assert shortcut == _brute_force_closure(p, groups, pooled, alpha)


def test_a_matchup_biased_on_every_criterion_fails_where_holm_over_the_cells_does_not():
    """Six criteria each at p = 0.004 in one of three matchups: Holm over the 18 cells needs 0.0028; the
    pooled test of the matchup (p 1e-6 on every set) rejects it, and its cells at 2 x 6 x 0.004 x 3."""
    p = np.r_[np.full(6, 0.004), np.full(12, 0.6)]
    groups = ["a"] * 6 + ["b"] * 6 + ["c"] * 6
    masks = [m for m in range(1, 2**6) if bin(m).count("1") >= 2]
    pools = {"a": GroupPool(tuple(range(6)), dict.fromkeys(masks, 1e-6))}
    holm_out, _ = adjust_components(p, np.ones(18), "holm")
    assert (holm_out[:6] > 0.05).all()
    out, _, cl = hierarchical_components(p, np.ones(18), groups, "holm", pools)
    assert cl.group_p["a"] == pytest.approx(2e-6)
    assert (out[:6] < 0.05).all() and (out[6:] > 0.05).all()
    policy = TransferPolicy()
    transfers = [_recorded(Status.FAIL if k < 6 else Status.INCONCLUSIVE, cl, k, groups[k], pools) for k in range(18)]
    lv = levels(transfers, groups, policy)
    assert lv["matchups"] == {"a": "FAIL", "b": "INCONCLUSIVE", "c": "INCONCLUSIVE"}
    assert lv["study"] == "FAIL"


def _recorded(status, cl, k, g, pools):
    from judge_transfer_audit.results.result import Transfer

    return Transfer(
        status=status,
        reason="",
        p_closure=float(cl.cell_closure[k]),
        p_matchup=cl.group_p[g],
        p_matchup_closure=cl.group_closure[g],
    )


def test_the_joint_bootstrap_draws_the_same_pairs_for_every_criterion():
    """Two criteria with the same votes and judge on one joint draw give identical replicates."""
    cell = simulate_cell(CellDesign(0.4, 0.8, 0.3), 30, 6, np.random.default_rng(1))
    judge = (np.random.default_rng(2).random(30) < 0.7).astype(float)
    table = comparison_table(
        cell.pair_id, cell.reader_id, cell.y, cell.pairs, judge, tie_rule=EVEN_SPLIT, rng=np.random.default_rng(3)
    )
    a, b = joint_bootstraps([table, table], 199, np.random.default_rng(4))
    ra, rb = a.distributions.pending("d_hi").replicates, b.distributions.pending("d_hi").replicates
    np.testing.assert_array_equal(ra, rb)  # the between-pair variance too, from one shared stream
    np.testing.assert_array_equal(
        a.distributions.pending("judge_rate").replicates, b.distributions.pending("judge_rate").replicates
    )


def test_the_gate_re_derives_the_hierarchical_decisions_from_the_recorded_numbers():
    inputs, _ = simulate_study(DESIGNS["paper"], "biased", 0, seed=3)
    policy = TransferPolicy(n_boot=199)
    transfers, _ = decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=3)
    assert any(t.status is Status.FAIL for t in transfers)
    groups = [i.group for i in inputs]
    blank = [replace(t, status=Status.INCONCLUSIVE) if t.status is Status.FAIL else t for t in transfers]
    again = redecide(blank, policy, groups)
    assert [t.status for t in again] == [t.status for t in transfers]
    assert [t.p_outside_adjusted for t in again] == pytest.approx([t.p_outside_adjusted for t in transfers])
    lv = levels(transfers, groups, policy)
    assert lv["matchups"][groups[0]] == "FAIL"  # the paper's R1 vs V3: the readers near 43%, the judge at 95%


def test_a_vote_share_cell_sits_in_the_family_without_a_pooled_part():
    inputs, truth = simulate_study(replace(DESIGNS["arena"], matchups=3), "wrong-side", 0, seed=1)
    transfers, comparisons = decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=TransferPolicy(n_boot=199), seed=1)
    assert all(c.vote_share_only for c in comparisons)
    assert all(t.majority_identified is False and t.pairs_read_twice_needed for t in transfers)
    assert not any(t.status is Status.ERROR or t.status is Status.INSUFFICIENT for t in transfers)
    for t, (out, _, _) in zip(transfers, truth):
        if out:
            assert t.status is Status.FAIL, t.reason


@pytest.mark.slow
def test_arena_wrong_side_fails_every_matchup_it_is_out_in_and_reader_like_none():
    """One vote per pair, 28 matchups of ~714 votes (20k votes): the wrong-side judge FAILs every matchup
    where it truly lies beyond the margin or in a conflict; a reader-like and a majority judge FAIL none
    falsely (at most one matchup, truly beyond the margin); no cell is ERROR or INSUFFICIENT."""
    policy = TransferPolicy(n_boot=199)
    for kind in ("wrong-side", "reader-like", "majority"):
        inputs, truth = simulate_study(DESIGNS["arena"], kind, 0, seed=2)
        transfers, _ = decide_cells(inputs, tie_rule=EVEN_SPLIT, policy=policy, seed=2)
        assert not any(t.status in (Status.ERROR, Status.INSUFFICIENT) for t in transfers)
        failed = [t.status is Status.FAIL for t in transfers]
        if kind == "wrong-side":
            assert all(f for f, (out, _, _) in zip(failed, truth) if out)
            assert sum(out for out, _, _ in truth) >= 24
        else:  # no false FAIL: a reader-like judge's own leniency may truly put a matchup beyond the margin
            assert not any(f and not out for f, (out, _, _) in zip(failed, truth))
            assert sum(failed) <= 1


def test_the_pooled_equivalence_does_not_let_two_criteria_cancel_out():
    """A judge 20 points above the band on one criterion and 20 below on the other is not within the margin
    on average; a majority judge on both is (150 pairs x 12 readers)."""
    from judge_transfer_audit.verdict.hierarchy import pooled_p_values

    design = CellDesign(0.3, 0.8, 0.3)
    cell = simulate_cell(design, 150, 12, np.random.default_rng(5))
    majority = np.where(design.b0 + cell.u > 0, 1.0, 0.0)
    rng = np.random.default_rng(6)
    high = np.where(rng.random(150) < 0.2, 1.0, majority)  # ~+15-20 points
    low = np.where(rng.random(150) < 0.35, 0.0, majority)  # ~-20 points

    def tables(*judges):
        return [
            comparison_table(
                cell.pair_id, cell.reader_id, cell.y, cell.pairs, j, tie_rule=EVEN_SPLIT, rng=np.random.default_rng(7)
            )
            for j in judges
        ]

    apart = pooled_p_values(joint_bootstraps(tables(high, low), 499, np.random.default_rng(8)), 0.10)
    aligned = pooled_p_values(joint_bootstraps(tables(majority, majority), 499, np.random.default_rng(8)), 0.10)
    assert apart[-1] > 0.5
    assert aligned[-1] < 0.05


def test_several_judges_on_one_joint_draw_are_each_their_own_joint_bootstrap():
    """``pooled_judges``: each judge row's pooled p-values are those of the joint bootstrap of tables holding that
    judge, to the bit (the humans' replicates and the draws are shared)."""
    from dataclasses import replace

    from judge_transfer_audit.verdict.hierarchy import pooled_judges, pooled_p_values

    rng = np.random.default_rng(5)
    tables = []
    for criterion in range(3):
        cell = simulate_cell(CellDesign(0.4, 0.8, 0.3), 30, 6, np.random.default_rng(10 + criterion))
        judge = (rng.random(30) < 0.7).astype(float)
        tables.append(
            comparison_table(cell.pair_id, cell.reader_id, cell.y, cell.pairs, judge, tie_rule=EVEN_SPLIT, rng=rng)
        )
    others = [np.vstack([t.judge, 1.0 - t.judge, np.full(t.n_pairs, 0.5)]) for t in tables]
    together = pooled_judges(tables, others, 199, 0.1, np.random.default_rng(6))
    assert len(together) == 3 and all(len(p) == 5 for p in together)  # 4 sets of 2+ criteria, equivalence
    for k in range(3):
        own = [replace(t, judge=rows[k]) for t, rows in zip(tables, others)]
        alone = pooled_p_values(joint_bootstraps(own, 199, np.random.default_rng(6)), 0.1)
        assert repr(together[k]) == repr(alone)
    assert repr(together[0]) != repr(together[1])


def test_the_joint_bootstrap_of_stacked_criteria_is_each_criterion_on_its_own_draw():
    """Criteria of one shape are bootstrapped together on stacked arrays: every criterion's bootstrap equals,
    bit for bit, its own ``bootstrap_judges`` call on its columns of the joint draw and a copy of the stream."""
    from judge_transfer_audit.statistics.uncertainty.resampling import multinomial_weights
    from judge_transfer_audit.verdict.hierarchy import joint_bootstraps_judges
    from judge_transfer_audit.verdict.paired_bootstrap import STATISTICS, bootstrap_judges

    rng = np.random.default_rng(12)
    tables = []
    for criterion, n_pairs in enumerate([20, 20, 20, 14]):  # three of one shape, one other
        cell = simulate_cell(CellDesign(0.2, 0.9, 0.4), n_pairs, 5, np.random.default_rng(20 + criterion))
        judge = (rng.random(n_pairs) < 0.6).astype(float)
        tables.append(
            comparison_table(cell.pair_id, cell.reader_id, cell.y, cell.pairs, judge, tie_rule=EVEN_SPLIT, rng=rng)
        )
    judges = [np.vstack([t.judge, 1.0 - t.judge]) for t in tables]
    got = joint_bootstraps_judges(tables, judges, 199, np.random.default_rng(13))

    stream = np.random.default_rng(13)  # the straightforward computation: one call per criterion
    pairs = sorted(set().union(*(t.pairs for t in tables)))
    readers = sorted(set().union(*(t.readers for t in tables)))
    wp = multinomial_weights(stream, len(pairs), 199)
    wr = multinomial_weights(stream, len(readers), 199)
    z = stream.standard_normal(199)
    for t, rows, boots in zip(tables, judges, got):
        draws = (wp[:, [pairs.index(p) for p in t.pairs]], wr[:, [readers.index(r) for r in t.readers]], z)
        copy = np.random.default_rng()
        copy.bit_generator.state = stream.bit_generator.state
        want = bootstrap_judges(t, rows, 199, copy, draws=draws)
        for a, b in zip(boots, want):
            assert (a.between_pair_sd, a.reader_sd) == (b.between_pair_sd, b.reader_sd)
            for k in STATISTICS:
                x, y = a.distributions.pending(k), b.distributions.pending(k)
                assert x.replicates.tobytes() == y.replicates.tobytes(), k
                assert x.pairs_only.tobytes() == y.pairs_only.tobytes(), k
                assert x.estimate == y.estimate or (np.isnan(x.estimate) and np.isnan(y.estimate)), k


@pytest.mark.parametrize("method", ["holm", "bonferroni", "none"])
def test_adjusted_across_equals_adjusted_value_by_value(method):
    """The sorted-once Holm across matchups gives :func:`adjusted`'s values, ties and NaN included."""
    rng = np.random.default_rng(8)
    for trial in range(200):
        g = int(rng.integers(1, 12))
        values = rng.choice([0.001, 0.01, 0.02, 0.04, 0.3, 1.0, np.nan], g) if trial % 2 else rng.uniform(0, 0.2, g)
        group_closure = {f"m{i}": float(v) for i, v in enumerate(values)}
        across = AdjustedAcross(group_closure, method)
        for _ in range(6):
            own = f"m{int(rng.integers(0, g + 1))}"  # sometimes a matchup outside the closure
            value = float(rng.choice([group_closure.get(own, 0.02), rng.uniform(0, 0.1), np.nan, 0.01]))
            np.testing.assert_equal(across(value, own), adjusted(value, own, group_closure, method))


@pytest.mark.parametrize("pooled", [False, True])
def test_the_closure_by_set_size_is_the_enumeration(pooled):
    """A matchup whose only pooled test is that of all its cells: every Pi_c and Pi_g equals the maximum of
    piece_p over the sets containing the cell, enumerated (ties, p-values near 1 and the pooled test included)."""
    rng = np.random.default_rng(21)
    for trial in range(300):
        k = int(rng.integers(1, 8))
        p = rng.choice([0.001, 0.004, 0.01, 0.03, 0.2, 0.6, 0.9], k) if trial % 3 == 0 else rng.random(k) * 0.1
        cells = tuple(range(k))
        whole = (1 << k) - 1
        pools = {"m": GroupPool(cells, {whole: float(rng.random() * 0.05)})} if pooled and k >= 2 else {}
        cl = closure(p, ["m"] * k, pools)
        pool_p = pools["m"].p if pools else None
        for c in cells:
            expected = max(
                piece_p(subset, p, pool_p, sum(1 << i for i in subset) if pool_p is not None else None)
                for size in range(1, k + 1)
                for subset in combinations(cells, size)
                if c in subset
            )
            assert cl.cell_closure[c] == expected, (trial, c)
        assert cl.group_closure["m"] == max(cl.cell_closure)
