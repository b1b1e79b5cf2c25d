"""The pairs-vs-readers trade-off of the label budget against simulated studies.

A pilot design (``n0`` pairs, ``k0`` readers per pair, ``L`` votes per reader) is drawn from the
crossed GLMM the audit fits: ``logit p = b0 + u_pair + r_reader`` for the readers, and a judge
whose credit on a pair is Bernoulli(``expit(b0 + shift + u_pair)``) (it follows the pair, not the
readers). The distance is ``D = J - V`` (judge rate minus the readers' pair-weighted vote share).
The budget (:func:`judge_transfer_audit.statistics.budget.compute.reader_designs`) is given the true distance, the
pilot's true standard error (the SD of ``D`` over ``n_pilot`` simulated pilots: no formula) and the true
GLMM parameters, and says how many pairs reach FAIL (one-sided at ``fail_level``) with the
stated power at ``k`` readers per pair. Studies of that size are then simulated and each decided
on its own estimate with its own two-way (pairs + readers - votes, Cameron-Gelbach-Miller)
standard error. :func:`tradeoff_table` prints stated against simulated power with its binomial SE.

``python -m judge_transfer_audit.statistics.budget.simulation`` prints the table of docs/leaderboard.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse
from scipy.special import expit

from judge_transfer_audit.statistics.distributions import norm


@dataclass(frozen=True)
class Design:
    """One simulated design: ``n`` pairs of ``k`` readers each, readers reading ``workload`` votes."""

    n: int
    k: int
    workload: int


@dataclass(frozen=True)
class Model:
    b0: float = 0.2
    sd_pair: float = 1.0
    sd_reader: float = 0.6
    judge_shift: float = 1.2  #: the judge's logit shift over the readers (its distance from the band)


def _readers(design: Design) -> tuple[np.ndarray, int]:
    """Balanced assignment: pair i gets readers (i k + t) mod R, t < k (k distinct readers)."""
    n_readers = max(math.ceil(design.n * design.k / design.workload), design.k)
    idx = (np.arange(design.n)[:, None] * design.k + np.arange(design.k)[None, :]) % n_readers
    return idx, n_readers


def simulate(rng: np.random.Generator, model: Model, design: Design, n_studies: int, batch: int = 200):
    """Per study: the distance D and its two-way standard error."""
    idx, n_readers = _readers(design)
    n, k = design.n, design.k
    incidence = sparse.csr_matrix(
        (np.ones(n * k), (np.arange(n * k), idx.ravel())), shape=(n * k, n_readers)
    )  # vote -> reader
    estimates, ses = [], []
    for start in range(0, n_studies, batch):
        s = min(batch, n_studies - start)
        u = rng.standard_normal((s, n)) * model.sd_pair
        r = rng.standard_normal((s, n_readers)) * model.sd_reader
        p = expit(model.b0 + u[:, :, None] + r[:, idx])
        votes = (rng.random(p.shape) < p).astype(float)
        judge = (rng.random((s, n)) < expit(model.b0 + model.judge_shift + u)).astype(float)
        d_pair = judge - votes.mean(axis=2)
        dist = d_pair.mean(axis=1)
        # D = sum over votes of a_v = (judge_i - y_v) / (n k); two-way cluster variance of the sum
        e = ((judge[:, :, None] - votes) - dist[:, None, None]).reshape(s, n * k) / (n * k)
        v_pairs = (e.reshape(s, n, k).sum(axis=2) ** 2).sum(axis=1)
        v_readers = (np.asarray(incidence.T @ e.T).T ** 2).sum(axis=1)
        v_votes = (e**2).sum(axis=1)
        estimates.append(dist)
        ses.append(np.sqrt(np.maximum(v_pairs + v_readers - v_votes, v_pairs)))
    return np.concatenate(estimates), np.concatenate(ses)


def true_distance(model: Model) -> float:
    """E[judge credit] - E[vote], by Gauss-Hermite quadrature."""
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    judge = w @ expit(model.b0 + model.judge_shift + model.sd_pair * x)
    votes = w @ expit(model.b0 + model.sd_pair * x[:, None] + model.sd_reader * x[None, :]) @ w
    return float(judge - votes)


def _pilot_cell(template, model: Model, pilot: Design, d: float, se: float, margin: float, alpha: float):
    """A cell recording the pilot: distance ``d`` with standard error ``se`` at both band ends,
    the true GLMM as its fit, ``n0``/``k0``/readers of the pilot."""
    from judge_transfer_audit.model.cells import Interval
    from judge_transfer_audit.model.checks import Status

    z = norm.ppf(1 - alpha)
    diff = Interval(d, d - z * se, d + z * se, 1 - 2 * alpha)
    _, n_readers = _readers(pilot)
    p_out = float(1 - norm.cdf((abs(d) - margin) / se)) if abs(d) > margin else 0.5
    t = replace(
        template.transfer,
        status=Status.INCONCLUSIVE,
        margin=margin,
        difference_vote_share=diff,
        difference_majority=diff,
        difference=Interval(max(d, 0.0), d - z * se, d + z * se, 1 - 2 * alpha),
        p_outside=p_out,
        n_pairs=pilot.n,
        n_readers=n_readers,
        readers_per_pair=float(pilot.k),
        interval_level=1 - 2 * alpha,
    )
    glmm = replace(
        template.human.glmm,
        b0=model.b0,
        sd_pair=model.sd_pair,
        sd_reader=model.sd_reader,
        converged=True,
        degenerate=False,
    )
    return replace(template, transfer=t, human=replace(template.human, glmm=glmm))


@dataclass(frozen=True)
class TradeoffRow:
    readers_per_pair: int
    pairs: int
    stated: float
    simulated: float
    binomial_se: float
    n_studies: int
    predicted_se: float  #: the budget's standard error of D at this design
    simulated_sd: float  #: the SD of D over the simulated studies
    median_se: float  #: the median of the studies' own two-way standard errors


def tradeoff_rows(
    template,
    *,
    model: Model = Model(),
    pilot: Design = Design(60, 4, 12),
    readers: tuple[int, ...] = (2, 10),
    power: float = 0.8,
    margin: float = 0.10,
    alpha: float = 0.05,
    fail_level: float = 0.05 / 36,
    n_pilot: int = 4000,
    n_studies: int = 1000,
    seed: int = 20261201,
) -> tuple[float, float, list[TradeoffRow]]:
    """Stated against simulated FAIL power at the budget's pairs for each readers per pair."""
    from judge_transfer_audit.statistics.budget.compute import _cell

    rng = np.random.default_rng(seed)
    d = true_distance(model)
    pilot_estimates, _ = simulate(rng, model, pilot, n_pilot)
    se0 = float(pilot_estimates.std(ddof=1))
    budget = _cell(_pilot_cell(template, model, pilot, d, se0, margin, alpha), power, alpha, fail_level)
    if budget.target != "FAIL":
        raise ValueError(f"the model's judge is not beyond the margin (distance {d:.3f}, target {budget.target!r})")
    by_k = {x.readers_per_pair: x for x in budget.designs}
    share, z_fail = budget.vote_variance_share, norm.ppf(1 - fail_level)
    rows = []
    for k in readers:
        if k not in by_k:
            raise ValueError(f"{k} readers per pair is not one of the budget's designs {sorted(by_k)}")
        pairs = by_k[k].pairs
        inflation = (1 - share) + share * pilot.k / k
        stated = float(norm.cdf((d - margin) / (se0 * math.sqrt(pilot.n * inflation / pairs)) - z_fail))
        est, se = simulate(rng, model, Design(pairs, k, pilot.workload), n_studies)
        decided = float(((est - margin) / se > z_fail).mean())
        rows.append(
            TradeoffRow(
                k,
                pairs,
                stated,
                decided,
                math.sqrt(stated * (1 - stated) / n_studies),
                n_studies,
                se0 * math.sqrt(pilot.n * inflation / pairs),
                float(est.std(ddof=1)),
                float(np.median(se)),
            )
        )
    return d, share, rows


