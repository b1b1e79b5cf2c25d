"""judge_transfer_audit.statistics.budget.compute: the power formula against seeded simulations of studies at the
budgeted size, the pairs-vs-readers trade-off against studies simulated from the crossed GLMM, the unreachable
and no-variance cells, the budget stored by `audit run` (schema 2.2), and `audit budget`."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import norm

from judge_transfer_audit.cli import main
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.results.result import Interval, result_to_json
from judge_transfer_audit.statistics.budget.compute import MAX_PAIRS, _cell, budget_text, label_budget, smallest_n
from tests.reports.synthetic import make_result

ALPHA, FAIL_LEVEL, MARGIN = 0.05, 0.05 / 36, 0.10


@pytest.fixture(scope="module")
def cell():
    return make_result(sections=False).cells[0]


def _pairs(rng, n_studies, n, p_judge, p_reader, k):
    """Per pair: judge credit minus the readers' vote share (k readers), for n_studies studies."""
    judge = rng.random((n_studies, n)) < p_judge
    share = (rng.random((n_studies, n, k)) < p_reader).mean(axis=2)
    return judge - share


def _as_cell(cell, d: float, se: float, n0: int, status: Status = Status.INCONCLUSIVE):
    """A cell with the judge's distance d (both band ends) and standard error se at n0 pairs."""
    z = norm.ppf(1 - ALPHA)
    diff = Interval(d, d - z * se, d + z * se, 1 - 2 * ALPHA)
    dist = max(d, 0.0) if d > 0 else min(d, 0.0)
    p_out = float(1 - norm.cdf((abs(d) - MARGIN) / se)) if abs(d) > MARGIN else 0.5
    t = replace(
        cell.transfer,
        status=status,
        margin=MARGIN,
        difference_vote_share=diff,
        difference_majority=diff,
        difference=Interval(dist, d - z * se, d + z * se, 1 - 2 * ALPHA),
        p_outside=p_out,
        n_pairs=n0,
        n_readers=5,
        readers_per_pair=5.0,
        interval_level=1 - 2 * ALPHA,
    )
    return replace(cell, transfer=t)


@pytest.mark.parametrize("p_judge, target", [(0.85, "FAIL"), (0.55, "PASS")])
def test_budgeted_studies_decide_with_the_stated_power(cell, p_judge, target):
    """The formula, given the true distance and standard error at 60 pairs, budgets n pairs;
    2,000 simulated studies of n pairs (judge credits, 5 readers per pair at rate 0.6) are each
    decided by the rule the verdict applies (one-sided FAIL at the Bonferroni level, TOST for
    PASS) on their own estimates: the share decided is the stated 80% (+/- 3.5 points)."""
    rng = np.random.default_rng(20261201)
    p_reader, k, n0 = 0.6, 5, 60
    d_true = p_judge - p_reader
    sd = math.sqrt(p_judge * (1 - p_judge) + p_reader * (1 - p_reader) / k)  # of judge - share, per pair
    budget = _cell(_as_cell(cell, d_true, sd / math.sqrt(n0), n0), 0.8, ALPHA, FAIL_LEVEL)
    assert budget.target == target and budget.state == "budgeted" and budget.pairs > n0
    n = budget.pairs
    d = _pairs(rng, 2000, n, p_judge, p_reader, k)
    est, se = d.mean(axis=1), d.std(axis=1, ddof=1) / math.sqrt(n)
    if target == "FAIL":
        decided = (est - MARGIN) / se > norm.ppf(1 - FAIL_LEVEL)
    else:
        z = norm.ppf(1 - ALPHA)
        decided = (est - z * se > -MARGIN) & (est + z * se < MARGIN)
    assert decided.mean() == pytest.approx(0.8, abs=0.035)
    # at the current 60 pairs the stated power is rougher (FAIL: 0.414 stated, 0.465 simulated): within 6 points
    d0 = _pairs(rng, 2000, n0, p_judge, p_reader, k)
    est0, se0 = d0.mean(axis=1), d0.std(axis=1, ddof=1) / math.sqrt(n0)
    if target == "FAIL":
        now = ((est0 - MARGIN) / se0 > norm.ppf(1 - FAIL_LEVEL)).mean()
    else:
        now = ((est0 - z * se0 > -MARGIN) & (est0 + z * se0 < MARGIN)).mean()
    assert budget.power_now == pytest.approx(now, abs=0.06)


