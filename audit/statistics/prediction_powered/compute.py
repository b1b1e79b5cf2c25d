"""What the readers would say: the humans' vote share, majority rate and Bradley-Terry
leaderboard by prediction-powered inference from the judge on every pair plus the votes on a
sample (:func:`corrected_estimates`; docs/prediction-powered.md).

* The judge's prediction of a pair is its verdict for the focal system: 1, 0, 0.5 for a tie
  and 0.5 for an invalid output (a prediction may be any fixed function of the pair; an invalid
  output predicts nothing, on the voted and the judge-only pairs alike).
* The humans' figure on a voted pair is its readers' mean credit under the run's tie rule.
* Vote share V: :func:`judge_transfer_audit.statistics.prediction_powered.estimators.ppi_mean` per matchup x criterion;
  per matchup pooled over criteria with pair x criterion units clustered by pair.
* Majority rate M: the decision's Beta model ``M = P(p > 1/2)`` at the mean V and the
  between-pair variance ``tau^2 = E[p^2] - V^2``; ``E[p^2]`` is the prediction-powered mean of
  ``h_i^2 - s_i^2 / k_i`` (unbiased for ``p_i^2``; pairs with two or more votes, predicted by
  the judge's verdict squared); its interval is a profile interval of M over pivots of V and of
  the pairs' between-pair variance, from the two means' pair-clustered covariance plus the
  readers' component (:mod:`judge_transfer_audit.statistics.prediction_powered.majority`).
* Leaderboard: PPI++ logistic regression (Bradley-Terry design, one row per pair, the readers'
  mean credit as the outcome; ties of the judge as 0.5); rank intervals from normal draws of the
  centred strengths.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.statistics.prediction_powered.estimators import MeanPPI, ppi_logistic, ppi_mean, tuned_lambda
from judge_transfer_audit.statistics.prediction_powered.majority import majority_rate_interval, satterthwaite_quantile
from judge_transfer_audit.statistics.prediction_powered.result import (
    ALL_CRITERIA,
    CorrectedLeaderboard,
    CorrectedRow,
    CorrectedStrength,
    PredictionPowered,
)

N_DRAWS = 4000  #: normal draws of the strengths for the rank intervals


def _predictions(choice: pd.DataFrame) -> pd.DataFrame:
    out = choice[["pair_id", "criterion", "y_judge"]].copy()
    out["f"] = out["y_judge"].astype(float).fillna(0.5)
    return out.drop(columns="y_judge").drop_duplicates(["pair_id", "criterion"])


def _z(level: float) -> float:
    from judge_transfer_audit.statistics.distributions import norm

    return float(norm.ppf(0.5 + level / 2.0))


def _row(matchup, criterion, estimand, est, lo, hi, lam, h, f, n, n_votes, N, ratio) -> CorrectedRow:
    worth = n_votes / ratio**2 if ratio and ratio > 0 and math.isfinite(ratio) else math.nan
    return CorrectedRow(
        matchup=str(matchup),
        criterion=str(criterion),
        estimand=estimand,
        estimate=float(est),
        ci_low=float(max(lo, 0.0)),
        ci_high=float(min(hi, 1.0)),
        lam=float(lam),
        human_estimate=float(h[0]),
        human_ci_low=float(max(h[1], 0.0)),
        human_ci_high=float(min(h[2], 1.0)),
        judge_estimate=float(f[0]),
        judge_ci_low=float(f[1]),
        judge_ci_high=float(f[2]),
        n_pairs_voted=int(n),
        n_votes=int(n_votes),
        n_pairs_judge_only=int(N),
        width_ratio=float(ratio),
        effective_votes=float(worth),
        judge_worth_votes=float(max(0.0, worth - n_votes)) if math.isfinite(worth) else math.nan,
    )


def _share_row(matchup, criterion, r: MeanPPI, n_votes: int, z: float) -> CorrectedRow:
    ratio = r.width_ratio
    row = _row(
        matchup,
        criterion,
        "vote_share",
        r.estimate,
        r.ci_low,
        r.ci_high,
        r.lam,
        (r.human_estimate, *r.human_ci),
        (r.judge_estimate, r.judge_estimate - z * r.judge_se, r.judge_estimate + z * r.judge_se),
        r.n_labelled,
        n_votes,
        r.n_unlabelled,
        ratio,
    )
    return dataclasses.replace(
        row, se=r.se, human_se=r.human_se, imputed_variance=r.imputed_variance, quantile=r.quantile
    )


def wilson_interval(estimate: float, mean: float, sd: float, n_units: float, z: float) -> tuple[float, float]:
    """Wilson's score interval for a rate at an effective number of units (Kish's
    ``mean (1 - mean) / sd^2``, at most ``n_units``; ``n_units`` when ``sd`` is 0 or the rate sits
    at 0 or 1).

    A rate's spread shrinks toward 0 and 1, so an interval that takes the spread at the estimate
    (a Wald or percentile interval) reaches too little toward 1/2 whenever the estimate lands
    further out than the truth; Wilson's interval takes the spread at each candidate value
    instead (the design-effect Wilson interval for proportions from clustered samples).
    """
    var = mean * (1.0 - mean)
    n_eff = var / sd**2 if sd > 0 and var > 0 else float(n_units)
    n_eff = max(min(n_eff, float(n_units)), 1e-12)
    z2n = z * z / n_eff
    centre = (estimate + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(estimate * (1.0 - estimate) / n_eff + z2n / (4.0 * n_eff))
    return max(centre - half, 0.0), min(centre + half, 1.0)


def majority_ppi(
    credit: np.ndarray,
    pair_of_vote: np.ndarray,
    reader_of_vote: np.ndarray | None,
    f: np.ndarray,
    fu: np.ndarray,
    share: MeanPPI,
    level: float,
) -> tuple[float, float, float, float, float, float, float, float, float] | None:
    """(M, low, high, lam of E[p^2], human-only M, its low, its high, the standard-error
    equivalent of each interval: its width over twice the normal quantile), or None when fewer
    than two voted pairs have two or more votes (M is not estimable, as in the decision).

    The interval is the profile interval of the Beta model's ``M`` over pivots of ``V`` and of
    ``tau^2`` (:func:`~judge_transfer_audit.statistics.prediction_powered.majority.majority_rate_interval`);
    Wilson's interval at the voted pairs when their covariance is degenerate (every pair's
    readers unanimous alike)."""
    from judge_transfer_audit.statistics.estimands import beta_upper_tail

    n = len(f)
    k = np.bincount(pair_of_vote, minlength=n).astype(float)
    h = np.bincount(pair_of_vote, weights=credit, minlength=n) / k
    ss = np.bincount(pair_of_vote, weights=(credit - h[pair_of_vote]) ** 2, minlength=n)
    multi = k >= 2
    if multi.sum() < 2:
        return None
    q = h[multi] ** 2 - ss[multi] / (k[multi] - 1.0) / k[multi]
    g, gu = f[multi] ** 2, fu**2
    n2, N = int(multi.sum()), len(fu)
    z = _z(level)
    within = float(np.mean(ss[multi] / (k[multi] - 1.0) / k[multi]))
    n_readers = len(np.unique(reader_of_vote)) if reader_of_vote is not None else 0

    def one(lam1: float, lam2: float) -> tuple[float, float, float, float]:
        m1 = share.estimate if lam1 == share.lam else lam1 * (fu.mean() if N else 0.0) + np.mean(h - lam1 * f)
        m2 = (lam2 * gu.mean() if N and lam2 else 0.0) + float(np.mean(q - lam2 * g))
        # joint covariance: labelled pairs (m1 over all, m2 over the multi-vote ones) + judge-only pairs
        r1 = (h - lam1 * f - np.mean(h - lam1 * f)) / n
        r2 = np.zeros(n)
        r2[multi] = (q - lam2 * g - np.mean(q - lam2 * g)) / n2
        c = np.array([[r1 @ r1, r1 @ r2], [r2 @ r1, r2 @ r2]])
        if N:
            u1 = lam1 * (fu - fu.mean()) / N
            u2 = lam2 * (gu - gu.mean()) / N
            c = c + np.array([[u1 @ u1, u1 @ u2], [u2 @ u1, u2 @ u2]])
        # the readers' leniency shifts every pair's share together: V by delta, and E[p^2] by
        # 2 V delta plus the change of tau^2 at the Beta model's concentration (tau^2 / (V (1 - V))
        # held): lenient readers push the shares toward 1, where they spread less
        d = 2.0 * m1
        if 0.0 < m1 < 1.0:
            d += max(m2 - m1 * m1, 0.0) * (1.0 - 2.0 * m1) / (m1 * (1.0 - m1))
        # T = tau^2 + within: its variance's pair part and the readers' part (T moves by d - 2 V
        # per unit of leniency), each on its own degrees of freedom
        var_t_pairs = c[1, 1] - 4.0 * m1 * c[0, 1] + 4.0 * m1 * m1 * c[0, 0]
        var_t_readers = share.reader_variance * (d - 2.0 * m1) ** 2
        q_t = satterthwaite_quantile((var_t_pairs, var_t_readers), (n2 - 1.0, n_readers - 1.0), level)
        c = c + share.reader_variance * np.array([[1.0, d], [d, d * d]])
        m = float(beta_upper_tail(np.array(m1), np.array(max(m2 - m1 * m1, 0.0))))
        ci = majority_rate_interval(
            (m1, m2), c, within, level=level, quantile_v=share.human_quantile, quantile_t=q_t, n_pairs=n2
        )
        lo, hi = ci if ci is not None else wilson_interval(m, m, 0.0, n, z)
        return m, min(lo, m), max(hi, m), (hi - lo) / (2.0 * z)

    lam2 = tuned_lambda(q, g, gu)
    m, lo, hi, se = one(share.lam, lam2)
    hm, hlo, hhi, hse = (m, lo, hi, se) if share.lam == 0.0 and lam2 == 0.0 else one(0.0, 0.0)
    return m, lo, hi, lam2, hm, hlo, hhi, se, hse


def human_majority_rate(
    credit: np.ndarray, pair_of_vote: np.ndarray, reader_of_vote: np.ndarray, level: float = 0.95
) -> tuple[float, float, float] | None:
    """The readers' majority rate from their votes alone, with its profile interval: ``(M, low, high)``.

    The human-only figure of :func:`majority_ppi` (no judge): the Beta model's ``M`` at the pairs' mean
    share and between-pair variance, its interval the profile interval over pivots of both with pairs
    and readers crossed. ``pair_of_vote`` and ``reader_of_vote``: codes ``0..n-1`` (every pair voted) and
    ``0..R-1``. None when fewer than two pairs have two or more votes (M is not estimable).
    """
    pair_of_vote = np.asarray(pair_of_vote, np.int64)
    n = int(pair_of_vote.max()) + 1 if pair_of_vote.size else 0
    if n < 2:
        return None
    none, nothing = np.zeros(n), np.zeros(0)
    share = ppi_mean(credit, pair_of_vote, none, nothing, reader_of_vote=reader_of_vote, lam=0.0, level=level)
    got = majority_ppi(np.asarray(credit, float), pair_of_vote, reader_of_vote, none, nothing, share, level)
    return None if got is None else (float(got[4]), float(got[5]), float(got[6]))


def _judge_rate(f_all: np.ndarray, z: float) -> tuple[float, float, float]:
    est = float(f_all.mean())
    se = float(np.std(f_all) / math.sqrt(len(f_all)))
    return est, est - z * se, est + z * se


def corrected_estimates(
    votes: pd.DataFrame,
    pairs: pd.DataFrame,
    judge_voted: pd.DataFrame,
    judge_only: pd.DataFrame,
    judge_only_pairs: pd.DataFrame,
    *,
    credit: np.ndarray,
    judge: str = "",
    sampling: str = "random",
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
) -> PredictionPowered:
    """The prediction-powered section (see the module docstring).

    Parameters
    ----------
    votes, pairs : DataFrame
        The normalised votes and the voted pairs (judge_transfer_audit.model.data).
    judge_voted, judge_only : DataFrame
        The judge's verdicts (pair_id, criterion keyed by the *human* criterion, y_judge: 1, 0,
        0.5 tie, NaN invalid) on the voted and on the judge-only pairs.
    judge_only_pairs : DataFrame
        The judge-only pairs (pair_id, matchup, focal, other).
    credit : array (len(votes),)
        Each vote's credit under the run's tie rule (NaN: a vote the rule leaves out).
    sampling : {"random", "stratified"}
        How the voted pairs were drawn (the policy's claim). It weights the pooled leaderboard:
        under "stratified" each matchup's pairs count as its share of all judged pairs.
    """
    rng, seed = resolve_rng(rng)
    z = _z(level)
    v = votes.assign(credit=np.asarray(credit, float))
    v = v[v["credit"].notna()]
    fv = _predictions(judge_voted)
    fo = _predictions(judge_only).merge(judge_only_pairs[["pair_id", "matchup"]], on="pair_id")
    v = v.merge(fv, on=["pair_id", "criterion"], how="inner")
    rows: list[CorrectedRow] = []
    notes: list[str] = []
    for matchup in pd.unique(pairs["matchup"]):
        vm = v[v["matchup"] == matchup]
        om = fo[fo["matchup"] == matchup]
        pooled_lab, pooled_unl = [], []
        for criterion in pd.unique(vm["criterion"]):
            vc = vm[vm["criterion"] == criterion]
            oc = om[om["criterion"] == criterion]
            pair_codes, pair_ids = pd.factorize(vc["pair_id"], sort=False)
            if len(pair_ids) < 2:
                continue
            reader_codes = pd.factorize(vc["reader_id"], sort=False)[0]
            f = vc.drop_duplicates("pair_id").set_index("pair_id").loc[pair_ids, "f"].to_numpy(float)
            fu = oc["f"].to_numpy(float)
            cr = vc["credit"].to_numpy(float)
            share = ppi_mean(cr, pair_codes, f, fu, reader_of_vote=reader_codes, level=level)
            rows.append(_share_row(matchup, criterion, share, len(vc), z))
            maj = majority_ppi(cr, pair_codes, reader_codes, f, fu, share, level)
            if maj is not None:
                m, lo, hi, lam2, hm, hlo, hhi, se, hse = maj
                ratio = (hi - lo) / (hhi - hlo) if hhi > hlo else math.nan
                f_all = np.concatenate([f, fu])
                rows.append(
                    _row(
                        matchup,
                        criterion,
                        "majority_rate",
                        m,
                        lo,
                        hi,
                        lam2,
                        (hm, hlo, hhi),
                        _judge_rate(f_all, z),
                        len(f),
                        len(vc),
                        len(fu),
                        ratio,
                    )
                )
                rows[-1] = dataclasses.replace(rows[-1], se=se, human_se=hse, quantile=z)
            pooled_lab.append(vc.assign(unit=vc["pair_id"] + "\x00" + str(criterion)))
            pooled_unl.append(oc)
        if len(pooled_lab) > 1:
            lab = pd.concat(pooled_lab, ignore_index=True)
            unl = pd.concat(pooled_unl, ignore_index=True)
            unit_codes, units = pd.factorize(lab["unit"], sort=False)
            first = lab.drop_duplicates("unit").set_index("unit").loc[units]
            f = first["f"].to_numpy(float)
            cluster = pd.factorize(first["pair_id"], sort=False)[0]
            share = ppi_mean(
                lab["credit"].to_numpy(float),
                unit_codes,
                f,
                unl["f"].to_numpy(float),
                reader_of_vote=pd.factorize(lab["reader_id"], sort=False)[0],
                cluster_of_unit=cluster,
                cluster_of_unlabelled=pd.factorize(unl["pair_id"], sort=False)[0] if len(unl) else None,
                level=level,
            )
            row = _share_row(matchup, ALL_CRITERIA, share, len(lab), z)
            rows.append(
                CorrectedRow(
                    **{
                        **row.__dict__,
                        "n_pairs_voted": int(lab["pair_id"].nunique()),
                        "n_pairs_judge_only": int(unl["pair_id"].nunique()) if len(unl) else 0,
                    }
                )
            )
    board = _leaderboard(v, fo, judge_only_pairs, pairs, sampling, level, rng, notes)
    return PredictionPowered(
        judge=judge,
        sampling=sampling,
        level=float(level),
        n_pairs_voted=int(pairs["pair_id"].nunique()),
        n_pairs_judge_only=int(len(judge_only_pairs)),
        rows=tuple(rows),
        leaderboard=board,
        seed=seed,
        notes=tuple(notes),
    )


def _leaderboard(v, fo, judge_only_pairs, pairs, sampling, level, rng, notes) -> CorrectedLeaderboard | None:
    from judge_transfer_audit.statistics.leaderboard.fit import bt_design, centred

    systems = sorted({str(s) for col in ("focal", "other") for s in pairs[col].unique().tolist()})
    if len(systems) < 3:
        return None
    crits = list(pd.unique(v["criterion"]))
    crit = "overall" if "overall" in crits else (crits[0] if crits else None)
    if crit is None:
        return None
    vc = v[v["criterion"] == crit]
    oc = fo[fo["criterion"] == crit].merge(judge_only_pairs[["pair_id", "focal", "other"]], on="pair_id")
    pair_codes, pair_ids = pd.factorize(vc["pair_id"], sort=False)
    first = vc.drop_duplicates("pair_id").set_index("pair_id").loc[pair_ids]
    from judge_transfer_audit.statistics.leaderboard.fit import comparison_components

    if len(comparison_components(first["focal"].to_numpy(), first["other"].to_numpy())) > 1 or len(
        set(first["focal"]) | set(first["other"])
    ) < len(systems):
        notes.append("leaderboard: the voted pairs do not link every system; no corrected leaderboard")
        return None
    X = bt_design(first["focal"].astype(str).to_numpy(), first["other"].astype(str).to_numpy(), systems)
    Xu = (
        bt_design(oc["focal"].astype(str).to_numpy(), oc["other"].astype(str).to_numpy(), systems)
        if len(oc)
        else np.zeros((0, len(systems) - 1))
    )
    k = np.bincount(pair_codes).astype(float)
    cr = vc["credit"].to_numpy(float)
    y = np.bincount(pair_codes, weights=cr) / k
    f = first["f"].to_numpy(float)
    fu = oc["f"].to_numpy(float)
    w = wu = None
    if sampling == "stratified" and len(oc):
        m_lab, m_unl = first["matchup"].to_numpy(), oc["matchup"].to_numpy()
        n_l = pd.Series(m_lab).value_counts()
        n_u = pd.Series(m_unl).value_counts()
        total = n_l.add(n_u, fill_value=0)
        share_all = total / total.sum()
        w = (share_all / (n_l / n_l.sum())).reindex(m_lab).to_numpy(float)
        wu = (share_all / (n_u / n_u.sum())).reindex(m_unl).fillna(0.0).to_numpy(float)
    readers = pd.factorize(vc["reader_id"], sort=False)[0]
    try:
        fit = ppi_logistic(X, y, f, Xu, fu, cluster_psi=(cr, pair_codes, readers, k), w=w, w_unlabelled=wu)
    except np.linalg.LinAlgError:  # a separated design (a system that always wins): no finite strengths
        notes.append("leaderboard: the Bradley-Terry fit has no finite solution (a system wins or loses every pair)")
        return None
    if not (np.all(np.isfinite(fit.coef)) and np.all(np.isfinite(fit.vcov))):
        notes.append("leaderboard: the Bradley-Terry fit has no finite solution (a system wins or loses every pair)")
        return None
    z = _z(level)

    def board(coef, vcov):
        s, C = centred(coef, vcov)
        se = np.sqrt(np.maximum(np.diag(C), 0.0))
        draws = rng.multivariate_normal(s, C, size=N_DRAWS, method="eigh")
        ranks = (-draws).argsort(axis=1).argsort(axis=1) + 1
        lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
        rank = (-s).argsort().argsort() + 1
        return s, se, rank, np.quantile(ranks, lo_q, axis=0), np.quantile(ranks, hi_q, axis=0)

    s, se, rank, rlo, rhi = board(fit.coef, fit.vcov)
    hs, hse, hrank, hrlo, hrhi = board(fit.human_coef, fit.human_vcov)
    out = tuple(
        CorrectedStrength(
            system=name,
            strength=float(s[i]),
            ci_low=float(s[i] - z * se[i]),
            ci_high=float(s[i] + z * se[i]),
            rank=int(rank[i]),
            rank_low=float(rlo[i]),
            rank_high=float(rhi[i]),
            human_strength=float(hs[i]),
            human_ci_low=float(hs[i] - z * hse[i]),
            human_ci_high=float(hs[i] + z * hse[i]),
            human_rank=int(hrank[i]),
            human_rank_low=float(hrlo[i]),
            human_rank_high=float(hrhi[i]),
        )
        for i, name in enumerate(systems)
    )
    return CorrectedLeaderboard(
        criterion=str(crit),
        lam=fit.lam,
        n_pairs_voted=len(y),
        n_pairs_judge_only=len(fu),
        systems=tuple(sorted(out, key=lambda r: r.rank)),
        n_draws=N_DRAWS,
    )
