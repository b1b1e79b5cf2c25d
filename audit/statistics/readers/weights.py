"""How each reader weighs the criteria: per-reader logistic regression of the overall vote on
the criterion votes, and within-reader Cohen's kappa between each criterion and overall.

Coding (a decision the motivating paper leaves open): each criterion vote enters the
regression as +1 (focal chosen), -1 (other chosen) or 0 (tie). The symmetric coding makes
the slopes invariant to which system of a pair is called focal (swapping flips the
intercept only) and keeps tied criterion votes instead of dropping them. Rows whose overall
vote is a tie, or that lack a criterion vote, are left out and counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.data import HUMAN_OVERALL
from judge_transfer_audit.statistics.readers._common import COMPUTED, first_seen, fmt
from judge_transfer_audit.statistics.readers.firth import fit_logistic

INTERCEPT = "intercept"

_COEF_COLUMNS = ["reader_id", "term", "estimate", "std_error", "z", "p_value", "method", "separated", "aliased"]
_FIT_COLUMNS = [
    "reader_id",
    "n_obs",
    "n_tie_overall",
    "n_incomplete",
    "method",
    "separated",
    "converged",
    "n_iter",
    "loglik",
]
_KAPPA_COLUMNS = ["reader_id", "criterion", "kappa", "observed_agreement", "expected_agreement", "n_pairs"]


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


@dataclass(frozen=True, eq=False)
class ReaderWeights:
    """Per-reader logistic regressions of the overall vote on the criterion votes.

    Attributes
    ----------
    status : Status
        PASS when computed, SKIPPED (with ``reason``) when it could not be.
    reason : str
    criteria : tuple[str, ...]
        The predictors, in order.
    coefficients : DataFrame
        reader_id, term (``intercept`` or a criterion), estimate, std_error (Wald), z,
        p_value (two-sided Wald), method (``ml``/``firth``), separated, aliased.
    fits : DataFrame
        One row per reader: n_obs, n_tie_overall and n_incomplete (rows left out), method,
        separated, converged, n_iter, loglik.
    separated_readers : tuple[str, ...]
        Readers whose data separate (fitted by Firth's penalised likelihood; flagged).
    """

    status: Status
    reason: str = ""
    criteria: tuple[str, ...] = ()
    coefficients: pd.DataFrame = field(default_factory=lambda: _empty(_COEF_COLUMNS))
    fits: pd.DataFrame = field(default_factory=lambda: _empty(_FIT_COLUMNS))
    separated_readers: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return self.coefficients.copy()

    def profile(self) -> pd.DataFrame:
        """Reader x criterion matrix of slopes (intercept excluded): the weight profile."""
        coef = self.coefficients[self.coefficients["term"] != INTERCEPT]
        wide = coef.pivot(index="reader_id", columns="term", values="estimate")
        return wide.reindex(columns=list(self.criteria)).astype(float)

    def __str__(self) -> str:
        if self.status is not COMPUTED:
            return f"Reader weights: {self.status.value} ({self.reason})"
        lines = ["Reader weights (logit of overall on criterion votes coded +1/-1/0; * = Firth fit, separated)"]
        for reader, grp in self.coefficients.groupby("reader_id", sort=False):
            mark = "*" if grp["separated"].any() else " "
            terms = ", ".join(f"{t}={fmt(e, 2)}" for t, e in zip(grp["term"], grp["estimate"]))
            lines.append(f" {mark} {reader}: {terms}")
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class ReaderKappas:
    """Within-reader Cohen's kappa between each criterion vote and the overall vote.

    Attributes
    ----------
    status : Status
    reason : str
    criteria : tuple[str, ...]
    kappas : DataFrame
        reader_id, criterion, kappa (NaN when expected agreement is 1, i.e. both votes
        constant and equal), observed_agreement, expected_agreement, n_pairs. Categories
        are focal / other / tie.
    """

    status: Status
    reason: str = ""
    criteria: tuple[str, ...] = ()
    kappas: pd.DataFrame = field(default_factory=lambda: _empty(_KAPPA_COLUMNS))

    def to_frame(self) -> pd.DataFrame:
        return self.kappas.copy()

    def profile(self) -> pd.DataFrame:
        """Reader x criterion matrix of kappas."""
        wide = self.kappas.pivot(index="reader_id", columns="criterion", values="kappa")
        return wide.reindex(columns=list(self.criteria)).astype(float)

    def __str__(self) -> str:
        if self.status is not COMPUTED:
            return f"Criterion-to-overall kappa: {self.status.value} ({self.reason})"
        lines = ["Within-reader Cohen's kappa, criterion vs overall"]
        for reader, grp in self.kappas.groupby("reader_id", sort=False):
            lines.append(
                f"   {reader}: " + ", ".join(f"{c}={fmt(k, 2)}" for c, k in zip(grp["criterion"], grp["kappa"]))
            )
        return "\n".join(lines)


def cohens_kappa(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """Unweighted Cohen's kappa of two label vectors: ``(kappa, p_observed, p_expected)``.

    Validated against statsmodels ``stats.inter_rater.cohens_kappa`` (contingency-table
    input) and R ``psych::cohen.kappa``. ``kappa`` is NaN when ``p_expected == 1``.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    n = len(a)
    if n == 0:
        return math.nan, math.nan, math.nan
    labels = np.union1d(a, b)
    pa = np.array([np.mean(a == lab) for lab in labels])
    pb = np.array([np.mean(b == lab) for lab in labels])
    po = float(np.mean(a == b))
    pe = float(np.sum(pa * pb))
    if math.isclose(pe, 1.0):
        return math.nan, po, pe
    return (po - pe) / (1 - pe), po, pe


def wide_votes(
    votes: pd.DataFrame, criteria: tuple[str, ...], overall: str
) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """Per reader: a pair x criterion table of y, and of how many votes each cell has."""
    cols = [*criteria, overall]
    keys = ["reader_id", "pair_id", "criterion"]
    y = votes.groupby(keys, sort=False)["y"].first().unstack("criterion").reindex(columns=cols)
    present = (
        votes.groupby(keys, sort=False).size().unstack("criterion", fill_value=0).reindex(columns=cols, fill_value=0)
    )
    out = {}
    for reader in first_seen(votes["reader_id"]):
        out[reader] = (y.loc[reader], present.loc[reader])
    return out


def criteria_and_overall(votes: pd.DataFrame, overall: str = HUMAN_OVERALL) -> tuple[tuple[str, ...], str]:
    crits = tuple(c for c in first_seen(votes["criterion"]) if c != overall)
    return crits, reason_missing_overall(votes, overall, crits)


def reason_missing_overall(votes: pd.DataFrame, overall: str, crits: tuple[str, ...]) -> str:
    if not (votes["criterion"] == overall).any():
        return f"needs an '{overall}' criterion (the overall preference) in the votes"
    if not crits:
        return f"needs at least one criterion besides '{overall}'"
    return ""


def reader_weights(
    votes: pd.DataFrame, *, overall: str = HUMAN_OVERALL, method: str = "auto", wide: dict | None = None
) -> ReaderWeights:
    """Per-reader logistic regression of the overall vote on the criterion votes.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (pair_id, reader_id, criterion, y).
    overall : str
        The overall-preference criterion (the outcome).
    method : {"auto", "ml", "firth"}
        ``auto`` fits maximum likelihood unless the reader's data separate, then Firth's
        penalised likelihood (flagged in ``separated``/``method``).
    wide : dict, optional
        :func:`wide_votes` of these votes, when the caller has it (the kappas read the same tables).

    Returns
    -------
    ReaderWeights

    Notes
    -----
    Validated against statsmodels ``Logit`` (ML) and R ``brglm2`` (Firth); see
    :func:`judge_transfer_audit.statistics.readers.firth.fit_logistic`. A reader with fewer usable rows than
    parameters still gets a Firth fit (the penalty keeps it finite) but the estimates are
    then mostly the prior; the ``n_obs`` column says so.
    """
    from judge_transfer_audit.statistics.distributions import norm

    crits, why = criteria_and_overall(votes, overall)
    if why:
        return ReaderWeights(status=Status.SKIPPED, reason=why, criteria=crits)
    coef_rows, fit_rows, separated = [], [], []
    tables = wide if wide is not None else wide_votes(votes, crits, overall)
    for reader, (wide, present) in tables.items():
        has_overall = present[overall] > 0
        n_tie = int((has_overall & wide[overall].isna()).sum())
        complete = (present[list(crits)] > 0).all(axis=1) & has_overall
        usable = complete & wide[overall].notna()
        n_incomplete = int((~complete).sum())
        data = wide[usable]
        if len(data) == 0:
            fit_rows.append([reader, 0, n_tie, n_incomplete, "none", False, False, 0, math.nan])
            continue
        coded = np.nan_to_num(2.0 * data[list(crits)].to_numpy(float) - 1.0, nan=0.0)  # +1 / -1 / 0 (tie)
        X = np.column_stack([np.ones(len(data)), coded])
        fit = fit_logistic(X, data[overall].to_numpy(float), method=method)
        if fit.separated:
            separated.append(reader)
        fit_rows.append(
            [reader, len(data), n_tie, n_incomplete, fit.method, fit.separated, fit.converged, fit.n_iter, fit.loglik]
        )
        for term, est, se, al in zip((INTERCEPT, *crits), fit.coef, fit.std_error, fit.aliased):
            z = est / se if se and se > 0 else math.nan
            p = float(2 * norm.sf(abs(z))) if not math.isnan(z) else math.nan
            coef_rows.append([reader, term, est, se, z, p, fit.method, fit.separated, al])
    coefficients = pd.DataFrame(coef_rows, columns=_COEF_COLUMNS) if coef_rows else _empty(_COEF_COLUMNS)
    fits = pd.DataFrame(fit_rows, columns=_FIT_COLUMNS)
    if not coef_rows:
        return ReaderWeights(
            status=Status.SKIPPED,
            reason="no reader has a usable (non-tied, complete) overall vote",
            criteria=crits,
            fits=fits,
        )
    reason = ""
    if separated:
        reason = f"separation in {len(separated)} reader(s) ({', '.join(separated)}): Firth penalised fit used"
    return ReaderWeights(
        status=COMPUTED,
        reason=reason,
        criteria=crits,
        coefficients=coefficients,
        fits=fits,
        separated_readers=tuple(separated),
    )


def reader_kappas(votes: pd.DataFrame, *, overall: str = HUMAN_OVERALL, wide: dict | None = None) -> ReaderKappas:
    """Within-reader Cohen's kappa between each criterion and the overall vote.

    For each reader and criterion, the reader's pairs having both votes form two label
    vectors (focal / other / tie) and :func:`cohens_kappa` compares them (here from the counts of
    each label and of agreements, every criterion of a reader at once: the same arithmetic).
    ``wide`` is :func:`wide_votes` of these votes when the caller has it.

    Returns
    -------
    ReaderKappas
    """
    crits, why = criteria_and_overall(votes, overall)
    if why:
        return ReaderKappas(status=Status.SKIPPED, reason=why, criteria=crits)
    rows = []
    tables = wide if wide is not None else wide_votes(votes, crits, overall)
    for reader, (table, present) in tables.items():
        both = (present[list(crits)].to_numpy() > 0) & (present[overall].to_numpy() > 0)[:, None]  # pairs x criteria
        a = _label_codes(table[list(crits)].to_numpy(float))
        b = np.broadcast_to(_label_codes(table[overall].to_numpy(float))[:, None], a.shape)
        n = both.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            # the label shares of each side (np.mean of a boolean: its count over n), in cohens_kappa's
            # sorted label order (focal, other, tie); a label on neither side adds an exact 0 to pe
            pa = [(both & (a == lab)).sum(axis=0) / n for lab in range(3)]
            pb = [(both & (b == lab)).sum(axis=0) / n for lab in range(3)]
            po = (both & (a == b)).sum(axis=0) / n
            pe = (pa[0] * pb[0] + pa[1] * pb[1]) + pa[2] * pb[2]
            kappa = np.where(np.abs(pe - 1.0) <= 1e-9 * np.maximum(np.abs(pe), 1.0), np.nan, (po - pe) / (1 - pe))
        nan = np.full(len(crits), np.nan)
        kappa, po, pe = (np.where(n > 0, x, nan).tolist() for x in (kappa, po, pe))
        rows += [[reader, c, k, o, e, int(m)] for c, k, o, e, m in zip(crits, kappa, po, pe, n.tolist())]
    kappas = pd.DataFrame(rows, columns=_KAPPA_COLUMNS)
    n_undefined = int(kappas["kappa"].isna().sum())
    reason = f"{n_undefined} reader x criterion kappa(s) undefined (constant votes)" if n_undefined else ""
    return ReaderKappas(status=COMPUTED, reason=reason, criteria=crits, kappas=kappas)


def _label_codes(y: np.ndarray) -> np.ndarray:
    """0 focal, 1 other, 2 tie (NaN): the vote labels in sorted order."""
    return np.where(np.isnan(y), 2, np.where(y == 1, 0, 1))