def template_cell():
    """A bare cell that :func:`_pilot_cell` fills with the pilot's figures."""
    from judge_transfer_audit.model.cells import Cell, GlmmSummary, HumanSide, Interval, Transfer
    from judge_transfer_audit.model.checks import Status

    nan = math.nan
    glmm = GlmmSummary(nan, nan, nan, nan, nan, nan, nan, False, True, False, nan)
    human = HumanSide(nan, 0, 0, 0, nan, glmm, vote_share=Interval(0.5, nan, nan))
    return Cell("focal vs other", "overall", "focal", "other", 0, 0, 0, human, None, Transfer(Status.INCONCLUSIVE, ""))


def tradeoff_table(template=None, **kw) -> str:
    d, share, rows = tradeoff_rows(template if template is not None else template_cell(), **kw)
    lines = [
        f"true distance {d:.3f}; votes' share of the pilot variance {share:.2f}",
        f"{'readers/pair':>12} {'pairs':>6} {'stated':>7} {'simulated':>9} {'binomial SE':>11} "
        f"{'budget SE':>9} {'SD of D':>8} {'median 2-way SE':>15}",
    ]
    for r in rows:
        lines.append(
            f"{r.readers_per_pair:>12} {r.pairs:>6} {r.stated:>7.3f} {r.simulated:>9.3f} {r.binomial_se:>11.3f} "
            f"{r.predicted_se:>9.4f} {r.simulated_sd:>8.4f} {r.median_se:>15.4f}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import time

    start = time.perf_counter()
    print("pilot A: 60 pairs x 4 readers, 12 votes per reader; b0 0.2, sd_pair 1.0, sd_reader 0.6, judge +1.2 logit")
    print(tradeoff_table(n_studies=4000))
    print("pilot B: 100 pairs x 4 readers, 20 votes per reader; b0 0.2, sd_pair 1.0, sd_reader 0.3, judge +0.9 logit")
    print(tradeoff_table(model=Model(judge_shift=0.9, sd_reader=0.3), pilot=Design(100, 4, 20), n_studies=4000))
    print(f"({time.perf_counter() - start:.1f} s)")
