"""judge_transfer_audit.verdict.stacked_bootstrap: many cells' paired bootstraps on stacked arrays equal each cell's own
:func:`~judge_transfer_audit.verdict.paired_bootstrap.bootstrap_judges` call, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from judge_transfer_audit.model.tie_rules import DECISIVE, EVEN_SPLIT, STRICT
from judge_transfer_audit.verdict import stacked_bootstrap
from judge_transfer_audit.verdict.paired_bootstrap import STATISTICS, bootstrap_judges
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell, simulate_judge
from judge_transfer_audit.verdict.stacked_bootstrap import bootstrap_cells
from judge_transfer_audit.verdict.tables import comparison_table


def _cell(rng, n_pairs, n_readers, *, tie_rule=EVEN_SPLIT, ties=0.0, design=None, judges=1, sparse=0.0):
    """A simulated cell's table and ``judges`` judges' credits on its compared pairs: human ties, readers
    who skip pairs (``sparse``), invalid judge outputs."""
    design = design or CellDesign(float(rng.uniform(-0.8, 0.8)), float(rng.uniform(0.0, 1.5)), float(rng.uniform(0, 1)))
    cell = simulate_cell(design, n_pairs, n_readers, rng)
    y = cell.y.copy()
    y[rng.random(y.size) < ties] = np.nan
    keep = rng.random(y.size) >= sparse
    keep[: min(y.size, 2 * n_readers)] = True
    credit = simulate_judge("majority", cell, rng).credit
    table = comparison_table(
        cell.pair_id[keep], cell.reader_id[keep], y[keep], cell.pairs, credit, tie_rule=tie_rule, rng=rng
    )
    rows = [table.judge] + [rng.choice([0.0, 0.5, 1.0], table.n_pairs) for _ in range(judges - 1)]
    return table, np.vstack(rows)


def _same_bootstrap(a, b) -> None:
    assert a.n_boot == b.n_boot
    assert np.array_equal([a.between_pair_sd, a.reader_sd], [b.between_pair_sd, b.reader_sd], equal_nan=True)
    for k in STATISTICS:
        x, y = a[k], b[k]
        assert np.array_equal(x._reps, y._reps, equal_nan=True), k
        same = [(x.estimate, y.estimate), (x.df, y.df), (x.df_se, y.df_se), (x.sd, y.sd), (x._h, y._h)]
        assert np.array_equal(*zip(*same), equal_nan=True), k


def _check(cells, n_boot, seed):
    tables, judges = [t for t, _ in cells], [j for _, j in cells]
    rngs = [np.random.default_rng([seed, i]) for i in range(len(cells))]
    got = bootstrap_cells(tables, judges, n_boot, rngs)
    for i, (t, j) in enumerate(cells):
        want = bootstrap_judges(t, j, n_boot, np.random.default_rng([seed, i]))
        assert len(got[i]) == len(want)
        for a, b in zip(got[i], want):
            _same_bootstrap(a, b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tiny_cells_of_one_shape(seed):
    """The 10k-criteria shape (6 pairs x 3 readers, every reader on every pair), even-split ties."""
    rng = np.random.default_rng(seed)
    _check([_cell(rng, 6, 3, ties=0.15) for _ in range(40)], 999, seed)


@pytest.mark.parametrize("seed", [3, 4])
def test_mixed_shapes_judges_and_tie_rules(seed):
    rng = np.random.default_rng(seed)
    cells = []
    for k in range(36):
        n_pairs, n_readers = [(6, 3), (12, 5), (20, 8), (6, 3)][k % 4]
        cells.append(
            _cell(
                rng,
                n_pairs,
                n_readers,
                tie_rule=[EVEN_SPLIT, DECISIVE, STRICT][k % 3],
                ties=0.2,
                judges=1 + k % 3,
                sparse=0.3 if k % 5 == 0 else 0.0,
            )
        )
    _check(cells, 499, seed)


def test_edge_cells():
    """Unanimous votes (no between-pair variance), one reader, one pair, a pair read once, no shift."""
    rng = np.random.default_rng(7)
    cells = [
        _cell(rng, 6, 3, design=CellDesign(6.0, 0.0, 0.0)),  # every vote one way
        _cell(rng, 6, 1),  # one reader: not stacked
        _cell(rng, 1, 4),  # one pair: not stacked
        _cell(rng, 8, 4, sparse=0.6),  # pairs read once
        _cell(rng, 6, 3, design=CellDesign(0.0, 0.0, 0.0)),
        _cell(rng, 6, 3, tie_rule=DECISIVE, ties=0.9),
    ]
    cells += [_cell(rng, 6, 3) for _ in range(5)]
    _check(cells, 199, 7)


@pytest.mark.parametrize("seed", [10, 11])
def test_draws_given_by_the_caller(seed):
    """With the pair weights, reader weights and shift scores given (a matchup's joint draw), each cell's
    bootstrap equals its own ``bootstrap_judges(..., draws=...)`` call, the rng giving the between-pair draws."""
    from judge_transfer_audit.statistics.uncertainty.resampling import multinomial_weights

    rng = np.random.default_rng(seed)
    n_boot = 299
    cells = [_cell(rng, n, r, ties=0.2, judges=1 + k % 2) for k, (n, r) in enumerate([(6, 3)] * 5 + [(9, 4), (1, 3)])]
    draws = []
    for table, _ in cells:
        wp = multinomial_weights(rng, table.n_pairs, n_boot)
        wr = multinomial_weights(rng, table.n_readers, n_boot)
        draws.append((wp, wr, rng.standard_normal(n_boot)))
    tables, judges = [t for t, _ in cells], [j for _, j in cells]
    got = bootstrap_cells(tables, judges, n_boot, [np.random.default_rng([seed, 9]) for _ in cells], draws)
    for (t, j), d, boots in zip(cells, draws, got):
        want = bootstrap_judges(t, j, n_boot, np.random.default_rng([seed, 9]), draws=d)
        assert len(boots) == len(want)
        for a, b in zip(boots, want):
            _same_bootstrap(a, b)


def test_stacks_are_split_by_the_element_budget(monkeypatch):
    monkeypatch.setattr(stacked_bootstrap, "STACK_ELEMENTS", 6 * 99 * 4)
    rng = np.random.default_rng(8)
    _check([_cell(rng, 6, 3) for _ in range(11)], 99, 8)


def test_reader_sums_visit_only_the_votes_and_keep_the_bits():
    """The replicates' reader sums from the nonzero entries only equal, bit for bit, the sum over every
    reader in index order (the dense loop they replace), on cells from one vote per pair to full tables."""
    from judge_transfer_audit.verdict.stacked_bootstrap import _reader_sums

    def every_reader(dense, wr):
        out = np.zeros((wr.shape[0], wr.shape[1], dense.shape[1]))
        for r in range(dense.shape[2]):
            out += wr[:, :, r, None] * dense[:, None, :, r]
        return out

    rng = np.random.default_rng(0)
    for _ in range(200):
        cells, pairs, readers, boots = (int(v) for v in rng.integers(1, [5, 30, 25, 50]))
        dense = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], size=(cells, pairs, readers))
        dense *= rng.random(dense.shape) < rng.random()
        wr = rng.integers(0, 4, (cells, boots, readers)).astype(float)
        assert _reader_sums(dense, wr).tobytes() == every_reader(dense, wr).tobytes()
    one_vote = np.zeros((1, 3, 3))
    one_vote[0, [0, 1, 2], [2, 0, 1]] = [1.0, 0.5, 1.0]
    wr = np.array([[[1.0, 2.0, 3.0]]])
    np.testing.assert_array_equal(_reader_sums(one_vote, wr), [[[3.0, 0.5, 2.0]]])  # 3 x 1, 1 x 0.5, 2 x 1
