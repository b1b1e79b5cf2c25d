"""Hierarchical clustering of readers on their weight and kappa profiles, the comparison of
the two trees, and the clustering of criteria (which criteria move together).

Defaults (stated because the motivating paper does not): profiles are standardised per
criterion across readers (z-scores, ddof=1; a constant criterion becomes 0; a missing
value -- an aliased coefficient or an undefined kappa -- is set to 0, the criterion mean,
and counted), distances are Euclidean, the linkage is ``average`` (UPGMA). Criteria are
clustered on ``1 - Pearson correlation`` of their +1/-1/0 votes over every (reader, pair).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.data import HUMAN_OVERALL
from judge_transfer_audit.statistics.readers._common import COMPUTED, first_seen, fmt
from judge_transfer_audit.statistics.readers.weights import ReaderKappas, ReaderWeights

LINKAGE_METHODS = ("average", "complete", "single", "weighted", "ward", "centroid", "median")
MIN_READERS_FOR_CLUSTERING = 4
MIN_CRITERIA_FOR_CLUSTERING = 3
#: More criteria than this: no criteria tree. Its profile is a criteria x criteria correlation matrix
#: kept in result.json and drawn in the report: 10,000 criteria made 10^8 entries (GBs of memory and
#: JSON, the whole audit's time), and a tree of hundreds of leaves is not read anyway.
MAX_CRITERIA_FOR_CLUSTERING = 200


def check_linkage(name: str) -> str:
    """Return ``name`` if it is a scipy linkage method, else raise an actionable InputError."""
    if name not in LINKAGE_METHODS:
        raise InputError(
            InputProblem(
                file="options",
                column="linkage",
                value=str(name),
                message="unknown linkage method",
                fix=f"use one of: {', '.join(LINKAGE_METHODS)}",
            )
        )
    return name


@dataclass(frozen=True, eq=False)
class Dendrogram:
    """Serialisable dendrogram data (enough to draw it with ``scipy.cluster.hierarchy.dendrogram``).

    Attributes
    ----------
    labels : tuple[str, ...]
        Leaf labels in the order of the rows of the clustered matrix (leaf ``i`` of the
        linkage matrix is ``labels[i]``).
    linkage_matrix : tuple[tuple[float, ...], ...]
        scipy linkage matrix rows ``(left, right, height, size)``.
    leaf_order : tuple[str, ...]
        Labels in the left-to-right order of the drawn dendrogram.
    method, metric : str
    cophenetic_correlation : float
        Pearson correlation between the cophenetic distances and the input distances
        (how faithfully the tree represents the distances).
    clusters : tuple[tuple[str, ...], ...]
        Every non-singleton cluster (members sorted), in merge order (innermost first).
    n_imputed : int
        Missing profile cells set to the criterion mean before clustering.
    profile : DataFrame
        The standardised matrix that was clustered (column ``label`` then one column per feature).
    """

    labels: tuple[str, ...]
    linkage_matrix: tuple[tuple[float, ...], ...]
    leaf_order: tuple[str, ...]
    method: str
    metric: str
    cophenetic_correlation: float
    clusters: tuple[tuple[str, ...], ...]
    n_imputed: int = 0
    profile: pd.DataFrame = field(default_factory=pd.DataFrame)

    def to_frame(self) -> pd.DataFrame:
        """One row per merge: step, height, size, members (comma-joined)."""
        rows = []
        for step, (row, members) in enumerate(zip(self.linkage_matrix, self.clusters)):
            rows.append([step, row[2], int(row[3]), ",".join(members)])
        return pd.DataFrame(rows, columns=["step", "height", "size", "members"])

    def z(self) -> np.ndarray:
        """The linkage matrix as a numpy array for scipy."""
        return np.asarray(self.linkage_matrix, dtype=float).reshape(-1, 4)

    def __str__(self) -> str:
        merges = "; ".join(f"({', '.join(c)})@{fmt(r[2], 2)}" for c, r in zip(self.clusters, self.linkage_matrix))
        return (
            f"{self.method} linkage, {self.metric}; cophenetic r={fmt(self.cophenetic_correlation)}; "
            f"leaves {' '.join(self.leaf_order)}; merges {merges}"
        )


def standardise_profile(profile: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Z-score each column across rows; constant columns -> 0; NaN -> 0 (counted)."""
    values = profile.to_numpy(dtype=float)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        # an all-missing column (a criterion aliased for every reader) is expected: it becomes 0
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=0)
        sd = np.nanstd(values, axis=0, ddof=1) if values.shape[0] > 1 else np.zeros(values.shape[1])
        z = (values - mean) / np.where(sd > 0, sd, 1.0)
    z[:, ~(sd > 0)] = 0.0
    n_missing = int(np.isnan(values).sum())
    z = np.where(np.isnan(values), 0.0, z)
    return pd.DataFrame(z, index=profile.index, columns=profile.columns), n_missing


