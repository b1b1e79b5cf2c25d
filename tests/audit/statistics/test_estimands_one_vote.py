"""judge_transfer_audit.statistics.estimands on one vote per pair: without a pair of two distinct credited votes the
between-pair moments are NaN without being summed; every field equals the full computation's, which runs when one
more pair of two votes is added at weight 0 in every replicate (the same sums: every credit and weight here is a
multiple of 1/2, so each sum is exact in any order), to the bits, in the one-cell and the stacked-cells layouts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from judge_transfer_audit.statistics.estimands import estimands, shifted_and_plain


def _one_vote(seed: int, n_pairs: int = 40):
    rng = np.random.default_rng(seed)
    c = rng.choice([0.0, 0.5, 1.0], n_pairs, p=[0.4, 0.1, 0.5])  # one vote per pair, a tie credited 1/2
    n = np.ones(n_pairs)
    n[rng.random(n_pairs) < 0.1] = 0.0  # a pair without a credited vote
    c = np.where(n > 0, c, 0.0)
    judges = rng.choice([0.0, 0.5, 1.0], (2, n_pairs))
    return c, c * c, n, judges


def _with_paired_pair(c, q, n, judges, weight):
    """``(csum, qsum, nsum, weight, judges)`` with one more pair of two distinct credited votes (focal and other) at
    weight 0 (``weight``: (P,) or (B, P))."""
    return (
        np.append(c, 1.0),
        np.append(q, 1.0),
        np.append(n, 2.0),
        np.concatenate([weight, np.zeros((*weight.shape[:-1], 1))], axis=-1),
        np.concatenate([judges, np.ones((judges.shape[0], 1))], axis=1),
    )


def _assert_same(got, want):
    for field in dataclasses.fields(got):
        a, b = getattr(got, field.name), getattr(want, field.name)
        if a is None:
            assert b is None
            continue
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=field.name)


@pytest.mark.parametrize("seed", [0, 1])
def test_one_vote_estimands_equal_the_full_computation(seed):
    c, q, n, judges = _one_vote(seed)
    rng = np.random.default_rng(seed + 5)
    weight = rng.multinomial(len(c), np.full(len(c), 1 / len(c)), 30).astype(float)
    for w in (np.ones(len(c)), weight):
        got = estimands(c, q, n, w, judges)
        want = estimands(*_with_paired_pair(c, q, n, judges, w))
        _assert_same(got, want)
        assert np.isnan(got.between_pair_var).all() and np.isfinite(got.vote_share).all()


def test_one_vote_stacked_cells_equal_the_full_computation():
    """Stacked cells (cells x replicates x pairs) with a reader shift: shifted_and_plain's two results."""
    cells = [_one_vote(s, 30) for s in range(3)]
    c, q, n = (np.stack([x[k] for x in cells])[:, None, :] for k in range(3))
    judges = np.stack([x[3] for x in cells])
    rng = np.random.default_rng(9)
    weight = np.stack([rng.multinomial(30, np.full(30, 1 / 30), 25) for _ in cells]).astype(float)
    shift = rng.normal(0, 0.02, (3, 25))
    got = shifted_and_plain(c, q, n, weight, judges, shift, 2 * shift)
    pad = np.zeros((3, 1, 1))
    want = shifted_and_plain(
        np.concatenate([c, pad + 1.0], axis=-1),
        np.concatenate([q, pad + 1.0], axis=-1),
        np.concatenate([n, pad + 2.0], axis=-1),
        np.concatenate([weight, np.zeros((3, 25, 1))], axis=-1),
        np.concatenate([judges, np.ones((3, 2, 1))], axis=-1),
        shift,
        2 * shift,
    )
    for a, b in zip(got, want):
        _assert_same(a, b)
