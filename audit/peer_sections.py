"""The judge-against-peers sections of an audit: judge agreement, judge configurations,
leaderboard (issue 17). Each is a :class:`~audit.result.Section`, computed, SKIPPED or
ERROR with a reason, like :mod:`audit.sections`; kept apart so that module stays small.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.checks import Check, Status, apply_severity, breach_status
from audit.section_result import Section, Skipped
from audit.sections._guard import guarded as _guarded
from audit.sections._guard import int_seed as _int_seed

AGREEMENT_N_BOOT = 500  #: the intervals use the replicates' variance only (~3% error on a standard error)


def _n_boot(spec) -> int:
    return spec.n_boot if spec.n_boot is not None else spec.policy.uncertainty.n_boot


def judge_agreement_section(
    data, spec, choices: pd.DataFrame, primary: str | None, seed: np.random.SeedSequence
) -> Section:
    """Kappa and judge-minus-human alpha of the primary judge, per scope, with intervals."""
    if primary is None or choices is None or choices.empty:
        return Skipped("no judge verdict matches a human criterion")
    from audit.judge_agreement import judge_agreement

    n_boot = min(_n_boot(spec), AGREEMENT_N_BOOT) if spec.uncertainty else 0
    return _guarded(
        lambda: judge_agreement(
            data.votes, choices, judge=primary, n_boot=n_boot, level=spec.policy.transfer.level, rng=_int_seed(seed)
        ),
        "judge agreement",
    )


AUTO = "auto"  #: ``--judge auto``: the configuration closest to the humans
CONFIGURATIONS_N_BOOT = 200  #: per configuration, pooled scope only


def auto_judge(data, choices_by_judge: dict[str, pd.DataFrame]) -> str | None:
    """``--judge auto``: the configuration with the largest kappa against the reader majority."""
    from audit.judge_configurations import closest_configuration

    fallback = "ensemble" if "ensemble" in data.judges else (data.judges[0] if data.judges else None)
    return closest_configuration(data.votes, choices_by_judge) or fallback


def judge_configurations_section(
    data,
    spec,
    choices_by_judge: dict[str, pd.DataFrame],
    cells,
    primary: str | None,
    auto: bool,
    seed: np.random.SeedSequence,
    verdict_seed: int = 0,
) -> Section:
    """Every configuration's agreement and cell decisions, the closest named; panels of 3+."""
    if not any(c is not None and len(c) for c in choices_by_judge.values()):
        return Skipped("no judge verdict matches a human criterion")
    from audit.judge_configurations import rank_judge_configurations

    n_boot = min(_n_boot(spec), CONFIGURATIONS_N_BOOT) if spec.uncertainty else 0
    return _guarded(
        lambda: rank_judge_configurations(
            data.votes,
            choices_by_judge,
            cells=cells,
            primary=primary or "",
            auto=auto,
            n_boot=n_boot,
            level=spec.policy.transfer.level,
            rng=_int_seed(seed),
            tie_rule=spec.tie_rule,
            policy=spec.policy.transfer,
            verdict_seed=verdict_seed,
        ),
        "judge configurations",
    )


LEADERBOARD_N_BOOT = 100  #: refits per replicate make this bootstrap ~0.1-0.5 s a replicate


def leaderboard_section(
    data, spec, choices: pd.DataFrame, primary: str | None, seed: np.random.SeedSequence
) -> Section:
    """Bradley-Terry leaderboards of the humans and the primary judge when 3+ systems."""
    systems = {str(x) for col in ("focal", "other") for x in data.pairs[col].unique().tolist()}
    if len(systems) < 3:
        return Skipped(f"{len(systems)} systems: a leaderboard needs three or more")
    from audit.leaderboard import bradley_terry_leaderboard

    n_boot = min(_n_boot(spec), LEADERBOARD_N_BOOT) if spec.uncertainty else 0
    return _guarded(
        lambda: bradley_terry_leaderboard(
            data.votes,
            choices if primary is not None and len(choices) else None,
            pairs=data.pairs,
            judge=primary or "",
            level=spec.policy.transfer.level,
            n_boot=n_boot,
            rng=_int_seed(seed),
        ),
        "leaderboard",
    )


BUDGET_POWER = 0.8  #: the power of the budget stored in result.json (`audit budget --power` recomputes)


def label_budget_section(cells, spec) -> Section:
    """The label budget of every cell (audit/budget.py), from the cells' decisions and the policy."""
    if not cells:
        return Skipped("no cells")
    from audit.budget import budget_of_cells

    transfer = spec.policy.transfer
    return _guarded(
        lambda: budget_of_cells(
            cells, alpha=transfer.alpha, adjust=transfer.adjust, margin=transfer.margin, power=BUDGET_POWER
        ),
        "label budget",
    )


def judge_position_section(data, spec, seed: np.random.SeedSequence) -> Section:
    """First-shown rate and swap consistency when the judge rows carry ``shown_first``."""
    verdicts = data.judge_verdicts
    if verdicts is None:
        return Skipped("the judge gives scores, not pairwise verdicts: no order shown")
    if "shown_first" not in verdicts.columns or not (verdicts["shown_first"] != "").any():
        return Skipped("the judge file has no shown_first column (the order the judge saw)")
    from audit.judge_position import judge_position_bias

    return _guarded(
        lambda: judge_position_bias(
            verdicts, level=spec.policy.transfer.level, n_boot=_n_boot(spec), rng=_int_seed(seed)
        ),
        "judge position bias",
    )


def position_checks(position: Section, policy, primary: str | None) -> list[Check]:
    """``judge.position_bias``: the audited configuration's first-shown rate interval excludes 0.5
    (the policy's ``[severity]`` applied by :func:`audit.checks.apply_severity`)."""
    return apply_severity(_position_checks(position, primary), policy.severity)


def _position_checks(position: Section, primary: str | None) -> list[Check]:
    if position.status is Status.ERROR:
        return [Check("judge.position_bias", Status.ERROR, reason=position.reason)]
    if position.payload is None or not primary:
        return []
    try:
        row = position.payload.row(primary)
    except KeyError:
        return [Check("judge.position_bias", Status.SKIPPED, reason=f"no verdict of {primary} has a known order")]
    e = row.first_rate
    if e.estimate != e.estimate:
        return [Check("judge.position_bias", Status.SKIPPED, reason="no decisive verdict with a known order")]
    biased = not (e.ci_low <= 0.5 <= e.ci_high)
    status = breach_status("judge.position_bias") if biased else Status.PASS
    swap = (
        f"; swap consistency {row.swap_consistency} over {row.n_swapped_units} pairs x criteria seen in both orders"
        if row.n_swapped_units
        else ""
    )
    return [
        Check(
            "judge.position_bias",
            status,
            e.estimate,
            0.5,
            f"{primary} chose the output shown first in {e.estimate:.1%} [{e.ci_low:.1%}, {e.ci_high:.1%}] of "
            f"{row.n_decisive} decisive verdicts (exact interval; 50% = no position bias){swap}",
            scope=primary,
        )
    ]
