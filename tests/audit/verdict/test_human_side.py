import json

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.verdict.human_side import human_side, reader_rates


def _votes(ys, n_readers=3):
    return pd.DataFrame(
        [{"pair_id": f"p{i // n_readers}", "reader_id": f"r{i % n_readers}", "y": y} for i, y in enumerate(ys)]
    )


def test_raw_share_excludes_ties_and_even_split_counts_them():
    h = human_side(_votes([1, 1, 0, np.nan, 1, 0, 1, np.nan, 0, 1, 1, 0]))
    assert (h.n_focal, h.n_other, h.n_ties) == (6, 4, 2)
    assert h.rate == pytest.approx(0.6) and h.rate_even_split == pytest.approx(7 / 12)


def test_unanimous_readers_get_a_one_sided_profile_interval():
    h = human_side(_votes([1.0] * 36))
    g = h.glmm
    assert g.separation and g.status is Status.WARN and "profile" in g.reason
    assert g.ci_high == 1.0 and 0.5 < g.ci_low < 1.0  # not the uninformative Wald [0, 1]
    assert not g.degenerate  # separation has its own flag and interval


def test_a_cell_of_ties_is_skipped_not_an_error():
    h = human_side(_votes([np.nan] * 6))
    assert h.glmm.status is Status.SKIPPED and "all ties" in h.glmm.reason
    # the cell decision of an all-tie cell is an ERROR (tests/audit/verdict/test_compare.py)


def test_reader_rates_exclude_ties():
    rates = reader_rates(_votes([1, 1, 0, np.nan, 1, 0, 1, np.nan, 0, 1, 1, 0]))
    assert list(rates) == pytest.approx([1.0, 1.0, 0.0])  # r0: 1, tie, 1, 1; r1: 1, 1, tie, 1; r2: all 0


def test_the_cell_payload_names_the_glmm_path():
    rng = np.random.default_rng(3)
    h = human_side(_votes(list(rng.integers(0, 2, 60).astype(float)), n_readers=4))
    assert h.glmm.factorization == "dense"  # a small cell: the exact dense path (docs/glmm.md)
    assert human_side(_votes([np.nan] * 6)).glmm.factorization == ""


def test_majority_plugin_at_sd_pair_zero_ignores_the_sign_of_rounding():
    from judge_transfer_audit.verdict.human_side import B0_ZERO, majority_plugin

    # 9 of 18 votes each way: b0 is 0 up to rounding, whichever engine's last digit
    assert majority_plugin(-8.1e-16, 0.0) == majority_plugin(2.2e-15, 0.0) == 0.5
    assert majority_plugin(10 * B0_ZERO, 0.0) == 1.0 and majority_plugin(-10 * B0_ZERO, 0.0) == 0.0
    assert majority_plugin(0.3, 0.6) == pytest.approx(0.6914624612740131)


def _cell(rng, n_pairs, n_readers, per_pair, *, ties=0.0, b0=0.5):
    pair = np.repeat(np.arange(n_pairs), per_pair)
    reader = np.concatenate([rng.choice(n_readers, per_pair, replace=False) for _ in range(n_pairs)])
    eta = b0 + rng.normal(0, 1.0, n_pairs)[pair] + rng.normal(0, 0.5, n_readers)[reader]
    y = (rng.random(pair.size) < 1 / (1 + np.exp(-eta))).astype(float)
    y[rng.random(y.size) < ties] = np.nan
    return pd.DataFrame({"pair_id": [f"p{i}" for i in pair], "reader_id": [f"r{i}" for i in reader], "y": y})


