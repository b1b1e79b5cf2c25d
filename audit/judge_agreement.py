"""Chance-corrected agreement of the judge with the human readers, with two-way intervals.

:func:`judge_agreement` reads the normalised ``votes`` frame of :mod:`audit.data` and one
judge configuration's per-pair verdicts (``pair_id, criterion, y_judge`` with 1 = focal,
0 = other, 0.5 = tie, NaN = no verdict) and returns, per cell (matchup x criterion), per
criterion pooled over matchups and over everything:

* ``kappa_majority``: Cohen's kappa of the judge against the readers' majority (ties
  abstain from the majority; a split unit is not scored; categories focal / other / tie);
* ``kappa_readers``: Cohen's kappa of the judge against each reader on that reader's
  units, averaged over readers (each reader's own kappa is in ``readers``);
* ``alpha_human``: Krippendorff's nominal alpha among the readers (as in
  :func:`audit.agreement.agreement_table`), ``alpha_judge_human``: nominal alpha of the
  two-coder data (judge, reader) stacked over every reader's vote, and
  ``alpha_difference`` = judge-human minus human-human;
* ``raw_human`` (share of agreeing reader pairs), ``raw_judge_human`` (share of reader
  votes equal to the judge's verdict) and ``raw_difference``.

Rows pooled over matchups take chance agreement (kappa) and expected disagreement (alpha)
within each matchup and pool them, so no figure depends on which system of a matchup is
focal (see :func:`agreement_statistics`). The votes are held as sparse indicators (memory
grows with the votes, not units x readers).

The human-human and judge-human alpha and raw agreement are computed on the same units:
those with at least two human votes (the only units with human-human information).

Intervals: the pairs x readers bootstrap of :mod:`audit.uncertainty.bootstrap` (pairs
resampled within matchups, readers resampled, the product of the two weights) gives each
statistic's method-of-moments two-way variance ``V`` and its degrees of freedom ``df``
(:func:`audit.uncertainty.two_way.correct_two_way`); the interval is
``estimate -/+ t_df sqrt(V)`` (centred on the estimate: see :func:`_interval`). A resampled
reader's copies are never paired with each other (a reader does not agree with itself).
With fewer than two readers the interval resamples pairs only (``scheme = "pairs"``).
The two-way correction is exact for a mean; for kappa and alpha (smooth functions of
means) it is the first-order (delta-method) version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from audit.agreement import POOLED, _check_judge, _check_votes
from audit.estimate import Estimate
from audit.ids import ranks
from audit.rng import resolve_rng
from audit.uncertainty.bootstrap import multinomial_weights
from audit.uncertainty.two_way import correct_two_way

if TYPE_CHECKING:
    from scipy import sparse

STATISTICS = (
    "kappa_majority",
    "kappa_readers",
    "alpha_judge_human",
    "alpha_human",
    "alpha_difference",
    "raw_judge_human",
    "raw_human",
    "raw_difference",
)
#: the range of each statistic: the rescaled two-way replicates can leave it, the interval cannot
_RANGE = dict(
    kappa_majority=(-1.0, 1.0),
    kappa_readers=(-1.0, 1.0),
    raw_judge_human=(0.0, 1.0),
    raw_human=(0.0, 1.0),
    raw_difference=(-1.0, 1.0),
)


# ----------------------------------------------------------------------------- statistics
def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _kappa(po: np.ndarray, pe: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1.0 - 1e-12, (po - pe) / (1.0 - pe), np.nan)


def _alpha(o: np.ndarray) -> np.ndarray:
    """Nominal alpha pooled over strata from coincidence matrices ``o`` (B x S x 3 x 3).

    ``1 - sum_s D_o,s / sum_s D_e,s`` with ``D_o,s`` stratum ``s``'s disagreeing coincidences
    and ``D_e,s = (n_s^2 - sum_c n_cs^2) / (n_s - 1)`` the number expected from its own
    category shares; one stratum gives Krippendorff's ``1 - (n-1) D_o / D_e``.
    """
    nc = o.sum(axis=3)
    n = nc.sum(axis=2)
    use = n > 1
    d_o = np.where(use, n - np.trace(o, axis1=2, axis2=3), 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        d_e = np.where(use, (n**2 - np.sum(nc**2, axis=2)) / np.where(use, n - 1.0, 1.0), 0.0).sum(axis=1)
        return np.where(d_e > 1e-12, 1.0 - d_o / np.where(d_e > 1e-12, d_e, 1.0), np.nan)


@dataclass(frozen=True)
class ScopeVotes:
    """One scope's votes as sparse indicators: memory grows with the votes, not units x readers.

    ``ind[c]`` (units x readers, CSR) is 1 where the reader voted category ``c`` (0 other,
    1 focal, 2 tie) on the unit; ``by_stratum_reader[c]`` the same with one column per
    (reader, stratum) combination that has votes and ``combo_reader`` (combinations x
    readers) maps those columns to readers; ``stratum`` (units x strata) is each unit's
    matchup. ``judge`` (U,) is the judge's category (-1: no verdict), ``pairable`` (U,) the
    units with at least two human votes.
    """

    ind: tuple[sparse.csr_matrix, ...]
    by_stratum_reader: tuple[sparse.csr_matrix, ...]
    combo_reader: sparse.csr_matrix
    stratum: sparse.csr_matrix
    judge: np.ndarray
    pairable: np.ndarray

    def __post_init__(self) -> None:
        # the transposes the products use, built once (scipy rebuilds a transpose on every .T)
        object.__setattr__(
            self,
            "_t",
            {
                "stratum": self.stratum.T.tocsr(),
                "combo_reader": self.combo_reader.T.tocsr(),
                "judge_by_combo": self._judge_by_combo(),
                "judge_stratum": self._judge_stratum(),
            },
        )

    def _judge_stratum(self) -> np.ndarray | None:
        """Dense (U x 3S) indicator of each unit's judge category ``c`` and stratum ``s`` (column ``cS + s``),
        or None when it would be large: ``strat(x * (judge == c))`` for every ``c`` in one product."""
        n_u, n_s = self.stratum.shape
        if n_u * 3 * n_s > _JUDGE_STRATUM_MAX:
            return None
        out = np.zeros((n_u, 3 * n_s))
        has = self.judge >= 0
        units = np.flatnonzero(has)
        out[units, self.judge[has] * n_s + self.stratum.indices[units]] = 1.0
        return out

    def _judge_by_combo(self) -> sparse.csr_matrix:
        """The nine judge x reader tables of every (reader, stratum) combination as one matrix
        (9K x U): row ``(3j + c) K + k`` holds the units where the judge said ``j`` and
        combination ``k`` voted ``c`` (each vote in one row), so they come out of one product."""
        from scipy import sparse

        k = self.combo_reader.shape[0]
        rows, cols, vals = [], [], []
        for c, m in enumerate(self.by_stratum_reader):
            coo = m.tocoo()
            j = self.judge[coo.row]
            ok = j >= 0
            rows.append((3 * j[ok] + c) * k + coo.col[ok])
            cols.append(coo.row[ok])
            vals.append(coo.data[ok])
        return sparse.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(9 * k, self.n_units)
        )

    @property
    def n_units(self) -> int:
        return int(self.judge.shape[0])

    @property
    def n_readers(self) -> int:
        return int(self.ind[0].shape[1])


def scope_votes(
    unit: np.ndarray,
    reader: np.ndarray,
    category: np.ndarray,
    judge: np.ndarray,
    stratum: np.ndarray | None = None,
    n_readers: int | None = None,
) -> ScopeVotes:
    """Build :class:`ScopeVotes` from one row per vote (unit, reader, category codes).

    ``judge`` and ``stratum`` have one entry per unit (``stratum`` None: one stratum);
    ``n_readers`` defaults to ``max(reader) + 1``.
    """
    from scipy import sparse

    unit, reader, category = (np.asarray(a, dtype=np.int64) for a in (unit, reader, category))
    judge = np.asarray(judge, dtype=np.int64)
    n_u = judge.shape[0]
    n_r = int(n_readers if n_readers is not None else (reader.max() + 1 if reader.size else 0))
    strata = np.zeros(n_u, dtype=np.int64) if stratum is None else np.unique(stratum, return_inverse=True)[1]
    n_s = int(strata.max()) + 1 if n_u else 0
    combo, combo_code = np.unique(reader * max(n_s, 1) + strata[unit], return_inverse=True)
    ones = np.ones(unit.shape[0])

    def indicator(cols: np.ndarray, width: int, c: int) -> sparse.csr_matrix:
        m = category == c
        return sparse.csr_matrix((ones[m], (unit[m], cols[m])), shape=(n_u, width))

    counts = np.bincount(unit, minlength=n_u)
    return ScopeVotes(
        ind=tuple(indicator(reader, n_r, c) for c in range(3)),
        by_stratum_reader=tuple(indicator(combo_code, combo.shape[0], c) for c in range(3)),
        combo_reader=sparse.csr_matrix(
            (np.ones(combo.shape[0]), (np.arange(combo.shape[0]), combo // max(n_s, 1))), shape=(combo.shape[0], n_r)
        ),
        stratum=sparse.csr_matrix((np.ones(n_u), (np.arange(n_u), strata)), shape=(n_u, n_s)),
        judge=judge,
        pairable=counts >= 2,
    )


def _right(x: np.ndarray, m_t: sparse.csr_matrix) -> np.ndarray:
    """``x @ m`` for dense ``x`` (B x U) and sparse ``m`` (U x K) given ``m_t = m.T``, as a dense (B x K) array."""
    if m_t.shape[0] == 1 and m_t.nnz == m_t.shape[1]:  # one stratum holding every unit: a row sum
        # in C order whatever x's layout (numpy sums an F-ordered array in another order: the last digit moves)
        return np.ascontiguousarray(x).sum(axis=1, keepdims=True)
    return np.asarray((m_t @ x.T).T)


def _by_judge(sv: ScopeVotes, x: np.ndarray) -> list[np.ndarray]:
    """``strat(x * (judge == c))`` (B x S) for ``c`` = 0, 1, 2, for *integer-valued* ``x`` (counts):
    one matrix product; its sums of integers are exact whatever their order, so equal to the
    element-wise products summed by stratum."""
    d = sv._t["judge_stratum"]
    if d is None:
        return [_right(x * (sv.judge == c)[None, :], sv._t["stratum"]) for c in range(3)]
    n_s = sv.stratum.shape[1]
    y = x @ d
    return [y[:, c * n_s : (c + 1) * n_s] for c in range(3)]


def _reader_kappas(sv: ScopeVotes, wu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each reader's kappa with the judge (B x R), chance taken within each stratum, and its units."""
    k = sv.combo_reader.shape[0]
    nine = _right(wu, sv._t["judge_by_combo"])  # (B, 9K): the tables below, side by side
    table = [[nine[:, (3 * j + c) * k : (3 * j + c + 1) * k] for c in range(3)] for j in range(3)]  # (B, K) each
    n_k = sum(table[j][c] for j in range(3) for c in range(3))
    diag = sum(table[c][c] for c in range(3))
    chance = sum(_ratio(sum(table[c]) * sum(table[j][c] for j in range(3)), n_k) for c in range(3))
    chance = np.where(n_k > 0, chance, 0.0)
    n_r, diag_r, chance_r = (_right(x, sv._t["combo_reader"]) for x in (n_k, diag, chance))
    return _kappa(_ratio(diag_r, n_r), _ratio(chance_r, n_r)), n_r


