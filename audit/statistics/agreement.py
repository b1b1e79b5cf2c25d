"""Agreement among human pairwise votes, and the human baseline a judge should reach.

Two entry points, both over the normalised ``votes`` frame of :mod:`judge_transfer_audit.model.data`
(pair_id, reader_id, criterion, matchup, y with 1 = focal chosen, 0 = other chosen,
NaN = tie):

* :func:`agreement_table` - Fleiss' kappa, Krippendorff's nominal alpha and raw mean
  pairwise agreement per matchup x criterion, per criterion pooled over matchups, per
  matchup pooled over criteria and over everything (the audit paper's Tables 2 and 3).
* :func:`reader_baseline` - each reader's agreement with the majority of the *other*
  readers (leave-one-reader-out) next to the judge's agreement with the majority of all
  readers.

Decisions (docs/agreement.md):

* A vote has three nominal categories: focal, other, tie. A tie is a category of its own
  in kappa, alpha and raw agreement (two readers who both say "tie" agree).
* The unit is a pair x criterion. Units with fewer than two votes carry no information on
  agreement: they are left out of kappa/alpha/raw agreement and counted
  (``n_units_single_vote``).
* Fleiss' kappa with an unequal number of votes per unit uses the usual generalisation
  (``P_i`` per unit with its own ``n_i``, category shares over all votes); it equals
  Fleiss (1971) when every unit has the same number of votes (``balanced``).
* Raw agreement is the share of agreeing reader pairs among all reader pairs that voted
  on the same unit (equal to Fleiss' ``P-bar`` in a balanced design).
* Majorities ignore ties: the majority of a set of votes is the side with more decisive
  votes; equal decisive counts (or none) is a *split* and the unit is not scored (counted).
  Against a decisive majority a vote scores 1 when on the majority side, 0 when on the
  other side and 0.5 when it is a tie (a judge tie, ``y_judge = 0.5``, scores the same).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.statistics.reliability.fleiss import fleiss_kappa  # noqa: F401  (re-exported)
from judge_transfer_audit.statistics.reliability.krippendorff import alpha_from_codes

POOLED = "all"  #: the matchup/criterion label of pooled rows
#: the matchup label of rows pooled over matchups with chance agreement taken within each matchup
POOLED_WITHIN = "all (orientation-free)"
#: how rows pooled over matchups take chance agreement (see :func:`agreement_table`)
POOLINGS = ("as oriented", "within matchup")
_GROUP_KEYS = ("matchup", "criterion")
_LEVEL_ORDER = ("cell", "criterion", "matchup", "all")


# ----------------------------------------------------------------------------- statistics
def _vote_category(y: pd.Series) -> np.ndarray:
    """0 = other chosen, 1 = focal chosen, 2 = tie."""
    arr = y.to_numpy(dtype=float)
    return np.where(np.isnan(arr), 2, arr).astype(int)


def _nominal_summary(unit: np.ndarray, category: np.ndarray) -> dict:
    """kappa, alpha and raw agreement for integer unit codes and categories 0/1/2."""
    n_votes = len(unit)
    if n_votes == 0:
        return dict(
            n_units=0,
            n_units_single_vote=0,
            balanced=True,
            fleiss_kappa=math.nan,
            observed_agreement=math.nan,
            expected_agreement=math.nan,
            krippendorff_alpha=math.nan,
            raw_agreement=math.nan,
        )
    _, unit_index = np.unique(unit, return_inverse=True)
    counts = np.zeros((unit_index.max() + 1, 3))
    np.add.at(counts, (unit_index, category), 1.0)
    n_i = counts.sum(axis=1)
    pairable = counts[n_i >= 2]
    kappa, observed, expected = fleiss_kappa(pairable)
    pn = pairable.sum(axis=1)
    pairs_total = float(np.sum(pn * (pn - 1.0)))
    raw = float(np.sum(pairable**2) - pn.sum()) / pairs_total if pairs_total else math.nan
    alpha = alpha_from_codes(unit_index, category.astype(float), "nominal").alpha
    return dict(
        n_units=int(len(counts)),
        n_units_single_vote=int(np.sum(n_i < 2)),
        balanced=bool(len(np.unique(pn)) <= 1),
        fleiss_kappa=kappa,
        observed_agreement=observed,
        expected_agreement=expected,
        krippendorff_alpha=alpha,
        raw_agreement=raw,
    )


def _stratified_summary(unit: np.ndarray, category: np.ndarray, stratum: np.ndarray) -> dict:
    """kappa and alpha pooled over strata (matchups) with chance taken within each stratum.

    Observed agreement is a mean over units and does not depend on which system is called
    focal; the chance terms (category shares) do, when matchups with different orientations
    are pooled. Here they are the unit- (kappa) and value-weighted (alpha) means of each
    matchup's own chance term: the pooled kappa of de Vries et al. (2008, Field Methods
    20(3), 272-282), and the same construction for alpha. Swapping focal and other in any
    matchup leaves both unchanged; with a single matchup they equal the usual statistics.
    """
    out = _nominal_summary(unit, category)
    p_e, w_e, d_o, d_e, w_a = 0.0, 0.0, 0.0, 0.0, 0.0
    for s in np.unique(stratum):
        m = stratum == s
        part = _nominal_summary(unit[m], category[m])
        _, idx = np.unique(unit[m], return_inverse=True)
        n_units = int(np.sum(np.bincount(idx) >= 2))
        if n_units and not math.isnan(part["expected_agreement"]):
            p_e += n_units * part["expected_agreement"]
            w_e += n_units
        a = alpha_from_codes(idx, category[m].astype(float), "nominal")
        if a.n_values and not math.isnan(a.expected_disagreement):
            d_o += a.n_values * a.observed_disagreement
            d_e += a.n_values * a.expected_disagreement
            w_a += a.n_values
    expected = p_e / w_e if w_e else math.nan
    observed = out["observed_agreement"]
    out["expected_agreement"] = expected
    out["fleiss_kappa"] = (observed - expected) / (1.0 - expected) if w_e and expected < 1 else math.nan
    out["krippendorff_alpha"] = 1.0 - d_o / d_e if w_a and d_e > 0 else math.nan
    return out


# ----------------------------------------------------------------------------- validation
def _check_votes(votes: pd.DataFrame, by: tuple[str, ...]) -> pd.DataFrame:
    """The validated votes frame with ``unit`` (pair and criterion, as text) and ``category``
    columns (the contract other modules rely on); see :func:`_checked_votes`."""
    frame, _ = _checked_votes(votes, by)
    frame["unit"] = frame["pair_id"] + "\x1f" + frame["criterion"]
    return frame


def _checked_votes(votes: pd.DataFrame, by: tuple[str, ...]) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Validate the votes; return them with integer codes (``_<column>_code``, ``unit_code``)
    and ``category``, and the labels of each code."""
    problems = []
    for name in by:
        if name not in _GROUP_KEYS:
            problems.append(
                InputProblem(
                    file="arguments",
                    message=f"cannot group agreement by '{name}'",
                    fix="use a subset of ('matchup', 'criterion')",
                    value=name,
                )
            )
    required = ("pair_id", "reader_id", "criterion", "matchup", "y")
    missing = [c for c in required if c not in votes.columns]
    if missing:
        problems.append(
            InputProblem(
                file="votes",
                message=f"missing column(s) {', '.join(missing)}",
                fix="pass the normalised votes frame of judge_transfer_audit.model.data",
            )
        )
    if problems:
        raise InputError(problems)
    frame = votes.loc[:, list(required)].copy()
    for col in ("pair_id", "reader_id", "criterion", "matchup"):
        frame[col] = frame[col].astype(str)
    numeric = pd.to_numeric(frame["y"], errors="coerce").astype(float)
    unreadable = numeric.isna() & votes["y"].notna().to_numpy()  # never turn garbage into ties
    frame["y"] = numeric
    bad = unreadable | (frame["y"].notna() & ~frame["y"].isin([0.0, 1.0]))
    if bad.any():
        raise InputError(
            InputProblem(
                file="votes",
                column="y",
                value=str(votes.loc[bad].iloc[0]["y"]),
                message=f"{int(bad.sum())} vote(s) are not 1 (focal), 0 (other) or NaN (tie)",
                fix="encode each vote as 1, 0 or NaN for a tie",
            )
        )
    sizes, labels = {}, {}
    for col in ("pair_id", "reader_id", "criterion", "matchup"):
        codes, uniques = pd.factorize(frame[col], sort=False)  # once per column: every grouping uses the codes
        frame[f"_{col}_code"] = np.asarray(codes, dtype=np.int64)
        labels[col] = np.asarray(uniques, dtype=object)
        sizes[col] = max(len(uniques), 1)
    key = (frame["_pair_id_code"].to_numpy() * sizes["reader_id"] + frame["_reader_id_code"].to_numpy()) * sizes[
        "criterion"
    ] + frame["_criterion_code"].to_numpy()
    dup = pd.Series(key).duplicated().to_numpy()
    if dup.any():
        row = frame[dup].iloc[0]
        raise InputError(
            InputProblem(
                file="votes",
                message=f"{int(dup.sum())} repeated reader x pair x criterion vote(s) "
                f"(e.g. reader {row.reader_id!r}, pair {row.pair_id!r}, criterion {row.criterion!r})",
                fix="keep one vote per reader, pair and criterion",
            )
        )
    frame["unit_code"] = _factorize_columns(frame, labels, ("pair_id", "criterion"), with_labels=False)[0]
    frame["category"] = _vote_category(frame["y"])
    return frame, labels