def build_dendrogram(
    labels: list[str],
    condensed: np.ndarray,
    *,
    method: str,
    metric: str,
    profile: pd.DataFrame | None = None,
    n_imputed: int = 0,
) -> Dendrogram:
    """Cluster a condensed distance vector with scipy and package the result."""
    from scipy.cluster.hierarchy import cophenet, leaves_list, linkage

    Z = linkage(condensed, method=method)
    coph = cophenet(Z)
    coph_r = _pearson(coph, condensed)
    n = len(labels)
    members: dict[int, tuple[str, ...]] = {i: (labels[i],) for i in range(n)}
    clusters = []
    for k, row in enumerate(Z):
        merged = tuple(sorted(members[int(row[0])] + members[int(row[1])]))
        members[n + k] = merged
        clusters.append(merged)
    prof = pd.DataFrame() if profile is None else profile.reset_index(names="label")
    return Dendrogram(
        labels=tuple(labels),
        linkage_matrix=tuple(tuple(float(v) for v in row) for row in Z),
        leaf_order=tuple(labels[i] for i in leaves_list(Z)),
        method=method,
        metric=metric,
        cophenetic_correlation=coph_r,
        clusters=tuple(clusters),
        n_imputed=n_imputed,
        profile=prof,
    )


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    if len(a) < 2 or np.std(a) == 0 or np.std(b) == 0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


def cluster_profile(profile: pd.DataFrame, *, method: str = "average") -> Dendrogram:
    """Standardise a reader x feature profile and cluster its rows (Euclidean distance)."""
    from scipy.spatial.distance import pdist

    z, n_imputed = standardise_profile(profile)
    return build_dendrogram(
        [str(i) for i in z.index],
        pdist(z.to_numpy(), metric="euclidean"),
        method=method,
        metric="euclidean",
        profile=z,
        n_imputed=n_imputed,
    )


def shared_clusters(a: Dendrogram, b: Dendrogram) -> tuple[tuple[str, ...], ...]:
    """Non-trivial clusters (2 <= size < n) present in both trees, smallest first."""
    n = len(a.labels)
    sb = set(b.clusters)
    common = [c for c in a.clusters if c in sb and 2 <= len(c) < n]
    return tuple(sorted(common, key=lambda c: (len(c), c)))


def cophenetic_between(a: Dendrogram, b: Dendrogram) -> float:
    """Pearson correlation of the two trees' cophenetic distances over the same leaves
    (what R ``dendextend::cor_cophenetic`` computes; checked against base R
    ``cor(cophenetic(h1), cophenetic(h2))`` in tests/reference/cophenetic)."""
    from scipy.cluster.hierarchy import cophenet

    if tuple(a.labels) != tuple(b.labels):
        order = [b.labels.index(lab) for lab in a.labels]
        from scipy.spatial.distance import squareform

        db = squareform(cophenet(b.z()))[np.ix_(order, order)]
        return _pearson(cophenet(a.z()), squareform(db, checks=False))
    return _pearson(cophenet(a.z()), cophenet(b.z()))


