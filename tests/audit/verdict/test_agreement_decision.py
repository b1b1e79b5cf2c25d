"""The agreement decision (audit/verdict/agreement_decision.py) and the alternative annotator test."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.policy import Policy, policy_from_mapping
from judge_transfer_audit.verdict.agreement_calibration import simulate_study
from judge_transfer_audit.verdict.agreement_decision import (
    agreement_decision,
    alt_test,
    by_rejections,
    data_supports_agreement,
)

REFERENCE = Path(__file__).resolve().parents[2] / "reference" / "alttest"


def _cases():
    inputs = json.loads((REFERENCE / "inputs.json").read_text())
    outputs = json.loads((REFERENCE / "outputs.json").read_text())
    for name, case in inputs.items():
        for judge, labels in case["judges"].items():
            yield pytest.param(case, labels, outputs[name][judge], id=f"{name}-{judge}")


@pytest.mark.parametrize(("case", "labels", "expected"), list(_cases()))
def test_alt_test_matches_the_reference_procedure(case, labels, expected):
    got = alt_test(labels, case["humans"], scoring=case["scoring"], epsilon=case["epsilon"])
    assert list(got.readers) == expected["readers"]
    np.testing.assert_allclose(got.p_values, expected["p_values"], rtol=1e-12, atol=1e-15)
    assert sorted(h for h, r in zip(got.readers, got.rejected) if r) == expected["rejected"]
    np.testing.assert_equal(got.winning_rate, expected["winning_rate"])
    np.testing.assert_allclose(got.advantage_probability, expected["advantage_probability"], rtol=1e-12)
    assert got.passed == expected["passed"]


def test_benjamini_yekutieli_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    for m in (1, 2, 5, 12):
        p = np.concatenate([rng.uniform(0, 0.01, m // 2), rng.uniform(0, 1, m - m // 2)])
        assert (by_rejections(p, 0.05) == multipletests(p, alpha=0.05, method="fdr_by")[0]).all()


def _tiny() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Three readers x twelve pairs, one criterion, with ties; the judge's verdicts."""
    rng = np.random.default_rng(5)
    rows, judge = [], []
    for i in range(12):
        for r in range(3):
            rows.append((f"p{i}", f"r{r}", "c", "a vs b", rng.choice([1.0, 0.0, np.nan])))
        judge.append((f"p{i}", "c", rng.choice([1.0, 0.0, 0.5])))
    votes = pd.DataFrame(rows, columns=["pair_id", "reader_id", "criterion", "matchup", "y"])
    return votes, pd.DataFrame(judge, columns=["pair_id", "criterion", "y_judge"])


def test_the_agreements_by_explicit_loops():
    votes, choices = _tiny()
    res = agreement_decision(votes, choices, n_boot=200, rng=0, min_pairs=5)
    cat = {1.0: "f", 0.0: "o"}
    lab = {(p, r): cat.get(y, "t") for p, r, y in zip(votes.pair_id, votes.reader_id, votes.y)}
    jl = {p: {1.0: "f", 0.0: "o", 0.5: "t"}[y] for p, y in zip(choices.pair_id, choices.y_judge)}
    a_j, a_r = [], []
    for (p, r), x in lab.items():
        others = [lab[(p, g)] for g in ("r0", "r1", "r2") if g != r]
        a_j.append(sum(o == jl[p] for o in others) / 2)
        a_r.append(sum(o == x for o in others) / 2)
    row = res.row("a vs b/c")
    assert row.n_votes == 36 and row.basis == "pair by pair"
    assert row.judge_agreement == pytest.approx(np.mean(a_j), abs=1e-12)
    assert row.reader_agreement == pytest.approx(np.mean(a_r), abs=1e-12)
    assert row.advantage.estimate == pytest.approx(np.mean(a_j) - np.mean(a_r), abs=1e-12)
    assert res.row("all/all").advantage.estimate == pytest.approx(row.advantage.estimate, abs=1e-12)