def _chunk_study():
    """Tiny cells (some with ties), one reader, all one way (separation), all ties, and middle-sized
    cells of one shape (40 levels: the engine stacks them, padded, with their companions)."""
    rng = np.random.default_rng(15)
    cells = [_cell(rng, 6, 3, 3, ties=0.15 * (i % 3)) for i in range(40)]
    cells.append(pd.DataFrame({"pair_id": ["a", "a", "b", "c"], "reader_id": ["r"] * 4, "y": [1.0, 0.0, 1.0, 1.0]}))
    cells.append(pd.DataFrame({"pair_id": ["a", "b", "c"] * 2, "reader_id": ["r", "s"] * 3, "y": [1.0] * 6}))
    cells.append(pd.DataFrame({"pair_id": ["a", "b"], "reader_id": ["r", "s"], "y": [np.nan, np.nan]}))
    pair = np.repeat(np.arange(20), 2)
    reader = (pair + np.tile([0, 1], 20)) % 20
    for k in range(5):  # 20 pairs x 20 readers, 40 + 3k votes: padded to the longest in their stack
        extra = rng.integers(0, 40, 3 * k)
        p, r = np.concatenate([pair, pair[extra]]), np.concatenate([reader, reader[extra]])
        y = (rng.random(p.size) < 0.6).astype(float)
        cell = pd.DataFrame({"pair_id": [f"p{i}" for i in p], "reader_id": [f"r{i}" for i in r], "y": y})
        cells.insert(7 * k + 3, cell)
    return cells


def _same_bits(a, b) -> bool:
    from judge_transfer_audit.core.serialize import to_jsonable

    return json.dumps(to_jsonable(a), sort_keys=True) == json.dumps(to_jsonable(b), sort_keys=True)


@pytest.mark.parametrize("cuts", [(0, 48), (0, 10, 48), (0, 1, 20, 21, 40, 48), tuple(range(49))])
@pytest.mark.slow
def test_the_glmms_in_chunks_give_the_bits_of_one_call(cuts):
    from judge_transfer_audit.verdict.human_side import human_sides, human_sides_chunk, human_sides_joined

    cells = _chunk_study()
    assert len(cells) == 48
    whole = human_sides(cells)
    chunks = [human_sides_chunk(cells[lo:hi]) for lo, hi in zip(cuts[:-1], cuts[1:])]
    assert sum(side is None for chunk in chunks for side in chunk) == 5  # the middle-sized cells wait
    joined = human_sides_joined(cells, chunks)
    assert all(_same_bits(a, b) for a, b in zip(whole, joined))
    assert {s.glmm.status for s in joined} >= {Status.PASS, Status.WARN, Status.SKIPPED}


def test_glmm_steps_are_chunked_only_for_many_small_cells_or_many_large_ones():
    from judge_transfer_audit.engine.steps import GLMM_CHUNK_MIN_CELLS, CellPart, glmm_steps

    rng = np.random.default_rng(3)
    small = [CellPart("m", f"c{i}", _cell(rng, 6, 3, 3), None, None) for i in range(GLMM_CHUNK_MIN_CELLS)]
    names = [s.name for s in glmm_steps(small, level=0.95, backend="native", jobs=3)]
    assert names == ["human GLMMs 1", "human GLMMs 2", "human GLMMs 3", "fitted"]
    for parts, jobs in (
        (small, 1),
        (small[:-1], 2),
        (small[:-1] + [CellPart("m", "big", _cell(rng, 30, 5, 3), None, None)], 2),
    ):
        names = [s.name for s in glmm_steps(parts, level=0.95, backend="native", jobs=jobs)]
        assert names == ["human GLMMs", "fitted"]


def test_many_large_cells_are_chunked_with_the_same_bits():
    """Cells of one vote per pair from many readers (more levels than the engine stacks: each is fitted
    alone) are fitted in a chunk per worker from two per worker on, and the chunks join to the bits of
    one call."""
    from judge_transfer_audit.engine.steps import CellPart, glmm_steps
    from judge_transfer_audit.verdict.human_side import human_sides, human_sides_chunk, human_sides_joined

    rng = np.random.default_rng(8)
    large = [_cell(rng, 150, 120, 1) for _ in range(4)]
    parts = [CellPart("m", f"c{i}", v, None, None) for i, v in enumerate(large)]
    names = [s.name for s in glmm_steps(parts, level=0.95, backend="native", jobs=2)]
    assert names == ["human GLMMs 1", "human GLMMs 2", "fitted"]
    assert [s.name for s in glmm_steps(parts[:3], level=0.95, backend="native", jobs=2)] == [
        "human GLMMs",
        "fitted",
    ]
    whole = human_sides(large)
    chunks = [human_sides_chunk(large[:2]), human_sides_chunk(large[2:])]
    assert all(side is not None for chunk in chunks for side in chunk)  # none waits for a stack
    assert all(_same_bits(a, b) for a, b in zip(whole, human_sides_joined(large, chunks)))
