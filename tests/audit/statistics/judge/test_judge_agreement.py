"""judge_transfer_audit.statistics.judge.agreement: kappa against R psych, alphas against the krippendorff package,
the bootstrap weights against an explicitly resampled data set, intervals, bad input."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.statistics.judge.agreement import agreement_statistics, judge_agreement, scope_votes

REF = Path(__file__).resolve().parents[3] / "reference" / "judge_agreement"
_Y = {0: 0.0, 1: 1.0, 2: np.nan}
_YJ = {0: 0.0, 1: 1.0, 2: 0.5, -1: np.nan}


def _case(case: int, matchup: str = "a vs b") -> tuple[pd.DataFrame, pd.DataFrame]:
    v = pd.read_csv(REF / "votes.csv")
    j = pd.read_csv(REF / "judge.csv")
    v, j = v[v.case == case], j[j.case == case]
    votes = pd.DataFrame(
        {"pair_id": v.unit, "reader_id": v.reader, "criterion": "overall", "matchup": matchup, "y": v.category.map(_Y)}
    )
    choice = pd.DataFrame({"pair_id": j.unit, "criterion": "overall", "y_judge": j.judge.map(_YJ)})
    return votes.reset_index(drop=True), choice.reset_index(drop=True)


@pytest.mark.parametrize("case", [0, 1, 2])
def test_kappa_matches_psych(case):
    """R psych::cohen.kappa on the majority computed in R (make_reference.R), tol 1e-12."""
    ref = pd.read_csv(REF / "kappa_psych.csv")
    ref = ref[ref.case == case].set_index("what")
    votes, choice = _case(case)
    res = judge_agreement(votes, choice, n_boot=0)
    row = res.row()
    assert row.n_units_scored == ref.loc["majority", "n"]
    assert row.kappa_majority.estimate == pytest.approx(ref.loc["majority", "kappa"], abs=1e-12)
    readers = res.readers.set_index("reader_id")
    for reader in readers.index:
        assert readers.loc[reader, "n_units"] == ref.loc[reader, "n"]
        assert readers.loc[reader, "kappa"] == pytest.approx(ref.loc[reader, "kappa"], abs=1e-12)
    assert row.kappa_readers.estimate == pytest.approx(ref.drop("majority")["kappa"].mean(), abs=1e-12)


@pytest.mark.parametrize("case", [0, 1, 2])
def test_alpha_and_raw_match_krippendorff_package(case):
    """krippendorff 0.9.0 (make_reference_alpha.py), tol 1e-12."""
    ref = pd.read_csv(REF / "alpha_krippendorff.csv").set_index("case").loc[case]
    votes, choice = _case(case)
    row = judge_agreement(votes, choice, n_boot=0).row()
    for name in ("alpha_human", "alpha_judge_human", "raw_human", "raw_judge_human"):
        assert getattr(row, name).estimate == pytest.approx(ref[name], abs=1e-12), name
    assert row.alpha_difference.estimate == pytest.approx(ref.alpha_judge_human - ref.alpha_human, abs=1e-12)
    assert row.raw_difference.estimate == pytest.approx(ref.raw_judge_human - ref.raw_human, abs=1e-12)


def test_alpha_human_equals_agreement_table():
    from judge_transfer_audit.statistics.agreement import agreement_table

    votes, choice = _case(0)
    row = judge_agreement(votes, choice, n_boot=0).row()
    table = agreement_table(votes).row()
    assert row.alpha_human.estimate == pytest.approx(table.krippendorff_alpha, abs=1e-12)
    assert row.raw_human.estimate == pytest.approx(table.raw_agreement, abs=1e-12)


def _indicators(votes, choice):
    """Build the (3, U, R) indicators and the judge categories by hand."""
    units = sorted(votes.pair_id.unique())
    readers = sorted(votes.reader_id.unique())
    ind = np.zeros((3, len(units), len(readers)))
    for row in votes.itertuples():
        c = 2 if np.isnan(row.y) else int(row.y)
        ind[c, units.index(row.pair_id), readers.index(row.reader_id)] = 1
    jmap = dict(zip(choice.pair_id, choice.y_judge))
    judge = np.array([-1 if np.isnan(jmap[u]) else (2 if jmap[u] == 0.5 else int(jmap[u])) for u in units])
    return units, readers, ind, judge


def _sparse(ind, judge, stratum=None):
    c, u, r = np.nonzero(ind)
    return scope_votes(u, r, c, judge, stratum, n_readers=ind.shape[2])


@pytest.mark.parametrize("strata", [False, True])
def test_resampling_weights_equal_an_explicitly_resampled_data_set(strata):
    """One replicate's weighted statistics == the same statistics on the data with drawn pairs
    and readers copied out (copies of a reader are new readers; judge-side statistics only,
    as copies of one reader pairing with each other is what the weighting excludes); with
    one stratum and with the units split into two strata (matchups)."""
    votes, choice = _case(1)
    units, readers, ind, judge = _indicators(votes, choice)
    stratum = np.arange(len(units)) % 2 if strata else None
    rng = np.random.default_rng(3)
    wu = rng.multinomial(len(units), np.ones(len(units)) / len(units))
    wr = rng.multinomial(len(readers), np.ones(len(readers)) / len(readers))
    weighted = agreement_statistics(_sparse(ind, judge, stratum), wu[None, :].astype(float), wr[None, :].astype(float))
    # expand: unit u repeated wu[u] times, reader r repeated wr[r] times
    ui = np.repeat(np.arange(len(units)), wu)
    ri = np.repeat(np.arange(len(readers)), wr)
    big = _sparse(ind[:, ui][:, :, ri], judge[ui], None if stratum is None else stratum[ui])
    big = dataclasses.replace(big, pairable=ind.sum(axis=(0, 2))[ui] >= 2)  # the data's pairable units, as resampled
    plain = agreement_statistics(big, np.ones((1, len(ui))), np.ones((1, len(ri))))
    for name in ("kappa_majority", "alpha_judge_human", "raw_judge_human"):
        assert weighted[name][0] == pytest.approx(plain[name][0], abs=1e-12), name


def test_intervals_contain_estimates_and_are_reproducible():
    votes, choice = _case(0)
    a = judge_agreement(votes, choice, n_boot=400, rng=11)
    b = judge_agreement(votes, choice, n_boot=400, rng=11)
    assert a.to_frame().equals(b.to_frame())
    row = a.row()
    assert row.scheme == "two-way" and a.seed == 11
    for name in ("kappa_majority", "alpha_difference", "raw_difference", "kappa_readers"):
        e = getattr(row, name)
        assert e.ci_low < e.estimate < e.ci_high, name
    assert -1 <= row.kappa_majority.ci_low and row.kappa_majority.ci_high <= 1


def test_one_reader_falls_back_to_pairs_resampling():
    votes, choice = _case(2)
    one = votes[votes.reader_id == "r0"]
    row = judge_agreement(one, choice, n_boot=200, rng=1).row()
    assert row.scheme == "pairs"
    assert np.isfinite(row.kappa_readers.ci_low)
    assert np.isnan(row.alpha_human.estimate)  # no unit with two human votes


def test_scopes_cells_criteria_and_all():
    v1, c1 = _case(0, "a vs b")
    v2, c2 = _case(2, "c vs d")
    v2 = v2.assign(pair_id="x" + v2.pair_id)
    c2 = c2.assign(pair_id="x" + c2.pair_id)
    votes = pd.concat([v1, v2, v1.assign(criterion="empathy")], ignore_index=True)
    choice = pd.concat([c1, c2, c1.assign(criterion="empathy")], ignore_index=True)
    res = judge_agreement(votes, choice, n_boot=0)
    scopes = [r.scope for r in res.rows]
    assert scopes == ["a vs b/overall", "c vs d/overall", "a vs b/empathy", "all/overall", "all/empathy", "all/all"]
    # a cell equals the single-cell computation
    alone = judge_agreement(v2, c2, n_boot=0).row()
    assert res.row("c vs d/overall").kappa_majority.estimate == pytest.approx(alone.kappa_majority.estimate)
    frame = res.to_frame()
    assert {"scope", "kappa_majority", "kappa_majority_ci_low", "alpha_difference_ci_high"} <= set(frame.columns)
    assert "kappa vs majority" in str(res)


def test_all_votes_one_way_gives_nan_not_error():
    votes = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(6) for _ in range(2)],
            "reader_id": ["a", "b"] * 6,
            "criterion": "overall",
            "matchup": "m",
            "y": 1.0,
        }
    )
    choice = pd.DataFrame({"pair_id": [f"p{i}" for i in range(6)], "criterion": "overall", "y_judge": 1.0})
    row = judge_agreement(votes, choice, n_boot=50, rng=0).row()
    assert np.isnan(row.kappa_majority.estimate) and np.isnan(row.alpha_human.estimate)
    assert row.raw_difference.estimate == 0.0


def test_bad_verdicts_are_input_errors():
    votes, choice = _case(0)
    with pytest.raises(InputError, match="not in 1, 0, 0.5"):
        judge_agreement(votes, choice.assign(y_judge=2.0), n_boot=0)
    with pytest.raises(InputError, match="missing column"):
        judge_agreement(votes.drop(columns="reader_id"), choice, n_boot=0)


@pytest.mark.r
def test_kappa_reference_rerun_live(tmp_path):
    """Re-run make_reference.R and compare with the stored outputs."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for name in ("votes.csv", "judge.csv", "make_reference.R"):
        shutil.copy(REF / name, tmp_path / name)
    subprocess.run(["Rscript", "make_reference.R"], cwd=tmp_path, check=True, capture_output=True)
    np.testing.assert_allclose(
        pd.read_csv(tmp_path / "kappa_psych.csv")["kappa"], pd.read_csv(REF / "kappa_psych.csv")["kappa"], atol=1e-12
    )


