"""A pairwise judge against scalar human ratings: the judge's verdicts keyed by the pairs derived
from the groups (``item_i~item_j``, either order), or by a pairs file naming each pair's items."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.inputs import load_audit_data

READERS = ("r1", "r2", "r3")
CRITERIA = ("quality", "style")


def _study(tmp_path, seed=3, n_groups=8, reverse_some=True, system_column=True):
    """Ratings of two systems' outputs per group, and a pairwise judge on the derived pairs."""
    rng = np.random.default_rng(seed)
    ratings = []
    for g in range(n_groups):
        for m in ("alpha", "beta"):
            for r in READERS:
                for c in CRITERIA:
                    if rng.random() < 0.9:
                        ratings.append(
                            {
                                "item_id": f"g{g}-{m}",
                                "reader_id": r,
                                "criterion": c,
                                "rating": int(rng.integers(1, 6)),
                                "group_id": f"g{g}",
                                "system": m,
                            }
                        )
    h = pd.DataFrame(ratings)
    if not system_column:
        h = h.drop(columns="system")
    verdicts = []
    for g in range(n_groups):
        a, b = f"g{g}-alpha", f"g{g}-beta"
        pid = f"{b}~{a}" if (reverse_some and g % 2) else f"{a}~{b}"
        for c in CRITERIA:
            verdicts.append({"pair_id": pid, "criterion": c, "choice": str(rng.choice(["alpha", "beta", "tie"]))})
    hp, jp = tmp_path / "humans.csv", tmp_path / "judge.csv"
    h.to_csv(hp, index=False)
    pd.DataFrame(verdicts).to_csv(jp, index=False)
    return jp, hp, h, pd.DataFrame(verdicts)


def _expected_votes(h: pd.DataFrame, pairs: dict[str, tuple[str, str]]) -> dict:
    """(pair, reader, criterion) -> winner system or tie, from the two ratings (our own loop)."""
    out = {}
    rating = {(r.item_id, r.reader_id, r.criterion): r.rating for r in h.itertuples()}
    for pid, (ia, ib) in pairs.items():
        for r in READERS:
            for c in CRITERIA:
                if (ia, r, c) in rating and (ib, r, c) in rating:
                    x, y = rating[(ia, r, c)], rating[(ib, r, c)]
                    out[(pid, r, c)] = "alpha" if x > y else "beta" if y > x else "tie"
    return out


def test_derived_pair_ids_either_order(tmp_path):
    jp, hp, h, j = _study(tmp_path)
    data = load_audit_data(jp, hp)
    assert data.human_shape == "scalar" and data.judge_verdicts is not None
    # the derived ids are item_i~item_j in the order of first appearance: alpha's item first here
    assert set(data.pairs["pair_id"]) == {f"g{g}-alpha~g{g}-beta" for g in range(8)}
    assert set(data.judge_verdicts["pair_id"]) == set(data.pairs["pair_id"])  # reversed ids resolved
    pairs = {p.pair_id: (p.item_a, p.item_b) for p in data.pairs.itertuples()}
    got = {(v.pair_id, v.reader_id, v.criterion): v.choice for v in data.votes.itertuples()}
    assert got == _expected_votes(h, pairs)
    verdicts = {(v.pair_id, v.criterion): v.choice for v in data.judge_verdicts.itertuples()}
    for v in j.itertuples():
        a, b = v.pair_id.split("~")
        canonical = f"{min(a, b)}~{max(a, b)}"  # alpha sorts first and appears first
        assert verdicts[(canonical, v.criterion)] == v.choice
    for rc in data.rows:
        assert rc.read == rc.used + sum(n for _, n in rc.excluded)


def test_pairs_file_defines_the_pairs(tmp_path):
    jp, hp, h, _ = _study(tmp_path, reverse_some=False, system_column=False)
    pairs = pd.DataFrame(
        {
            "pair_id": [f"P{g}" for g in range(8)],
            "system_a": "alpha",
            "system_b": "beta",
            "item_a": [f"g{g}-alpha" for g in range(8)],
            "item_b": [f"g{g}-beta" for g in range(8)],
        }
    )
    pp = tmp_path / "pairs.csv"
    pairs.to_csv(pp, index=False)
    j = pd.read_csv(jp)
    j["pair_id"] = j["pair_id"].str.extract(r"^g(\d+)-")[0].radd("P")
    j.to_csv(jp, index=False)
    data = load_audit_data(jp, hp, pairs=pp)
    assert list(data.pairs["pair_id"]) == [f"P{g}" for g in range(8)]
    got = {(v.pair_id, v.reader_id, v.criterion): v.choice for v in data.votes.itertuples()}
    assert got == _expected_votes(h, {f"P{g}": (f"g{g}-alpha", f"g{g}-beta") for g in range(8)})
    for rc in data.rows:
        assert rc.read == rc.used + sum(n for _, n in rc.excluded), rc


def test_unjudged_derived_pairs_are_left_out_and_counted(tmp_path):
    jp, hp, h, j = _study(tmp_path)
    j[~j["pair_id"].str.startswith(("g0-", "g1-"))].to_csv(jp, index=False)
    data = load_audit_data(jp, hp)
    assert len(data.pairs) == 6
    (humans,) = [rc for rc in data.rows if rc.role == "humans"]
    left = dict(humans.excluded)["rating used only in pairs left out (self-matchups, or pairs without a judge verdict)"]
    rated = set(zip(h["item_id"], h["reader_id"], h["criterion"]))
    partner = {"alpha": "beta", "beta": "alpha"}
    would_vote = [(i, r, c) for i, r, c in rated if i[:3] in ("g0-", "g1-") and (i[:3] + partner[i[3:]], r, c) in rated]
    assert left == len(would_vote)  # ratings of the two unjudged pairs that would have given a vote
    assert humans.read == humans.used + sum(n for _, n in humans.excluded)
    assert any("without a judge verdict" in n for n in data.notes)


def test_without_system_column_or_pairs_file_one_problem(tmp_path):
    jp, hp, *_ = _study(tmp_path, system_column=False)
    with pytest.raises(InputError) as e:
        load_audit_data(jp, hp)
    (p,) = e.value.problems
    assert "need a system column" in p.message and "pairs file" in p.fix


def test_a_verdict_on_no_derived_pair_names_the_id_and_the_fix(tmp_path):
    jp, hp, _, j = _study(tmp_path)
    j.loc[0, "pair_id"] = "g0-alpha~g1-beta"  # two items of different groups
    j.to_csv(jp, index=False)
    with pytest.raises(InputError) as e:
        load_audit_data(jp, hp)
    text = str(e.value)
    assert "g0-alpha~g1-beta" in text and "item_i~item_j" in text


def test_pairs_file_without_items_is_refused_with_the_fix(tmp_path):
    jp, hp, *_ = _study(tmp_path)
    pp = tmp_path / "pairs.csv"
    pd.DataFrame({"pair_id": ["x"], "system_a": ["alpha"], "system_b": ["beta"]}).to_csv(pp, index=False)
    with pytest.raises(InputError) as e:
        load_audit_data(jp, hp, pairs=pp)
    assert any("item_a and item_b" in p.fix for p in e.value.problems)