def test_the_run_figures_are_alt_test_on_the_same_votes():
    """The winning rate a scope reports is alt_test's on its units (categories as labels)."""
    votes, choices = simulate_study(5, 60, np.random.default_rng(2))
    res = agreement_decision(votes, choices["noisy-aligned"], margin=0.05, n_boot=100, rng=0)
    m = votes[votes.matchup == "m0"].dropna(subset=["reader_id"])
    label = m.y.map({1.0: "f", 0.0: "o"}).fillna("t")
    humans = {r: dict(zip(g.pair_id, label[g.index])) for r, g in m.groupby("reader_id")}
    c = choices["noisy-aligned"]
    c = c[c.pair_id.str.startswith("m0-") & c.y_judge.notna()]
    judge = dict(zip(c.pair_id, c.y_judge.map({1.0: "f", 0.0: "o", 0.5: "t"})))
    ref = alt_test(judge, humans, epsilon=0.05, q=0.05)
    row = res.row("m0/overall")
    assert row.n_readers_tested == len(ref.readers) == 5
    assert row.winning_rate == pytest.approx(ref.winning_rate)
    assert row.advantage_probability == pytest.approx(ref.advantage_probability, abs=1e-12)


@pytest.fixture(scope="module")
def study():
    return simulate_study(7, 60, np.random.default_rng(4))


def test_the_wrong_side_judge_fails_everywhere_and_the_majority_passes(study):
    votes, choices = study
    wrong = agreement_decision(votes, choices["wrong-side"], n_boot=300, rng=1)
    assert {r.status for r in wrong.rows} == {"FAIL"}
    assert all(r.advantage.ci_high < -wrong.margin for r in wrong.rows)
    good = agreement_decision(votes, choices["majority"], n_boot=300, rng=1)
    assert good.row("all/all").status == "PASS" and not any(r.status == "FAIL" for r in good.rows)
    assert good.row("all/all").advantage.ci_low > -good.margin


def test_fail_is_holm_over_single_criterion_matchups_and_the_study_combined(study):
    """One criterion per matchup: the closed test is Holm (Bonferroni) over the cells, every adjusted p
    at least the study's local test (twice the smaller of its pooled p and the Bonferroni over the
    cells), and a matchup's equal to its cell's."""
    from statsmodels.stats.multitest import multipletests

    votes, choices = study
    for adjust, method in (("bonferroni", "bonferroni"), ("holm", "holm")):
        res = agreement_decision(votes, choices["biased"], n_boot=300, rng=1, adjust=adjust)
        cells = res.level("cell")
        p = [r.p_fail for r in cells]
        study_local = min(1.0, 2 * min(res.row("all/all").p_fail, len(p) * min(p)))
        assert res.row("all/all").p_fail_adjusted == pytest.approx(study_local, rel=1e-12)
        expected = np.maximum(multipletests(p, method=method)[1], study_local)
        np.testing.assert_allclose([r.p_fail_adjusted for r in cells], expected, rtol=1e-12)
        for r in cells:
            assert res.row(f"{r.matchup}/all").p_fail_adjusted == pytest.approx(r.p_fail_adjusted, rel=1e-12)


def _local_p(subset, cells, matchup_p, study_p):
    """The local test of a set of cells, written out: Bonferroni over the matchups it touches of each
    part's test (one cell: its p; all of a matchup's cells: twice the smaller of the pooled p and the
    Bonferroni over them; otherwise the Bonferroni over them); the set of every cell: twice the smaller
    of the study's pooled p and that Bonferroni."""
    parts = {}
    for k in subset:
        parts.setdefault(cells[k].matchup, []).append(cells[k].p_fail)
    values = []
    for m, p in parts.items():
        full = len(p) == sum(c.matchup == m for c in cells)
        bonferroni = min(1.0, len(p) * min(p))
        values.append(p[0] if len(p) == 1 else (min(1.0, 2 * min(matchup_p[m], bonferroni)) if full else bonferroni))
    bonferroni = min(1.0, len(values) * min(values))
    return min(1.0, 2 * min(study_p, bonferroni)) if len(subset) == len(cells) else bonferroni


