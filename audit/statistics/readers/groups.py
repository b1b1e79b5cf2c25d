"""Reader groups (e.g. experts vs enthusiasts): every cell split by group, groups compared.

Readers are the unit: in each matchup x criterion cell (and all matchups pooled) every
reader gets a rate under the run's tie rule, each group is summarised by the mean of its readers' rates
(and by the pooled vote rate), and the groups are compared by a permutation test that
reshuffles the group labels among the readers of the cell. With two groups the statistic is
the difference of the groups' mean reader rates (first minus second in sorted order); with
more, the range (max - min). The permutation distribution is enumerated exactly when it has
at most ``max_permutations`` arrangements, and sampled (with ``rng``; seed recorded)
otherwise. Readers without a group are left out and counted.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, TieRule
from judge_transfer_audit.statistics.readers._common import (
    ALL_MATCHUPS,
    COMPUTED,
    fmt,
    has_values,
    vote_credit,
    with_pooled_scopes,
)

GROUP_COLUMNS = ["matchup", "criterion", "group", "n_readers", "n_votes", "vote_rate", "mean_reader_rate"]
COMPARE_COLUMNS = ["matchup", "criterion", "groups", "statistic", "kind", "p_value", "n_permutations", "exact"]


@dataclass(frozen=True, eq=False)
class ReaderGroups:
    """Every cell split by reader group, and the groups compared.

    Attributes
    ----------
    status : Status
        SKIPPED without ``reader_group`` or with fewer than two groups.
    reason : str
    groups : tuple[str, ...]
    readers_per_group : dict[str, int]
    by_group : DataFrame
        matchup, criterion, group, n_readers, n_votes, vote_rate, mean_reader_rate.
    comparison : DataFrame
        matchup, criterion, groups, statistic (difference or range of mean reader rates),
        kind (``difference`` / ``range``), p_value (two-sided permutation), n_permutations,
        exact.
    n_ungrouped_readers : int
    seed : int | None
        Seed of the Monte Carlo permutations (None when every test was exact or a
        Generator was passed).
    """

    status: Status
    reason: str = ""
    groups: tuple[str, ...] = ()
    readers_per_group: dict[str, int] = field(default_factory=dict)
    by_group: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=GROUP_COLUMNS))
    comparison: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=COMPARE_COLUMNS))
    n_ungrouped_readers: int = 0
    seed: int | None = None

    def to_frame(self) -> pd.DataFrame:
        return self.by_group.copy()

    def __str__(self) -> str:
        if self.status is not COMPUTED:
            return f"Reader groups: {self.status.value} ({self.reason})"
        counts = ", ".join(f"{g} ({n} readers)" for g, n in self.readers_per_group.items())
        lines = [f"Reader groups: {counts}; {self.n_ungrouped_readers} ungrouped reader(s) left out"]
        for r in self.comparison[self.comparison["matchup"] == ALL_MATCHUPS].itertuples(index=False):
            lines.append(f"  {r.criterion}: {r.kind} {fmt(r.statistic)} (p={fmt(r.p_value)})")
        return "\n".join(lines)


def _statistics(rates: np.ndarray, codes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Statistic for each row of ``codes`` (arrangements x readers, group index per reader)."""
    means = np.stack([((codes == g) * rates).sum(axis=1) / sizes[g] for g in range(len(sizes))], axis=1)
    if len(sizes) == 2:
        return means[:, 0] - means[:, 1]
    return means.max(axis=1) - means.min(axis=1)


def permutation_test(
    rates: np.ndarray, labels: np.ndarray, groups: list[str], rng: np.random.Generator, max_permutations: int
) -> tuple[float, float, int, bool]:
    """Return (statistic, two-sided p, permutations used, exact?).

    Exact: every distinct assignment of the group sizes to readers, p = share of
    arrangements with ``|T*| >= |T|``. Sampled: ``(1 + #{|T*| >= |T|}) / (1 + B)``.
    """
    rates = np.asarray(rates, float)
    codes = np.array([groups.index(lab) for lab in labels])
    sizes = np.bincount(codes, minlength=len(groups)).astype(float)
    observed = float(_statistics(rates, codes[None, :], sizes)[0])
    n = len(rates)
    n_arrangements = math.factorial(n)
    for size in sizes:
        n_arrangements //= math.factorial(int(size))
    tol = 1e-12
    if n_arrangements <= max_permutations:
        arrangements = np.empty((n_arrangements, n), dtype=int)
        for row, blocks in enumerate(_assignments(n, [int(x) for x in sizes])):
            for g, idx in enumerate(blocks):
                arrangements[row, list(idx)] = g
        stats = _statistics(rates, arrangements, sizes)
        return observed, float(np.mean(np.abs(stats) >= abs(observed) - tol)), n_arrangements, True
    sampled = rng.permuted(np.tile(codes, (max_permutations, 1)), axis=1)
    count = int(np.sum(np.abs(_statistics(rates, sampled, sizes)) >= abs(observed) - tol))
    return observed, (1 + count) / (1 + max_permutations), max_permutations, False


def _assignments(n: int, sizes: list[int]):
    """Every way to split range(n) into ordered blocks of the given sizes."""

    def rec(pool: tuple[int, ...], sizes: list[int]):
        if len(sizes) == 1:
            yield (pool,)
            return
        for first in itertools.combinations(pool, sizes[0]):
            rest = tuple(i for i in pool if i not in first)
            for tail in rec(rest, sizes[1:]):
                yield (first, *tail)

    yield from rec(tuple(range(n)), sizes)


