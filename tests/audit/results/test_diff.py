"""judge_transfer_audit.results.diff and `audit diff`: cells matched across orientations, the decision order and the
policy, MOVER intervals (closed form and coverage by simulation), incomparable inputs, HTML."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import norm

from judge_transfer_audit.cli import main
from judge_transfer_audit.core.errors import InputError
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.policy import DiffPolicy
from judge_transfer_audit.model.section_result import Computed
from judge_transfer_audit.results.diff import ORDER, diff_results, mover
from judge_transfer_audit.results.result import SCHEMA_VERSION, Interval, result_to_json
from tests.reports.synthetic import make_result


@pytest.fixture(scope="module")
def base():
    return make_result(sections=False)


@pytest.fixture(autouse=True)
def _synthetic_results_are_compared(monkeypatch):
    """The results here are built by hand (cells turned FAIL, renamed, an old schema) to exercise the
    comparison itself, so `audit diff`'s verification of each file (a hand-edited result is refused,
    as by `audit gate`: tests/hostile/test_saved_results.py) is switched off in this module."""
    monkeypatch.setattr("judge_transfer_audit.results.derive.verify_result", lambda result, source="result.json": ())


def _with_status(result, index: int, status: Status):
    cells = list(result.cells)
    cells[index] = replace(cells[index], transfer=replace(cells[index].transfer, status=status))
    return replace(result, cells=tuple(cells))


def _first(result, status: Status) -> int:
    return next(i for i, c in enumerate(result.cells) if c.transfer.status is status)


def _write(tmp_path, name, result):
    path = tmp_path / f"{name}.json"
    path.write_text(result_to_json(result), encoding="utf-8")
    return str(path)


def test_a_result_against_itself_changes_nothing(base, tmp_path, capsys):
    d = diff_results(base, base)
    assert {c.direction for c in d.cells} == {"same"} and not d.worse
    assert all(c.changes["judge_rate"].change == 0.0 for c in d.cells)
    path = _write(tmp_path, "a", base)
    assert main(["diff", path, path, "--gate"]) == 0
    assert "no decision worse" in capsys.readouterr().out


@pytest.mark.parametrize(
    "old, new, counted",
    [
        ("PASS", "INCONCLUSIVE", {"any", "pass"}),
        ("INCONCLUSIVE", "FAIL", {"any", "fail"}),
        ("PASS", "ERROR", {"any", "fail", "pass"}),
        ("INSUFFICIENT", "INCONCLUSIVE", set()),
        ("FAIL", "PASS", set()),
    ],
)
def test_what_counts_as_worse_under_each_policy(base, old, new, counted):
    i = _first(base, Status.PASS)
    a, b = _with_status(base, i, Status(old)), _with_status(base, i, Status(new))
    direction = "worse" if ORDER.index(new) > ORDER.index(old) else "better"
    for mode in ("any", "fail", "pass"):
        d = diff_results(a, b, policy=DiffPolicy(worse=mode))
        row = d.cells[i]
        assert (row.old_status, row.new_status, row.direction) == (old, new, direction)
        assert d.worse is (mode in counted), mode


def test_gate_exit_statuses(base, tmp_path, capsys):
    i = _first(base, Status.PASS)
    old, new = _write(tmp_path, "old", base), _write(tmp_path, "new", _with_status(base, i, Status.FAIL))
    assert main(["diff", old, new]) == 0  # without --gate the diff only reports
    out = capsys.readouterr().out
    assert "WORSE" in out and f"{base.cells[i].matchup} / {base.cells[i].criterion}: PASS -> FAIL" in out
    assert out.strip() == str(diff_results(base, _with_status(base, i, Status.FAIL), old_source=old, new_source=new))
    assert main(["diff", old, new, "--gate"]) == 1
    assert main(["diff", new, old, "--gate"]) == 0  # better
    policy = tmp_path / "p.toml"
    policy.write_text('[diff]\nworse = "pass"\n', encoding="utf-8")
    assert main(["diff", old, new, "--gate", "--policy", str(policy)]) == 1
    policy.write_text('[diff]\nworse = "sometimes"\n', encoding="utf-8")
    assert main(["diff", old, new, "--gate", "--policy", str(policy)]) == 2
    assert "diff.worse" in capsys.readouterr().err


def _turn(result, matchup: str):
    """The same result with focal and other swapped in one matchup (what another run may pick)."""

    def flip(i: Interval) -> Interval:
        return Interval(1 - i.estimate, 1 - i.ci_high, 1 - i.ci_low, i.level)

    cells = []
    for c in result.cells:
        if c.matchup != matchup:
            cells.append(c)
            continue
        h, t, g = c.human, c.transfer, c.human.glmm
        human = replace(
            h,
            vote_share=flip(h.vote_share),
            majority_rate=flip(h.majority_rate),
            glmm=replace(g, estimate=1 - g.estimate, ci_low=1 - g.ci_high, ci_high=1 - g.ci_low),
        )
        d = t.difference
        transfer = replace(
            t, judge_rate=flip(t.judge_rate), difference=Interval(-d.estimate, -d.ci_high, -d.ci_low, d.level)
        )
        cells.append(
            replace(c, matchup=f"{c.other} vs {c.focal}", focal=c.other, other=c.focal, human=human, transfer=transfer)
        )
    return replace(result, cells=tuple(cells))


def test_cells_are_matched_whichever_system_is_focal(base):
    matchup = base.cells[0].matchup
    d = diff_results(_turn(base, matchup), base)
    flipped = [c for c in d.cells if c.flipped]
    assert len(flipped) == 6 and {c.matchup for c in flipped} == {matchup}
    for c in d.cells:
        assert c.direction == "same"
        for name, ch in c.changes.items():
            if math.isfinite(ch.old):
                assert ch.change == pytest.approx(0.0, abs=1e-12), name
                assert ch.old == pytest.approx(ch.new, abs=1e-12)


def test_removed_cells_count_unless_the_policy_ignores_them(base):
    fewer = replace(base, cells=base.cells[1:])
    d = diff_results(base, fewer)
    assert [c.direction for c in d.cells].count("removed") == 1 and d.worse
    assert not diff_results(base, fewer, policy=DiffPolicy(removed="ignore")).worse
    added = diff_results(fewer, base)
    assert [c.direction for c in added.cells].count("added") == 1 and not added.worse


def test_incomparable_inputs_are_exit_2_with_the_reason(base, tmp_path, capsys):
    old = _write(tmp_path, "old", base)
    other = json.loads(result_to_json(base))
    other["schema_version"] = "2.1"  # base is SCHEMA_VERSION: a 2.1 result of the same run
    older = tmp_path / "older.json"
    older.write_text(json.dumps(other), encoding="utf-8")
    assert main(["diff", str(older), old]) == 2
    err = capsys.readouterr().err
    assert "schema 2.1" in err and f"schema {SCHEMA_VERSION}" in err
    renamed = replace(base, cells=tuple(replace(c, criterion=c.criterion + "_v2") for c in base.cells))
    assert main(["diff", old, _write(tmp_path, "renamed", renamed)]) == 2
    err = capsys.readouterr().err
    assert "no cell" in err and "authenticity_v2" in err
    with pytest.raises(InputError, match="no cell"):
        diff_results(base, renamed)
    assert main(["diff", old, str(tmp_path / "missing.json")]) == 2


def test_mover_is_the_wald_interval_for_symmetric_intervals():
    z = norm.ppf(0.975)
    a, b = Interval(0.4, 0.4 - z * 0.03, 0.4 + z * 0.03), Interval(0.55, 0.55 - z * 0.04, 0.55 + z * 0.04)
    low, high = mover(a, b)
    half = z * math.hypot(0.03, 0.04)
    assert (low, high) == pytest.approx((0.15 - half, 0.15 + half), abs=1e-12)
    assert math.isnan(mover(Interval(0.4, math.nan, math.nan), b)[0])


def _wilson(k: int, n: int, z: float) -> Interval:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Interval(p, centre - half, centre + half)


def test_mover_change_interval_covers_by_simulation():
    """Two independent samples of 40 (rates 0.8 and 0.65, skewed Wilson intervals): the MOVER
    interval of the change covers the true change at about its 95% level (Newcombe's method 10)."""
    rng = np.random.default_rng(20261201)
    z, n, p_old, p_new = norm.ppf(0.975), 40, 0.8, 0.65
    hits = 0
    n_sim = 4000
    for _ in range(n_sim):
        low, high = mover(_wilson(int(rng.binomial(n, p_old)), n, z), _wilson(int(rng.binomial(n, p_new)), n, z))
        hits += low <= p_new - p_old <= high
    assert 0.93 <= hits / n_sim <= 0.97


def test_same_human_votes_get_no_interval_for_human_changes(base):
    src = ({"role": "humans", "sha256": "cd" * 32}, *base.provenance.sources)
    a = replace(base, provenance=replace(base.provenance, sources=src))
    d = diff_results(a, a)
    assert any("same human votes" in n for n in d.notes)
    cell = d.cells[0]
    assert math.isnan(cell.changes["vote_share"].ci_low) and math.isfinite(cell.changes["judge_rate"].ci_low)


def test_agreement_scopes_are_compared(base):
    from judge_transfer_audit.statistics.judge.agreement import judge_agreement
    from tests.audit.statistics.judge.test_judge_agreement import _case

    votes, choice = _case(0, matchup=base.cells[0].matchup)
    old = judge_agreement(votes, choice, n_boot=100, rng=1)
    new = judge_agreement(votes, choice.assign(y_judge=1.0), n_boot=100, rng=1)
    a = replace(base, judge_agreement=Computed(old))
    b = replace(base, judge_agreement=Computed(new))
    pooled = next(x for x in diff_results(a, b).agreement if x.scope == "all/all")
    ch = pooled.changes["raw_difference"]
    assert ch.change == pytest.approx(new.row().raw_difference.estimate - old.row().raw_difference.estimate)
    assert ch.ci_low < ch.change < ch.ci_high and ch.level == 0.95


def test_html_and_json_outputs_escape_names(tmp_path):
    evil = make_result(lambda s: f"<b onmouseover=x>{s}", sections=False)
    old = _write(tmp_path, "old", evil)
    new = _write(tmp_path, "new", _with_status(evil, _first(evil, Status.PASS), Status.FAIL))
    html_path, json_path = tmp_path / "d.html", tmp_path / "d.json"
    assert main(["diff", old, new, "--html", str(html_path), "--json", str(json_path), "-q"]) == 0
    page = html_path.read_text(encoding="utf-8")
    assert "<b onmouseover" not in page and "&lt;b onmouseover=x&gt;" in page and 'class="worse"' in page
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["worse"] is True and data["n_worse"] == 1
    assert main(["diff", old, new, "--html", old]) == 2  # never overwrite an input


def test_terminal_lists_rate_changes_beyond_their_interval(base):
    from judge_transfer_audit.results.diff import diff_text

    cells = list(base.cells)
    t = cells[2].transfer
    moved = Interval(t.judge_rate.estimate - 0.4, t.judge_rate.ci_low - 0.4, t.judge_rate.ci_high - 0.4, 0.9)
    cells[2] = replace(cells[2], transfer=replace(t, judge_rate=moved))
    text = diff_text(diff_results(base, replace(base, cells=tuple(cells))))
    assert f"judge_rate: the change's interval excludes 0 in 1 of {len(cells)} cells" in text
    assert f"{cells[2].matchup} / {cells[2].criterion}" in text
