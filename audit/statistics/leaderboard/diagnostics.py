"""What a careful reader of a leaderboard asks of it (:func:`leaderboard_diagnostics`): which neighbours are
statistically tied, whether the position a system was shown in moves the order, whether a few heavy
readers carry it, whether some triples of systems beat each other in a circle, and whether the tie
convention moves it.

The leaderboard's own order is the humans' crossed GLMM (:mod:`judge_transfer_audit.statistics.leaderboard.fit`); the
position, reader and tie questions are asked of the vote-level Bradley-Terry model
(:func:`judge_transfer_audit.statistics.leaderboard.votes.fit_vote_level`, the model of LMArena's ``arena-rank``),
whose order each refit is compared with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judge_transfer_audit.model.estimate import Estimate
from judge_transfer_audit.statistics.leaderboard.votes import fit_vote_level

HEAVY_SHARE = 0.25  #: the heaviest readers left out together cast at least this share of the votes
MAX_CYCLES_LISTED = 20


@dataclass(frozen=True)
class SystemDiagnostics:
    """One system's diagnostics (ranks: 1 = strongest).

    ``rank_low``/``rank_high``: 1 + the systems significantly stronger, k - the systems significantly
    weaker (pairwise Wald tests of the GLMM strengths at the leaderboard's level); ``tied_with_next``:
    the next system down is not significantly weaker. ``vote_level``: the vote-level Bradley-Terry
    strength (centred logit, ties left out) with ``arena-rank``'s vote-level sandwich interval;
    ``vote_level_reader``: the same strength with the reader-clustered interval; ``se_glmm``,
    ``se_votes``, ``se_readers`` the three standard errors side by side. The other ranks are the
    vote-level model's: as fitted (``rank_vote_level``), with ties as half a win each
    (``rank_ties_half``), with a position term (``rank_position_adjusted``, None without
    ``shown_first``) and without the heaviest readers (``rank_without_heavy_readers``).
    """

    system: str
    rank: int
    rank_low: int
    rank_high: int
    tied_with_next: bool
    vote_level: Estimate
    vote_level_reader: Estimate
    se_glmm: float
    se_votes: float
    se_readers: float
    rank_vote_level: int
    rank_ties_half: int
    rank_position_adjusted: int | None
    rank_without_heavy_readers: int | None


@dataclass(frozen=True)
class IntransitiveTriple:
    """Three systems each preferred to the next in the head-to-head votes (``systems[0]`` over
    ``systems[1]`` over ``systems[2]`` over ``systems[0]``): the three decisive win rates, the votes
    behind each, and the intersection-union p-value (the largest of the three one-sided binomial
    p-values against 0.5)."""

    systems: tuple[str, str, str]
    win_rates: tuple[float, float, float]
    n_votes: tuple[int, int, int]
    p_value: float


@dataclass(frozen=True)
class LeaderboardDiagnostics:
    """See :func:`leaderboard_diagnostics`.

    Attributes
    ----------
    systems : tuple of SystemDiagnostics
        In the leaderboard's order.
    tied_neighbours : tuple of (str, str)
        Adjacent systems whose difference is not significant at ``level``.
    position : Estimate or None
        Logit advantage of the system shown first (vote-level, reader-clustered interval); None without
        ``shown_first``.
    n_position_votes : int
        Decisive votes with a usable ``shown_first``.
    position_tau : float or None
        Kendall tau between the vote-level order of those votes with and without the position term.
    position_moved : tuple of str
        Systems whose rank changes when the position term is added.
    n_readers, effective_readers, max_reader_share : int, float, float
        Readers with a decisive vote; ``(sum n)^2 / sum n^2`` of their vote counts; the largest share.
    heavy_readers, heavy_share : int, float
        The fewest heaviest readers who cast at least ``HEAVY_SHARE`` of the decisive votes, and the share.
    heavy_tau, heavy_moved
        Kendall tau of the vote-level order with and without them (None when they cannot be left out);
        systems whose rank changes.
    design_effect : float
        Mean over systems of (reader-clustered / vote-level standard error) squared.
    n_triples, n_cycles, n_significant_cycles : int
        Triples with all three matchups voted on; those whose win rates go round in a circle; those whose
        circle is significant (intersection-union p-value <= (1 - level) / n_triples, Bonferroni).
    cycles : tuple of IntransitiveTriple
        The significant circles (at most 20, smallest p-value first).
    n_ties, tie_tau, tie_moved
        Ties among the criterion's votes; Kendall tau of the vote-level order with ties left out and as half
        a win each; systems whose rank changes.
    notes : tuple of str
    """

    systems: tuple[SystemDiagnostics, ...]
    tied_neighbours: tuple[tuple[str, str], ...]
    position: Estimate | None
    n_position_votes: int
    position_tau: float | None
    position_moved: tuple[str, ...]
    n_readers: int
    effective_readers: float
    max_reader_share: float
    heavy_readers: int
    heavy_share: float
    heavy_tau: float | None
    heavy_moved: tuple[str, ...]
    design_effect: float
    n_triples: int
    n_cycles: int
    n_significant_cycles: int
    cycles: tuple[IntransitiveTriple, ...]
    n_ties: int
    tie_tau: float
    tie_moved: tuple[str, ...]
    level: float
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for s in self.systems:
            rows.append(
                dict(
                    system=s.system,
                    rank=s.rank,
                    rank_low=s.rank_low,
                    rank_high=s.rank_high,
                    tied_with_next=s.tied_with_next,
                    vote_level=s.vote_level.estimate,
                    vote_ci_low=s.vote_level.ci_low,
                    vote_ci_high=s.vote_level.ci_high,
                    reader_ci_low=s.vote_level_reader.ci_low,
                    reader_ci_high=s.vote_level_reader.ci_high,
                    se_glmm=s.se_glmm,
                    se_votes=s.se_votes,
                    se_readers=s.se_readers,
                    rank_vote_level=s.rank_vote_level,
                    rank_ties_half=s.rank_ties_half,
                    rank_position_adjusted=s.rank_position_adjusted,
                    rank_without_heavy_readers=s.rank_without_heavy_readers,
                )
            )
        return pd.DataFrame(rows, columns=list(rows[0]) if rows else ["system"])

    def cycles_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                dict(
                    first=c.systems[0],
                    second=c.systems[1],
                    third=c.systems[2],
                    rate_1_2=c.win_rates[0],
                    rate_2_3=c.win_rates[1],
                    rate_3_1=c.win_rates[2],
                    votes_1_2=c.n_votes[0],
                    votes_2_3=c.n_votes[1],
                    votes_3_1=c.n_votes[2],
                    p_value=c.p_value,
                )
                for c in self.cycles
            ],
            columns=[
                "first",
                "second",
                "third",
                "rate_1_2",
                "rate_2_3",
                "rate_3_1",
                "votes_1_2",
                "votes_2_3",
                "votes_3_1",
                "p_value",
            ],
        )

    def __str__(self) -> str:
        return "Leaderboard diagnostics:\n" + "\n".join(f"  {line}" for line in self.summary_lines())

    def summary_lines(self) -> list[str]:
        """Plain sentences for the report and the terminal."""
        k = len(self.systems)
        out = [
            f"{len(self.tied_neighbours)} of {max(k - 1, 0)} neighbouring pairs are statistically tied at "
            f"{self.level:.0%}"
        ]
        if self.position is not None:
            out.append(
                f"position: the system shown first gains {self.position} on the logit scale "
                f"({self.n_position_votes} votes); with it in the model tau {self.position_tau:.3f}, "
                f"{len(self.position_moved)} system(s) change rank"
            )
        readers = (
            f"readers: {self.n_readers} (effective {self.effective_readers:.1f}, the heaviest casts "
            f"{self.max_reader_share:.1%}); reader-clustered variance {self.design_effect:.2f}x the vote-level"
        )
        if self.heavy_tau is not None:
            readers += (
                f"; without the {self.heavy_readers} heaviest ({self.heavy_share:.0%} of the votes) "
                f"tau {self.heavy_tau:.3f}, {len(self.heavy_moved)} system(s) change rank"
            )
        out.append(readers)
        out.append(
            f"intransitive triples: {self.n_cycles} of {self.n_triples} go round in a circle, "
            f"{self.n_significant_cycles} significantly"
        )
        out.append(
            f"ties ({self.n_ties}) as half a win instead of left out: tau {self.tie_tau:.3f}, "
            f"{len(self.tie_moved)} system(s) change rank"
        )
        return out


def _ranks(strength: np.ndarray) -> np.ndarray:
    from judge_transfer_audit.statistics.leaderboard.bootstrap import strength_ranks

    return strength_ranks(np.asarray(strength, float))


def _rank_or_none(r: float) -> int | None:
    return int(r) if np.isfinite(r) else None


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    from judge_transfer_audit.statistics.distributions import kendalltau

    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return math.nan
    return float(kendalltau(a, b).statistic)


def _moved(names: list[str], a: np.ndarray, b: np.ndarray) -> tuple[str, ...]:
    return tuple(n for n, x, y in zip(names, a, b) if np.isfinite(x) and np.isfinite(y) and x != y)


def neighbour_tests(strength: np.ndarray, cov: np.ndarray, level: float):
    """Pairwise Wald tests of the strengths: the matrix ``stronger[i, j]`` (i significantly stronger than j)
    at two-sided ``level``."""
    from judge_transfer_audit.statistics.distributions import norm

    z = float(norm.ppf(0.5 + level / 2.0))
    d = strength[:, None] - strength[None, :]
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2.0 * cov
    se = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        stronger = d - z * se > 0.0
    np.fill_diagonal(stronger, False)
    return stronger


def intransitive_triples(
    wins: np.ndarray, names: list[str], level: float
) -> tuple[int, int, int, tuple[IntransitiveTriple, ...]]:
    """Circles among ``wins[i, j]`` (decisive votes preferring i to j): (triples with every matchup voted,
    circles, significant circles, the significant ones listed)."""
    from scipy.special import bdtrc

    n = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n > 0, wins / np.maximum(n, 1), np.nan)
    # one-sided p-value of "i preferred to j": P(X >= wins | n, 1/2)
    p = np.where(wins > 0, bdtrc(np.maximum(wins - 1, 0).astype(np.int64), n.astype(np.int64), 0.5), 1.0)
    k = len(names)
    played = n > 0
    beats = np.nan_to_num(rate, nan=0.5) > 0.5
    n_triples = 0
    found = []
    for i in range(k):
        # j, l > i; circle i -> j -> l -> i (each orientation is one ordered (j, l))
        J, L = np.meshgrid(np.arange(i + 1, k), np.arange(i + 1, k), indexing="ij")
        tri = played[i, J] & played[J, L] & played[L, i] & (J < L)
        n_triples += int(tri.sum())
        for jj, ll in ((J, L), (L, J)):
            circle = (J < L) & played[i, jj] & played[jj, ll] & played[ll, i]
            circle &= beats[i, jj] & beats[jj, ll] & beats[ll, i]
            for j, l in zip(jj[circle].tolist(), ll[circle].tolist()):
                pv = float(max(p[i, j], p[j, l], p[l, i]))
                found.append((pv, (i, j, l)))
    bound = (1.0 - level) / n_triples if n_triples else 0.0
    significant = sorted((c for c in found if c[0] <= bound), key=lambda c: c[0])
    listed = tuple(
        IntransitiveTriple(
            systems=(names[i], names[j], names[l]),
            win_rates=(float(rate[i, j]), float(rate[j, l]), float(rate[l, i])),
            n_votes=(int(n[i, j]), int(n[j, l]), int(n[l, i])),
            p_value=pv,
        )
        for pv, (i, j, l) in significant[:MAX_CYCLES_LISTED]
    )
    return n_triples, len(found), len(significant), listed


def _position_codes(votes: pd.DataFrame) -> np.ndarray:
    """+1 focal shown first, -1 other shown first, 0 unknown."""
    if "shown_first" not in votes.columns:
        return np.zeros(len(votes), np.int64)
    shown = votes["shown_first"].fillna("").astype(str).str.strip().to_numpy()
    focal = votes["focal"].astype(str).to_numpy()
    other = votes["other"].astype(str).to_numpy()
    return np.where(shown == focal, 1, np.where(shown == other, -1, 0)).astype(np.int64)


def _linked(focal: np.ndarray, other: np.ndarray, k: int) -> bool:
    from judge_transfer_audit.statistics.leaderboard.bootstrap import all_linked

    return len(focal) > 0 and all_linked(focal, other, k)


def leaderboard_diagnostics(
    votes: pd.DataFrame,
    systems: list[str],
    strength: np.ndarray,
    cov: np.ndarray,
    *,
    level: float = 0.95,
) -> LeaderboardDiagnostics:
    """The diagnostics of a connected leaderboard.

    Parameters
    ----------
    votes : DataFrame
        The ranked criterion's votes, ties included (focal, other, y: 1, 0 or NaN for a tie, reader_id,
        optional shown_first).
    systems : list of str
        The systems in code order (sorted).
    strength, cov : arrays
        The leaderboard's centred human strengths (the GLMM's) and their covariance, in ``systems`` order.
    level : float
        Level of every interval and test.
    """
    from judge_transfer_audit.statistics.distributions import norm

    k = len(systems)
    index = pd.Index(systems)
    focal = index.get_indexer(votes["focal"].astype(str)).astype(np.int64)
    other = index.get_indexer(votes["other"].astype(str)).astype(np.int64)
    y = votes["y"].to_numpy(float)
    readers = pd.factorize(votes["reader_id"].astype(str))[0]
    decisive = ~np.isnan(y)
    notes: list[str] = []
    z = float(norm.ppf(0.5 + level / 2.0))

    # the leaderboard's order: tied neighbours and rank intervals
    rank = _ranks(strength)
    stronger = neighbour_tests(strength, cov, level)
    rank_low = 1 + stronger.sum(axis=0)  # systems significantly stronger than this one
    rank_high = k - stronger.sum(axis=1)
    order = np.argsort(rank, kind="stable")
    tied_next = np.zeros(k, bool)
    tied_pairs = []
    for a, b in zip(order[:-1], order[1:]):
        if not stronger[a, b]:
            tied_next[a] = True
            tied_pairs.append((systems[a], systems[b]))

    # vote-level model, ties left out, with both sandwich covariances
    fit = fit_vote_level(focal, other, y, k, readers=readers)
    if not fit.converged:
        notes.append("the vote-level Bradley-Terry fit did not converge (a system wins or loses every vote)")
    d_sys = np.concatenate([focal[decisive], other[decisive]])
    d_won = np.concatenate([y[decisive] == 1, y[decisive] == 0])
    won, played = np.bincount(d_sys, d_won, minlength=k), np.bincount(d_sys, minlength=k)
    separated = [systems[j] for j in range(k) if played[j] and won[j] in (0, played[j])]
    if separated:
        notes.append(
            f"{', '.join(separated)} win(s) or lose(s) every decisive vote: the vote-level strength is infinite "
            "(shown where the fit stops) and its intervals meaningless"
        )
    se_votes = np.sqrt(np.maximum(np.diag(fit.cov_votes), 0.0))
    se_readers = np.sqrt(np.maximum(np.diag(fit.cov_readers), 0.0))
    rank_votes = _ranks(fit.strengths)

    # ties as half a win each
    n_ties = int((~decisive).sum())
    half = fit_vote_level(focal, other, y, k, ties="half")
    rank_half = _ranks(half.strengths)

    # position
    pos = _position_codes(votes)
    usable = decisive & (pos != 0)
    rank_pos = np.full(k, np.nan)
    position, pos_tau, pos_moved = None, None, ()
    n_pos = int(usable.sum())
    if n_pos and _linked(focal[usable], other[usable], k):
        args = (focal[usable], other[usable], y[usable], k)
        plain = fit_vote_level(*args)
        adj = fit_vote_level(*args, position=pos[usable], readers=readers[usable])
        se = adj.position_se[2]
        position = Estimate(adj.position, adj.position - z * se, adj.position + z * se)
        rank_plain = _ranks(plain.strengths)
        rank_pos = _ranks(adj.strengths)
        pos_tau = _tau(plain.strengths, adj.strengths)
        pos_moved = _moved(systems, rank_plain, rank_pos)
    elif n_pos:
        notes.append("the votes with a known position do not link every system: no position diagnostic")

    # concentration among readers
    counts = np.bincount(readers[decisive])
    counts = counts[counts > 0]
    total = counts.sum()
    by_size = np.sort(counts)[::-1]
    n_heavy = int(np.searchsorted(np.cumsum(by_size), HEAVY_SHARE * total) + 1)
    n_heavy = min(n_heavy, len(by_size))
    reader_counts = np.bincount(readers[decisive], minlength=readers.max() + 1 if len(readers) else 0)
    heavy_ids = np.argsort(-reader_counts, kind="stable")[:n_heavy]
    light = decisive & ~np.isin(readers, heavy_ids)
    rank_light = np.full(k, np.nan)
    heavy_tau, heavy_moved = None, ()
    if n_heavy < len(by_size) and _linked(focal[light], other[light], k):
        light_fit = fit_vote_level(focal[light], other[light], y[light], k)
        rank_light = _ranks(light_fit.strengths)
        heavy_tau = _tau(fit.strengths, light_fit.strengths)
        heavy_moved = _moved(systems, rank_votes, rank_light)
    else:
        notes.append("without the heaviest readers the votes do not link every system: no heavy-reader refit")
    with np.errstate(invalid="ignore", divide="ignore"):
        design_effect = float(np.nanmean((se_readers / se_votes) ** 2))

    # intransitive triples
    wins = np.zeros((k, k))
    d_f, d_o, d_y = focal[decisive], other[decisive], y[decisive]
    np.add.at(wins, (np.where(d_y == 1, d_f, d_o), np.where(d_y == 1, d_o, d_f)), 1.0)
    n_triples, n_cycles, n_sig, cycles = intransitive_triples(wins, systems, level)

    se_glmm = np.sqrt(np.maximum(np.diag(cov), 0.0))
    rows = []
    for j in order.tolist():
        s = float(fit.strengths[j])
        rows.append(
            SystemDiagnostics(
                system=systems[j],
                rank=int(rank[j]),
                rank_low=int(rank_low[j]),
                rank_high=int(rank_high[j]),
                tied_with_next=bool(tied_next[j]),
                vote_level=Estimate(s, s - z * se_votes[j], s + z * se_votes[j]),
                vote_level_reader=Estimate(s, s - z * se_readers[j], s + z * se_readers[j]),
                se_glmm=float(se_glmm[j]),
                se_votes=float(se_votes[j]),
                se_readers=float(se_readers[j]),
                rank_vote_level=int(rank_votes[j]),
                rank_ties_half=int(rank_half[j]),
                rank_position_adjusted=_rank_or_none(rank_pos[j]),
                rank_without_heavy_readers=_rank_or_none(rank_light[j]),
            )
        )
    return LeaderboardDiagnostics(
        systems=tuple(rows),
        tied_neighbours=tuple(tied_pairs),
        position=position,
        n_position_votes=n_pos,
        position_tau=pos_tau,
        position_moved=pos_moved,
        n_readers=int(len(counts)),
        effective_readers=float(total**2 / np.sum(counts.astype(float) ** 2)) if total else math.nan,
        max_reader_share=float(by_size[0] / total) if total else math.nan,
        heavy_readers=n_heavy,
        heavy_share=float(by_size[:n_heavy].sum() / total) if total else math.nan,
        heavy_tau=heavy_tau,
        heavy_moved=heavy_moved,
        design_effect=design_effect,
        n_triples=n_triples,
        n_cycles=n_cycles,
        n_significant_cycles=n_sig,
        cycles=cycles,
        n_ties=n_ties,
        tie_tau=_tau(fit.strengths, half.strengths),
        tie_moved=_moved(systems, rank_votes, rank_half),
        level=float(level),
        notes=tuple(notes),
    )


__all__ = [
    "HEAVY_SHARE",
    "IntransitiveTriple",
    "LeaderboardDiagnostics",
    "SystemDiagnostics",
    "intransitive_triples",
    "leaderboard_diagnostics",
    "neighbour_tests",
]