def criteria_dendrogram(votes: pd.DataFrame, *, method: str = "average") -> tuple[Dendrogram | None, str]:
    """Cluster criteria on ``1 - r`` of their votes over (reader, pair) rows (overall included)."""
    crits = first_seen(votes["criterion"])
    if HUMAN_OVERALL in crits:
        crits.remove(HUMAN_OVERALL)
        crits.append(HUMAN_OVERALL)
    if len(crits) < MIN_CRITERIA_FOR_CLUSTERING:
        return None, f"criteria clustering needs >= {MIN_CRITERIA_FOR_CLUSTERING} criteria, found {len(crits)}"
    if len(crits) > MAX_CRITERIA_FOR_CLUSTERING:
        return None, (
            f"criteria clustering is drawn for at most {MAX_CRITERIA_FOR_CLUSTERING} criteria, found {len(crits)} "
            f"(its criteria x criteria correlation profile would hold {len(crits) ** 2:,} entries)"
        )
    coded = votes.assign(v=np.where(votes["y"].isna(), 0.0, 2.0 * votes["y"] - 1.0))
    wide = coded.pivot_table(index=["reader_id", "pair_id"], columns="criterion", values="v", aggfunc="first")
    wide = wide.reindex(columns=crits)
    corr = wide.corr(min_periods=3).to_numpy()
    n_undefined = int(np.isnan(corr[np.triu_indices(len(crits), 1)]).sum())
    dist = 1.0 - np.where(np.isnan(corr), 0.0, corr)
    np.fill_diagonal(dist, 0.0)
    from scipy.spatial.distance import squareform

    dend = build_dendrogram(
        crits,
        squareform(np.clip(dist, 0.0, 2.0), checks=False),
        method=method,
        metric="1 - pearson r of votes",
        profile=pd.DataFrame(1 - dist, index=crits, columns=crits),
        n_imputed=n_undefined,
    )
    return dend, ""


COMPARISON_COLUMNS = ["measure", "value", "members"]


def comparison_table(
    wd: Dendrogram, kd: Dendrogram, shared: tuple[tuple[str, ...], ...], between: float, rho: float
) -> pd.DataFrame:
    """The tree comparison as rows (so that reports listing a result's tables show it)."""
    rows = [
        ("cophenetic_correlation_weights", wd.cophenetic_correlation, ""),
        ("cophenetic_correlation_kappas", kd.cophenetic_correlation, ""),
        ("cophenetic_correlation_between_trees", between, ""),
        ("spearman_kappa_weight", rho, ""),
    ]
    rows += [("shared_sub_cluster", float(len(c)), ", ".join(c)) for c in shared]
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


@dataclass(frozen=True, eq=False)
class ReaderClustering:
    """Readers clustered on the weight and the kappa profiles, compared; criteria clustered.

    Attributes
    ----------
    status : Status
        PASS when the reader trees were computed; SKIPPED with fewer than 4 readers.
    reason : str
    linkage : str
    weights, kappas : Dendrogram | None
        Reader trees on the standardised coefficient and kappa profiles.
    shared_clusters : tuple[tuple[str, ...], ...]
        Sub-clusters found in both trees (smallest first).
    cophenetic_between : float
        Correlation of the two trees' cophenetic distances.
    kappa_weight_spearman : float
        Spearman correlation, over reader x criterion cells, between kappa and slope
        ("higher within-reader kappa goes with a larger weight").
    criteria : Dendrogram | None
        Criteria tree (computed whenever there are >= 3 criteria, even with few readers).
    criteria_reason : str
    n_readers_left_out : int
        Readers missing from a profile (no usable overall vote), not clustered.
    comparison : DataFrame
        The two reader trees compared, as a table (measure, value, members): each tree's
        cophenetic correlation, the correlation between the trees, Spearman(kappa, weight)
        and one ``shared_sub_cluster`` row per shared sub-cluster. Empty when SKIPPED.
    """

    status: Status
    reason: str = ""
    linkage: str = "average"
    weights: Dendrogram | None = None
    kappas: Dendrogram | None = None
    shared_clusters: tuple[tuple[str, ...], ...] = ()
    cophenetic_between: float = math.nan
    kappa_weight_spearman: float = math.nan
    criteria: Dendrogram | None = None
    criteria_reason: str = ""
    n_readers_left_out: int = 0
    comparison: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=COMPARISON_COLUMNS))

    def to_frame(self) -> pd.DataFrame:
        """One row per merge of each tree: tree, step, height, size, members."""
        frames = []
        for name, dend in (("weights", self.weights), ("kappas", self.kappas), ("criteria", self.criteria)):
            if dend is not None:
                frames.append(dend.to_frame().assign(tree=name))
        if not frames:
            return pd.DataFrame(columns=["tree", "step", "height", "size", "members"])
        out = pd.concat(frames, ignore_index=True)
        return out[["tree", "step", "height", "size", "members"]]

    def __str__(self) -> str:
        lines = []
        if self.status is not COMPUTED:
            lines.append(f"Reader clustering: {self.status.value} ({self.reason})")
        else:
            lines += [
                f"Reader clustering ({self.linkage} linkage on standardised profiles)",
                f"  weights: {self.weights}",
                f"  kappas:  {self.kappas}",
                "  shared sub-clusters: "
                + ("; ".join("(" + ", ".join(c) + ")" for c in self.shared_clusters) or "none"),
                f"  cophenetic correlation between trees: {fmt(self.cophenetic_between)}",
                f"  Spearman(kappa, weight): {fmt(self.kappa_weight_spearman)}",
            ]
        lines.append(
            f"  criteria: {self.criteria}"
            if self.criteria is not None
            else f"  criteria: SKIPPED ({self.criteria_reason})"
        )
        return "\n".join(lines)