def test_fail_is_the_closed_test_of_its_cells():
    """Several criteria per matchup: every adjusted p is the largest local p over the sets of cells that
    contain the hypothesis (closed testing by enumeration)."""
    import itertools

    from judge_transfer_audit.verdict.agreement_calibration import StudyDesign, simulate_named_study

    votes, choices = simulate_named_study(StudyDesign("small", 3, 3, 25, 5), np.random.default_rng(3))
    res = agreement_decision(votes, choices["biased"], n_boot=300, rng=2, adjust="holm")
    cells = res.level("cell")
    matchup_p = {r.matchup: r.p_fail for r in res.level("matchup")}
    study_p = res.row("all/all").p_fail
    sets = [s for n in range(1, len(cells) + 1) for s in itertools.combinations(range(len(cells)), n)]
    local = {s: _local_p(s, cells, matchup_p, study_p) for s in sets}
    for k, r in enumerate(cells):
        closed = max(v for s, v in local.items() if k in s)
        assert r.p_fail_adjusted == pytest.approx(closed, rel=1e-12), r.scope
    for r in res.level("matchup"):
        mine = {k for k, c in enumerate(cells) if c.matchup == r.matchup}
        closed = max(v for s, v in local.items() if mine <= set(s))
        assert r.p_fail_adjusted == pytest.approx(closed, rel=1e-12), r.scope
    assert res.row("all/all").p_fail_adjusted == pytest.approx(local[sets[-1]], rel=1e-12)
    assert {r.status for r in res.rows if r.p_fail_adjusted < res.alpha} <= {"FAIL"}
    assert all(r.status != "FAIL" for r in res.rows if r.p_fail_adjusted >= res.alpha)


def test_one_vote_per_pair_is_decided_from_the_votes_never_pass(study):
    votes, choices = study
    one = votes.dropna(subset=["reader_id"]).groupby("pair_id", sort=False).head(1)
    assert not data_supports_agreement(one)
    for kind, can_fail in (("majority", False), ("following", False), ("wrong-side", True)):
        res = agreement_decision(one, choices[kind], n_boot=300, rng=2)
        row = res.row("all/all")
        assert row.basis == "votes" and np.isnan(row.reader_agreement)
        assert row.n_votes == len(one) == row.n_pairs
        assert row.status == ("FAIL" if can_fail else "INCONCLUSIVE"), (kind, row.reason)
        assert all(r.status != "PASS" for r in res.rows)
        assert "not identifiable" in row.reason and f"{row.chance:.1%}" in row.reason
        if not can_fail:
            assert "two or more readers" in row.reason


def test_ties_are_left_out_under_a_rule_that_drops_them():
    votes, choices = _tiny()
    kept = agreement_decision(votes, choices, n_boot=100, rng=0, min_pairs=2)
    dropped = agreement_decision(votes, choices, n_boot=100, rng=0, ties_counted=False, min_pairs=2)
    assert kept.ties == "category" and dropped.ties == "excluded"
    decisive = votes[votes.y.notna()].merge(choices[choices.y_judge != 0.5], on=["pair_id", "criterion"])
    multi = decisive.groupby("pair_id").pair_id.transform("size") >= 2
    assert dropped.row("all/all").n_votes == int(multi.sum()) < kept.row("all/all").n_votes


def test_too_few_pairs_is_insufficient():
    votes, choices = _tiny()
    res = agreement_decision(votes, choices, n_boot=100, rng=0)  # min_pairs 10 > ... 12 pairs: fine
    assert res.row("all/all").status != "INSUFFICIENT"
    few = agreement_decision(votes[votes.pair_id.isin(["p0", "p1", "p2"])], choices, n_boot=100, rng=0)
    assert {r.status for r in few.rows} == {"INSUFFICIENT"}
    assert "at least 10 needed" in few.row("all/all").reason


def test_the_gate_policy_keys():
    assert Policy().gate.decisions == "auto" and Policy().agreement.margin == 0.05
    p = policy_from_mapping({"gate": {"decisions": "rate"}, "agreement": {"margin": 0.1}}, "p.toml")
    assert p.gate.decisions == "rate" and p.agreement.margin == 0.1
    with pytest.raises(InputError, match="gate.decisions"):
        policy_from_mapping({"gate": {"decisions": "all"}}, "p.toml")
    with pytest.raises(InputError, match="agreement.margin"):
        policy_from_mapping({"agreement": {"margin": 1.5}}, "p.toml")


