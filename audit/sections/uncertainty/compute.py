"""The uncertainty section: cluster bootstraps, significance tallies, leave-one-reader-out
(:mod:`judge_transfer_audit.statistics.uncertainty`) (its check: checks.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.section_result import Section
from judge_transfer_audit.sections._guard import guarded, int_seed, n_boot_of, task_runner

NAME = "uncertainty"


def cells_glmm_frame(cells) -> pd.DataFrame:
    """The pipeline's GLMM fits in the shape :func:`significance_tally` reads."""
    from judge_transfer_audit.statistics.distributions import norm

    rows = []
    for c in cells:
        g = c.human.glmm
        p = 2 * norm.sf(abs(g.b0 / g.se)) if g.se and not math.isnan(g.se) and g.se > 0 else float("nan")
        rows.append(
            {
                "matchup": c.matchup,
                "criterion": c.criterion,
                "cell": f"{c.matchup}/{c.criterion}",
                "estimate": g.estimate,
                "ci_low": g.ci_low,
                "ci_high": g.ci_high,
                "b0": g.b0,
                "se": g.se,
                "p_value": p,
                "sd_pair": g.sd_pair,
                "sd_reader": g.sd_reader,
                "converged": g.converged,
                "singular": g.singular,
                "separation": g.separation,
                "error": g.reason if g.status is Status.ERROR else "",
            }
        )
    return pd.DataFrame(rows)


def full_glmm_fits(cells) -> dict[tuple[str, str], tuple[float, float, float]]:
    """The pipeline's per-cell GLMM optimum ``(b0, sd_pair, sd_reader)``, where finite: the
    leave-one-reader-out analysis starts from it instead of refitting every cell."""
    fits = {}
    for c in cells:
        g = c.human.glmm
        values = (g.b0, g.sd_pair, g.sd_reader)
        if g.status is not Status.ERROR and all(v is not None and math.isfinite(v) for v in values):
            fits[(c.matchup, c.criterion)] = tuple(float(v) for v in values)
    return fits


def compute(
    data, spec, *, primary_credits: pd.DataFrame, judge_credits: pd.DataFrame, cells, seed: np.random.SeedSequence
) -> Section:
    """``Section[UncertaintySection]``: the primary judge's ``primary_credits`` are bootstrapped with the
    votes; ``judge_credits`` (every configuration) give the configurations' rates."""
    from judge_transfer_audit.statistics.uncertainty import (
        cluster_bootstrap,
        judge_configuration_rates,
        leave_one_reader_out,
        significance_tally,
    )
    from judge_transfer_audit.statistics.uncertainty.section import UncertaintySection

    n_boot = n_boot_of(spec)

    with task_runner(spec) as runner:

        def run():
            boot = cluster_bootstrap(
                data.votes,
                n_boot=n_boot,
                level=spec.policy.transfer.level,
                judge_credits=primary_credits if len(primary_credits) else None,
                rng=int_seed(seed),
                runner=runner,
            )
            glmm = cells_glmm_frame(cells)
            tallies = [significance_tally(boot, glmm, adjust=a) for a in ("none", "holm", "bh")]
            loro = leave_one_reader_out(
                data.votes, full_fits=full_glmm_fits(cells), exact_budget=spec.loro_exact_budget, runner=runner
            )
            return UncertaintySection(
                bootstrap=boot,
                loro=loro,
                tally=tallies[0],
                tally_holm=tallies[1],
                tally_bh=tallies[2],
                judge_configurations=judge_configuration_rates(judge_credits),
            )

        return guarded(run, "uncertainty")
