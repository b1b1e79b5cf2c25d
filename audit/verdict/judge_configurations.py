"""Every judge configuration side by side, the one closest to the humans, and panel summaries.

:func:`rank_judge_configurations` takes each configuration's per-pair verdicts keyed by the
human criterion (``pair_id, criterion, y_judge``) and, optionally, the audit's cells, and
returns one row per configuration:

* agreement with the humans (:func:`judge_transfer_audit.statistics.judge.agreement.judge_agreement` pooled over every
  unit): Cohen's kappa against the reader majority, judge-human minus human-human alpha and
  raw agreement, with pairs x readers bootstrap intervals;
* its transfer decisions: every cell decided for this configuration by the audit's own rule
  (:func:`judge_transfer_audit.verdict.assess_transfers`: the same paired bootstrap, margin, Holm family
  over the configuration's cells and seeded streams keyed by the cell as the primary judge's
  decisions), counted per status (``decisions``), with its mean absolute distance to the
  human band over the assessed cells. The primary configuration's counts are its cells'
  (identical by construction: same inputs, same streams).

The configuration *closest to the humans* is the one with the largest kappa against the
reader majority (ties broken by the smaller mean gap). It is chosen on the same data it is
then audited on, which flatters it (``selected_on_same_data``); a held-out set is needed
for an unbiased figure.

For panels of three or more configurations: Dawid-Skene latent labels
(:func:`judge_transfer_audit.statistics.judge.panel.dawid_skene`, categories focal / other / tie) with their kappa
against the reader majority, and the effective number of independent judges
(:func:`judge_transfer_audit.statistics.judge.panel.effective_number_of_judges`) from the correlations of the
configurations' credits.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.model.estimate import Estimate
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, TieRule
from judge_transfer_audit.statistics.judge.agreement import judge_agreement
from judge_transfer_audit.statistics.judge.panel import dawid_skene, effective_number_of_judges
from judge_transfer_audit.verdict.judge_configurations_result import (  # noqa: E402  (the section's types, kept importable here)
    _CATEGORY,
    CLOSENESS,
    STATUSES,
    ConfigurationRow,
    JudgeConfigurations,
)


def _summary(transfers) -> tuple[dict[str, int], float]:
    """Decision counts per status and the mean |distance to the band| over the assessed cells."""
    transfers = list(transfers)
    if not transfers:
        return {}, math.nan
    counts = {k: sum(t.status.value == k for t in transfers) for k in STATUSES}
    dist = [
        abs(t.difference.estimate)
        for t in transfers
        if t.status.value in ("PASS", "FAIL", "INCONCLUSIVE")
        and t.difference is not None
        and np.isfinite(t.difference.estimate)
    ]
    return counts, (float(np.mean(dist)) if dist else math.nan)


def configuration_inputs(
    votes: pd.DataFrame, choices_by_judge: dict[str, pd.DataFrame], *, order=(), skip: str = ""
) -> dict:
    """Every configuration's cell inputs for the verdict (judge -> list of
    :class:`~judge_transfer_audit.verdict.assess.CellInput`, one per matchup x criterion of ``votes``, in the
    order of ``order``'s ``(matchup, criterion)`` keys when given), ``skip`` and configurations
    without verdicts left out. The human side of every cell is built once and shared."""
    from judge_transfer_audit.verdict.assess import cell_input

    if not any(judge != skip and choices is not None for judge, choices in choices_by_judge.items()):
        return {}  # no configuration to decide: the cells' human side is not built
    groups = [(key, part) for key, part in votes.groupby(["matchup", "criterion"], sort=False)]
    position = {key: i for i, key in enumerate(order)}
    if position:  # the cells' order (the decision does not depend on it; the record does)
        groups.sort(key=lambda g: position.get(g[0], len(position)))
    shared = [
        (str(criterion), cell_input(str(matchup), str(criterion), part, None), pd.unique(part["pair_id"].to_numpy()))
        for (matchup, criterion), part in groups
    ]
    inputs_by_judge = {}
    for judge, choices in choices_by_judge.items():
        if judge == skip or choices is None:
            continue
        # each criterion's pairs as a hashed index: a cell's pairs are looked up in it, not sorted against
        # it (np.isin sorts object arrays: a cell cost O(n log n) of its criterion's every verdict)
        by_criterion = (
            {
                c: (
                    g["pair_id"].to_numpy(),
                    pd.Index(g["pair_id"].to_numpy()),
                    pd.to_numeric(g["y_judge"], errors="coerce").to_numpy(float),
                )
                for c, g in choices.groupby("criterion", sort=False)
            }
            if len(choices)
            else {}
        )
        cell_inputs = []
        for criterion, human, pairs in shared:
            mine = by_criterion.get(criterion)
            jp = jc = None
            if mine is not None:
                keep = mine[1].isin(pairs)
                jp, jc = mine[0][keep], mine[2][keep]
            cell_inputs.append(human.with_judge(jp, jc))
        inputs_by_judge[judge] = cell_inputs
    return inputs_by_judge


def configuration_decisions(
    votes: pd.DataFrame,
    choices_by_judge: dict[str, pd.DataFrame],
    *,
    cells=None,
    primary: str = "",
    tie_rule: TieRule = EVEN_SPLIT,
    policy=None,
    seed: int = 0,
    decided: dict | None = None,
) -> dict[str, tuple[dict[str, int], float]]:
    """Every configuration's cell decisions: ``judge -> (counts per status, mean |distance|)``.

    Each configuration is audited as the primary judge is (:func:`judge_transfer_audit.verdict.assess_transfers`
    on the cells of ``votes`` (matchup x criterion), its credits from ``choices_by_judge``,
    ``policy`` the transfer policy, ``seed`` the verdict seed), its own multiplicity family.
    The primary configuration's decisions are read from ``cells`` when given (the same
    computation, already done). A cell where a configuration has no outputs is INSUFFICIENT
    for it, as for the primary judge. ``decided`` (judge -> its transfers, as
    :func:`judge_transfer_audit.verdict.batched.assess_transfers_with_configurations` returns them beside the
    primary verdict, on the same inputs) is summarised as it is, for the configurations it holds.
    """
    from judge_transfer_audit.model.policy import TransferPolicy
    from judge_transfer_audit.verdict.batched import decide_configurations

    policy = policy or TransferPolicy()
    out: dict[str, tuple[dict[str, int], float]] = {}
    if cells and primary:
        out[primary] = _summary(c.transfer for c in cells)
    for judge, transfers in (decided or {}).items():
        if judge not in out and choices_by_judge.get(judge) is not None:
            out[judge] = _summary(transfers)
    todo = {j: c for j, c in choices_by_judge.items() if j not in out}
    if not todo:
        return out
    order = [(c.matchup, c.criterion) for c in cells or ()]
    inputs_by_judge = configuration_inputs(votes, todo, order=order)
    # one bootstrap per cell for every configuration (the same draws: judge_transfer_audit.verdict.batched)
    for judge, (transfers, _) in decide_configurations(
        inputs_by_judge, tie_rule=tie_rule, policy=policy, seed=seed
    ).items():
        out[judge] = _summary(transfers)
    return out


def closest_configuration(votes: pd.DataFrame, choices_by_judge: dict[str, pd.DataFrame]) -> str | None:
    """The configuration with the largest kappa against the reader majority (estimates only)."""
    best, best_kappa = None, -math.inf
    for judge, choices in choices_by_judge.items():
        if choices is None or choices.empty:
            continue
        k = judge_agreement(votes, choices, n_boot=0, pooled_only=True).row().kappa_majority.estimate
        if np.isfinite(k) and k > best_kappa:
            best, best_kappa = judge, k
    return best


def rank_judge_configurations(
    votes: pd.DataFrame,
    choices_by_judge: dict[str, pd.DataFrame],
    *,
    cells=None,
    primary: str = "",
    auto: bool = False,
    n_boot: int = 200,
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    tie_rule: TieRule = EVEN_SPLIT,
    policy=None,
    verdict_seed: int = 0,
    decided: dict | None = None,
) -> JudgeConfigurations:
    """Rank the judge configurations by closeness to the humans; panel summaries for 3+.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes.
    choices_by_judge : dict
        Configuration -> its verdicts keyed by the human criterion (pair_id, criterion, y_judge).
    cells : sequence of judge_transfer_audit.results.result.Cell, optional
        The audit's cells (the primary configuration's decisions; their order).
    primary : str
        The configuration the audit used; ``auto``: it was picked as the closest.
    n_boot, level, rng
        Bootstrap of each configuration's agreement intervals; seeds for it and the
        Dawid-Skene starts (recorded).
    tie_rule, policy, verdict_seed
        The audit's tie rule, transfer policy and verdict seed, with which every
        configuration's cells are decided (:func:`configuration_decisions`).
    decided : dict, optional
        Configurations' transfers already decided beside the primary verdict (judge -> transfers;
        :func:`configuration_decisions`).

    Returns
    -------
    JudgeConfigurations
    """
    rng, seed = resolve_rng(rng)
    scored = []
    present = {j: c for j, c in choices_by_judge.items() if c is not None and not c.empty}
    decided = (
        configuration_decisions(
            votes,
            present,
            cells=cells,
            primary=primary,
            tie_rule=tie_rule,
            policy=policy,
            seed=verdict_seed,
            decided=decided,
        )
        if cells is not None
        else {}
    )
    for judge, choices in present.items():
        row = judge_agreement(votes, choices, judge=judge, n_boot=n_boot, level=level, rng=rng, pooled_only=True).row()
        counts, dist = decided.get(judge, ({}, math.nan))
        scored.append((judge, row, counts, dist))
    scored.sort(
        key=lambda t: (
            -(t[1].kappa_majority.estimate if np.isfinite(t[1].kappa_majority.estimate) else -math.inf),
            t[3] if np.isfinite(t[3]) else math.inf,
        )
    )
    rows = tuple(
        ConfigurationRow(
            judge=j,
            rank=i + 1,
            kappa_majority=r.kappa_majority,
            alpha_difference=r.alpha_difference,
            raw_difference=r.raw_difference,
            n_units_scored=r.n_units_scored,
            n_cells=sum(counts.values()),
            mean_abs_distance=dist,
            decisions=dict(counts),
        )
        for i, (j, r, counts, dist) in enumerate(scored)
    )
    selected = rows[0].judge if rows and np.isfinite(rows[0].kappa_majority.estimate) else ""
    notes = []
    ds, ds_kappa, effective = None, Estimate(math.nan), None
    if len(choices_by_judge) >= 3:
        long = pd.concat(
            [c.assign(judge=j) for j, c in choices_by_judge.items() if c is not None and len(c)], ignore_index=True
        )
        long["item"] = long["pair_id"].astype(str) + "\x1f" + long["criterion"].astype(str)
        long["label"] = long["y_judge"].map(_CATEGORY)
        ds = dawid_skene(long.dropna(subset=["label"]), rater="judge", rng=rng)
        latent = ds.labels["item"].str.split("\x1f", n=1, expand=True)
        inverse = {v: k for k, v in _CATEGORY.items()}
        ds_choices = pd.DataFrame(
            {"pair_id": latent[0], "criterion": latent[1], "y_judge": ds.labels["label"].map(inverse)}
        )
        ds_kappa = (
            judge_agreement(
                votes, ds_choices, judge="dawid-skene", n_boot=n_boot, level=level, rng=rng, pooled_only=True
            )
            .row()
            .kappa_majority
        )
        wide = long.pivot_table(index="item", columns="judge", values="y_judge", aggfunc="first")
        effective = effective_number_of_judges(wide)
        if effective.left_out:
            notes.append(f"constant configuration(s) left out of the effective number: {', '.join(effective.left_out)}")
    return JudgeConfigurations(
        rows=rows,
        selected=selected,
        primary=primary,
        auto=bool(auto),
        selected_on_same_data=bool(auto),
        closeness=CLOSENESS,
        dawid_skene=ds,
        dawid_skene_kappa=ds_kappa,
        effective=effective,
        n_boot=int(n_boot),
        seed=seed,
        notes=tuple(notes),
    )