def _factorize_columns(
    frame: pd.DataFrame, labels: dict, cols, with_labels: bool = True
) -> tuple[np.ndarray, list[tuple]]:
    """Codes of the combinations of ``cols`` in first-appearance order, and the combinations
    (integer keys instead of a MultiIndex: fast on a million rows)."""
    key = np.zeros(len(frame), dtype=np.int64)
    parts = []
    for c in cols:
        codes, uniques = frame[f"_{c}_code"].to_numpy(), labels[c]
        key = key * max(len(uniques), 1) + codes
        parts.append((codes, uniques))
    codes, uniq_keys = pd.factorize(key, sort=False)
    if not with_labels:
        return np.asarray(codes, dtype=np.int64), []
    first = np.zeros(len(uniq_keys), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(frame))[::-1]
    combos = [tuple(u[c[i]] for c, u in parts) for i in first]
    return np.asarray(codes, dtype=np.int64), combos


def _group_codes(
    frame: pd.DataFrame, labels: dict, by: tuple[str, ...]
) -> list[tuple[str, np.ndarray, list[tuple[str, str]]]]:
    """Per level (cells, then every pooled level, in first-appearance order): the group code of
    each vote and the (matchup, criterion) labels of the groups -- the same groups, in the same
    order, as a ``groupby(sort=False)`` per level, without building a sub-frame per group."""
    by = tuple(k for k in _GROUP_KEYS if k in by)
    levels = []
    n = len(frame)

    def coded(cols: tuple[str, ...], level: str):
        if not cols:
            levels.append(("all", np.zeros(n, dtype=np.int64), [(POOLED, POOLED)]))
            return
        codes, uniques = _factorize_columns(frame, labels, cols)
        names = []
        for u in uniques:
            d = dict(zip(cols, u))
            names.append((str(d.get("matchup", POOLED)), str(d.get("criterion", POOLED))))
        levels.append((level, codes, names))

    if by:
        coded(by, "cell" if len(by) == 2 else by[0])
    if len(by) == 2:
        coded(("criterion",), "criterion")
        coded(("matchup",), "matchup")
    coded((), "all")
    return levels