def reader_counts(sv: ScopeVotes, wr: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Weighted votes per category (B, U) under reader weights ``wr`` and the self-pairs of resampled copies.

    What :func:`agreement_statistics` derives from the reader side alone: computed once per block of
    reader weights and passed to both kinds of replicate that resample readers (the sparse products
    over every vote are most of a large cell's agreement bootstrap).
    """
    # in C order like the weights (so what is derived from both is C-ordered and summed in one order
    # whichever is resampled)
    n = [np.ascontiguousarray((sv.ind[c] @ wr.T).T) for c in range(3)]
    s = [np.ascontiguousarray((sv.ind[c] @ (wr**2).T).T) for c in range(3)]
    return n, s


def agreement_statistics(
    sv: ScopeVotes,
    wu: np.ndarray,
    wr: np.ndarray,
    counts: tuple[list[np.ndarray], list[np.ndarray]] | None = None,
    kappas: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Every statistic of :data:`STATISTICS` under unit weights ``wu`` and reader weights ``wr``.

    ``wu`` (B, U) and ``wr`` (B, R) are integer resampling counts (all ones for the
    estimate); either may be one row of ones (1, U) or (1, R) when only the other side is
    resampled: what depends on it alone is then computed once, not once per replicate.
    Chance agreement (kappa) and expected disagreement (alpha) are taken within each stratum
    (matchup) and pooled, so swapping focal and other in any matchup changes nothing.
    ``counts`` is :func:`reader_counts` of ``(sv, wr)`` and ``kappas`` ``_reader_kappas(sv, wu)``
    when the caller already has them (the side not resampled gives the same in every chunk).
    Returns arrays of length B.
    """
    n, s = counts if counts is not None else reader_counts(sv, wr)
    m = n[0] + n[1] + n[2]
    judge, has_j = sv.judge, sv.judge >= 0
    jcat = [(judge == c)[None, :] for c in range(3)]

    def strat(x: np.ndarray) -> np.ndarray:
        return _right(x, sv._t["stratum"])

    # Cohen's kappa against the majority (ties abstain; a split is not scored), chance per stratum
    # majority focal (n1 > n0) or other (n0 > n1); every weight and count here is an integer
    focal_major, other_major = n[1] > n[0], n[0] > n[1]
    w = wu * ((focal_major | other_major) & has_j[None, :])
    tot = strat(w)
    agree = strat(w * ((focal_major & jcat[1]) | (other_major & jcat[0])))
    w_judge = _by_judge(sv, w)
    chance = sum(_ratio(w_judge[c] * strat(w * major), tot) for c, major in ((0, other_major), (1, focal_major)))
    total = tot.sum(axis=1)
    kappa_majority = _kappa(_ratio(agree.sum(axis=1), total), _ratio(np.where(tot > 0, chance, 0.0).sum(axis=1), total))

    # Cohen's kappa against each reader, averaged over (resampled) readers
    kappa_r, _ = kappas if kappas is not None else _reader_kappas(sv, wu)
    ok_r = np.isfinite(kappa_r)
    kappa_readers = _ratio(np.where(ok_r, kappa_r * wr, 0.0).sum(axis=1), np.where(ok_r, wr, 0.0).sum(axis=1))

    # human-human: Krippendorff's coincidences (copies of one reader never pair with each other)
    ok = sv.pairable[None, :] & (m > 1)
    f = np.where(ok, wu / np.where(ok, m - 1.0, 1.0), 0.0)
    o_h = np.empty((max(wu.shape[0], wr.shape[0]), sv.stratum.shape[1], 3, 3))
    for c in range(3):
        fn = f * n[c]
        o_h[:, :, c, c] = strat(fn * n[c] - f * s[c])
        for k in range(c + 1, 3):
            o_h[:, :, c, k] = o_h[:, :, k, c] = strat(fn * n[k])
    alpha_human = _alpha(o_h)
    agree_pairs = sum(n[c] ** 2 - s[c] for c in range(3))
    all_pairs = m**2 - (s[0] + s[1] + s[2])
    g = np.where(ok, wu, 0.0)
    raw_human = _ratio((g * agree_pairs).sum(axis=1), (g * all_pairs).sum(axis=1))

    # judge-human: two-coder units (judge, one reader vote), on the same pairable units
    gj = wu * (sv.pairable & has_j)[None, :]
    a = np.empty_like(o_h)  # a[b, s, c, k]: judge c, reader votes k
    for k in range(3):
        for c, column in enumerate(_by_judge(sv, gj * n[k])):
            a[:, :, c, k] = column
    alpha_judge_human = _alpha(a + a.transpose(0, 1, 3, 2))
    raw_judge_human = _ratio(np.trace(a, axis1=2, axis2=3).sum(axis=1), a.sum(axis=(1, 2, 3)))

    return dict(
        kappa_majority=kappa_majority,
        kappa_readers=kappa_readers,
        alpha_judge_human=alpha_judge_human,
        alpha_human=alpha_human,
        alpha_difference=alpha_judge_human - alpha_human,
        raw_judge_human=raw_judge_human,
        raw_human=raw_human,
        raw_difference=raw_judge_human - raw_human,
    )


def reader_kappas(sv: ScopeVotes) -> tuple[np.ndarray, np.ndarray]:
    """Each reader's Cohen's kappa with the judge (R,) and the number of units it uses (R,)."""
    kappa, n_r = _reader_kappas(sv, np.ones((1, sv.n_units)))
    return kappa[0], n_r[0].astype(int)


# ----------------------------------------------------------------------------- result
@dataclass(frozen=True)
class JudgeAgreementRow:
    """Judge-human agreement in one scope (see the module docstring for each statistic).

    ``level`` is ``"cell"``, ``"criterion"`` (pooled over matchups) or ``"all"``; ``scope``
    is ``"matchup/criterion"`` with ``all`` where pooled. ``n_units_scored`` counts the
    units with a judge verdict and a decisive reader majority (the units of
    ``kappa_majority``); ``n_units_pairable`` those with at least two human votes (the
    units of the alpha and raw comparisons). ``scheme`` is the interval's resampling
    (``two-way``, ``pairs`` or ``none``) and ``df`` the two-way degrees of freedom of
    ``kappa_majority`` (NaN for other schemes).
    """

    level: str
    scope: str
    matchup: str
    criterion: str
    n_pairs: int
    n_readers: int
    n_units: int
    n_units_scored: int
    n_units_pairable: int
    kappa_majority: Estimate
    kappa_readers: Estimate
    alpha_judge_human: Estimate
    alpha_human: Estimate
    alpha_difference: Estimate
    raw_judge_human: Estimate
    raw_human: Estimate
    raw_difference: Estimate
    scheme: str
    df: float


@dataclass(frozen=True)
class JudgeAgreement:
    """Judge-human agreement per scope with bootstrap intervals (see :func:`judge_agreement`).

    ``readers`` has one row per scope x reader: ``scope``, ``reader_id``, ``n_units`` (units
    where both the reader and the judge gave a verdict) and ``kappa``.
    """

    rows: tuple[JudgeAgreementRow, ...]
    readers: pd.DataFrame
    judge: str
    n_boot: int
    level: float
    seed: int | None

    def to_frame(self) -> pd.DataFrame:
        out = []
        for r in self.rows:
            flat = {k: getattr(r, k) for k in JudgeAgreementRow.__dataclass_fields__ if k not in STATISTICS}
            for name in STATISTICS:
                e = getattr(r, name)
                flat.update({name: e.estimate, f"{name}_ci_low": e.ci_low, f"{name}_ci_high": e.ci_high})
            out.append(flat)
        return pd.DataFrame(out)

    def row(self, scope: str = f"{POOLED}/{POOLED}") -> JudgeAgreementRow:
        for r in self.rows:
            if r.scope == scope:
                return r
        raise KeyError(scope)

    def __str__(self) -> str:
        lines = [
            f"Judge-human agreement of {self.judge or 'the judge'} ({self.level:.0%} intervals, "
            f"{self.n_boot} pairs x readers bootstrap replicates)"
        ]
        for r in self.rows:
            lines.append(
                f"  {r.scope}: kappa vs majority {r.kappa_majority}; alpha judge-human minus "
                f"human-human {r.alpha_difference}; raw agreement difference {r.raw_difference}"
            )
        return "\n".join(lines)


# ----------------------------------------------------------------------------- computation
_BLOCK_MIN, _BLOCK_MAX = 16, 256  #: replicates drawn from one seed (the same weights in every scope)
_JUDGE_STRATUM_MAX = 2**22  #: entries of the dense judge x stratum indicator (32 MB); beyond it, element-wise products
_CELLS = 2**21  #: replicates x units per computed chunk (bounds memory at ~ 20 x 8 bytes x this)


@dataclass(frozen=True)
class _Design:
    """Integer codes of the votes, units and pairs (one row per vote / unit / pair)."""

    vote_unit: np.ndarray
    vote_reader: np.ndarray
    vote_category: np.ndarray
    unit_pair: np.ndarray
    unit_matchup: np.ndarray
    unit_judge: np.ndarray
    pair_matchup: np.ndarray
    pair_position: np.ndarray  #: a pair's index among its matchup's pairs
    matchup_sizes: np.ndarray
    reader_ids: np.ndarray


def _design(frame: pd.DataFrame, verdicts: pd.DataFrame) -> tuple[_Design, pd.DataFrame]:
    units = frame.drop_duplicates("unit")[["unit", "pair_id", "criterion", "matchup"]].reset_index(drop=True)
    reader_ids, vote_reader = ranks(frame["reader_id"].to_numpy())
    pair_ids, unit_pair = ranks(units["pair_id"].to_numpy())
    matchups, unit_matchup = ranks(units["matchup"].to_numpy())
    pair_matchup = np.zeros(len(pair_ids), dtype=np.int64)
    pair_matchup[unit_pair] = unit_matchup
    order = np.argsort(pair_matchup, kind="stable")
    sizes = np.bincount(pair_matchup, minlength=len(matchups))
    position = np.empty(len(pair_ids), dtype=np.int64)
    position[order] = np.arange(len(pair_ids)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    judged = units.merge(verdicts, on=["pair_id", "criterion"], how="left")["y_judge"].to_numpy(float)
    return _Design(
        vote_unit=pd.Index(units["unit"]).get_indexer(frame["unit"]),
        vote_reader=vote_reader,
        vote_category=frame["category"].to_numpy().astype(np.int64),
        unit_pair=unit_pair,
        unit_matchup=unit_matchup,
        unit_judge=np.where(np.isnan(judged), -1, np.where(judged == 0.5, 2, judged)).astype(np.int64),
        pair_matchup=pair_matchup,
        pair_position=position,
        matchup_sizes=sizes,
        reader_ids=reader_ids,
    ), units


def _scopes(units: pd.DataFrame, pooled_only: bool = False):
    """Yield (level, matchup, criterion, unit indices) for every scope, cells first."""
    everything = np.arange(len(units))
    if pooled_only:
        yield "all", POOLED, POOLED, everything
        return
    cells = units.groupby(["matchup", "criterion"], sort=False).indices
    if len(cells) > 1:
        for (matchup, criterion), idx in cells.items():
            yield "cell", matchup, criterion, idx
    if units["matchup"].nunique() > 1 and units["criterion"].nunique() > 1:
        for criterion, idx in units.groupby("criterion", sort=False).indices.items():
            yield "criterion", POOLED, criterion, idx
    yield "all", POOLED, POOLED, everything


class _Weights:
    """Pairs x readers resampling weights, drawn block by block from per-block seeds.

    Pairs are resampled within their matchup, readers over all readers; block ``k``'s weights
    for matchup ``m`` come from the seed ``(seed_k, 1, m)`` and its reader weights from
    ``(seed_k, 0)``, so every scope sees the same replicates without holding replicates x
    pairs in memory.
    """

    def __init__(self, rng: np.random.Generator, design: _Design, n_boot: int):
        self.design, self.n_boot = design, n_boot
        # replicates per block: many for small data (fewer, larger products), few for large (memory)
        self.block = int(max(_BLOCK_MIN, min(_BLOCK_MAX, _CELLS // max(len(design.unit_pair), 1))))
        self.seeds = rng.integers(0, 2**63 - 1, size=max(math.ceil(n_boot / self.block), 0))

    def blocks(self):
        for k, seed in enumerate(self.seeds):
            yield int(seed), min(self.block, self.n_boot - k * self.block)

    def units(self, seed: int, size: int, unit_pair: np.ndarray) -> np.ndarray:
        d = self.design
        out = np.empty((size, unit_pair.shape[0]))
        unit_m = d.pair_matchup[unit_pair]
        for m in np.unique(unit_m):
            w = multinomial_weights(np.random.default_rng([seed, 1, int(m)]), int(d.matchup_sizes[m]), size)
            cols = unit_m == m
            out[:, cols] = w[:, d.pair_position[unit_pair[cols]]]
        return out

    def readers(self, seed: int, size: int) -> np.ndarray:
        return multinomial_weights(np.random.default_rng([seed, 0]), len(self.design.reader_ids), size)


def _replicates(
    sv: ScopeVotes, weights: _Weights, unit_pair: np.ndarray, readers_in: np.ndarray, two_way: bool
) -> tuple[dict[str, np.ndarray], ...]:
    """Replicates resampling pairs only, readers only and both (the last two when ``two_way``)."""
    from audit.glmm._threads import single_threaded_blas

    kinds = ("pairs", "readers", "product") if two_way else ("pairs",)
    out = {kind: [] for kind in kinds}
    step = max(1, min(weights.block, _CELLS // max(sv.n_units, 1)))
    ones_u, ones_r = np.ones((1, sv.n_units)), np.ones((1, len(readers_in)))  # the side not resampled
    unweighted = reader_counts(sv, ones_r)  # the same for every chunk
    unit_kappas = _reader_kappas(sv, ones_u) if two_way else None  # likewise, for the "readers" kind
    with single_threaded_blas():  # many small products: OpenBLAS thread hand-offs cost more than the work
        for seed, size in weights.blocks():
            wu_block = weights.units(seed, size, unit_pair)
            wr_block = weights.readers(seed, size)[:, readers_in]
            for lo in range(0, size, step):
                wu, wr = wu_block[lo : lo + step], wr_block[lo : lo + step]
                weighted = reader_counts(sv, wr) if two_way else None  # shared by "readers" and "product"
                for kind in kinds:
                    u, r, c, kap = {
                        "pairs": (wu, ones_r, unweighted, None),
                        "readers": (ones_u, wr, weighted, unit_kappas),
                        "product": (wu, wr, weighted, None),
                    }[kind]
                    out[kind].append(agreement_statistics(sv, u, r, c, kap))
    return tuple({k: np.concatenate([c[k] for c in out[kind]]) for k in STATISTICS} for kind in kinds)


def _interval(estimate: float, variance: float, df: float, level: float, statistic: str) -> tuple[float, float]:
    """``estimate -/+ t_df sqrt(variance)``, kept inside the statistic's range.

    Centred on the estimate rather than read off the replicates' percentiles: resampling
    readers gives each replicate a noisier majority than the data's, so the replicates of
    the majority-based statistics sit systematically below the estimate (a judge that tracks
    the readers' majority shows it most); their spread is still the spread we need.
    """
    from scipy.special import ndtri
    from scipy.stats import t as student_t

    if not (np.isfinite(estimate) and np.isfinite(variance)):
        return math.nan, math.nan
    q = float(student_t.ppf(0.5 + level / 2.0, df)) if np.isfinite(df) and df > 0 else float(ndtri(0.5 + level / 2.0))
    half = q * math.sqrt(max(variance, 0.0))
    low, high = _RANGE.get(statistic, (-math.inf, math.inf))
    return float(max(estimate - half, low)), float(min(estimate + half, high))


def judge_agreement(
    votes: pd.DataFrame,
    judge_choice: pd.DataFrame,
    *,
    judge: str = "",
    n_boot: int = 1000,
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    pooled_only: bool = False,
) -> JudgeAgreement:
    """Cohen's kappa and judge-minus-human alpha / raw agreement, per scope, with intervals.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (pair_id, reader_id, criterion, matchup, y: 1 focal, 0 other, NaN tie).
    judge_choice : DataFrame
        One configuration's verdicts: pair_id, criterion, y_judge (1, 0, 0.5 tie, NaN none).
    judge : str
        The configuration's name (recorded).
    n_boot : int
        Bootstrap replicates (0: estimates only). Only their variances are used, so a few
        hundred suffice (500 replicates estimate a standard error to ~3%).
    level : float
        Interval level.
    rng : int, Generator or None
        Seed of the bootstrap (recorded in ``seed``).
    pooled_only : bool
        Only the ``all/all`` row (what ranking configurations needs).

    Returns
    -------
    JudgeAgreement
        One :class:`JudgeAgreementRow` per scope (cells, criteria pooled over matchups when
        there are several of each, ``all``) and each reader's kappa per scope.

    Raises
    ------
    InputError
        As :func:`audit.agreement.reader_baseline` (missing columns, votes or verdicts out of
        range, repeated votes or verdicts).

    Notes
    -----
    Statistics are NaN (never an error) where undefined: every vote in one category, no
    judge verdict, no unit with two human votes. Validated against R ``psych::cohen.kappa``
    (kappa against the majority and against each reader) and the ``krippendorff`` package
    (both alphas) in ``tests/reference/judge_agreement/``.
    """
    frame = _check_votes(votes, ("matchup", "criterion"))
    verdicts = _check_judge(judge_choice)
    rng, seed = resolve_rng(rng)
    design, units = _design(frame, verdicts)
    weights = _Weights(rng, design, int(n_boot))
    vote_order = np.argsort(design.vote_unit, kind="stable")
    starts = np.searchsorted(design.vote_unit[vote_order], np.arange(len(units) + 1))

    rows, reader_rows = [], []
    for level_name, matchup, criterion, unit_idx in _scopes(units, pooled_only):
        unit_idx = np.sort(unit_idx)
        lengths = starts[unit_idx + 1] - starts[unit_idx]
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        votes_in = vote_order[np.repeat(starts[unit_idx], lengths) + offsets]  # the scope's votes, by unit
        readers_in, local_reader = np.unique(design.vote_reader[votes_in], return_inverse=True)
        local_unit = np.searchsorted(unit_idx, design.vote_unit[votes_in])
        sv = scope_votes(
            local_unit,
            local_reader,
            design.vote_category[votes_in],
            design.unit_judge[unit_idx],
            design.unit_matchup[unit_idx],
            n_readers=len(readers_in),
        )
        unit_pair = design.unit_pair[unit_idx]
        n_p, n_r, n_u = len(np.unique(unit_pair)), len(readers_in), len(unit_idx)
        point = agreement_statistics(sv, np.ones((1, n_u)), np.ones((1, n_r)))
        scheme, df = "none", math.nan
        bounds = {k: (math.nan, math.nan) for k in STATISTICS}
        if n_boot > 0 and n_p >= 2:
            if n_r >= 2:
                scheme = "two-way"
                by_pairs, by_readers, product = _replicates(sv, weights, unit_pair, readers_in, True)
                for k in STATISTICS:
                    est = float(point[k][0])
                    corr = correct_two_way(est, product[k], by_pairs[k], by_readers[k], n_p, n_r)
                    if k == "kappa_majority":
                        df = corr.df
                    bounds[k] = _interval(est, corr.variance, corr.df, level, k)
            else:
                scheme = "pairs"
                (by_pairs,) = _replicates(sv, weights, unit_pair, readers_in, False)
                for k in STATISTICS:
                    reps = by_pairs[k][np.isfinite(by_pairs[k])]
                    var = float(reps.var(ddof=1)) if reps.size >= 2 else math.nan
                    bounds[k] = _interval(float(point[k][0]), var, math.inf, level, k)
        estimates = {k: Estimate(float(point[k][0]), *bounds[k]) for k in STATISTICS}
        focal, other = (np.asarray(sv.ind[c].sum(axis=1)).ravel() for c in (1, 0))
        rows.append(
            JudgeAgreementRow(
                level=level_name,
                scope=f"{matchup}/{criterion}",
                matchup=str(matchup),
                criterion=str(criterion),
                n_pairs=n_p,
                n_readers=n_r,
                n_units=n_u,
                n_units_scored=int(np.sum((focal != other) & (sv.judge >= 0))),
                n_units_pairable=int(sv.pairable.sum()),
                scheme=scheme,
                df=float(df),
                **estimates,
            )
        )
        kappas, n_used = reader_kappas(sv)
        for r, k, nu in zip(design.reader_ids[readers_in], kappas, n_used):
            reader_rows.append(dict(scope=f"{matchup}/{criterion}", reader_id=str(r), n_units=int(nu), kappa=float(k)))
    readers = pd.DataFrame(reader_rows, columns=["scope", "reader_id", "n_units", "kappa"])
    return JudgeAgreement(
        rows=tuple(rows), readers=readers, judge=judge, n_boot=int(n_boot), level=float(level), seed=seed
    )
