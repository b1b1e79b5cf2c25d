"""Named tie rules: how an exact tie between the two stories of a pair is credited.

=============  ==================================================================
``even-split``  a tie credits 0.5 to each system (default; the motivating study's rate)
``decisive``    ties are excluded from the denominator
``strict``      a tie counts against the focal system (credit 0)
``random``      a tie is resolved by a seeded fair coin
=============  ==================================================================

Tie counts are always reported next to the rate, whatever the rule.

Each rule is a :class:`TieRule` object that says both things the rest of the audit needs:
how it credits a tie (:meth:`TieRule.credit`, the values in :attr:`TieRule.tie_credits`)
and what it counts (:attr:`TieRule.counts_ties`, :meth:`TieRule.denominator`). Nothing
else decides by a rule's name: the judge side, the cell comparison (human ties are credited
by the same rule) and the reader analysis read these attributes, so a newly registered rule
is honoured everywhere (tests/audit/model/test_tie_rules.py registers one).

A name becomes a rule once, where a run is asked for (:func:`resolve_tie_rule`, called by
``judge_transfer_audit.api.run`` for ``tie_rule=`` and ``--tie-rule``); the run's settings
(:class:`judge_transfer_audit.model.spec.AuditSpec`) and everything below them hold the
:class:`TieRule` object. Outputs write its :attr:`TieRule.name`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.registry import Registry

if TYPE_CHECKING:  # numpy is imported where a rule credits votes: `audit --help` lists the rules without it
    import numpy as np

#: picks the credits of ``n`` ties among a rule's ``tie_credits`` (a seeded generator given)
Draw = Callable[[int, "np.random.Generator"], "np.ndarray"]


@dataclass(frozen=True)
class TieRule:
    """How a tie is credited and whether it is counted.

    Attributes
    ----------
    name : the registered name (``--tie-rule``).
    summary : one line for help texts and reports.
    tie_credits : the credits a tie may receive for the focal system, each in [0, 1]; empty
        means ties are not credited and leave the denominator.
    draw : with several ``tie_credits``, how each tie gets one (from a seeded generator);
        None with exactly one (every tie gets it).
    """

    name: str
    summary: str
    tie_credits: tuple[float, ...]
    draw: Draw | None = None

    def __post_init__(self) -> None:
        if any(not (0.0 <= c <= 1.0) for c in self.tie_credits):
            raise ValueError(f"tie rule '{self.name}': credits must lie in [0, 1], got {self.tie_credits}")
        if len(self.tie_credits) > 1 and self.draw is None:
            raise ValueError(f"tie rule '{self.name}': several tie credits need a draw")

    @property
    def counts_ties(self) -> bool:
        """True when a tie is in the denominator (it is credited something)."""
        return bool(self.tie_credits)

    @property
    def credit_values(self) -> frozenset[float]:
        """Every credit a counted outcome can have under this rule: a win 1, a loss 0, a tie its credits."""
        return frozenset({0.0, 1.0, *self.tie_credits})

    def denominator(self, wins: int, losses: int, ties: int) -> int:
        """How many outcomes a rate under this rule divides by (invalid outputs never count)."""
        return wins + losses + (ties if self.counts_ties else 0)

    def credit(self, n_ties: int, rng: np.random.Generator) -> np.ndarray:
        """Credits of ``n_ties`` ties (NaN when ties are not counted)."""
        import numpy as np

        if not self.counts_ties:
            return np.full(n_ties, np.nan)
        if self.draw is None:
            return np.full(n_ties, float(self.tie_credits[0]))
        drawn = np.asarray(self.draw(n_ties, rng), float)
        if drawn.shape != (n_ties,) or not np.isin(drawn, self.tie_credits).all():
            raise ValueError(f"tie rule '{self.name}' drew credits outside its tie_credits {self.tie_credits}")
        return drawn


TIE_RULES: Registry[TieRule] = Registry("tie rule")


def register_tie_rule(rule: TieRule) -> TieRule:
    """Register ``rule`` under its name (a name registered twice is an error)."""
    TIE_RULES.add(rule.name, rule)
    return rule


def _coin(n_ties: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 2, size=n_ties).astype(float)


EVEN_SPLIT = register_tie_rule(TieRule("even-split", "a tie counts half for each system", (0.5,)))
DECISIVE = register_tie_rule(TieRule("decisive", "ties are left out of the denominator", ()))
STRICT = register_tie_rule(TieRule("strict", "a tie counts against the focal system (credit 0)", (0.0,)))
RANDOM = register_tie_rule(TieRule("random", "a tie goes to a seeded fair coin", (0.0, 1.0), draw=_coin))


def resolve_tie_rule(rule: str | TieRule) -> TieRule:
    """The rule object of a name (an unknown name is an InputError listing the known ones); a
    rule object is returned as it is. Called once per run, where the settings are given."""
    if isinstance(rule, TieRule):
        return rule
    if not isinstance(rule, str):
        raise InputError(
            InputProblem(
                "options",
                f"a tie rule is a name, got {type(rule).__name__}",
                f"use one of: {', '.join(TIE_RULES.names())}",
            )
        )
    return TIE_RULES.get(rule)


def rule_words(rule: str) -> str:
    """What a rule does, in words, for reports: its registered summary; a name no rule is
    registered under (a result written with a rule this installation lacks) reads as its name."""
    return TIE_RULES.get(rule).summary if rule in TIE_RULES else f"ties are credited by the {rule} rule"


def vote_outcomes(y: np.ndarray) -> np.ndarray:
    """Outcomes of human votes for the focal system: 1 ``"win"``, 0 ``"loss"``, NaN (a tie) ``"tie"``."""
    import numpy as np

    y = np.asarray(y, float)
    return np.where(np.isnan(y), "tie", np.where(y == 1.0, "win", "loss")).astype(object)


def credit_votes(y: np.ndarray, rule: TieRule, rng: np.random.Generator) -> np.ndarray:
    """Credits of human votes (1 focal, 0 other, NaN tie) under ``rule``: the same rule object
    the judge's outputs are credited by, so both sides are rates of the same kind (NaN: a tie
    the rule leaves out of the denominator)."""
    return credit_ties(vote_outcomes(y), rule, rng)


def credit_ties(outcome: np.ndarray, rule: TieRule, rng: np.random.Generator) -> np.ndarray:
    """Credits for the focal system from outcomes ``"win"``, ``"loss"``, ``"tie"``, ``"invalid"``.

    Wins credit 1, losses 0, invalid outputs NaN (excluded and counted by the caller), and
    ties whatever ``rule`` says. Ties are credited in the order given, so a seeded
    ``random`` rule is reproducible for the same input order.
    """
    import numpy as np

    outcome = np.asarray(outcome, dtype=object)
    credit = np.full(outcome.shape, np.nan)
    credit[outcome == "win"] = 1.0
    credit[outcome == "loss"] = 0.0
    ties = outcome == "tie"
    credit[ties] = rule.credit(int(ties.sum()), rng)
    return credit
