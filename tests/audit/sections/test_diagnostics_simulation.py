"""Seeded simulation of the surface and reader checks.

An aligned judge (one more reader; surface features unrelated to judge and readers) must
not be warned by chance: with the checks' Holm adjustment across scopes, no surface or
reader WARN in >= 95% of studies. A judge that tracks sentence length must still get
``surface.judge_only_feature``. The default run uses a few seeds; the ``slow`` test the 40
of docs/detectors.md.
"""

from __future__ import annotations

import pandas as pd
import pytest

from judge_transfer_audit.sections.diagnostics_simulation import diagnostic_checks, simulate_study, warn_rates, warned


def _any_warned(seeds, judge, adjust):
    out = []
    for seed in seeds:
        checks = diagnostic_checks(simulate_study(seed, judge), seed, adjust=(adjust,))[adjust]
        out.append(warned(checks))
    return pd.DataFrame(out).fillna(0)


@pytest.mark.slow
def test_an_aligned_judge_is_not_warned_by_chance_but_was_before_the_adjustment():
    both = {}
    for seed in range(6):
        for adjust, checks in diagnostic_checks(simulate_study(seed, "aligned"), seed, adjust=("holm", "none")).items():
            both.setdefault(adjust, []).append(warned(checks)["any"])
    assert sum(n > 0 for n in both["holm"]) <= 1  # expected 0.3 of 6 at a 5% family-wise rate
    assert sum(n > 0 for n in both["none"]) >= 4  # read one scope at a time: warned in most studies


@pytest.mark.slow
def test_a_judge_that_tracks_sentence_length_still_gets_judge_only_feature():
    frame = _any_warned(range(2), "length", "holm")
    assert (frame["surface.judge_only_feature"] > 0).all()


def test_the_study_is_seeded():
    a, b = simulate_study(3), simulate_study(3)
    pd.testing.assert_frame_equal(a.data.votes, b.data.votes)
    pd.testing.assert_frame_equal(a.features, b.features)
    assert not simulate_study(4).data.votes["y"].equals(a.data.votes["y"])


@pytest.mark.slow
def test_forty_seeds_no_warning_in_at_least_95_percent_of_aligned_studies():
    table = warn_rates(range(40), "aligned", adjust=("holm",))
    any_rate = table.loc[table["check"] == "any", "warn_rate"].iloc[0]
    assert any_rate <= 0.05, table
    length = warn_rates(range(40), "length", adjust=("holm",))
    assert length.loc[length["check"] == "surface.judge_only_feature", "warn_rate"].iloc[0] >= 0.9
