"""One paired bootstrap per cell: the judge and the humans on the same pair draws.

Pairs and readers are both sampled in a study, so both must be resampled; but the two
factors enter the compared statistics differently, and the scheme follows that:

**Pairs** (the judge and the humans share them). A replicate draws the cell's pairs with
replacement (multinomial counts ``w_p``); every vote of a drawn pair, and the judge's credit
on it, comes along. ``J``, ``V``, ``M`` and the distances between them are recomputed on the
same draw, so their joint distribution carries the judge's own sampling error over the
pairs, the humans' (pair-to-pair variation and the vote noise within each pair, including
its effect on the estimated between-pair variance behind ``M``), and the correlation the
shared pairs induce. A pair keeps all its votes, so the within-pair information ``M`` is
deconvolved with is the real one.

**Readers** (humans only: the judge is one fixed rater). Under the crossed model a reader's
effect is a shift of their leniency towards the focal system on every pair, so a different
sample of readers moves every pair's share by about the same amount ``delta``. Its variance
is the reader component of the vote share's two-way variance, estimated exactly as in
:mod:`judge_transfer_audit.statistics.uncertainty.two_way` (the method-of-moments correction of the pairs-only,
readers-only and product replicates of ``V`` from the same draws; the plain product
bootstrap would count the vote-level variance three times). Each replicate adds
``delta_b ~ N(0, c_r)`` to every pair's share before ``V`` and ``M`` are formed. (Resampling
readers directly would be wrong for ``M``: a reader drawn twice brings identical copies of
their votes, which fakes agreement within pairs and distorts the between-pair variance
``M`` rests on; the calibration study showed the product bootstrap of ``M`` far off.)

Tails: Student-t on the Satterthwaite degrees of freedom of the two parts (pairs with
``P - 1``, readers with ``R - 1`` degrees of freedom), read through
:class:`~judge_transfer_audit.verdict.intervals.ReplicateDistribution`. Coverage: docs/audit.md (the
calibration study, :mod:`judge_transfer_audit.verdict.calibration`).

Cost: per replicate one pass over the credited votes against the replicate's reader weights
(:class:`ReaderSums`) for ``V``'s reader component, and a few passes over a (replicates x pairs)
array. The draws and the reader component go in chunks of ``CACHE_ELEMENTS`` weights, the
estimands in chunks of ``CHUNK_ELEMENTS``; what lives through the call is the replicates' pair
counts, as the narrowest unsigned integers that hold them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from judge_transfer_audit.statistics.estimands import Estimands, estimands, shifted_and_plain
from judge_transfer_audit.statistics.uncertainty.two_way import correct_two_way
from judge_transfer_audit.verdict.intervals import ReplicateDistribution
from judge_transfer_audit.verdict.tables import ComparisonTable

CHUNK_ELEMENTS = 2_000_000  #: replicates x pairs per chunk
#: replicates x pairs (or readers) per chunk of the draws and the reader component: a few arrays of 1 MB stay in
#: the cache through the passes over them (the estimands' chunks are ``CHUNK_ELEMENTS``: their matrix-vector
#: products are made on the same rows as ever)
CACHE_ELEMENTS = 131_072

STATISTICS = (
    "judge_rate",
    "vote_share",
    "majority_rate",
    "difference_vote_share",
    "difference_majority",
    "d_lo",
    "d_hi",
)
RATES = ("judge_rate", "vote_share", "majority_rate")
RATE_CENTRE = 1.0  #: a rate x seen from the other side is 1 - x
#: the range of each statistic (reported bounds are clipped to it; the kernel would spill over)
BOUNDS = {k: ((0.0, 1.0) if k in ("judge_rate", "vote_share", "majority_rate") else (-1.0, 1.0)) for k in STATISTICS}


class LazyDistributions(Mapping):
    """The statistics' distributions, each built on first reading (internal).

    A cell that is not assessed (INSUFFICIENT, or the humans only) reads two of the seven (the
    human side's vote share and majority rate): smoothing and sorting the other five, and their
    Satterthwaite degrees of freedom, would be work its result never shows. Each is built by
    the same function on the same replicates whenever it is first read, so the numbers are
    those of building them all at once, bit for bit.
    """

    def __init__(self, build: Mapping[str, Callable[[], ReplicateDistribution]]):
        self._build = dict(build)
        self._built: dict[str, ReplicateDistribution] = {}

    def __getitem__(self, name: str) -> ReplicateDistribution:
        got = self._built.get(name)
        if got is None:
            got = self._build.pop(name)()  # KeyError for a name that is not a statistic
            self._built[name] = got
        return got

    def pending(self, name: str) -> PendingDistribution | None:
        """What ``name`` would be built from, while it is not built (None once built, or for another builder)."""
        build = self._build.get(name)
        return build if isinstance(build, PendingDistribution) else None

    def put(self, name: str, distribution: ReplicateDistribution) -> None:
        """Store ``name``, built elsewhere from its :meth:`pending` inputs
        (:mod:`judge_transfer_audit.verdict.stacked`)."""
        self._build.pop(name)
        self._built[name] = distribution

    def __iter__(self) -> Iterator[str]:
        return iter([k for k in STATISTICS if k in self._built or k in self._build])

    def __len__(self) -> int:
        return len(self._built) + len(self._build)


@dataclass(frozen=True)
class PendingDistribution:
    """One statistic's replicates before smoothing: calling it builds its
    :class:`~judge_transfer_audit.verdict.intervals.ReplicateDistribution`, with the Satterthwaite df of the two parts
    (``replicates``: with the reader shift, ``pairs_only``: the same draws without it) (internal)."""

    estimate: float
    replicates: np.ndarray
    pairs_only: np.ndarray
    bounds: tuple[float, float]
    n_pairs: int
    n_readers: int

    def __call__(self) -> ReplicateDistribution:
        df, df_se = _satterthwaite(self.replicates, self.pairs_only, self.n_pairs, self.n_readers)
        return ReplicateDistribution(self.estimate, self.replicates, df, self.bounds, df_se=df_se)


@dataclass(frozen=True)
class CellBootstrap:
    """Every compared statistic of one cell for one judge (internal)."""

    distributions: Mapping[str, ReplicateDistribution]
    between_pair_sd: float  #: sqrt(tau^2) of the original data, probability scale
    reader_sd: float  #: sqrt of the reader component of V's variance (the shift's SD)
    n_boot: int
    mirror_of: CellBootstrap | None = None  #: the canonical orientation's bootstrap this one mirrors

    def __getitem__(self, name: str) -> ReplicateDistribution:
        return self.distributions[name]

    def estimate(self, name: str) -> float:
        return self.distributions[name].estimate

    def mirrored(self) -> "CellBootstrap":
        """The same bootstrap seen with the other system focal: rates ``1 - x``, differences
        negated, ``d_lo`` and ``d_hi`` exchanged (exactly: :meth:`ReplicateDistribution.mirrored`)."""
        d = self.distributions
        swap = {"d_lo": "d_hi", "d_hi": "d_lo"}

        def mirror(k: str) -> Callable[[], ReplicateDistribution]:
            return lambda: d[swap.get(k, k)].mirrored(RATE_CENTRE if k in RATES else 0.0)

        out = LazyDistributions({k: mirror(k) for k in d})
        return CellBootstrap(out, self.between_pair_sd, self.reader_sd, self.n_boot, mirror_of=self)


def _vote_share(csum: np.ndarray, nsum: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return _weighted_share(*_pair_shares(csum, nsum), weight)


def _pair_shares(csum: np.ndarray, nsum: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's share of credited votes (0 where it has none) and whether it has any."""
    defined = nsum > 0
    return np.divide(csum, nsum, out=np.zeros(np.broadcast(csum, nsum).shape), where=defined), defined


def _weighted_share(h: np.ndarray, defined: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The vote share from :func:`_pair_shares` under pair weights ``weight`` (NaN without a weighted pair)."""
    g = weight * defined
    total = g.sum(-1)
    return np.divide((g * h).sum(-1), total, out=np.full(total.shape, np.nan), where=total > 0)


def _mean_share(h: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """``_weighted_share(h, defined, 1)``, the same bits: ``h`` is 0 where a pair has no votes, so the sum of
    ``1 * defined * h`` is the sum of ``h``, and the count of pairs with votes is exact in any order."""
    total = np.count_nonzero(defined, axis=-1).astype(float)
    return np.divide(h.sum(-1), total, out=np.full(total.shape, np.nan), where=total > 0)


def reader_component(table: ComparisonTable, wp: np.ndarray, wr: np.ndarray) -> tuple[float, float]:
    """The reader component ``c_r`` of the vote share's two-way variance, and ``V``.

    Pairs-only, readers-only and product replicates of ``V`` from the same draws, corrected
    by :func:`judge_transfer_audit.statistics.uncertainty.two_way.correct_two_way`.
    """
    chunk = _cache_rows(table.n_pairs, table.n_readers)
    return _reader_component(table, wp, (wr[start : start + chunk] for start in range(0, wr.shape[0], chunk)), chunk)


def _reader_component(table: ComparisonTable, wp: np.ndarray, wr_chunks: Iterable[np.ndarray], chunk: int):
    """:func:`reader_component` with the reader weights given ``chunk`` replicates at a time (in order)."""
    c0, _, n0 = table.pair_sums()
    v0 = float(_vote_share(c0, n0, np.ones_like(c0)))
    pairs, readers, product = [], [], []
    credits, votes = ReaderSums(table.C), ReaderSums(table.N)
    for start, r in zip(range(0, wp.shape[0], chunk), wr_chunks):
        p = np.asarray(wp[start : start + chunk], float)
        shares = _pair_shares(credits(r), votes(r))  # the readers-only and product replicates' pair shares
        pairs.append(_vote_share(c0, n0, p))
        readers.append(_mean_share(*shares))
        product.append(_weighted_share(*shares, p))
    corr = correct_two_way(
        v0, np.concatenate(product), np.concatenate(pairs), np.concatenate(readers), table.n_pairs, table.n_readers
    )
    c_r = corr.reader_component
    return (float(c_r) if np.isfinite(c_r) else 0.0), v0


class ReaderSums:
    """``(table @ wr.T).T`` of a sparse pairs x readers table for replicate reader weights ``wr`` (replicates x
    readers): every pair's sum against each replicate's weights, as a C-ordered replicates x pairs array.

    The sums are ``scipy.sparse``'s (``csr_matvecs``: each pair's stored entries added to 0 in their stored
    order), made as round ``j`` adding every pair's ``j``-th entry: as many rounds as a pair has readers (one
    for one vote per pair). Unlike the product's transpose, the result is C-ordered, so the passes over it
    that follow read it row by row; their sums over pairs are the same as on the transpose (the only one whose
    order depends on the layout, ``_weighted_share``'s count of pairs with votes, adds integers exactly).
    """

    def __init__(self, table):
        per_pair = np.diff(table.indptr)
        pair = np.repeat(np.arange(table.shape[0]), per_pair)
        rank = np.arange(table.indices.size) - np.repeat(table.indptr[:-1], per_pair)
        self.n_pairs = table.shape[0]
        self.rounds = []  # (pairs, their j-th readers, the entries); None: every pair, in order
        for j in range(int(per_pair.max(initial=0))):
            at = rank == j
            every = j == 0 and bool(per_pair.all())
            self.rounds.append((None if every else pair[at], table.indices[at], table.data[at]))

    def __call__(self, wr: np.ndarray) -> np.ndarray:
        out = np.zeros((wr.shape[0], self.n_pairs))
        for pairs, readers, entries in self.rounds:
            if pairs is None:
                out += wr[:, readers] * entries
            else:
                out[:, pairs] += wr[:, readers] * entries
        return out


def _chunk_rows(n_pairs: int) -> int:
    """Replicates per chunk: ``CHUNK_ELEMENTS`` replicate x pair weights."""
    return max(1, CHUNK_ELEMENTS // max(n_pairs, 1))


def _cache_rows(n_pairs: int, n_readers: int) -> int:
    """Replicates per chunk of the draws and the reader component: ``CACHE_ELEMENTS`` weights a row."""
    return max(1, CACHE_ELEMENTS // max(n_pairs, n_readers, 1))


def resampling_counts(rng: np.random.Generator, n: int, n_boot: int, chunk: int) -> np.ndarray:
    """:func:`~judge_transfer_audit.statistics.uncertainty.bootstrap.multinomial_weights` ``(rng, n, n_boot)``,
    drawn ``chunk`` replicates at a time and kept as the narrowest unsigned integers that hold ``n``.

    The same counts from the same draws (a generator's stream does not depend on how a draw is split into
    calls), at an eighth to a quarter of the memory of the floats: 15,984 replicates of 5,263 pairs are
    168 MB instead of 673 MB, with no replicates x pairs array of draws beside them.
    """
    out = np.empty((n_boot, n), np.min_scalar_type(n))
    for start in range(0, n_boot, chunk):
        stop = min(start + chunk, n_boot)
        out[start:stop] = _integer_counts(rng.integers(0, n, (stop - start, n)))
    return out


def resampling_count_chunks(rng: np.random.Generator, n: int, n_boot: int, chunk: int) -> Iterator[np.ndarray]:
    """The rows of ``multinomial_weights(rng, n, n_boot)`` as floats, ``chunk`` at a time, each drawn when
    it is read (the same draws, in the same order, as long as nothing else draws from ``rng`` meanwhile)."""
    for start in range(0, n_boot, chunk):
        yield _integer_counts(rng.integers(0, n, (min(start + chunk, n_boot) - start, n))).astype(float)


def _integer_counts(idx: np.ndarray) -> np.ndarray:
    """``rows x n`` counts of each index in each row of ``idx`` (integers; ``idx`` is consumed)."""
    rows, n = idx.shape
    idx += n * np.arange(rows, dtype=idx.dtype)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n)


def paired_bootstrap(table: ComparisonTable, n_boot: int, rng: np.random.Generator) -> CellBootstrap:
    """Bootstrap one cell's compared statistics for its judge (see the module doc)."""
    return bootstrap_judges(table, table.judge[None, :], n_boot, rng)[0]


def bootstrap_judges(
    table: ComparisonTable,
    judges: np.ndarray,
    n_boot: int,
    rng: np.random.Generator,
    draws: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> list[CellBootstrap]:
    """The same bootstrap for ``K`` judges on the same compared pairs (``judges``: K x P).

    The humans' replicates are computed once and every judge sees the same pair draws and
    reader shifts (the calibration study compares several simulated judges on one cell).
    Fewer than two pairs or two readers: every distribution is undefined (NaN bounds).
    ``draws``: the pair weights (replicates x pairs), reader weights (replicates x readers) and the
    reader shift's standard normal scores (one per replicate) drawn by the caller instead of from
    ``rng`` (:mod:`judge_transfer_audit.verdict.hierarchy`: the criteria of a matchup on one joint draw of its pairs);
    the between-pair variance's draws still come from ``rng``.
    """
    judges = np.atleast_2d(np.asarray(judges, float))
    n_judges = judges.shape[0]
    c0, q0, n0 = table.pair_sums()
    ones = np.ones_like(c0)
    original = estimands(c0, q0, n0, ones, judges)
    stats0 = {k: np.asarray(v, float).reshape(n_judges) for k, v in original.statistics().items()}
    tau2 = float(original.between_pair_var)
    tau = float(np.sqrt(tau2)) if np.isfinite(tau2) else float("nan")
    n_pairs, n_readers = table.n_pairs, table.n_readers
    if n_pairs < 2 or n_readers < 2:
        empty = np.zeros(0)
        return [
            CellBootstrap(
                {k: ReplicateDistribution(float(stats0[k][i]), empty) for k in STATISTICS},
                tau,
                float("nan"),
                int(n_boot),
            )
            for i in range(n_judges)
        ]
    if draws is None:
        # the pair counts kept (the estimands read them again), the reader counts drawn chunk by chunk as read
        small = _cache_rows(n_pairs, n_readers)
        wp = resampling_counts(rng, n_pairs, n_boot, small)
        c_r, _ = _reader_component(table, wp, resampling_count_chunks(rng, n_readers, n_boot, small), small)
    else:
        wp = np.asarray(draws[0], float)
        c_r, _ = reader_component(table, wp, np.asarray(draws[1], float))
    shift = np.sqrt(c_r) * (rng.standard_normal(n_boot) if draws is None else np.asarray(draws[2], float))
    kappa = logit_shift_factor(original)
    fits = []
    chunk = _chunk_rows(n_pairs)
    for start in range(0, n_boot, chunk):
        w, s = np.asarray(wp[start : start + chunk], float), shift[start : start + chunk]
        fits.append(shifted_and_plain(c0, q0, n0, w, judges, s, kappa * s))
    share_var = np.concatenate([np.atleast_1d(plain.share_var) for _, plain in fits])
    within_var = np.concatenate([np.atleast_1d(plain.within_var) for _, plain in fits])
    tau2_reps = between_pair_replicates(original, n_boot, rng, share_var, within_var)
    shifted: dict[str, list[np.ndarray]] = {k: [] for k in STATISTICS}
    plain: dict[str, list[np.ndarray]] = {k: [] for k in STATISTICS}
    start = 0
    for with_shift, without in fits:
        n = np.size(with_shift.vote_share)
        t2 = tau2_reps[start : start + n]
        start += n
        for target, est in ((shifted, with_shift), (plain, without)):
            for k, v in est.with_between_pair_var(t2).statistics().items():
                target[k].append(np.asarray(v).reshape(n, n_judges))

    per_judge = [{} for _ in range(n_judges)]
    for k in STATISTICS:
        reps_all, pair_all = np.concatenate(shifted[k]), np.concatenate(plain[k])
        for i in range(n_judges):
            # their own memory: the other judges' columns are not kept
            reps, pairs_only = np.ascontiguousarray(reps_all[:, i]), np.ascontiguousarray(pair_all[:, i])
            # the Satterthwaite df too is computed only for a distribution that is read
            per_judge[i][k] = PendingDistribution(float(stats0[k][i]), reps, pairs_only, BOUNDS[k], n_pairs, n_readers)
    return [
        CellBootstrap(LazyDistributions(per_judge[i]), tau, float(np.sqrt(c_r)), int(n_boot)) for i in range(n_judges)
    ]


def logit_shift_factor(original: Estimands) -> float:
    """How much more a pair at 1/2 moves than the average pair under a common leniency shift.

    A reader sample that is more lenient by ``d`` on the logit scale moves a pair with share
    ``p`` by about ``d p (1 - p)``: the vote share by ``d E[p (1 - p)]``, a pair at 1/2 (where
    the majority flips, so where ``M`` changes) by ``d / 4``. The factor is ``(1/4) / E[p (1 -
    p)]`` with ``E[p (1 - p)] = V (1 - V) - tau^2`` (>= 1; 1 when every pair is at 1/2).
    """
    v, tau2 = float(original.vote_share), float(original.between_pair_var)
    spread = v * (1.0 - v) - (tau2 if np.isfinite(tau2) else 0.0)
    if not np.isfinite(spread) or spread <= 0:
        return 1.0
    return float(max(1.0, 0.25 / spread))


def between_pair_replicates(
    original: Estimands,
    n_boot: int,
    rng: np.random.Generator,
    share_var_boot: np.ndarray | None = None,
    within_var_boot: np.ndarray | None = None,
) -> np.ndarray:
    """Replicates of the between-pair variance from its moment estimator's sampling distribution.

    ``tau^2 = S^2 - s_w^2 m``: ``S^2`` is drawn as a scaled chi-square, ``S^2 chi2(d) / d``,
    whose variance matches the pairs bootstrap's variance of ``S^2`` (``d = 2 S^4 /
    Var*(S^2)``, Satterthwaite's matching; ``d`` is ``P - 1`` for normal shares and larger
    for the bounded, light-tailed shares of a few readers' votes), and ``s_w^2`` as ``s_w^2
    chi2(df_w) / df_w``, independently (the classical distribution of one-way ANOVA mean
    squares). Using the resampled ``S^2`` itself would give the variance component a
    near-symmetric distribution whose lower tail is about twice too heavy with 20 pairs (a
    variance is right-skewed), so that ``tau^2`` too often reaches 0 and ``M`` jumps to 0 or
    1: the calibration study measured M's coverage low and the intervals of J - M too wide
    on the side a FAIL is read from. (Mapping the resampled ``S^2`` by rank onto the same
    chi-square, which keeps its correlation with V and J in each replicate, covered J - M
    worse for the majority judge: 90.0-91.7% against 91.2-96.2% at 20 x 60 and 12 x 150.)

    ``S^2`` and ``s_w^2`` are not independent for votes: a pair whose share is near 0 or 1 has
    little within-pair variance, so across samples of pairs the two move in opposite
    directions (correlation -0.8 to -0.97 in the calibration's cells), and ``tau^2 = S^2 -
    s_w^2 m`` varies more than independent draws say. With ``within_var_boot`` (the pairs
    bootstrap's ``s_w^2``, on the same draws as ``share_var_boot``) the two chi-squares are
    drawn through a Gaussian copula with the bootstrap's correlation of the two: each keeps
    its scaled chi-square margin, and their dependence is the resampled one.
    """
    return between_pair_draws(original, n_boot, rng, share_var_boot, within_var_boot).replicates()


@dataclass(frozen=True)
class BetweenPairDraws:
    """One cell's draws for :func:`between_pair_replicates` and the numbers they are scaled by (internal).

    ``kind``: ``"fixed"`` (``tau^2`` cannot be resampled: every replicate is ``constant``), ``"chisquare"``
    (independent scaled chi-squares: ``first`` and ``second`` are the chi-square draws) or ``"copula"``
    (``first`` and ``second`` the correlated normal scores, turned into chi-square quantiles). The draws
    are made from the cell's stream in the function's order; :meth:`replicates` is the arithmetic on
    them (also done for many cells at once: :mod:`judge_transfer_audit.verdict.stacked_bootstrap`).
    """

    kind: str
    n_boot: int
    constant: float = float("nan")
    s2: float = float("nan")
    sw2: float = float("nan")
    m1: float = float("nan")
    df_b: float = float("nan")
    df_w: float = float("nan")
    first: np.ndarray | None = None
    second: np.ndarray | None = None

    def replicates(self) -> np.ndarray:
        if self.kind == "fixed":
            return np.full(self.n_boot, self.constant)
        s2, sw2, m1, df_b, df_w = self.s2, self.sw2, self.m1, self.df_b, self.df_w
        if self.kind == "chisquare":
            s2_reps = s2 * self.first / df_b
            sw2_reps = sw2 * self.second / df_w if df_w > 0 else np.full(self.n_boot, sw2)
            return s2_reps - sw2_reps * m1
        from scipy.special import ndtr

        s2_reps = s2 * chi2_ppf(ndtr(self.first), df_b) / df_b
        sw2_reps = sw2 * chi2_ppf(ndtr(self.second), df_w) / df_w if df_w > 0 else np.full(self.n_boot, sw2)
        return s2_reps - sw2_reps * m1


def chi2_ppf(q: np.ndarray, df) -> np.ndarray:
    """What ``scipy.stats.chi2.ppf`` evaluates for 0 <= q <= 1 and df > 0 (0 at q = 0, inf at 1), without its
    argument handling (a third of the call on a cell's 999 replicates); ``df`` may be an array (elementwise)."""
    from scipy.special import gammaincinv

    return 2.0 * gammaincinv(df / 2.0, q)


def between_pair_draws(
    original: Estimands,
    n_boot: int,
    rng: np.random.Generator,
    share_var_boot: np.ndarray | None = None,
    within_var_boot: np.ndarray | None = None,
) -> BetweenPairDraws:
    """The draws of :func:`between_pair_replicates` from ``rng`` (the same draws in the same order)."""
    s2, sw2, m1 = float(original.share_var), float(original.within_var), float(original.mean_inv_n)
    df_b, df_w = float(original.df_between), float(original.df_within)
    if not all(np.isfinite(x) for x in (s2, sw2, m1, df_b, df_w)) or df_b <= 0 or s2 <= 0:
        return BetweenPairDraws("fixed", n_boot, constant=float(original.between_pair_var))
    if share_var_boot is not None:
        boot = np.asarray(share_var_boot, float)
        boot = boot[np.isfinite(boot)]
        if boot.size > 1 and boot.var(ddof=1) > 0:
            df_b = max(1.0, 2.0 * s2 * s2 / float(boot.var(ddof=1)))
    rho = 0.0
    if share_var_boot is not None and within_var_boot is not None:
        a, b = np.asarray(share_var_boot, float), np.asarray(within_var_boot, float)
        ok = np.isfinite(a) & np.isfinite(b)
        if ok.sum() > 2 and a[ok].std() > 0 and b[ok].std() > 0:
            rho = float(np.clip(np.corrcoef(a[ok], b[ok])[0, 1], -0.999, 0.999))
    return _draw(n_boot, rng, rho, s2=s2, sw2=sw2, m1=m1, df_b=df_b, df_w=df_w)


def between_pair_draws_finite(
    original: Estimands,
    n_boot: int,
    rng: np.random.Generator,
    share_var_boot: np.ndarray,
    within_var_boot: np.ndarray,
    share_var_var: float,
    share_var_sd: float,
    within_var_sd: float,
) -> BetweenPairDraws:
    """:func:`between_pair_draws` for replicates that are all finite, their variance (``ddof=1``) and standard
    deviations (``ddof=0``) given (computed for many cells at once by the stacked bootstrap): the same draws."""
    s2, sw2, m1 = float(original.share_var), float(original.within_var), float(original.mean_inv_n)
    df_b, df_w = float(original.df_between), float(original.df_within)
    if not all(np.isfinite(x) for x in (s2, sw2, m1, df_b, df_w)) or df_b <= 0 or s2 <= 0:
        return BetweenPairDraws("fixed", n_boot, constant=float(original.between_pair_var))
    if n_boot > 1 and share_var_var > 0:
        df_b = max(1.0, 2.0 * s2 * s2 / float(share_var_var))
    rho = 0.0
    if n_boot > 2 and share_var_sd > 0 and within_var_sd > 0:
        rho = float(np.clip(np.corrcoef(share_var_boot, within_var_boot)[0, 1], -0.999, 0.999))
    return _draw(n_boot, rng, rho, s2=s2, sw2=sw2, m1=m1, df_b=df_b, df_w=df_w)


def _draw(n_boot: int, rng: np.random.Generator, rho: float, **scale: float) -> BetweenPairDraws:
    df_b, df_w = scale["df_b"], scale["df_w"]
    if rho == 0.0:
        first = rng.chisquare(df_b, n_boot)
        second = rng.chisquare(df_w, n_boot) if df_w > 0 else None
        return BetweenPairDraws("chisquare", n_boot, first=first, second=second, **scale)
    z1 = rng.standard_normal(n_boot)
    z2 = rho * z1 + np.sqrt(1.0 - rho * rho) * rng.standard_normal(n_boot)
    return BetweenPairDraws("copula", n_boot, first=z1, second=z2, **scale)


def _satterthwaite(total: np.ndarray, pairs_only: np.ndarray, n_pairs: int, n_readers: int) -> tuple[float, float]:
    """Degrees of freedom of (pair part on P - 1) + (reader part on R - 1), and their Monte Carlo SE.

    The two parts' variances are those of the replicates (``total``: with the reader shift;
    ``pairs_only``: the same draws without it), so the df has a Monte Carlo error of its own: with
    three readers about 10% of a df near 3, which moves a t-calibrated p-value more than the
    replicates' own proportion error does. The SE is the leave-one-replicate-out jackknife of the
    df, exact and vectorised (each left-out variance from the running sums). inf and SE 0 when the
    df is undefined or infinite.
    """
    ok = np.isfinite(total) & np.isfinite(pairs_only)
    if ok.sum() < 2:
        return float("inf"), 0.0
    t, p = np.asarray(total, float)[ok], np.asarray(pairs_only, float)[ok]
    df = _df_from_variances(float(np.var(t, ddof=1)), float(np.var(p, ddof=1)), n_pairs, n_readers)
    if not np.isfinite(df) or t.size < 3:
        return df, 0.0
    left_out = _df_from_variances(_leave_one_out_var(t), _leave_one_out_var(p), n_pairs, n_readers)
    if not np.all(np.isfinite(left_out)):
        return df, 0.0
    n = left_out.size
    return df, float(np.sqrt((n - 1) / n * np.sum((left_out - left_out.mean()) ** 2)))


def _df_from_variances(v_total, v_pairs, n_pairs: int, n_readers: int):
    """Satterthwaite's df of the sum ``v_total = v_pairs + v_readers`` (floats or arrays; inf without variance)."""
    v_total, v_pairs = np.asarray(v_total, float), np.asarray(v_pairs, float)
    v_readers = np.maximum(v_total - v_pairs, 0.0)
    den = v_pairs**2 / max(n_pairs - 1, 1) + v_readers**2 / max(n_readers - 1, 1)
    out = np.divide(v_total**2, den, out=np.full(np.broadcast(v_total, den).shape, np.inf), where=den > 0)
    return float(out) if out.ndim == 0 else out


def _leave_one_out_var(x: np.ndarray) -> np.ndarray:
    """The sample variance (ddof 1) of ``x`` without each element in turn."""
    n, mean = x.size, float(x.mean())
    c = x - mean  # centred first: the running-sum formula then keeps its precision
    s2 = float(np.sum(c * c))
    # without element i: sum of squares about the new mean = s2 - c_i^2 - c_i^2 / (n - 1)
    return (s2 - c * c * n / (n - 1)) / (n - 2)


__all__ = [
    "CellBootstrap",
    "LazyDistributions",
    "PendingDistribution",
    "STATISTICS",
    "BetweenPairDraws",
    "between_pair_draws",
    "between_pair_draws_finite",
    "between_pair_replicates",
    "chi2_ppf",
    "bootstrap_judges",
    "logit_shift_factor",
    "paired_bootstrap",
    "reader_component",
]
