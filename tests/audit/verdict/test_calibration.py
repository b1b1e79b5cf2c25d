"""The calibration study: a quick run in the default suite (loose bounds a broken rule would break),
the full study against its targets under ``slow``."""

import pytest

from judge_transfer_audit.model.policy import TransferPolicy
from judge_transfer_audit.verdict.calibration import (
    DESIGNS,
    QUICK_BOOT,
    QUICK_DESIGNS,
    QUICK_STUDIES,
    TRUTH_SIDES,
    calibrate,
    format_table,
    main,
    truth_side,
)


def _rate(tally, key, what="cells"):
    d = getattr(tally, what)
    n = tally.n_cells if what == "cells" else d["n"]
    return d[key] / n


@pytest.mark.slow
def test_quick_study_separates_aligned_from_misaligned_judges():
    tallies = calibrate(studies=QUICK_STUDIES, designs=QUICK_DESIGNS, policy=TransferPolicy(n_boot=QUICK_BOOT))
    at_60 = {kind: t for (design, kind), t in tallies.items() if design == (7, 60)}
    for kind in ("reader-like", "majority", "noisy-aligned"):
        assert _rate(at_60[kind], "FAIL") <= 0.05, kind
        assert _rate(at_60[kind], "PASS") > 0.0, kind  # PASS is reachable at 60 pairs
    assert _rate(at_60["reversed"], "FAIL", "studies") >= 0.8
    assert _rate(at_60["skewed"], "FAIL", "studies") >= 0.8
    assert _rate(at_60["reversed"], "FAIL") > 0.3  # in the cells where the readers are decisive
    for kind in ("reader-like", "majority"):
        cov = at_60[kind].coverage
        assert 0.85 <= sum(cov["J-V"]) / len(cov["J-V"]) <= 1.0
        assert 0.85 <= sum(cov["J-M"]) / len(cov["J-M"]) <= 1.0
    for t in tallies.values():  # every assessed cell is split by the truth, and every FAIL with it
        assert sum(t.truth[side] for side in TRUTH_SIDES) == t.n_cells - t.cells["other"]
        for status in ("FAIL", "PASS"):
            assert sum(t.truth[f"{side} {status}"] for side in TRUTH_SIDES) == t.cells[status]
    assert at_60["reversed"].truth["outside"] > at_60["reversed"].truth["inside"]  # reversed is truly outside
    assert at_60["reversed"].truth["outside FAIL"] > 0.3 * at_60["reversed"].truth["outside"]  # power
    assert at_60["majority"].truth["inside FAIL"] == 0
    table = format_table(tallies, TransferPolicy(n_boot=QUICK_BOOT))
    assert table.count("\n") == 2 + len(tallies) and "cov J-M" in table and "FAIL|in" in table


def test_the_truth_side_of_a_judge():
    # band [0.4, 0.5], margin 0.1: 0.65 is truly outside, 0.45 inside, 0.55 within the margin
    assert truth_side(0.65, 0.5, 0.4, 0.1) == "outside" and truth_side(0.45, 0.5, 0.4, 0.1) == "inside"
    assert truth_side(0.54, 0.45, 0.4, 0.1) == "conflict"  # within the margin, across 1/2 from the vote share
    assert truth_side(0.55, 0.5, 0.4, 0.1) == "inside"  # a vote share at 1/2 is no direction


def test_main_prints_the_table(capsys):
    assert main(["--quick", "--studies", "1", "--designs", "7x20"]) == 0
    out = capsys.readouterr().out
    assert "7x20" in out and "reversed" in out and "python -m judge_transfer_audit.verdict.calibration" in out


@pytest.mark.slow
def test_full_study_meets_the_targets():
    """The calibration's targets on the default study (docs/audit.md 4.5 holds the table this reproduces).

    Aligned judges never FAIL falsely (a FAIL where the judge is truly within the margin);
    counting every FAIL, the reader-like judge at 12 x 150 FAILs 10% of studies, every one a
    cell where its own leniency truly puts it beyond the margin (so the all-FAIL bound is
    waived there, the false-FAIL bound is not). The coverage of J - M is 92.9% (SE 1.7) at 12 x 150
    over these 40 studies (93.8% / 94.8% over 200: the test below), up to 97.9% at 7 x 60, and the
    band-distance interval over-covers (up to 99.2%: built from two intervals, conservative).
    """
    tallies = calibrate(policy=TransferPolicy())
    for (design, kind), t in tallies.items():
        if kind in ("reader-like", "majority", "noisy-aligned"):
            assert _rate(t, "false FAIL", "studies") <= 0.05, (design, kind)
            assert _rate(t, "FAIL") <= 0.05, (design, kind)
            # the false-alarm rate: FAIL among the cells whose judge is truly within the margin, no conflict
            assert t.truth["inside FAIL"] <= 0.05 * t.truth["inside"], (design, kind)
            if not (design == (12, 150) and kind == "reader-like"):
                assert _rate(t, "FAIL", "studies") <= 0.05, (design, kind)
        if design == (7, 60) and kind in ("skewed", "reversed"):
            assert _rate(t, "FAIL", "studies") >= 0.90, (design, kind)
        if design == (12, 150) and kind in ("reader-like", "majority"):
            assert _rate(t, "PASS") >= 0.5, (design, kind)
        if kind in ("reader-like", "majority"):
            cov = {key: sum(t.coverage[key]) / len(t.coverage[key]) for key in ("J-V", "J-M", "band")}
            assert 0.93 <= cov["J-V"] <= 0.976, (design, kind, cov)
            assert (0.92 if design == (12, 150) else 0.93) <= cov["J-M"] <= 0.98, (design, kind, cov)
            assert 0.95 <= cov["band"] <= 0.995, (design, kind, cov)
    assert set(DESIGNS) == {d for d, _ in tallies}


@pytest.mark.slow
def test_j_minus_m_covers_at_12x150_over_200_studies():
    """At 12 x 150 the 40-study figure (92.9%, SE 1.7) is too noisy to read against 93-97%: over
    200 studies (the first 40 are the default study's) J - M covers 93.8% / 94.8% (docs/audit.md 4.5)."""
    tallies = calibrate(studies=200, designs=((12, 150),), policy=TransferPolicy())
    for kind in ("reader-like", "majority"):
        t = tallies[((12, 150), kind)]
        cov = sum(t.coverage["J-M"]) / len(t.coverage["J-M"])
        assert 0.93 <= cov <= 0.97, (kind, cov)
        assert _rate(t, "false FAIL", "studies") == 0.0, kind
