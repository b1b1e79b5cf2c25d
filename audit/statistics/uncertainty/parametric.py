"""Parametric bootstrap of one cell's crossed GLMM (what ``lme4::bootMer`` does).

Fit ``logit P(y=1) = b0 + u_pair + v_reader`` to the cell, then ``n_sim`` times: draw new
pair and reader effects from the fitted normal distributions (``use.u = FALSE`` in bootMer
terms), draw every decisive vote of the original design from its Bernoulli probability,
refit, and keep ``b0*``, the SDs and ``expit(b0*)``. The percentile interval of
``expit(b0*)`` is an alternative to the Wald interval that does not lean on the normality of
``b0`` -- which matters with seven readers. It costs one GLMM fit per simulation, so it is
optional and reports progress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from scipy.special import expit

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.statistics.uncertainty._cells import cell_tables
from judge_transfer_audit.statistics.uncertainty.glmm_cells import fit_vote_arrays


@dataclass(frozen=True)
class ParametricBootstrapResult:
    """GLMM parametric bootstrap of one cell.

    Attributes
    ----------
    estimate : float
        expit(b0) of the fit to the data (rate for a typical pair and reader).
    b0, se, sd_pair, sd_reader : float
        The fit to the data (logit scale); ``se`` is its Wald standard error.
    ci_low, ci_high : float
        Percentile interval of ``expit(b0*)`` over the usable simulations.
    se_boot : float
        SD of the finite ``b0*`` (compare with ``se``).
    level : float
    n_sim : int
        Simulations requested; ``n_failed`` fits raised or did not converge (left out),
        ``n_singular`` and ``n_separation`` are counted among the usable ones.
    seed : int or None
    replicates : DataFrame
        One row per simulation: ``sim``, ``b0``, ``estimate``, ``sd_pair``, ``sd_reader``,
        ``converged``, ``singular``, ``separation``, ``error``.
    notes : tuple of str
    """

    estimate: float
    b0: float
    se: float
    sd_pair: float
    sd_reader: float
    ci_low: float
    ci_high: float
    se_boot: float
    level: float
    n_sim: int
    n_failed: int
    n_singular: int
    n_separation: int
    seed: int | None
    replicates: pd.DataFrame
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return self.replicates.copy()

    def __str__(self) -> str:
        return (
            f"GLMM parametric bootstrap ({self.n_sim} simulations, seed {self.seed}): estimate "
            f"{self.estimate:.3f}, {self.level:.0%} percentile interval [{self.ci_low:.3f}, {self.ci_high:.3f}]; "
            f"SE(b0) Wald {self.se:.3f} vs bootstrap {self.se_boot:.3f}; {self.n_failed} failed, "
            f"{self.n_singular} singular refits"
        )


def parametric_bootstrap(
    votes_cell: pd.DataFrame,
    *,
    n_sim: int = 200,
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ParametricBootstrapResult:
    """Simulate from the fitted crossed GLMM of one cell and refit ``n_sim`` times.

    Parameters
    ----------
    votes_cell : DataFrame
        The votes of ONE cell (``pair_id``, ``reader_id``, ``y``; ties excluded).
    n_sim : int
        Number of simulated data sets (each costs one GLMM fit, ~15 ms for 140 votes).
    level : float
        Confidence level of the percentile interval.
    rng : int, Generator or None
        Seed; recorded.
    progress : callable, optional
        Called as ``progress(done, n_sim)`` after each refit.

    Returns
    -------
    ParametricBootstrapResult

    Notes
    -----
    Simulation follows ``lme4::simulate.merMod`` with ``use.u = FALSE`` (new random effects
    each time), as ``bootMer``'s default. Refits are warm-started from the data fit. A
    singular data fit (an SD of zero) simulates no variation for that factor, as bootMer does.
    """
    if isinstance(n_sim, bool) or not isinstance(n_sim, (int, np.integer)) or n_sim < 2:
        raise InputError(
            InputProblem("parametric bootstrap", f"n_sim must be an integer >= 2, got {n_sim!r}", "e.g. n_sim=200")
        )
    cell_cols = [c for c in ("matchup", "criterion") if c in votes_cell.columns]
    if cell_cols and len(votes_cell.drop_duplicates(cell_cols)) > 1:
        raise InputError(
            InputProblem(
                "parametric bootstrap",
                "the votes span several cells",
                "pass one cell, e.g. votes[(votes.matchup == m) & (votes.criterion == c)]",
            )
        )
    tables = cell_tables(votes_cell.assign(_cell="cell"), ("_cell",))
    t = tables[0]
    y, p, r = t.vote_arrays()
    fit, res = fit_vote_arrays(y, p, r)
    if res is None or not np.isfinite(fit["b0"]):
        raise InputError(
            InputProblem(
                "parametric bootstrap",
                f"the GLMM of this cell cannot be simulated from "
                f"({fit['error'] or 'estimate on the boundary (separation)'})",
                "use the cluster bootstrap for this cell",
            )
        )
    generator, seed = resolve_rng(rng)
    pair_idx, reader_idx = p, r  # vote_arrays gives each vote's pair and reader index
    sd_p = fit["sd_pair"] if np.isfinite(fit["sd_pair"]) else 0.0
    sd_r = fit["sd_reader"] if np.isfinite(fit["sd_reader"]) else 0.0
    rows = []
    for k in range(int(n_sim)):
        u = generator.normal(0.0, sd_p, len(t.pairs)) if sd_p > 0 else np.zeros(len(t.pairs))
        v = generator.normal(0.0, sd_r, len(t.readers)) if sd_r > 0 else np.zeros(len(t.readers))
        prob = expit(fit["b0"] + u[pair_idx] + v[reader_idx])
        y_star = (generator.random(prob.size) < prob).astype(float)
        row, _ = fit_vote_arrays(y_star, p, r, start=res)
        rows.append(
            {
                "sim": k,
                "b0": row["b0"],
                "estimate": row["estimate"],
                "sd_pair": row["sd_pair"],
                "sd_reader": row["sd_reader"],
                "converged": row["converged"],
                "singular": row["singular"],
                "separation": row["separation"],
                "error": row["error"],
            }
        )
        if progress is not None:
            progress(k + 1, int(n_sim))
    reps = pd.DataFrame(rows)
    usable = reps[(reps["error"] == "") & reps["converged"]]
    est = usable["estimate"].to_numpy(float)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(est, [alpha, 1 - alpha]) if est.size else (np.nan, np.nan)
    b = usable["b0"].to_numpy(float)
    b = b[np.isfinite(b)]
    return ParametricBootstrapResult(
        estimate=float(fit["estimate"]),
        b0=float(fit["b0"]),
        se=float(fit["se"]),
        sd_pair=float(sd_p),
        sd_reader=float(sd_r),
        ci_low=float(lo),
        ci_high=float(hi),
        se_boot=float(b.std(ddof=1)) if b.size > 1 else float("nan"),
        level=float(level),
        n_sim=int(n_sim),
        n_failed=int(len(reps) - len(usable)),
        n_singular=int(usable["singular"].sum()),
        n_separation=int(usable["separation"].sum()),
        seed=seed,
        replicates=reps,
        notes=(
            "simulated with new random effects each time (bootMer use.u = FALSE)",
            "percentile interval of expit(b0*): the conditional rate of a typical pair and reader",
        ),
    )