def _distinct_per_group(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Distinct ``values`` (integer codes) per group."""
    if group.size == 0:
        return np.zeros(n_groups, dtype=np.int64)
    width = int(values.max()) + 1
    combo = pd.unique(group * width + values)  # hashing, no sort
    return np.bincount(combo // width, minlength=n_groups)


# ----------------------------------------------------------------------------- agreement table
@dataclass(frozen=True)
class AgreementRow:
    """Agreement among readers in one group of votes.

    Attributes
    ----------
    level : str
        ``"cell"`` (matchup x criterion), ``"criterion"`` (pooled over matchups),
        ``"matchup"`` (pooled over criteria) or ``"all"``.
    matchup, criterion : str
        The group; ``"all"`` where pooled.
    n_pairs : int
        Distinct pairs. ``n_units`` counts pair x criterion units (the agreement units).
    n_readers, n_votes, n_ties : int
    n_units_single_vote : int
        Units with fewer than two votes, left out of every statistic.
    balanced : bool
        Every pairable unit has the same number of votes (classic Fleiss).
    fleiss_kappa, observed_agreement, expected_agreement : float
        Kappa, its P-bar and chance agreement P_e (categories focal/other/tie).
    krippendorff_alpha : float
        Nominal alpha over the same three categories.
    raw_agreement : float
        Share of agreeing reader pairs among reader pairs on the same unit.
    """

    level: str
    matchup: str
    criterion: str
    n_pairs: int
    n_units: int
    n_readers: int
    n_votes: int
    n_ties: int
    n_units_single_vote: int
    balanced: bool
    fleiss_kappa: float
    observed_agreement: float
    expected_agreement: float
    krippendorff_alpha: float
    raw_agreement: float


@dataclass(frozen=True)
class AgreementTable:
    """Agreement per group and pooled (see :func:`agreement_table`)."""

    rows: tuple[AgreementRow, ...]
    by: tuple[str, ...]
    tie_handling: str = "a tie is a third nominal category (focal / other / tie)"
    pooling: str = "as oriented"  #: chance agreement of rows pooled over matchups (see agreement_table)

    def to_frame(self) -> pd.DataFrame:
        columns = list(AgreementRow.__dataclass_fields__)
        return pd.DataFrame([r.__dict__ for r in self.rows], columns=columns)

    def row(self, matchup: str = POOLED, criterion: str = POOLED) -> AgreementRow:
        """The row for one matchup x criterion (``"all"`` for pooled, either pooling)."""
        names = (POOLED, POOLED_WITHIN) if matchup == POOLED else (matchup,)
        for r in self.rows:
            if r.matchup in names and r.criterion == criterion:
                return r
        raise KeyError((matchup, criterion))

    def __str__(self) -> str:
        frame = self.to_frame()
        if frame.empty:
            return "Agreement: no votes"
        shown = frame[
            [
                "matchup",
                "criterion",
                "n_pairs",
                "n_readers",
                "n_votes",
                "n_ties",
                "fleiss_kappa",
                "krippendorff_alpha",
                "raw_agreement",
            ]
        ]
        text = shown.to_string(index=False, float_format=lambda x: f"{x:.3f}")
        return f"Inter-reader agreement ({self.tie_handling})\n{text}"


def agreement_table(
    votes: pd.DataFrame, by: tuple[str, ...] = ("matchup", "criterion"), pooling: str = "as oriented"
) -> AgreementTable:
    """Fleiss' kappa, Krippendorff's nominal alpha and raw agreement per group and pooled.

    Parameters
    ----------
    votes : DataFrame
        The normalised votes frame (pair_id, reader_id, criterion, matchup, y; see
        :mod:`judge_transfer_audit.model.data`). One vote per reader x pair x criterion.
    by : tuple of str
        A subset of ``("matchup", "criterion")``. With both, the table holds every
        matchup x criterion cell, every criterion pooled over matchups, every matchup
        pooled over criteria and one ``"all"`` row; with one key, that key's groups and
        ``"all"``; with ``()``, only ``"all"``.
    pooling : {"as oriented", "within matchup"}
        How rows pooled *over matchups* take chance agreement. ``"as oriented"`` (the paper's
        Tables 2-3): category shares over every vote, which is right when "focal" means one
        thing in every matchup (docs/data-contract.md, "Which system is focal"). ``"within
        matchup"``: each matchup's own chance term, averaged (:func:`_stratified_summary`);
        those rows are labelled ``"all (orientation-free)"`` because they do not depend on
        which system of a matchup is focal. :func:`judge_transfer_audit.engine.pipeline.run_audit` picks it when
        the matchups are not oriented consistently.

    Returns
    -------
    AgreementTable
        One :class:`AgreementRow` per group, cells first.

    Raises
    ------
    InputError
        Missing columns, votes other than 1/0/NaN, repeated votes, unknown ``by``.

    Notes
    -----
    Kappa and alpha are undefined (NaN) when every vote in a group falls in one category.
    Kappa validated against statsmodels and Fleiss' worked example, alpha against the
    ``krippendorff`` package (tests/reference/fleiss, tests/reference/krippendorff).
    """
    by = tuple(by)
    if pooling not in POOLINGS:
        raise InputError(
            InputProblem(
                file="arguments",
                message=f"unknown pooling {pooling!r}",
                fix=f"use one of: {', '.join(POOLINGS)}",
                value=str(pooling),
            )
        )
    frame, id_labels = _checked_votes(votes, by)
    unit_code = frame["unit_code"].to_numpy()
    category = frame["category"].to_numpy()
    pair_code = frame["_pair_id_code"].to_numpy()
    reader_code = frame["_reader_id_code"].to_numpy()
    matchup_code = frame["_matchup_code"].to_numpy()
    n_units_all = int(unit_code.max()) + 1 if len(frame) else 0
    # one row per unit: its category counts; each unit lies in one group of every level
    counts = np.bincount(unit_code * 3 + category, minlength=n_units_all * 3).reshape(n_units_all, 3).astype(float)
    n_i = counts.sum(axis=1)
    pairable = n_i >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        p_i = np.where(pairable, (np.sum(counts**2, axis=1) - n_i) / (n_i * (n_i - 1.0)), 0.0)
        alpha_o = np.where(pairable, (n_i**2 - np.sum(counts**2, axis=1)) / (n_i - 1.0), 0.0)
    first_vote = np.full(n_units_all, -1, dtype=np.int64)
    first_vote[unit_code[::-1]] = np.arange(len(frame))[::-1]
    rows = []
    for level, codes, labels in _group_codes(frame, id_labels, by):
        G = len(labels)
        ug = codes[first_vote] if n_units_all else np.zeros(0, dtype=np.int64)  # group of each unit
        pw = pairable.astype(float)
        sums = {
            name: np.bincount(ug, weights=w, minlength=G)
            for name, w in (
                ("n_units", np.ones(n_units_all)),
                ("n_pairable", pw),
                ("p_i", p_i),
                ("n_votes_p", n_i * pw),
                ("pairs_p", n_i * (n_i - 1.0) * pw),
                ("sq_p", np.sum(counts**2, axis=1) * pw),
                ("alpha_o", alpha_o),
            )
        }
        cat = [np.bincount(ug, weights=counts[:, c] * pw, minlength=G) for c in range(3)]
        n_min = np.full(G, np.inf)
        n_max = np.full(G, -np.inf)
        np.minimum.at(n_min, ug[pairable], n_i[pairable])
        np.maximum.at(n_max, ug[pairable], n_i[pairable])
        n_votes = np.bincount(codes, minlength=G)
        n_ties = np.bincount(codes[category == 2], minlength=G)
        n_pairs = _distinct_per_group(codes, pair_code, G)
        n_readers = _distinct_per_group(codes, reader_code, G)
        stats = _nominal_from_sums(
            sums["n_pairable"],
            sums["p_i"],
            sums["n_votes_p"],
            sums["pairs_p"],
            sums["sq_p"],
            sums["alpha_o"],
            np.column_stack(cat),
        )
        balanced = (sums["n_pairable"] == 0) | (n_min == n_max)
        across = np.zeros(G, dtype=bool)
        if pooling == "within matchup" and labels and labels[0][0] == POOLED:
            across = _distinct_per_group(codes, matchup_code, G) > 1
            if across.any():
                unit_matchup = matchup_code[first_vote] if n_units_all else np.zeros(0, dtype=np.int64)
                _within_matchup_chance(stats, ug, unit_matchup, counts, n_i, pairable, alpha_o, G, across)
        for g, (matchup, criterion) in enumerate(labels):
            rows.append(
                AgreementRow(
                    level=level,
                    matchup=POOLED_WITHIN if across[g] else matchup,
                    criterion=criterion,
                    n_pairs=int(n_pairs[g]),
                    n_units=int(sums["n_units"][g]),
                    n_readers=int(n_readers[g]),
                    n_votes=int(n_votes[g]),
                    n_ties=int(n_ties[g]),
                    n_units_single_vote=int(sums["n_units"][g] - sums["n_pairable"][g]),
                    balanced=bool(balanced[g]),
                    **{k: float(v[g]) for k, v in stats.items()},
                )
            )
    return AgreementTable(rows=tuple(rows), by=by, pooling=pooling)


def _within_matchup_chance(
    stats: dict[str, np.ndarray],
    unit_group: np.ndarray,
    unit_matchup: np.ndarray,
    counts: np.ndarray,
    n_i: np.ndarray,
    pairable: np.ndarray,
    alpha_o: np.ndarray,
    n_groups: int,
    across: np.ndarray,
) -> None:
    """Replace, in ``stats``, kappa, alpha and expected agreement of the ``across`` groups by
    their within-matchup forms (:func:`_stratified_summary`, written on sums over the
    group x matchup strata; the equality is tested). Observed agreement is unchanged."""
    width = int(unit_matchup.max()) + 1 if len(unit_matchup) else 1
    stratum, s_of_unit = np.unique(unit_group * width + unit_matchup, return_inverse=True)
    S = len(stratum)
    group_of_stratum = stratum // width
    pw = pairable.astype(float)
    n_pu = np.bincount(s_of_unit, weights=pw, minlength=S)
    n_val = np.bincount(s_of_unit, weights=n_i * pw, minlength=S)
    cat = np.column_stack([np.bincount(s_of_unit, weights=counts[:, c] * pw, minlength=S) for c in range(3)])
    d_o_sum = np.bincount(s_of_unit, weights=alpha_o, minlength=S)
    has = n_pu > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        expected_s = np.where(has, np.sum((cat / np.where(has, n_val, 1.0)[:, None]) ** 2, axis=1), 0.0)
        d_e_s = np.where(has, (n_val**2 - np.sum(cat**2, axis=1)) / (np.where(has, n_val, 1.0) * (n_val - 1.0)), 0.0)
    p_e = np.bincount(group_of_stratum, weights=n_pu * expected_s, minlength=n_groups)
    w_e = np.bincount(group_of_stratum, weights=n_pu, minlength=n_groups)
    d_o = np.bincount(group_of_stratum, weights=np.where(has, d_o_sum, 0.0), minlength=n_groups)
    d_e = np.bincount(group_of_stratum, weights=np.where(has, n_val * d_e_s, 0.0), minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(w_e > 0, p_e / np.where(w_e > 0, w_e, 1.0), np.nan)
        observed = stats["observed_agreement"]
        kappa = np.where((w_e > 0) & (expected < 1), (observed - expected) / (1.0 - expected), np.nan)
        alpha = np.where((w_e > 0) & (d_e > 0), 1.0 - d_o / np.where(d_e > 0, d_e, 1.0), np.nan)
    for name, value in (("expected_agreement", expected), ("fleiss_kappa", kappa), ("krippendorff_alpha", alpha)):
        stats[name] = np.where(across, value, stats[name])


def _nominal_from_sums(n_pairable, sum_p, n, pairs, sq, alpha_o, category_totals) -> dict[str, np.ndarray]:
    """Kappa, alpha and raw agreement of every group from sums over its pairable units (the
    formulas of :func:`~judge_transfer_audit.statistics.reliability.fleiss.fleiss_kappa` and
    :func:`~judge_transfer_audit.statistics.reliability.krippendorff.alpha_from_codes`, nominal, written on sums; the
    equality is tested). Arrays over groups; NaN where a group has no pairable unit."""
    none = n_pairable == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = sum_p / n_pairable
        expected = np.sum((category_totals / n[:, None]) ** 2, axis=1)
        kappa = np.where(expected >= 1.0, np.nan, (observed - expected) / (1.0 - expected))
        raw = np.where(pairs > 0, (sq - n) / pairs, np.nan)
        d_e = (n**2 - np.sum(category_totals**2, axis=1)) / (n * (n - 1.0))
        alpha = np.where(d_e == 0, np.nan, 1.0 - (alpha_o / n) / d_e)
    out = {
        "fleiss_kappa": kappa,
        "observed_agreement": observed,
        "expected_agreement": expected,
        "krippendorff_alpha": alpha,
        "raw_agreement": raw,
    }
    return {k: np.where(none, np.nan, v) for k, v in out.items()}


# ----------------------------------------------------------------------------- reader baseline
def _majority(n_focal: np.ndarray, n_other: np.ndarray) -> np.ndarray:
    """1.0 focal majority, 0.0 other majority, NaN split (ties abstain)."""
    return np.where(n_focal > n_other, 1.0, np.where(n_other > n_focal, 0.0, np.nan))


def _score_against(vote: np.ndarray, majority: np.ndarray) -> np.ndarray:
    """1 on the majority side, 0 against it, 0.5 for a tie (vote 0.5); NaN when split/absent."""
    score = np.where(vote == 0.5, 0.5, (vote == majority).astype(float))
    return np.where(np.isnan(majority) | np.isnan(vote), np.nan, score)


@dataclass(frozen=True)
class BaselineRow:
    """Reader leave-one-out agreement and judge agreement with the reader majority.

    Attributes
    ----------
    level, matchup, criterion : str
        As in :class:`AgreementRow`.
    n_pairs, n_readers : int
    reader_mean, reader_min, reader_max : float
        Across readers, each reader's mean score against the majority of the other
        readers on the units they voted on (splits not scored). NaN when no reader has a
        scored unit.
    reader_min_id, reader_max_id : str
        The readers at the minimum and maximum ("" when none).
    n_units_split : int
        Units where all readers' decisive votes split evenly (no majority of all readers).
    judge_agreement : float
        The judge's mean score against the majority of all readers (NaN without judge).
    judge_n_units, judge_n_missing : int
        Units scored for the judge; units with votes but no usable judge verdict.
    judge_agreement_loo : float
        Like-for-like: for each reader, the judge's mean score against the majority of
        the *other* readers on that reader's units; averaged over readers. Compare it with
        ``reader_mean``.
    """

    level: str
    matchup: str
    criterion: str
    n_pairs: int
    n_readers: int
    reader_mean: float
    reader_min: float
    reader_max: float
    reader_min_id: str
    reader_max_id: str
    n_units_split: int
    judge_agreement: float
    judge_n_units: int
    judge_n_missing: int
    judge_agreement_loo: float


@dataclass(frozen=True)
class ReaderBaseline:
    """The human baseline a judge should reach (see :func:`reader_baseline`).

    ``readers`` has one row per level x matchup x criterion x reader (n_units scored,
    n_split not scored, agreement); ``units`` one row per pair x criterion (vote counts,
    the majority of all readers: 1/0/NaN split, the judge's y_judge and score).
    """

    rows: tuple[BaselineRow, ...]
    readers: pd.DataFrame
    units: pd.DataFrame
    has_judge: bool
    n_judge_unmatched: int = 0
    scoring: str = (
        "majority over decisive votes (ties abstain, equal counts = split, not scored); "
        "a vote or judge verdict scores 1 on the majority side, 0 against, 0.5 for a tie"
    )

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([r.__dict__ for r in self.rows], columns=list(BaselineRow.__dataclass_fields__))

    def row(self, matchup: str = POOLED, criterion: str = POOLED) -> BaselineRow:
        for r in self.rows:
            if r.matchup == matchup and r.criterion == criterion:
                return r
        raise KeyError((matchup, criterion))

    def __str__(self) -> str:
        frame = self.to_frame()
        cols = ["matchup", "criterion", "n_pairs", "n_readers", "reader_mean", "reader_min", "reader_max"]
        if self.has_judge:
            cols += ["judge_agreement", "judge_agreement_loo"]
        text = frame[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}")
        return f"Reader baseline (leave-one-reader-out majority; {self.scoring})\n{text}"


def _check_judge(judge_choice: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in ("pair_id", "criterion", "y_judge") if c not in judge_choice.columns]
    if missing:
        raise InputError(
            InputProblem(
                file="judge_choice",
                message=f"missing column(s) {', '.join(missing)}",
                fix="pass columns pair_id, criterion, y_judge (1, 0, 0.5 for a tie)",
            )
        )
    if "judge" in judge_choice.columns and judge_choice["judge"].nunique() > 1:
        raise InputError(
            InputProblem(
                file="judge_choice",
                column="judge",
                message="several judge configurations in one call",
                fix="call reader_baseline once per configuration",
            )
        )
    frame = judge_choice.loc[:, ["pair_id", "criterion", "y_judge"]].copy()
    frame["pair_id"] = frame["pair_id"].astype(str)
    frame["criterion"] = frame["criterion"].astype(str)
    frame["y_judge"] = pd.to_numeric(frame["y_judge"], errors="coerce").astype(float)
    bad = frame["y_judge"].notna() & ~frame["y_judge"].isin([0.0, 0.5, 1.0])
    if bad.any():
        raise InputError(
            InputProblem(
                file="judge_choice",
                column="y_judge",
                value=str(frame.loc[bad, "y_judge"].iloc[0]),
                message=f"{int(bad.sum())} verdict(s) not in 1, 0, 0.5",
                fix="encode 1 = focal preferred, 0 = other, 0.5 = tie (NaN = no verdict)",
            )
        )
    if frame.duplicated(["pair_id", "criterion"]).any():
        raise InputError(
            InputProblem(
                file="judge_choice",
                message="repeated pair x criterion verdicts",
                fix="give one verdict per pair and criterion",
            )
        )
    return frame


def _extreme(per_reader: pd.Series, fn: str) -> tuple[float, str]:
    valid = per_reader.dropna()
    if valid.empty:
        return math.nan, ""
    idx = valid.idxmin() if fn == "min" else valid.idxmax()
    return float(valid[idx]), str(idx)


def reader_baseline(
    votes: pd.DataFrame,
    judge_choice: pd.DataFrame | None = None,
    by: tuple[str, ...] = ("matchup", "criterion"),
) -> ReaderBaseline:
    """Leave-one-reader-out agreement with the majority, and the judge against the majority.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (pair_id, reader_id, criterion, matchup, y; NaN = tie).
    judge_choice : DataFrame or None
        One judge configuration: pair_id, criterion, y_judge in {1, 0, 0.5 = tie};
        NaN = no usable verdict (counted in ``judge_n_missing``).
    by : tuple of str
        Grouping, as in :func:`agreement_table` (pooled rows included).

    Returns
    -------
    ReaderBaseline

    Notes
    -----
    For a reader's vote on a pair x criterion unit the reference is the majority of the
    other readers' decisive votes on that unit; the judge's reference is the majority of
    all readers. Ties abstain from majorities; a split majority leaves the unit unscored
    (counted). A tie (reader or judge) against a decisive majority scores 0.5. Each
    reader's agreement is the mean over their scored units; ``reader_mean`` averages
    readers with equal weight.
    """
    by = tuple(by)
    frame, id_labels = _checked_votes(votes, by)
    y = frame["y"].to_numpy()
    unit = frame["unit_code"].to_numpy()
    n_units = int(unit.max()) + 1 if len(frame) else 0
    is_focal, is_other = (y == 1.0).astype(float), (y == 0.0).astype(float)
    unit_focal = np.bincount(unit, is_focal, n_units)
    unit_other = np.bincount(unit, is_other, n_units)
    unit_votes = np.bincount(unit, minlength=n_units)
    others_majority = _majority(unit_focal[unit] - is_focal, unit_other[unit] - is_other)
    vote = np.where(np.isnan(y), 0.5, y)
    score = _score_against(vote, others_majority)

    first_vote = np.full(n_units, -1, dtype=np.int64)
    first_vote[unit[::-1]] = np.arange(len(frame))[::-1]
    units = pd.DataFrame({c: frame[c].to_numpy()[first_vote] for c in ("matchup", "criterion", "pair_id")})
    units["n_votes"] = unit_votes.astype(int)
    units["n_focal"] = unit_focal.astype(int)
    units["n_other"] = unit_other.astype(int)
    units["n_tie"] = units["n_votes"] - units["n_focal"] - units["n_other"]
    units["majority"] = _majority(unit_focal, unit_other)
    has_judge = judge_choice is not None
    n_unmatched = 0
    unit_y_judge = np.full(n_units, np.nan)
    if has_judge:
        judge = _check_judge(judge_choice)
        where = pd.Index(judge["pair_id"] + "\x1f" + judge["criterion"]).get_indexer(
            units["pair_id"].astype(str) + "\x1f" + units["criterion"].astype(str)
        )
        if len(judge):  # an empty judge frame matches no unit
            unit_y_judge = np.where(where >= 0, judge["y_judge"].to_numpy(float)[np.maximum(where, 0)], np.nan)
        n_unmatched = int(len(judge) - np.count_nonzero(where >= 0))
    units["y_judge"] = unit_y_judge
    unit_judge = _score_against(unit_y_judge, units["majority"].to_numpy(float))
    units["judge_score"] = unit_judge
    judge_loo = _score_against(unit_y_judge[unit], others_majority) if has_judge else np.full(len(frame), np.nan)

    # readers numbered in sorted order of their ids (the order of the readers table)
    names = id_labels["reader_id"].astype(str)
    rank = np.argsort(np.argsort(names, kind="stable"), kind="stable")
    reader_codes = rank[frame["_reader_id_code"].to_numpy()]
    reader_names = np.sort(names).astype(object)
    pair_code = frame["_pair_id_code"].to_numpy()
    n_r = len(reader_names)
    unit_majority = units["majority"].to_numpy(float)
    rows, reader_frames = [], []
    for level, codes, labels in _group_codes(frame, id_labels, by):
        G = len(labels)
        key = codes * n_r + reader_codes
        size = G * n_r
        n_votes = np.bincount(key, minlength=size)
        ok = ~np.isnan(score)
        n_scored = np.bincount(key[ok], minlength=size)
        jok = ~np.isnan(judge_loo)
        n_jl = np.bincount(key[jok], minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            agreement = np.bincount(key, np.nan_to_num(score), size) / n_scored
            judge_loo_reader = np.bincount(key, np.nan_to_num(judge_loo), size) / n_jl
        present = np.flatnonzero(n_votes > 0)  # sorted by group, then reader name
        per = pd.DataFrame(
            {
                "group": present // n_r,
                "reader_id": reader_names[present % n_r],
                "n_units": n_scored[present].astype(int),
                "n_split": (n_votes[present] - n_scored[present]).astype(int),
                "agreement": agreement[present],
                "judge_agreement_loo": judge_loo_reader[present],
            }
        )
        stats = (
            per.groupby("group", sort=True)
            .agg(
                n_readers=("reader_id", "size"),
                reader_mean=("agreement", "mean"),
                reader_min=("agreement", "min"),
                reader_max=("agreement", "max"),
                judge_loo=("judge_agreement_loo", "mean"),
            )
            .reindex(range(G))
        )
        valid = per[per["agreement"].notna()]
        lo_id = valid.loc[valid.groupby("group", sort=True)["agreement"].idxmin(), ["group", "reader_id"]]
        hi_id = valid.loc[valid.groupby("group", sort=True)["agreement"].idxmax(), ["group", "reader_id"]]
        lo_id = dict(zip(lo_id["group"], lo_id["reader_id"]))
        hi_id = dict(zip(hi_id["group"], hi_id["reader_id"]))
        ug = codes[first_vote] if n_units else np.zeros(0, dtype=np.int64)
        scored = ~np.isnan(unit_judge)
        judge_units = np.bincount(ug[scored], minlength=G)
        with np.errstate(invalid="ignore", divide="ignore"):
            judge_mean = np.bincount(ug[scored], unit_judge[scored], G) / judge_units
        n_split = np.bincount(ug[np.isnan(unit_majority)], minlength=G)
        n_missing = np.bincount(ug[np.isnan(unit_y_judge)], minlength=G)
        n_pairs = _distinct_per_group(codes, pair_code, G)
        st = {c: stats[c].to_numpy(float) for c in stats.columns}
        for g, (matchup, criterion) in enumerate(labels):
            rows.append(
                BaselineRow(
                    level=level,
                    matchup=matchup,
                    criterion=criterion,
                    n_pairs=int(n_pairs[g]),
                    n_readers=int(st["n_readers"][g]) if np.isfinite(st["n_readers"][g]) else 0,
                    reader_mean=float(st["reader_mean"][g]),
                    reader_min=float(st["reader_min"][g]),
                    reader_max=float(st["reader_max"][g]),
                    reader_min_id=str(lo_id.get(g, "")),
                    reader_max_id=str(hi_id.get(g, "")),
                    n_units_split=int(n_split[g]),
                    judge_agreement=float(judge_mean[g]) if judge_units[g] else math.nan,
                    judge_n_units=int(judge_units[g]),
                    judge_n_missing=int(n_missing[g]) if has_judge else 0,
                    judge_agreement_loo=float(st["judge_loo"][g]),
                )
            )
        labels_frame = pd.DataFrame(labels, columns=["matchup", "criterion"])
        per.insert(0, "level", level)
        per.insert(1, "matchup", labels_frame["matchup"].to_numpy()[per["group"].to_numpy()])
        per.insert(2, "criterion", labels_frame["criterion"].to_numpy()[per["group"].to_numpy()])
        reader_frames.append(per.drop(columns="group"))
    columns = ["level", "matchup", "criterion", "reader_id", "n_units", "n_split", "agreement", "judge_agreement_loo"]
    readers = pd.concat(reader_frames, ignore_index=True)[columns] if reader_frames else pd.DataFrame(columns=columns)
    units_out = units[
        [
            "matchup",
            "criterion",
            "pair_id",
            "n_votes",
            "n_focal",
            "n_other",
            "n_tie",
            "majority",
            "y_judge",
            "judge_score",
        ]
    ]
    return ReaderBaseline(
        rows=tuple(rows),
        readers=readers,
        units=units_out.reset_index(drop=True),
        has_judge=has_judge,
        n_judge_unmatched=n_unmatched,
    )
