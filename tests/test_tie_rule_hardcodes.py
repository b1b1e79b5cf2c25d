"""No module in audit/ or reports/ decides a tie rule by its name or writes a tie credit down.

The rule objects of audit/model/tie_rules.py say how a tie is credited and whether it is counted;
everything else asks them. tests/support/tie_hardcodes.py finds the two ways this was broken
before (``tie_rule != "decisive"`` in transfer.py, a 0.5 tie credit in readers/_common.py);
each remaining finding is allow-listed below with the reason it is not a tie credit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.tie_hardcodes import scan

ROOT = Path(__file__).resolve().parents[1]

#: (file, a piece of the flagged line) -> why it is not a tie rule decided by name or a tie credit
ALLOWED = {
    (
        "audit/model/tie_rules.py",
        'TieRule("even-split"',
    ): "the even-split rule object itself: the one place its credit is written",
    # the judge's *choice* code (1 focal, 0 other, 0.5 tie, NaN no verdict) read by agreement: a category, not a credit
    (
        "audit/statistics/agreement.py",
        "np.where(vote == 0.5, 0.5",
    ): "choice code: a tied vote scores half agreement (kappa-style)",
    ("audit/statistics/agreement.py", "isin([0.0, 0.5, 1.0])"): "validates the judge choice code 1 / 0 / 0.5",
    ("audit/statistics/agreement.py", "vote = np.where(np.isnan(y), 0.5, y)"): "the human vote in the same choice code",
    (
        "audit/statistics/judge/agreement.py",
        "return _Design(",
    ): "the same statement as the next entry (the choice code)",
    ("audit/statistics/judge/agreement.py", "judged == 0.5"): "choice code 0.5 = tie mapped to category 2",
    ("audit/verdict/judge_configurations_result.py", '0.5: "tie"'): "choice code -> category name",
    (
        "audit/verdict/judge_side.py",
        '"tie": 0.5',
    ): "outcome -> choice code for agreement (test_agreement_sees_the_judges_choice)",
    (
        "audit/verdict/judge_side.py",
        "credit = np.where(",
    ): "a sampled verdict file's choice code, averaged over samples",
    ("audit/verdict/judge_side.py", "m > 0.5"): "the samples' mean choice code -> win / loss / tie (the midpoint)",
    # named descriptive figures whose name says the rule
    ("audit/verdict/human_side.py", "0.5 * n_ties"): "the JSON field rate_even_split: the even-split share, named so",
    (
        "audit/presentation/figures/preference.py",
        "0.5 * j.ties) / _valid(j)",
    ): "the paper's Fig. 1b: the even-split composition, labelled (even-split) in the legend",
    ("audit/presentation/figures/preference.py", "tie = 0.5 * j.ties"): "the same figure's tie bar",
    # the prediction-powered estimates: a pair the judge gave no valid verdict on predicts nothing (0.5)
    (
        "audit/statistics/prediction_powered/compute.py",
        '["y_judge"].astype(float).fillna(0.5)',
    ): "choice code: no verdict is the uninformative prediction, not a tie credit",
    # intransitive triples: a pair of systems never compared beats neither way (NaN read as the midpoint)
    ("audit/statistics/leaderboard/diagnostics.py", "np.nan_to_num(rate, nan=0.5) > 0.5"): "a win rate against its "
    "midpoint, not a tie credit",
    # a simulation's parameter
    ("audit/verdict/agreement_calibration.py", "np.where(tie > np.maximum(p_focal, p_other), 0.5"): "a simulated "
    "judge's choice code: 0.5 is its tie verdict (a category of its own in tie-heavy designs), not a tie credit",
    ("audit/verdict/agreement_calibration.py", "nan=0.5)"): "a simulated reader-like judge's choice code: its "
    "tied vote (NaN) written as the tie verdict 0.5",
    ("audit/verdict/agreement_calibration.py", "np.where(np.isnan(y), 0.5, y)"): "the simulated coin judge's rate: the "
    "readers' vote share (ties half), a parameter of the simulation, not a credit in the audit",
    # not a tie at all
    ("audit/statistics/readers/policy.py", "pb.pooled_lo > 0.5"): "position bias: the null first-shown rate is 0.5",
}


def _findings() -> list[tuple[str, int, str, str]]:
    out = []
    for package in ("audit", "reports"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            out += [(rel, n, what, line) for n, what, line in scan(path.read_text(encoding="utf-8"))]
    return out


def _allowed(rel: str, line: str) -> bool:
    return any(rel == f and piece in line for f, piece in ALLOWED)


def test_no_tie_rule_by_name_and_no_tie_credit_outside_the_rule_objects():
    bad = [f"{rel}:{n}: {what}: {line}" for rel, n, what, line in _findings() if not _allowed(rel, line)]
    assert bad == [], (
        "decide by the TieRule object (audit/model/tie_rules.py), or allow-list with a reason:\n" + "\n".join(bad)
    )


def test_every_allow_list_entry_still_matches_a_finding():
    found = {(rel, line) for rel, _, _, line in _findings()}
    stale = [key for key in ALLOWED if not any(rel == key[0] and key[1] in line for rel, line in found)]
    assert stale == []


@pytest.mark.parametrize(
    "hard_code",
    [
        # the two hard-codes this guard replaced (transfer.py, readers/_common.py, readers/rates.py)
        'denominator = wins + losses + (ties if tie_rule != "decisive" else 0)\n',
        "def even_split_credit(y):\n    return np.where(np.isnan(y), 0.5, y)\n",
        'ties = np.isnan(vals) if value == "y" else (vals == 0.5)\n',
        "rate = (n_focal + 0.5 * n_ties) / n\n",
        "out = frame.fillna(0.5)\n",
        "ok = credit.isin([0.0, 0.5, 1.0])\n",
        'if spec.tie_rule in ("decisive", "strict"):\n    pass\n',
        'TIE_WORDS = {"even-split": "half", "decisive": "left out"}\n',
    ],
)
def test_the_guard_finds_a_hard_code_put_back(hard_code):
    assert scan(hard_code), hard_code


def test_the_guard_flags_a_hard_code_in_a_real_module(tmp_path):
    """Add an even-split helper to the readers' code: the guard names it."""
    source = (ROOT / "audit/statistics/readers/_common.py").read_text(encoding="utf-8")
    source += (
        "\n\ndef even_split_credit(y):\n    arr = np.asarray(y, dtype=float)\n"
        "    return np.where(np.isnan(arr), 0.5, arr)\n"
    )
    lines = [line for _, _, line in scan(source) if not _allowed("audit/statistics/readers/_common.py", line)]
    assert lines == ["return np.where(np.isnan(arr), 0.5, arr)"]


def test_plain_uses_of_one_half_are_not_findings():
    assert scan("z = norm.ppf(0.5 + level / 2)\nthreshold = 0.5\nax.set_xticks([0, 0.5, 1])\n") == []
