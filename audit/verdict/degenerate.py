"""Degenerate GLMM fits: when the crossed model's point says nothing about the votes.

With few readers and nearly every pair unanimous (MT-Bench: 3 readers, ~14 pairs) the
Laplace fit of ``logit P(y=1) = b0 + u_pair + v_reader`` drives ``sd_pair`` towards
infinity and ``expit(b0)`` towards 100% while the readers' own shares are 48-60%: the fit is
faithful to the likelihood (lme4 gives the same) but ``expit(b0)``, the median pair's
preference, is not a figure anyone should read as "the humans". A fit is flagged
``degenerate`` when any of these holds (each rule names itself in the reason):

``MAX_LOGIT_SD``
    a random-effect SD above 5 on the logit scale (a pair or reader effect that large means
    the pairs or readers are separated, not varied);
reader range
    ``expit(b0)`` outside the range of the per-reader rates (by more than
    ``READER_RANGE_TOLERANCE``): the "typical reader" is no reader;
uninformative interval
    the interval spans almost all of [0, 1] (``ci_high - ci_low >= 0.95``) while the raw
    share is interior (between 0.05 and 0.95);
far from the votes
    ``expit(b0)`` more than ``MAX_GAP_FROM_RAW`` (15 points) from the raw share of decisive
    votes: with that much pair (or reader) variance the median pair's preference is not what
    the readers voted, and shown as "the humans" it would mislead (a conditional figure read
    as a marginal one; the vote share is the marginal figure);
non-finite SE
    the Wald SE of ``b0`` is infinite or NaN, unless every vote went one way (separation has
    its own flag and the one-sided profile interval).

The decision never rests on the GLMM (it rests on the vote share and the majority rate);
for a degenerate cell the report says so and shows the GLMM point only as flagged.
"""

from __future__ import annotations

import math

import numpy as np

MAX_LOGIT_SD = 5.0
READER_RANGE_TOLERANCE = 0.0
MIN_UNINFORMATIVE_WIDTH = 0.95
INTERIOR = (0.05, 0.95)
MAX_GAP_FROM_RAW = 0.15


def degeneracy(
    *,
    estimate: float,
    ci_low: float,
    ci_high: float,
    se: float,
    sd_pair: float,
    sd_reader: float,
    separation: bool,
    reader_rates: np.ndarray,
    raw_share: float,
) -> tuple[bool, str]:
    """``(degenerate, reason)`` of one cell's GLMM summary (see the module doc)."""
    reasons = []
    for name, sd in (("pair", sd_pair), ("reader", sd_reader)):
        if math.isfinite(sd) and sd > MAX_LOGIT_SD:
            reasons.append(f"{name} SD {sd:.1f} on the logit scale (above {MAX_LOGIT_SD:g})")
    rates = np.asarray(reader_rates, float)
    rates = rates[np.isfinite(rates)]
    if rates.size and math.isfinite(estimate):
        lo, hi = float(rates.min()), float(rates.max())
        if estimate < lo - READER_RANGE_TOLERANCE or estimate > hi + READER_RANGE_TOLERANCE:
            reasons.append(f"expit(b0) {estimate:.1%} outside the readers' own rates ({lo:.1%} to {hi:.1%})")
    interior = math.isfinite(raw_share) and INTERIOR[0] < raw_share < INTERIOR[1]
    if math.isfinite(ci_low) and math.isfinite(ci_high) and ci_high - ci_low >= MIN_UNINFORMATIVE_WIDTH and interior:
        reasons.append(
            f"interval [{ci_low:.1%}, {ci_high:.1%}] spans almost [0, 1] while the raw share is {raw_share:.1%}"
        )
    if math.isfinite(estimate) and math.isfinite(raw_share) and abs(estimate - raw_share) > MAX_GAP_FROM_RAW:
        reasons.append(
            f"expit(b0) {estimate:.1%} is {100 * abs(estimate - raw_share):.0f} points from the raw "
            f"share {raw_share:.1%}"
        )
    if not math.isfinite(se) and not separation:
        reasons.append("the standard error of b0 is not finite")
    return bool(reasons), "; ".join(reasons)


__all__ = ["MAX_GAP_FROM_RAW", "MAX_LOGIT_SD", "degeneracy"]
