import math

import pytest

from audit.checks import Status
from audit.policy import TransferPolicy
from audit.result import GlmmSummary, HumanSide, JudgeSide
from audit.transfer import assess_transfer, judge_direction


def _human(low, high, est=None):
    est = (low + high) / 2 if est is None else est
    glmm = GlmmSummary(estimate=est, ci_low=low, ci_high=high, b0=0.0, se=0.3, sd_pair=0.1, sd_reader=0.2,
                       singular=False, converged=True, separation=False, loglik=-90.0)
    return HumanSide(rate=est, n_focal=70, n_other=70, n_ties=0, rate_even_split=est, glmm=glmm)


def _judge(wins, losses, ties, rule="even-split"):
    n = wins + losses + (ties if rule != "decisive" else 0)
    rate = (wins + (0.5 * ties if rule == "even-split" else 0)) / n
    return JudgeSide(judge="j", criterion="c", rate=rate, wins=wins, losses=losses, ties=ties, invalid=0,
                     n_pairs=wins + losses + ties, tie_rule=rule, different_target=False)


POLICY = TransferPolicy()


def test_skewed_judge_against_humans_at_chance_fails():
    t = assess_transfer(_human(0.40, 0.62), _judge(18, 1, 1), judge_vs_majority=None, reader_baseline=None,
                        policy=POLICY)
    assert t.judge_in_human_ci is False
    assert t.direction_conflict is True
    assert (t.human_direction, t.judge_direction) == ("chance", "focal")
    assert t.verdict is Status.FAIL


def test_judge_inside_interval_passes():
    t = assess_transfer(_human(0.35, 0.70), _judge(11, 9, 0), judge_vs_majority=0.6, reader_baseline=0.62,
                        policy=POLICY)
    assert t.judge_in_human_ci and not t.direction_conflict
    assert t.below_reader_baseline is False
    assert t.verdict is Status.PASS


def test_judge_agreeing_in_direction_but_outside_interval_warns():
    t = assess_transfer(_human(0.55, 0.70), _judge(19, 1, 0), judge_vs_majority=None, reader_baseline=None,
                        policy=POLICY)
    assert not t.judge_in_human_ci and not t.direction_conflict
    assert t.verdict is Status.WARN


def test_below_reader_baseline_is_flagged():
    t = assess_transfer(_human(0.35, 0.70), _judge(11, 9, 0), judge_vs_majority=0.50, reader_baseline=0.62,
                        policy=POLICY)
    assert t.below_reader_baseline is True and t.verdict is Status.WARN


def test_no_judge_is_skipped():
    t = assess_transfer(_human(0.4, 0.6), None, judge_vs_majority=None, reader_baseline=None, policy=POLICY)
    assert t.verdict is Status.SKIPPED and t.judge_in_human_ci is None


def test_judge_direction_uses_wilson_interval():
    # 14 of 20 = 70%: Wilson 95% lower bound ~0.48 -> not decisive; 16 of 20 is.
    assert judge_direction(_judge(14, 6, 0), 0.95) == "chance"
    assert judge_direction(_judge(16, 4, 0), 0.95) == "focal"
    assert judge_direction(_judge(3, 17, 0), 0.95) == "other"


def test_wilson_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    from audit.human_side import wilson_interval

    low, high = wilson_interval(14, 20)
    ref = proportion_confint(14, 20, alpha=0.05, method="wilson")
    assert low == pytest.approx(ref[0], abs=1e-12) and high == pytest.approx(ref[1], abs=1e-12)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
