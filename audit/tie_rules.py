"""Named tie rules: how an exact judge tie between the two stories of a pair is credited.

=============  ==================================================================
``even-split``  a tie credits 0.5 to each system (default; the motivating study's rate)
``decisive``    ties are excluded from the denominator
``strict``      a tie counts against the focal system (credit 0)
``random``      a tie is resolved by a seeded fair coin
=============  ==================================================================

Tie counts are always reported next to the rate, whatever the rule.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from audit.registry import Registry

#: A tie rule maps (number of ties, generator) to the credits of those ties (NaN = excluded).
TieRule = Callable[[int, np.random.Generator], np.ndarray]

TIE_RULES: Registry[TieRule] = Registry("tie rule")


@TIE_RULES.register("even-split")
def even_split(n_ties: int, rng: np.random.Generator) -> np.ndarray:
    return np.full(n_ties, 0.5)


@TIE_RULES.register("decisive")
def decisive(n_ties: int, rng: np.random.Generator) -> np.ndarray:
    return np.full(n_ties, np.nan)


@TIE_RULES.register("strict")
def strict(n_ties: int, rng: np.random.Generator) -> np.ndarray:
    return np.zeros(n_ties)


@TIE_RULES.register("random")
def random_coin(n_ties: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 2, size=n_ties).astype(float)


def credit_ties(outcome: np.ndarray, rule: str, rng: np.random.Generator) -> np.ndarray:
    """Credits for the focal system from outcomes ``"win"``, ``"loss"``, ``"tie"``, ``"invalid"``.

    Wins credit 1, losses 0, invalid outputs NaN (excluded and counted by the caller), and
    ties whatever ``rule`` says. Ties are credited in the order given, so a seeded
    ``random`` rule is reproducible for the same input order.
    """
    outcome = np.asarray(outcome, dtype=object)
    credit = np.full(outcome.shape, np.nan)
    credit[outcome == "win"] = 1.0
    credit[outcome == "loss"] = 0.0
    ties = outcome == "tie"
    credit[ties] = TIE_RULES.get(rule)(int(ties.sum()), rng)
    return credit
