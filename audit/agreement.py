"""Agreement among human pairwise votes, and the human baseline a judge should reach.

Two entry points, both over the normalised ``votes`` frame of :mod:`audit.data`
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

from audit.errors import InputError, InputProblem
from audit.reliability.fleiss import fleiss_kappa  # noqa: F401  (re-exported)
from audit.reliability.krippendorff import alpha_from_codes

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
        return dict(n_units=0, n_units_single_vote=0, balanced=True, fleiss_kappa=math.nan,
                    observed_agreement=math.nan, expected_agreement=math.nan,
                    krippendorff_alpha=math.nan, raw_agreement=math.nan)
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
    problems = []
    for name in by:
        if name not in _GROUP_KEYS:
            problems.append(InputProblem(file="arguments", message=f"cannot group agreement by '{name}'",
                                         fix="use a subset of ('matchup', 'criterion')", value=name))
    required = ("pair_id", "reader_id", "criterion", "matchup", "y")
    missing = [c for c in required if c not in votes.columns]
    if missing:
        problems.append(InputProblem(file="votes", message=f"missing column(s) {', '.join(missing)}",
                                     fix="pass the normalised votes frame of audit.data"))
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
        raise InputError(InputProblem(file="votes", column="y", value=str(votes.loc[bad].iloc[0]["y"]),
                                      message=f"{int(bad.sum())} vote(s) are not 1 (focal), 0 (other) or NaN (tie)",
                                      fix="encode each vote as 1, 0 or NaN for a tie"))
    dup = frame.duplicated(["pair_id", "reader_id", "criterion"])
    if dup.any():
        row = frame[dup].iloc[0]
        raise InputError(InputProblem(
            file="votes", message=f"{int(dup.sum())} repeated reader x pair x criterion vote(s) "
            f"(e.g. reader {row.reader_id!r}, pair {row.pair_id!r}, criterion {row.criterion!r})",
            fix="keep one vote per reader, pair and criterion"))
    frame["unit"] = frame["pair_id"] + "\x1f" + frame["criterion"]
    frame["category"] = _vote_category(frame["y"])
    return frame


def _groups(frame: pd.DataFrame, by: tuple[str, ...]):
    """Yield (level, matchup, criterion, sub-frame) for cells and every pooled level."""
    by = tuple(k for k in _GROUP_KEYS if k in by)
    if by:
        for key, sub in frame.groupby(list(by), sort=False):
            key = key if isinstance(key, tuple) else (key,)
            labels = dict(zip(by, key))
            level = "cell" if len(by) == 2 else by[0]
            yield level, labels.get("matchup", POOLED), labels.get("criterion", POOLED), sub
    if len(by) == 2:
        for name in ("criterion", "matchup"):
            for key, sub in frame.groupby(name, sort=False):
                yield name, (POOLED if name == "criterion" else key), (key if name == "criterion" else POOLED), sub
    yield "all", POOLED, POOLED, frame


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
        shown = frame[["matchup", "criterion", "n_pairs", "n_readers", "n_votes", "n_ties",
                       "fleiss_kappa", "krippendorff_alpha", "raw_agreement"]]
        text = shown.to_string(index=False, float_format=lambda x: f"{x:.3f}")
        return f"Inter-reader agreement ({self.tie_handling})\n{text}"


def agreement_table(votes: pd.DataFrame, by: tuple[str, ...] = ("matchup", "criterion"),
                    pooling: str = "as oriented") -> AgreementTable:
    """Fleiss' kappa, Krippendorff's nominal alpha and raw agreement per group and pooled.

    Parameters
    ----------
    votes : DataFrame
        The normalised votes frame (pair_id, reader_id, criterion, matchup, y; see
        :mod:`audit.data`). One vote per reader x pair x criterion.
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
        which system of a matchup is focal. :func:`audit.pipeline.run_audit` picks it when
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
        raise InputError(InputProblem(file="arguments", message=f"unknown pooling {pooling!r}",
                                      fix=f"use one of: {', '.join(POOLINGS)}", value=str(pooling)))
    frame = _check_votes(votes, by)
    rows = []
    for level, matchup, criterion, sub in _groups(frame, by):
        across = matchup == POOLED and sub["matchup"].nunique() > 1
        if pooling == "within matchup" and across:
            stats = _stratified_summary(sub["unit"].to_numpy(), sub["category"].to_numpy(),
                                        sub["matchup"].to_numpy(dtype=object))
            matchup = POOLED_WITHIN
        else:
            stats = _nominal_summary(sub["unit"].to_numpy(), sub["category"].to_numpy())
        rows.append(AgreementRow(
            level=level, matchup=str(matchup), criterion=str(criterion),
            n_pairs=int(sub["pair_id"].nunique()), n_readers=int(sub["reader_id"].nunique()),
            n_votes=int(len(sub)), n_ties=int((sub["category"] == 2).sum()), **stats))
    return AgreementTable(rows=tuple(rows), by=by, pooling=pooling)



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
    scoring: str = ("majority over decisive votes (ties abstain, equal counts = split, not scored); "
                    "a vote or judge verdict scores 1 on the majority side, 0 against, 0.5 for a tie")

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
        raise InputError(InputProblem(file="judge_choice", message=f"missing column(s) {', '.join(missing)}",
                                      fix="pass columns pair_id, criterion, y_judge (1, 0, 0.5 for a tie)"))
    if "judge" in judge_choice.columns and judge_choice["judge"].nunique() > 1:
        raise InputError(InputProblem(file="judge_choice", column="judge",
                                      message="several judge configurations in one call",
                                      fix="call reader_baseline once per configuration"))
    frame = judge_choice.loc[:, ["pair_id", "criterion", "y_judge"]].copy()
    frame["pair_id"] = frame["pair_id"].astype(str)
    frame["criterion"] = frame["criterion"].astype(str)
    frame["y_judge"] = pd.to_numeric(frame["y_judge"], errors="coerce").astype(float)
    bad = frame["y_judge"].notna() & ~frame["y_judge"].isin([0.0, 0.5, 1.0])
    if bad.any():
        raise InputError(InputProblem(file="judge_choice", column="y_judge", value=str(frame.loc[bad, "y_judge"].iloc[0]),
                                      message=f"{int(bad.sum())} verdict(s) not in 1, 0, 0.5",
                                      fix="encode 1 = focal preferred, 0 = other, 0.5 = tie (NaN = no verdict)"))
    if frame.duplicated(["pair_id", "criterion"]).any():
        raise InputError(InputProblem(file="judge_choice", message="repeated pair x criterion verdicts",
                                      fix="give one verdict per pair and criterion"))
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
    frame = _check_votes(votes, by)
    y = frame["y"].to_numpy()
    frame["is_focal"] = (y == 1.0).astype(int)
    frame["is_other"] = (y == 0.0).astype(int)
    unit_counts = frame.groupby("unit", sort=False)[["is_focal", "is_other"]].transform("sum")
    others_majority = _majority(unit_counts["is_focal"].to_numpy() - frame["is_focal"].to_numpy(),
                                unit_counts["is_other"].to_numpy() - frame["is_other"].to_numpy())
    vote = np.where(np.isnan(y), 0.5, y)
    frame["reader_score"] = _score_against(vote, others_majority)

    units = (frame.groupby(["matchup", "criterion", "pair_id", "unit"], sort=False)
             .agg(n_votes=("y", "size"), n_focal=("is_focal", "sum"), n_other=("is_other", "sum"))
             .reset_index())
    units["n_tie"] = units["n_votes"] - units["n_focal"] - units["n_other"]
    units["majority"] = _majority(units["n_focal"].to_numpy(), units["n_other"].to_numpy())
    has_judge = judge_choice is not None
    n_unmatched = 0
    if has_judge:
        judge = _check_judge(judge_choice)
        units = units.merge(judge, on=["pair_id", "criterion"], how="left")
        n_unmatched = int(len(judge) - judge.merge(units[["pair_id", "criterion"]], on=["pair_id", "criterion"]).shape[0])
        units["judge_score"] = _score_against(units["y_judge"].to_numpy(), units["majority"].to_numpy())
        frame = frame.merge(units[["unit", "y_judge"]], on="unit", how="left")
        frame["judge_loo_score"] = _score_against(frame["y_judge"].to_numpy(), others_majority)
    else:
        units["y_judge"] = np.nan
        units["judge_score"] = np.nan
        frame["judge_loo_score"] = np.nan

    # numpy per group: pandas groupby overhead dominated with ~30 small groups
    reader_names, reader_code = np.unique(frame["reader_id"].to_numpy(), return_inverse=True)
    unit_pos = pd.Index(units["unit"]).get_indexer(frame["unit"])
    score = frame["reader_score"].to_numpy(float)
    judge_loo = frame["judge_loo_score"].to_numpy(float)
    unit_majority = units["majority"].to_numpy(float)
    unit_judge = units["judge_score"].to_numpy(float)
    unit_y_judge = units["y_judge"].to_numpy(float)
    n_r = len(reader_names)
    rows, reader_rows = [], []
    for level, matchup, criterion, sub in _groups(frame, by):
        pos = frame.index.get_indexer(sub.index)
        codes, sc, jl = reader_code[pos], score[pos], judge_loo[pos]
        n_votes = np.bincount(codes, minlength=n_r)
        n_scored = np.bincount(codes[~np.isnan(sc)], minlength=n_r)
        with np.errstate(invalid="ignore", divide="ignore"):
            agreement = np.bincount(codes, weights=np.nan_to_num(sc), minlength=n_r) / n_scored
            n_jl = np.bincount(codes[~np.isnan(jl)], minlength=n_r)
            judge_loo_reader = np.bincount(codes, weights=np.nan_to_num(jl), minlength=n_r) / n_jl
        present = n_votes > 0
        per_reader = pd.Series(agreement[present], index=reader_names[present])
        for i in np.flatnonzero(present):
            reader_rows.append(dict(level=level, matchup=matchup, criterion=criterion, reader_id=str(reader_names[i]),
                                    n_units=int(n_scored[i]), n_split=int(n_votes[i] - n_scored[i]),
                                    agreement=float(agreement[i]), judge_agreement_loo=float(judge_loo_reader[i])))
        lo, lo_id = _extreme(per_reader, "min")
        hi, hi_id = _extreme(per_reader, "max")
        upos = np.unique(unit_pos[pos])
        judge_scores = unit_judge[upos]
        scored = ~np.isnan(judge_scores)
        loo_present = judge_loo_reader[present]
        rows.append(BaselineRow(
            level=level, matchup=str(matchup), criterion=str(criterion),
            n_pairs=int(sub["pair_id"].nunique()), n_readers=int(present.sum()),
            reader_mean=float(np.nanmean(per_reader)) if per_reader.notna().any() else math.nan,
            reader_min=lo, reader_max=hi, reader_min_id=lo_id, reader_max_id=hi_id,
            n_units_split=int(np.isnan(unit_majority[upos]).sum()),
            judge_agreement=float(judge_scores[scored].mean()) if scored.any() else math.nan,
            judge_n_units=int(scored.sum()),
            judge_n_missing=int(np.isnan(unit_y_judge[upos]).sum()) if has_judge else 0,
            judge_agreement_loo=float(np.nanmean(loo_present)) if (~np.isnan(loo_present)).any() else math.nan,
        ))
    readers = pd.DataFrame(reader_rows, columns=["level", "matchup", "criterion", "reader_id", "n_units",
                                                 "n_split", "agreement", "judge_agreement_loo"])
    units_out = units.drop(columns="unit")[["matchup", "criterion", "pair_id", "n_votes", "n_focal", "n_other",
                                             "n_tie", "majority", "y_judge", "judge_score"]]
    units_out = units_out.astype({"n_votes": int, "n_focal": int, "n_other": int, "n_tie": int})
    return ReaderBaseline(rows=tuple(rows), readers=readers, units=units_out.reset_index(drop=True),
                          has_judge=has_judge, n_judge_unmatched=n_unmatched)