def cluster_readers(
    votes: pd.DataFrame, weights: ReaderWeights, kappas: ReaderKappas, *, linkage: str = "average"
) -> ReaderClustering:
    """Cluster readers on both profiles, compare the trees, and cluster the criteria.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (for the criteria tree).
    weights, kappas : ReaderWeights, ReaderKappas
        From :func:`judge_transfer_audit.statistics.readers.weights.reader_weights` / ``reader_kappas``.
    linkage : str
        A scipy linkage method (default ``average``).

    Returns
    -------
    ReaderClustering
        SKIPPED (reader trees only) with fewer than 4 readers having both profiles.

    Notes
    -----
    Built on ``scipy.cluster.hierarchy``. Validated against base R (tests/reference/cophenetic):
    ``hclust`` merge heights on ``dist(scale(profile))`` for the average, complete, single
    and weighted (R: mcquitty) linkages, each tree's ``cor(cophenetic(h), d)`` and the
    correlation between the two trees' cophenetic distances, all to 1e-12; the shared
    sub-clusters against a hand-built configuration with known structure.
    """
    method = check_linkage(linkage)
    crit_dend, crit_reason = criteria_dendrogram(votes, method=method)
    common = dict(linkage=method, criteria=crit_dend, criteria_reason=crit_reason)
    if weights.status is not COMPUTED or kappas.status is not COMPUTED:
        why = weights.reason if weights.status is not COMPUTED else kappas.reason
        return ReaderClustering(status=Status.SKIPPED, reason=f"no reader profiles: {why}", **common)
    wprof = weights.profile()
    kprof = kappas.profile()
    readers = [r for r in first_seen(votes["reader_id"]) if r in wprof.index and r in kprof.index]
    left_out = votes["reader_id"].nunique() - len(readers)
    if len(readers) < MIN_READERS_FOR_CLUSTERING:
        return ReaderClustering(
            status=Status.SKIPPED,
            reason=f"clustering needs >= {MIN_READERS_FOR_CLUSTERING} readers with both profiles, found {len(readers)}",
            n_readers_left_out=left_out,
            **common,
        )
    wd = cluster_profile(wprof.loc[readers], method=method)
    kd = cluster_profile(kprof.loc[readers], method=method)
    from judge_transfer_audit.statistics.distributions import spearmanr

    pairs = pd.concat([wprof.loc[readers].stack(), kprof.loc[readers].stack()], axis=1).dropna()
    rho = float(spearmanr(pairs.iloc[:, 0], pairs.iloc[:, 1]).statistic) if len(pairs) >= 3 else math.nan
    shared = shared_clusters(wd, kd)
    between = cophenetic_between(wd, kd)
    return ReaderClustering(
        status=COMPUTED,
        weights=wd,
        kappas=kd,
        shared_clusters=shared,
        cophenetic_between=between,
        kappa_weight_spearman=rho,
        n_readers_left_out=left_out,
        comparison=comparison_table(wd, kd, shared, between, rho),
        **common,
    )