def test_a_decision_that_does_not_gate_reports_its_fail_as_warn(study):
    from judge_transfer_audit.model.checks import apply_severity, gate_severity
    from judge_transfer_audit.model.section_result import Computed
    from judge_transfer_audit.sections.agreement_decision.checks import checks

    votes, choices = study
    section = Computed(agreement_decision(votes, choices["wrong-side"], n_boot=100, rng=0))
    base = checks(section, Policy())
    assert {c.status.value for c in base} == {"FAIL"}
    rate_only = policy_from_mapping({"gate": {"decisions": "rate"}}, "p.toml")
    relabelled = apply_severity(base, gate_severity(rate_only.severity, rate_only.gate.decisions))
    assert {c.status.value for c in relabelled} == {"WARN"}
    agreement_only = policy_from_mapping({"gate": {"decisions": "agreement"}}, "p.toml")
    assert gate_severity(agreement_only.severity, agreement_only.gate.decisions) == {"transfer.decision": "WARN"}
    explicit = policy_from_mapping(
        {"gate": {"decisions": "rate"}, "severity": {"agreement.decision": "FAIL"}}, "p.toml"
    )
    kept = apply_severity(base, gate_severity(explicit.severity, explicit.gate.decisions))
    assert {c.status.value for c in kept} == {"FAIL"}


def test_gating_on_agreement_without_replicate_votes_is_an_input_error(tmp_path, capsys):
    from judge_transfer_audit.cli import main
    from judge_transfer_audit.cli.exit_status import ExitStatus

    deploy = Path(__file__).resolve().parents[3] / "fixtures" / "deployment"
    humans = pd.read_csv(deploy / "humans.csv", dtype=str, keep_default_na=False)
    humans.groupby("pair_id", sort=False).head(1).to_csv(tmp_path / "humans.csv", index=False)
    policy = tmp_path / "policy.toml"
    args = ["run", str(deploy / "judge.csv"), str(tmp_path / "humans.csv"), "--pairs", str(deploy / "pairs.csv")]
    args += ["--out", str(tmp_path / "out"), "-q", "--policy", str(policy)]
    for value in ("both", "agreement"):
        policy.write_text(f'[gate]\ndecisions = "{value}"\n')
        assert main(args) == ExitStatus.INPUT_ERROR
        err = capsys.readouterr().err
        assert "'gate.decisions'" in err and "one reader vote per criterion" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "result.json").exists()