# ----------------------------------------------------------------------------- orientation
def _matchups(seed: int, n_pairs: int = 18, n_readers: int = 4):
    """Three matchups with different focal win rates, two criteria, ties and missing votes."""
    rng = np.random.default_rng(seed)
    votes, judge = [], []
    for m, p_focal in enumerate(rng.uniform(0.15, 0.85, 3)):
        for i in range(n_pairs):
            truth = rng.random() < p_focal
            for criterion in ("overall", "style"):
                for r in range(n_readers):
                    if rng.random() < 0.15:
                        continue
                    y = np.nan if rng.random() < 0.1 else float(truth if rng.random() < 0.75 else not truth)
                    votes.append(
                        dict(pair_id=f"m{m}p{i}", reader_id=f"r{r}", criterion=criterion, matchup=f"m{m}", y=y)
                    )
                roll = rng.random()
                yj = (
                    np.nan
                    if roll < 0.05
                    else (0.5 if roll < 0.12 else float(truth if rng.random() < 0.7 else not truth))
                )
                judge.append(dict(pair_id=f"m{m}p{i}", criterion=criterion, y_judge=yj))
    return pd.DataFrame(votes), pd.DataFrame(judge)


def _flip(votes, judge, matchups):
    """Swap focal and other in the given matchups (the votes' and the judge's labels)."""
    votes, judge = votes.copy(), judge.copy()
    v = votes["matchup"].isin(matchups)
    votes.loc[v, "y"] = 1.0 - votes.loc[v, "y"]
    j = judge["pair_id"].str[:2].isin(matchups)
    judge.loc[j, "y_judge"] = 1.0 - judge.loc[j, "y_judge"]
    return votes, judge


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**16), flips=st.sets(st.sampled_from(["m0", "m1", "m2"]), min_size=1))
def test_agreement_does_not_depend_on_which_system_is_focal(seed, flips):
    """Every statistic, pooled or not, and every interval bound is unchanged when focal and
    other are swapped in any matchups (chance is taken within each matchup; the resampling
    weights do not depend on the labels)."""
    votes, judge = _matchups(seed)
    a = judge_agreement(votes, judge, n_boot=64, rng=seed).to_frame()
    b = judge_agreement(*_flip(votes, judge, sorted(flips)), n_boot=64, rng=seed).to_frame()
    numeric = a.select_dtypes("number").columns
    np.testing.assert_allclose(a[numeric].to_numpy(float), b[numeric].to_numpy(float), atol=1e-10, equal_nan=True)
    assert a.loc[a.scope == "all/all", "alpha_difference"].notna().all()