def reader_groups(
    votes: pd.DataFrame,
    *,
    rng: int | np.random.Generator | None = None,
    max_permutations: int = 10000,
    pools: Mapping[str, Sequence[str]] | None = None,
    tie_rule: TieRule = EVEN_SPLIT,
) -> ReaderGroups:
    """Split every cell by ``reader_group`` and compare the groups (see the module docstring).

    Parameters
    ----------
    votes : DataFrame
        Normalised votes with ``reader_group`` (one group per reader; empty = ungrouped,
        left out of the comparison and counted).
    rng : int, numpy Generator or None
        For sampled permutations (when the distinct relabellings exceed
        ``max_permutations``); the seed is recorded.
    max_permutations : int
        Enumerate every relabelling up to this many, otherwise sample this many.
    pools : mapping of label to matchups, optional
        The pooled comparisons (:meth:`judge_transfer_audit.model.data.AuditData.pooling_scopes`); default: every
        matchup under ``(all matchups)``.
    tie_rule : TieRule
        How a tied vote is credited in the reader rates (:mod:`judge_transfer_audit.model.tie_rules`); a reader
        whose every vote in a cell is a tie the rule does not count has no rate there.

    Returns
    -------
    ReaderGroups
        ``by_group``: every matchup x criterion cell split by group; ``comparison``: per
        cell, the difference of mean reader rates (two groups) or their range (three or
        more) with its permutation p-value over readers. SKIPPED with fewer than 2 groups.

    Raises
    ------
    InputError
        When a reader carries more than one group.

    Notes
    -----
    Readers, not votes, are the permuted units (votes of one reader are not
    independent). The exact p-value is checked against brute-force enumeration of every
    relabelling, the sampled one for reproducibility and closeness to the exact value,
    and the group rates against counts by hand (tests/audit/statistics/readers/test_groups.py).
    """
    if not has_values(votes, "reader_group"):
        return ReaderGroups(status=Status.SKIPPED, reason="needs a 'reader_group' column")
    grp = votes.assign(reader_group=votes["reader_group"].fillna("").astype(str).str.strip())
    per_reader = grp.groupby("reader_id", sort=False)["reader_group"].agg(lambda s: sorted(set(s)))
    problems = [
        InputProblem(
            file="humans",
            column="reader_group",
            value=", ".join(v),
            message=f"reader '{r}' belongs to several groups",
            fix="give each reader a single reader_group",
        )
        for r, v in per_reader.items()
        if len(v) > 1
    ]
    if problems:
        raise InputError(problems)
    group_of = {r: v[0] for r, v in per_reader.items()}
    n_ungrouped = sum(1 for g in group_of.values() if g == "")
    groups = sorted({g for g in group_of.values() if g})
    counts = {g: sum(1 for v in group_of.values() if v == g) for g in groups}
    if len(groups) < 2:
        return ReaderGroups(
            status=Status.SKIPPED,
            reason=f"needs >= 2 reader groups, found {len(groups)}",
            groups=tuple(groups),
            readers_per_group=counts,
            n_ungrouped_readers=n_ungrouped,
        )
    generator, seed = resolve_rng(rng)
    used_mc = False
    grp = grp[grp["reader_group"] != ""]
    grp = grp.assign(credit=vote_credit(grp, tie_rule))
    if "matchup" not in grp.columns:
        grp = grp.assign(matchup=ALL_MATCHUPS)
        both = grp
    else:
        both = with_pooled_scopes(grp, pools)
    by_rows, cmp_rows = [], []
    # one groupby for every cell: reader-level rates and vote counts
    per_reader = (
        both.groupby(["matchup", "criterion", "reader_id"], sort=False)
        .agg(rate=("credit", "mean"), n=("credit", "count"), total=("credit", "sum"))
        .reset_index()
    )
    per_reader = per_reader[per_reader["n"] > 0]
    per_reader["group"] = per_reader["reader_id"].map(group_of)
    kind = "difference" if len(groups) == 2 else "range"
    for (matchup, crit), cell in per_reader.groupby(["matchup", "criterion"], sort=False):
        rates = cell["rate"].to_numpy(float)
        labels = cell["group"].to_numpy(object)
        n_votes = cell["n"].to_numpy(int)
        totals = cell["total"].to_numpy(float)
        for g in groups:
            m = labels == g
            by_rows.append(
                [
                    matchup,
                    crit,
                    g,
                    int(m.sum()),
                    int(n_votes[m].sum()),
                    float(totals[m].sum() / n_votes[m].sum()) if m.any() else math.nan,
                    float(rates[m].mean()) if m.any() else math.nan,
                ]
            )
        if any(not (labels == g).any() for g in groups):
            cmp_rows.append([matchup, crit, " vs ".join(groups), math.nan, kind, math.nan, 0, False])
            continue
        stat, p, n_perm, exact = permutation_test(rates, labels, groups, generator, max_permutations)
        used_mc = used_mc or not exact
        cmp_rows.append([matchup, crit, " vs ".join(groups), stat, kind, p, n_perm, exact])
    return ReaderGroups(
        status=COMPUTED,
        groups=tuple(groups),
        readers_per_group=counts,
        by_group=pd.DataFrame(by_rows, columns=GROUP_COLUMNS),
        comparison=pd.DataFrame(cmp_rows, columns=COMPARE_COLUMNS),
        n_ungrouped_readers=n_ungrouped,
        seed=seed if used_mc else None,
    )
