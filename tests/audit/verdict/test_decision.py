"""The decision across cells: FAIL / PASS / INCONCLUSIVE, the adjustment, pairs_needed, the wording."""

import numpy as np
import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT
from judge_transfer_audit.verdict.compare import compare_cell
from judge_transfer_audit.verdict.decision import adjust_p, decide
from judge_transfer_audit.verdict.simulate import CellDesign, simulate_cell, simulate_judge

POLICY = TransferPolicy(n_boot=299)


def _comparison(design, judge, n_pairs=60, n_readers=7, seed=0, policy=POLICY):
    rng = np.random.default_rng(seed)
    cell = simulate_cell(design, n_pairs, n_readers, rng)
    credit = judge(cell, rng) if callable(judge) else simulate_judge(judge, cell, rng).credit
    return compare_cell(
        cell.pair_id,
        cell.reader_id,
        cell.y,
        cell.pairs,
        credit,
        tie_rule=EVEN_SPLIT,
        policy=policy,
        rng=np.random.default_rng(seed + 100),
    )


def test_adjustments():
    p = np.array([0.01, 0.04, np.nan, 0.03])
    from statsmodels.stats.multitest import multipletests

    assert np.allclose(adjust_p(p, "holm")[[0, 1, 3]], multipletests(p[[0, 1, 3]], method="holm")[1])
    assert np.allclose(adjust_p(p, "bonferroni")[[0, 1, 3]], [0.03, 0.12, 0.09])
    assert np.isnan(adjust_p(p, "none")[2])
    with pytest.raises(ValueError):
        adjust_p(p, "bh")


def test_a_skewed_judge_against_readers_who_lean_the_other_way_fails():
    c = _comparison(CellDesign(-0.8, 0.6, 0.2), "skewed")
    (t,) = decide([c], POLICY)
    assert t.status is Status.FAIL
    assert t.difference.ci_low > t.margin and t.p_outside_adjusted < POLICY.alpha
    assert t.reason.startswith("FAIL") and "above the band" in t.reason
    assert t.band_low <= t.band_high and t.judge_direction == "focal" and t.human_direction == "other"


def test_the_majority_judge_passes_at_150_pairs_and_is_never_condemned():
    c = _comparison(CellDesign(0.6, 0.8, 0.2), "majority", n_pairs=150, n_readers=12, seed=4)
    (t,) = decide([c], POLICY)
    assert t.status is Status.PASS, t.reason
    assert -t.margin < t.difference.ci_low <= t.difference.ci_high < t.margin
    assert t.pairs_needed is None


def test_inconclusive_says_how_many_pairs_would_decide():
    c = _comparison(CellDesign(0.3, 0.6, 0.3), "reader-like", n_pairs=20, seed=2)
    (t,) = decide([c], POLICY)
    assert t.status is Status.INCONCLUSIVE, t.reason
    assert t.pairs_needed is not None and t.pairs_needed > 20
    assert f"about {t.pairs_needed} pairs" in t.reason and "more votes" in t.reason


def test_decisive_at_chance_is_not_called_against_the_readers():
    def always_focal(cell, rng):
        return np.ones(cell.u.size)

    c = _comparison(CellDesign(0.0, 0.0, 0.0), always_focal, n_pairs=40, seed=1)
    (t,) = decide([c], POLICY)
    assert t.human_direction == "chance" and t.judge_direction == "focal"
    assert "against" not in t.reason
    assert t.direction_conflict is False


def test_multiplicity_adjustment_can_only_remove_fails():
    cells = [_comparison(CellDesign(-0.5, 0.6, 0.2), "skewed", n_pairs=20, seed=s) for s in range(4)]
    holm = decide(cells, POLICY)
    none = decide(cells, TransferPolicy(n_boot=299, adjust="none"))
    assert sum(t.status is Status.FAIL for t in holm) <= sum(t.status is Status.FAIL for t in none)
    for h, n in zip(holm, none):
        assert h.p_outside == pytest.approx(n.p_outside)
        assert h.p_outside_adjusted >= n.p_outside_adjusted - 1e-12
        assert h.adjust == "holm" and n.adjust == "none"


def test_not_assessed_cells_keep_their_status_and_stay_out_of_the_family():
    few = _comparison(CellDesign(0.0, 0.5, 0.2), "skewed", n_pairs=5)
    many = _comparison(CellDesign(-0.8, 0.6, 0.2), "skewed")
    t_few, t_many = decide([few, many], POLICY)
    assert t_few.status is Status.INSUFFICIENT and t_few.p_outside is None
    (alone,) = decide([many], POLICY)
    assert t_many.p_outside_adjusted == pytest.approx(alone.p_outside_adjusted)


def test_the_family_is_one_test_per_assessed_cell():
    """Holm over K cells (each cell's p the smaller of its two one-sided tests), not over 2 K tests."""
    from statsmodels.stats.multitest import multipletests

    from judge_transfer_audit.verdict.decision import adjust_components, cell_p

    p_out = np.array([0.004, 0.3, 0.02, 0.9])
    p_conf = np.array([1.0, 0.01, np.nan, 1.0])
    family = np.array([cell_p(a, b) for a, b in zip(p_out, p_conf)])
    assert np.allclose(family, [0.004, 0.01, 0.02, 0.9])
    adj_out, adj_conf = adjust_components(p_out, p_conf, "holm")
    expected = multipletests(family, method="holm")[1]  # K = 4 tests
    assert np.allclose(np.fmin(adj_out, adj_conf), expected)
    assert adj_out[0] == pytest.approx(0.016) and adj_conf[1] == pytest.approx(0.03)
    assert np.isnan(adj_conf[2]) and adj_out[2] == pytest.approx(expected[2])
    # a component that is not its cell's p is adjusted as if it were (never below the cell's)
    assert adj_out[1] >= expected[1] and adj_out[1] == pytest.approx(min(1.0, 0.3 * 2))
    b_out, b_conf = adjust_components(p_out, p_conf, "bonferroni")
    assert np.allclose(b_out, np.minimum(p_out * 4, 1.0))