def test_fail_budget_has_the_closed_form(cell):
    """FAIL: n = n0 (z_fail + z_power)^2 se0^2 / (d - m)^2, rounded up."""
    d, se, n0 = 0.25, 0.08, 40
    b = _cell(_as_cell(cell, d, se, n0), 0.9, ALPHA, FAIL_LEVEL)
    closed = n0 * (norm.ppf(1 - FAIL_LEVEL) + norm.ppf(0.9)) ** 2 * se**2 / (d - MARGIN) ** 2
    assert b.pairs == math.ceil(closed)
    assert b.min_detectable_distance == pytest.approx(MARGIN + (norm.ppf(1 - FAIL_LEVEL) + norm.ppf(0.9)) * se)
    assert b.readers == math.ceil(5 * b.pairs / n0) and b.votes == math.ceil(5.0 * b.pairs)


def test_no_variance_margin_and_out_of_reach_cells_end(cell):
    flat = _as_cell(cell, 0.3, 0.05, 30)
    zero = Interval(0.3, 0.3, 0.3, 0.9)
    flat = replace(
        flat,
        transfer=replace(
            flat.transfer, difference_vote_share=zero, difference_majority=zero, difference=zero, p_outside=None
        ),
    )
    assert _cell(flat, 0.8, ALPHA, FAIL_LEVEL).state == "no variance"
    assert _cell(_as_cell(cell, MARGIN, 0.05, 30), 0.8, ALPHA, FAIL_LEVEL).state == "on the margin"
    far = _cell(_as_cell(cell, MARGIN + 1e-7, 0.2, 30), 0.8, ALPHA, FAIL_LEVEL)
    assert far.state == "out of reach" and far.pairs is None and str(MAX_PAIRS // 1000) in far.reason.replace(",", "")
    calls = []
    assert smallest_n(lambda n: calls.append(n) or 0.0, 10, 0.8) is None and len(calls) < 60
    insufficient = _as_cell(cell, 0.3, 0.05, 30, Status.INSUFFICIENT)
    assert _cell(insufficient, 0.8, ALPHA, FAIL_LEVEL).state == "not assessed"


def test_audit_budget_command(tmp_path, capsys):
    result = make_result(sections=False)
    path = tmp_path / "result.json"
    path.write_text(result_to_json(result), encoding="utf-8")
    csv = tmp_path / "budget.csv"
    assert main(["budget", str(path), "--power", "0.9", "--csv", str(csv), "--all"]) == 0
    out = capsys.readouterr().out
    assert "power 90%" in out and "Cells:" in out
    budget = label_budget(result, power=0.9)
    *lines, source = out.strip().split("\n")
    assert "\n".join(lines) == budget_text(budget, all_cells=True)  # CLI output == API output
    assert source == "(figures computed from the result: it stores no label budget (not computed))"
    assert len(csv.read_text(encoding="utf-8").splitlines()) == len(result.cells) + 1
    assert {c.state for c in budget.cells} <= {
        "budgeted",
        "decided",
        "out of reach",
        "on the margin",
        "no variance",
        "not assessed",
    }
    assert main(["budget", str(path), "--power", "1.5"]) == 3


def test_report_and_terminal_show_the_budget():
    from judge_transfer_audit.reports.html import render_html
    from judge_transfer_audit.sections.label_budget.render import terminal_lines as section_summary_lines

    result = make_result(sections=False)
    budget = label_budget(result)
    page = render_html(result)
    assert "Label budget" in page and "label-budget" in page
    open_cells = [c for c in budget.cells if c.state == "budgeted"]
    assert open_cells, "the synthetic result has INCONCLUSIVE cells"
    cheapest = min(open_cells, key=lambda c: c.pairs)
    line = [x for x in section_summary_lines(result) if x.startswith("Label budget")]
    assert line and f"~{cheapest.pairs:,} pairs" in line[0]


def _glmm_cell(cell, d, se, n0, k0, n_readers, b0=0.2, sd_pair=1.0, sd_reader=0.6):
    c = _as_cell(cell, d, se, n0)
    glmm = replace(c.human.glmm, b0=b0, sd_pair=sd_pair, sd_reader=sd_reader, converged=True, degenerate=False)
    t = replace(c.transfer, readers_per_pair=float(k0), n_readers=n_readers)
    return replace(c, human=replace(c.human, glmm=glmm), transfer=t)


def test_reader_tradeoff_follows_the_variance_split(cell):
    """More readers per pair need fewer pairs, never fewer than the pair variance alone allows;
    the current readers per pair give the main budget; the FAIL pairs have the closed form
    n0 (z_fail + z_power)^2 se0^2 ((1 - s) + s k0 / k) / (d - m)^2."""
    from judge_transfer_audit.statistics.budget.compute import vote_variance

    d, se, n0, k0 = 0.25, 0.08, 40, 4
    b = _cell(_glmm_cell(cell, d, se, n0, k0, 20), 0.8, ALPHA, FAIL_LEVEL)
    s = b.vote_variance_share
    assert b.variance_basis == "GLMM" and 0 < s < 1
    assert s == pytest.approx(vote_variance(0.2, 1.0, 0.6, n0 * k0 / 20) / (k0 * n0 * b.se**2))
    ks = [x.readers_per_pair for x in b.designs]
    assert ks == sorted(ks) and {2.0, 3.0, 4.0, 5.0, 8.0, 10.0, 20.0} == set(ks)
    pairs = [x.pairs for x in b.designs]
    assert all(a >= c for a, c in zip(pairs, pairs[1:])) and pairs[0] > pairs[-1]
    (now,) = [x for x in b.designs if x.current]
    assert now.readers_per_pair == k0 and now.pairs == b.pairs
    z = norm.ppf(1 - FAIL_LEVEL) + norm.ppf(0.8)
    for x in b.designs:
        closed = n0 * z**2 * se**2 * ((1 - s) + s * k0 / x.readers_per_pair) / (d - MARGIN) ** 2
        assert x.pairs == math.ceil(closed)
        assert x.votes == math.ceil(x.pairs * x.readers_per_pair)
        assert x.readers == max(math.ceil(x.votes / (n0 * k0 / 20)), math.ceil(x.readers_per_pair))
    # no reader variance and a large pair variance: readers per pair barely matter
    flat = _cell(_glmm_cell(cell, d, 0.5, n0, k0, 20, sd_reader=0.0), 0.8, ALPHA, FAIL_LEVEL)
    assert flat.vote_variance_share < 0.05
    assert flat.designs[-1].pairs / flat.designs[0].pairs > 0.9
    # an unusable GLMM falls back on the binomial variance of the vote share
    c = _glmm_cell(cell, d, se, n0, k0, 20)
    c = replace(c, human=replace(c.human, glmm=replace(c.human.glmm, degenerate=True)))
    assert _cell(c, 0.8, ALPHA, FAIL_LEVEL).variance_basis == "binomial"
    # an interval narrower than the votes' own variance allows: no trade-off, and the basis says why
    tight = _cell(_glmm_cell(cell, d, 0.005, n0, k0, 20), 0.8, ALPHA, FAIL_LEVEL)
    assert tight.designs == () and math.isnan(tight.vote_variance_share)
    assert "no trade-off" in tight.variance_basis and tight.pairs is not None


def test_vote_variance_matches_monte_carlo():
    """The quadrature against 400k simulated votes of the crossed model (reader part at L = 1 and 9)."""
    from scipy.special import expit

    from judge_transfer_audit.statistics.budget.compute import vote_variance

    rng = np.random.default_rng(3)
    b0, sp, sr = 0.4, 1.1, 0.7
    u, r = rng.standard_normal((2, 400_000))
    p = expit(b0 + sp * u[:, None] + sr * rng.standard_normal((400_000, 2)))
    y = rng.random(p.shape) < p
    within = 0.5 * ((y[:, 0].astype(float) - y[:, 1]) ** 2).mean()  # E Var(vote | pair)
    assert vote_variance(b0, sp, sr, 1.0) == pytest.approx(within, rel=0.01)
    m_r = expit(b0 + sp * rng.standard_normal((2000, 1)) + sr * r[None, :2000]).mean(axis=0)  # E_u p per reader
    assert vote_variance(b0, sp, sr, 9.0) - vote_variance(b0, sp, sr, 1.0) == pytest.approx(8 * m_r.var(), rel=0.1)


@pytest.mark.parametrize(
    "pilot, model",
    [((60, 4, 12), dict(judge_shift=1.2, sd_reader=0.6)), ((100, 4, 20), dict(judge_shift=0.9, sd_reader=0.3))],
)
def test_tradeoff_against_simulated_studies(pilot, model):
    """Two pilots, two readers per pair each (2 and 10): studies simulated from the crossed GLMM at
    the budget's pairs have the budget's standard error (within 6%) and are decided, each on its
    own two-way standard error, with the stated power (within 5 points; 1,000 studies: binomial SE
    1.3 points)."""
    from judge_transfer_audit.statistics.budget.simulation import Design, Model, template_cell, tradeoff_rows

    _, share, rows = tradeoff_rows(template_cell(), model=Model(**model), pilot=Design(*pilot), n_studies=1000)
    assert 0.1 < share < 0.9
    assert rows[0].pairs > rows[1].pairs  # 10 readers per pair need fewer pairs than 2
    for row in rows:
        assert row.stated == pytest.approx(0.8, abs=0.01)
        assert row.predicted_se == pytest.approx(row.simulated_sd, rel=0.06)
        assert row.simulated == pytest.approx(row.stated, abs=0.05)


def test_audit_budget_bad_input_is_exit_2(tmp_path, capsys):
    assert main(["budget", str(tmp_path / "missing.json")]) == 2
    assert "file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "9.0"}', encoding="utf-8")
    assert main(["budget", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "schema_version" in err and "Traceback" not in err


@pytest.mark.parametrize("p_out", [1e-36, 5e-324])
def test_a_vanishing_outside_p_is_budgeted(cell, p_out):
    """A cell far outside the margin can carry a raw p as small as the smallest double (the verdict
    floors its bootstrap p there): the budget takes the upper quantile from p itself (1 - p rounds
    to 1 and had no quantile: the fixture's run ended in an internal error)."""
    far = _as_cell(cell, 0.45, 0.02, 60, status=Status.FAIL)
    far = replace(far, transfer=replace(far.transfer, p_outside=p_out))
    budget = _cell(far, 0.8, ALPHA, FAIL_LEVEL)
    assert budget.target == "FAIL"
    assert math.isfinite(budget.se) and budget.se > 0


def test_near_the_margin_the_budget_reads_the_interval_not_a_p_near_one_half(cell):
    """A cell just beyond the margin (raw p near 0.5) is budgeted from its interval's width, and the
    pairs fall as the distance grows: no SE is read back from a p-value near 0.5 (which put +11.5 points
    beyond 10,000,000 pairs and +12.3 at 184,546)."""
    se, n0 = 0.05, 60
    pairs = []
    for d in np.linspace(MARGIN + 0.005, MARGIN + 0.2, 40):
        b = _cell(_as_cell(cell, float(d), se, n0), 0.8, ALPHA, FAIL_LEVEL)
        assert b.target == "FAIL" and b.pairs is not None
        pairs.append(b.pairs)
    assert all(a >= b for a, b in zip(pairs, pairs[1:]))
    # the closed form at the interval's SE, wherever the raw p is above alpha
    d = MARGIN + 0.015
    b = _cell(_as_cell(cell, d, se, n0), 0.8, ALPHA, FAIL_LEVEL)
    closed = n0 * (norm.ppf(1 - FAIL_LEVEL) + norm.ppf(0.8)) ** 2 * se**2 / (d - MARGIN) ** 2
    assert b.pairs == math.ceil(closed) < MAX_PAIRS
    # a p near 0.5 recorded with the same interval changes nothing
    near = _as_cell(cell, d, se, n0)
    near = replace(near, transfer=replace(near.transfer, p_outside=0.49))
    assert _cell(near, 0.8, ALPHA, FAIL_LEVEL).pairs == b.pairs
