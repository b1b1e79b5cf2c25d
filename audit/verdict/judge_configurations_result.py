"""The judge-configurations section's typed result (a leaf: no statistics and no verdict code
are imported, so the result model can rebuild it without depending on the orchestration)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from judge_transfer_audit.model.estimate import Estimate
from judge_transfer_audit.statistics.judge.panel import DawidSkene, EffectiveJudges

CLOSENESS = "Cohen's kappa against the reader majority over every unit (ties: smaller mean distance to the human band)"
STATUSES = ("PASS", "FAIL", "INCONCLUSIVE", "INSUFFICIENT", "ERROR")
_CATEGORY = {1.0: "focal", 0.0: "other", 0.5: "tie"}


@dataclass(frozen=True)
class ConfigurationRow:
    """One configuration: agreement with the humans and transfer decisions (``rank`` 1 = closest).

    ``decisions``: status -> number of cells (every status of ``STATUSES``, zeros included;
    empty when no cells were decided); ``n_cells`` their total; ``mean_abs_distance`` the
    mean |distance from its rate to the human band| over its assessed (PASS / FAIL /
    INCONCLUSIVE) cells, NaN without any.
    """

    judge: str
    rank: int
    kappa_majority: Estimate
    alpha_difference: Estimate
    raw_difference: Estimate
    n_units_scored: int
    n_cells: int
    mean_abs_distance: float
    decisions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeConfigurations:
    """Configurations ranked by closeness to the humans (see :func:`rank_judge_configurations`).

    ``selected`` is the closest configuration, ``primary`` the one the audit used (equal when
    ``--judge auto`` picked it: ``auto``), ``closeness`` the ranking criterion.
    ``dawid_skene`` / ``dawid_skene_kappa`` (its latent labels against the reader majority) and
    ``effective`` are None / NaN for panels of fewer than three configurations.
    """

    rows: tuple[ConfigurationRow, ...]
    selected: str
    primary: str
    auto: bool
    selected_on_same_data: bool
    closeness: str
    dawid_skene: DawidSkene | None
    dawid_skene_kappa: Estimate
    effective: EffectiveJudges | None
    n_boot: int
    seed: int | None
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        out = []
        for r in self.rows:
            row = dict(judge=r.judge, rank=r.rank)
            for name in ("kappa_majority", "alpha_difference", "raw_difference"):
                e = getattr(r, name)
                row.update({name: e.estimate, f"{name}_ci_low": e.ci_low, f"{name}_ci_high": e.ci_high})
            row.update(n_units_scored=r.n_units_scored, n_cells=r.n_cells)
            row.update({status: r.decisions.get(status, 0) for status in STATUSES})
            row.update(mean_abs_distance=r.mean_abs_distance)
            out.append(row)
        return pd.DataFrame(out)

    def __str__(self) -> str:
        how = " (picked by --judge auto, on the same data)" if self.auto else ""
        lines = [
            f"Judge configurations, closest to the humans first ({self.closeness}); selected: {self.selected}{how}"
        ]
        for r in self.rows:
            cells = ("; cells: " + ", ".join(f"{r.decisions.get(k, 0)} {k}" for k in STATUSES)) if r.n_cells else ""
            lines.append(
                f"  {r.rank}. {r.judge}: kappa {r.kappa_majority}, alpha difference {r.alpha_difference}{cells}"
            )
        if self.effective is not None:
            lines.append(f"  {self.effective}")
        if self.dawid_skene is not None:
            lines.append(f"  Dawid-Skene latent labels: kappa vs reader majority {self.dawid_skene_kappa}")
        return "\n".join(lines)