def test_a_cell_fails_on_either_of_its_tests_at_the_cells_family_level():
    cells = [_comparison(CellDesign(-0.8, 0.6, 0.2), "skewed", seed=s) for s in range(3)]
    transfers = decide(cells, POLICY)
    for c, t in zip(cells, transfers):
        assert t.p_outside == pytest.approx(c.p_outside()) and t.p_conflict == pytest.approx(c.p_conflict())
        cell = min(t.p_outside_adjusted, t.p_conflict_adjusted)
        assert (t.status is Status.FAIL) == (cell < POLICY.alpha)


def test_a_pass_is_borderline_when_its_equivalence_p_is_within_two_monte_carlo_ses_of_alpha():
    from judge_transfer_audit.verdict.decision import pass_borderline

    p = np.array([0.04, 0.01, 0.06, np.nan, 0.055])
    se = np.array([0.01, 0.001, 0.001, 0.01, 0.0])
    assert pass_borderline(p, se, 0.05).tolist() == [True, False, False, False, False]


def test_a_recorded_equivalence_p_at_or_above_alpha_is_no_pass():
    from judge_transfer_audit.verdict.decision import status_from

    kw = dict(p_outside_adjusted=0.9, p_conflict_adjusted=1.0, difference_low=-0.02, difference_high=0.03)
    assert status_from(**kw, alpha=0.05, margin=0.1, p_equivalence=0.01) is Status.PASS
    assert status_from(**kw, alpha=0.05, margin=0.1, p_equivalence=0.07) is Status.INCONCLUSIVE
    assert status_from(**kw, alpha=0.05, margin=0.1) is Status.PASS  # before schema 2.4: the interval alone


def test_redecide_reads_the_recorded_equivalence_p_and_a_2_3_result_without_it():
    """audit gate re-derives the statuses: from p_equivalence when recorded (2.4), from the interval before."""
    from dataclasses import replace

    from judge_transfer_audit.verdict.decision import redecide

    cells = [
        _comparison(CellDesign(0.6, 0.8, 0.2), "majority", n_pairs=150, n_readers=12, seed=4),
        _comparison(CellDesign(-0.8, 0.6, 0.2), "skewed", seed=1),
        _comparison(CellDesign(0.3, 0.6, 0.3), "reader-like", n_pairs=20, seed=2),
    ]
    transfers = decide(cells, POLICY)
    statuses = [t.status for t in transfers]
    assert statuses == [Status.PASS, Status.FAIL, Status.INCONCLUSIVE]
    assert transfers[0].p_equivalence < POLICY.alpha <= transfers[2].p_equivalence
    assert [t.status for t in redecide(transfers, POLICY)] == statuses
    older = [replace(t, p_equivalence=None, p_equivalence_mc_se=None) for t in transfers]
    assert [t.status for t in redecide(older, POLICY)] == statuses
    # a recorded equivalence p at alpha is no PASS, whatever the interval says
    forged = [replace(transfers[0], p_equivalence=POLICY.alpha), *transfers[1:]]
    assert redecide(forged, POLICY)[0].status is Status.INCONCLUSIVE


def test_a_reason_writes_a_p_below_what_the_replicates_resolve_as_the_terminal_does():
    """Below 1 / (B + 1) the reason shows the bound, as the terminal does; the JSON keeps the number."""
    from judge_transfer_audit.reports.terminal import _bootstrap_p
    from judge_transfer_audit.verdict.decision import p_text

    for p in (3e-16, 9.9e-4, 1e-3, 0.0123, 0.5):
        for n_boot in (199, 999, 15984):
            assert p_text(p, n_boot).lstrip("= ") == _bootstrap_p(p, n_boot)
    c = _comparison(CellDesign(-0.8, 0.6, 0.2), "skewed", n_pairs=150, n_readers=12, seed=1)
    (t,) = decide([c], POLICY)
    assert t.status is Status.FAIL and t.p_outside < 1.0 / (t.n_boot + 1)
    assert f"(p < {1.0 / (t.n_boot + 1):.2g}, Holm-adjusted < " in t.reason
    assert f"{t.p_outside:.2g}" not in t.reason


def test_every_rate_in_the_reason_names_the_focal_system():
    c = _comparison(CellDesign(-0.8, 0.6, 0.2), "skewed")
    (named,) = decide([c], POLICY, systems=[("r1", "v3")])
    assert named.reason.startswith(f"FAIL: judge {100 * named.judge_rate.estimate:.1f}% for r1 vs the human band [")
    assert "] for r1 (vote share " in named.reason
    # the directions by name too: the judge decisive for r1, the readers' vote share for v3
    assert "the judge is decisive for r1 and the readers' vote share for v3" in named.reason
    assert "focal system" not in named.reason and "other system" not in named.reason
    (unnamed,) = decide([c], POLICY)  # no names known: the rates are still said to be the focal system's
    assert f"judge {100 * unnamed.judge_rate.estimate:.1f}% for the focal system vs the human band" in unnamed.reason


def test_a_vote_share_decision_names_the_system_of_its_rates():
    from tests.audit.verdict.test_compare import _one_vote_cell

    c = _one_vote_cell("reader-like")
    assert c.vote_share_only
    (t,) = decide([c], POLICY, systems=[("gpt5", "gpt4o")])
    assert f"judge {100 * t.judge_rate.estimate:.1f}% for gpt5 vs the readers' vote share " in t.reason
    assert "% for gpt5 (the majority rate not identified)" in t.reason