def test_chance_pooled_as_oriented_would_depend_on_focal():
    """The control: one stratum over all matchups (chance from the pooled shares) changes
    when one matchup is flipped, so the property test above can fail."""
    from judge_transfer_audit.statistics.agreement import _check_judge, _check_votes
    from judge_transfer_audit.statistics.judge.agreement import _design

    votes, judge = _matchups(5)
    values = []
    for v, j in ((votes, judge), _flip(votes, judge, ["m0"])):
        d, _ = _design(_check_votes(v, ("matchup", "criterion")), _check_judge(j))
        for stratum in (None, d.unit_matchup):
            sv = scope_votes(d.vote_unit, d.vote_reader, d.vote_category, d.unit_judge, stratum)
            ones = (np.ones((1, sv.n_units)), np.ones((1, sv.n_readers)))
            values.append(agreement_statistics(sv, *ones)["alpha_difference"][0])
    as_oriented, within, as_oriented_flipped, within_flipped = values
    assert within == pytest.approx(within_flipped, abs=1e-12)
    assert abs(as_oriented - as_oriented_flipped) > 1e-3


def _pooled_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The three reference cases as three matchups, case 1 with focal and other swapped."""
    v = pd.read_csv(REF / "votes_pooled.csv")
    j = pd.read_csv(REF / "judge_pooled.csv")
    votes = pd.DataFrame(
        {
            "pair_id": v.case.astype(str) + v.unit,
            "reader_id": v.reader,
            "criterion": "overall",
            "matchup": "m" + v.case.astype(str),
            "y": v.category.map(_Y),
        }
    )
    choice = pd.DataFrame({"pair_id": j.case.astype(str) + j.unit, "criterion": "overall", "y_judge": j.judge.map(_YJ)})
    return votes, choice


def test_pooled_kappa_matches_psych_within_matchup():
    """make_reference_pooled.R: psych::cohen.kappa per matchup, chance within matchup, tol 1e-12."""
    ref = pd.read_csv(REF / "kappa_psych_pooled.csv").set_index("what")
    res = judge_agreement(*_pooled_case(), n_boot=0)
    row = res.row()
    assert row.n_units_scored == ref.loc["majority", "n"]
    assert row.kappa_majority.estimate == pytest.approx(ref.loc["majority", "kappa"], abs=1e-12)
    readers = res.readers[res.readers.scope == "all/all"].set_index("reader_id")
    assert len(readers) == 7
    for reader in readers.index:
        assert readers.loc[reader, "n_units"] == ref.loc[reader, "n"]
        assert readers.loc[reader, "kappa"] == pytest.approx(ref.loc[reader, "kappa"], abs=1e-12)
    assert row.kappa_readers.estimate == pytest.approx(ref.drop("majority")["kappa"].mean(), abs=1e-12)


def test_pooled_alpha_matches_krippendorff_within_matchup():
    """make_reference_pooled_alpha.py: the krippendorff package per matchup, expected
    disagreement within matchup, tol 1e-12."""
    ref = pd.read_csv(REF / "alpha_krippendorff_pooled.csv").iloc[0]
    row = judge_agreement(*_pooled_case(), n_boot=0).row()
    for name in ("alpha_human", "alpha_judge_human", "raw_human", "raw_judge_human"):
        assert getattr(row, name).estimate == pytest.approx(ref[name], abs=1e-12), name


@pytest.mark.r
def test_pooled_kappa_reference_rerun_live(tmp_path):
    """Re-run make_inputs_pooled.py and make_reference_pooled.R; compare with the stored outputs."""
    if shutil.which("Rscript") is None:
        pytest.skip("Rscript not on PATH")
    for name in ("votes.csv", "judge.csv", "make_inputs_pooled.py", "make_reference_pooled.R"):
        shutil.copy(REF / name, tmp_path / name)
    subprocess.run([sys.executable, "make_inputs_pooled.py"], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(["Rscript", "make_reference_pooled.R"], cwd=tmp_path, check=True, capture_output=True)
    np.testing.assert_allclose(
        pd.read_csv(tmp_path / "kappa_psych_pooled.csv")["kappa"],
        pd.read_csv(REF / "kappa_psych_pooled.csv")["kappa"],
        atol=1e-12,
    )


def test_pooled_alpha_human_equals_agreement_table_within_matchup():
    """Over several matchups, the human-human alpha and raw agreement are agreement_table's
    'within matchup' pooling (the same construction, computed independently there)."""
    from judge_transfer_audit.statistics.agreement import agreement_table

    votes, judge = _matchups(7)
    row = judge_agreement(votes, judge, n_boot=0).row()
    table = agreement_table(votes, pooling="within matchup").row()
    assert row.alpha_human.estimate == pytest.approx(table.krippendorff_alpha, abs=1e-12)
    assert row.raw_human.estimate == pytest.approx(table.raw_agreement, abs=1e-12)


@pytest.mark.parametrize("strata", [False, True])
def test_stacked_replicates_equal_one_call_per_block_and_kind_bit_for_bit(strata):
    """_replicates stacks every block and kind of a scope into few agreement_statistics calls;
    each replicate row must come out exactly as from its own call (ones on the side not resampled,
    as one broadcast row)."""
    from judge_transfer_audit.statistics.judge.agreement import _replicates, _Weights

    votes, choice = _case(1)
    units, readers, ind, judge = _indicators(votes, choice)
    stratum = np.arange(len(units)) % 2 if strata else None
    sv = _sparse(ind, judge, stratum)
    design = type(
        "D",
        (),
        {
            "unit_pair": np.arange(len(units)),
            "pair_matchup": np.zeros(len(units), dtype=np.int64),
            "pair_position": np.arange(len(units)),
            "matchup_sizes": np.array([len(units)]),
            "reader_ids": np.array(readers),
        },
    )()
    weights = _Weights(np.random.default_rng(5), design, 300)
    unit_pair, readers_in = np.arange(len(units)), np.arange(len(readers))
    got = _replicates(sv, weights, unit_pair, readers_in, True)
    want = {kind: [] for kind in ("pairs", "readers", "product")}
    for seed, size in weights.blocks():
        wu, wr = weights.units(seed, size, unit_pair), weights.readers(seed, size)
        ones_u, ones_r = np.ones((1, wu.shape[1])), np.ones((1, wr.shape[1]))
        want["pairs"].append(agreement_statistics(sv, wu, ones_r))
        want["readers"].append(agreement_statistics(sv, ones_u, wr))
        want["product"].append(agreement_statistics(sv, wu, wr))
    for kind, stats in zip(("pairs", "readers", "product"), got):
        for name, values in stats.items():
            expected = np.concatenate(
                [np.broadcast_to(c[name], (s,)) for c, (_, s) in zip(want[kind], weights.blocks())]
            )
            assert values.shape == (300,)
            np.testing.assert_array_equal(values, expected, err_msg=f"{kind} {name}")


@pytest.mark.parametrize("n_strata", [3, 8, 30])
def test_reader_replicates_from_distinct_weight_vectors_equal_every_replicate_computed(n_strata):
    """The readers-only replicates of a scope with few readers are computed once per distinct reader weight
    vector and copied: bit for bit every replicate computed in place, with fewer than 8 strata and with 8 or
    more (where one vector alone is computed in place), for chunks from one replicate to hundreds."""
    from judge_transfer_audit.statistics.judge.agreement import _by_reader_weights
    from judge_transfer_audit.statistics.judge.agreement_stats import scope_votes

    rng = np.random.default_rng(n_strata)
    for n_readers, n_units, n_boot in ((3, 150, 200), (4, 60, 1), (5, 300, 40), (3, 90, 2)):
        unit = np.repeat(np.arange(n_units), 3)
        reader = np.concatenate([rng.choice(n_readers, 3, replace=False) for _ in range(n_units)])
        sv = scope_votes(
            unit,
            reader,
            rng.integers(0, 3, unit.size),
            rng.integers(-1, 3, n_units),
            rng.integers(0, n_strata, n_units),
            n_readers=n_readers,
        )
        wr = rng.multinomial(n_readers, np.full(n_readers, 1 / n_readers), n_boot).astype(float)
        ones_u = np.ones((1, n_units))
        kappas = sv.reader_kappas(ones_u)
        got = _by_reader_weights(sv, ones_u, wr, sv.reader_counts(wr), kappas)
        want = agreement_statistics(sv, ones_u, wr, sv.reader_counts(wr), kappas)
        for name, values in want.items():
            assert got[name].tobytes() == values.tobytes(), (n_readers, n_boot, name)