def test_the_one_sample_t_test_equals_scipys():
    """The run's one-sided one-sample t test (no scipy.stats import) gives scipy.stats.ttest_1samp's p,
    NaN included for a constant sample at the null value."""
    import warnings

    from scipy import stats

    from judge_transfer_audit.verdict.agreement_decision import _t_test_less

    rng = np.random.default_rng(3)
    for k in range(300):
        n = int(rng.integers(2, 60))
        x = np.full(n, rng.choice([-1.0, 0.0, 1.0])) if k % 7 == 0 else rng.choice([-1.0, 0.0, 1.0], size=n)
        popmean = float(rng.choice([0.2, 0.05, 0.0, -0.1]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = float(stats.ttest_1samp(x, popmean, alternative="less").pvalue)
        got = _t_test_less(x, popmean)
        assert (np.isnan(got) and np.isnan(want)) or abs(got - want) <= 1e-15


def _one_matchup() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One matchup of seven readers x 40 pairs and a judge that votes like one more reader."""
    votes, choices = simulate_study(7, 40, np.random.default_rng(11))
    one = votes[votes["matchup"] == "m0"]
    judge = choices["reader-like"]
    return one, judge[judge["pair_id"].isin(one["pair_id"])]


def _margin_at(votes, choices, p: float) -> float:
    """The margin that puts the cell's one-sided FAIL p at ``p`` (its interval read from a first decision)."""
    from judge_transfer_audit.statistics.distributions import t as t_dist

    first = agreement_decision(votes, choices, margin=0.0, n_boot=199, rng=3).row("m0/overall")
    a = first.advantage
    se = (a.ci_high - a.estimate) / t_dist.ppf(0.95, first.df)
    return float(-a.estimate + se * t_dist.ppf(p, first.df))


def test_the_monte_carlo_se_of_a_p_value_is_its_spread_over_seeds(monkeypatch):
    """The jackknife over groups of replicates predicts how much the p-value moves from seed to seed."""
    import judge_transfer_audit.verdict.assess as assess

    monkeypatch.setattr(assess, "SEQUENTIAL_ROUNDS", 0)
    votes, choices = _one_matchup()
    rows = [agreement_decision(votes, choices, n_boot=199, rng=s).row("m0/overall") for s in range(30)]
    p = np.array([r.p_fail for r in rows])
    se = np.array([r.p_fail_mc_se for r in rows])
    assert 0.05 < p.mean() < 0.95  # a p-value the draws can move
    assert 0.7 < se.mean() / p.std(ddof=1) < 1.4, (se.mean(), p.std(ddof=1))
    np.testing.assert_allclose([r.p_pass_mc_se for r in rows], se, rtol=1e-9)  # p_pass = 1 - p_fail here


@pytest.mark.parametrize(("level", "test"), [(0.05, "FAIL"), (0.95, "PASS")])
def test_a_scope_the_draws_could_move_is_re_run_on_more_replicates(monkeypatch, level, test):
    """A cell whose FAIL (or PASS) p sits at alpha is decided again on 4x the replicates; with no round left
    it is flagged Monte Carlo borderline and its reason says to read it as undecided."""
    import judge_transfer_audit.verdict.assess as assess

    votes, choices = _one_matchup()
    margin = _margin_at(votes, choices, level)
    res = agreement_decision(votes, choices, margin=margin, n_boot=199, rng=3)
    cell = res.row("m0/overall")
    assert cell.n_boot in (4 * 199, 16 * 199) and "sequential Monte Carlo: at 199" in cell.reason
    if test == "FAIL":  # with one matchup the closed test rests on the cell's p, not the study's pooled one,
        assert res.row("all/all").n_boot == 199  # so the study scope keeps its replicates
    assert agreement_decision(votes, choices, margin=margin, n_boot=199, rng=3) == res

    monkeypatch.setattr(assess, "SEQUENTIAL_ROUNDS", 0)
    flagged = agreement_decision(votes, choices, margin=margin, n_boot=199, rng=3)
    cell = flagged.row("m0/overall")
    assert cell.n_boot == 199 and cell.monte_carlo_borderline
    assert f"Monte Carlo borderline ({test})" in cell.reason and "read it as undecided" in cell.reason
    # the terminal's line counts the flagged scopes; the same study decided on enough replicates has none
    from types import SimpleNamespace

    from judge_transfer_audit.model.section_result import Computed
    from judge_transfer_audit.sections.agreement_decision.render import summary_line

    n = sum(r.monte_carlo_borderline for r in flagged.rows)
    line = summary_line(SimpleNamespace(agreement_decision=Computed(flagged)))
    assert line.endswith(f"; {n} Monte Carlo borderline (read as undecided)")
    assert "borderline" not in summary_line(SimpleNamespace(agreement_decision=Computed(far_from_levels())))


def far_from_levels():
    votes, choices = _one_matchup()
    return agreement_decision(votes, choices, margin=0.05, n_boot=199, rng=3)


def test_a_scope_far_from_its_levels_is_decided_on_the_sections_replicates():
    res = far_from_levels()
    assert all(r.n_boot == 199 and not r.monte_carlo_borderline for r in res.rows)
    assert all("Monte Carlo" not in r.reason for r in res.rows)


def test_a_result_written_before_the_monte_carlo_fields_loads():
    from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable
    from judge_transfer_audit.verdict.agreement_decision import AgreementScope

    votes, choices = _one_matchup()
    row = agreement_decision(votes, choices, n_boot=199, rng=3).row("m0/overall")
    data = to_jsonable(row)
    for name in ("n_boot", "p_pass_mc_se", "p_fail_mc_se", "monte_carlo_borderline"):
        del data[name]
    old = from_jsonable(AgreementScope, data)
    assert old.status == row.status and old.n_boot == 0 and not old.monte_carlo_borderline
    assert np.isnan(old.p_fail_mc_se)
