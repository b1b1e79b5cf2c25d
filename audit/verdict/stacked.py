"""Many replicate distributions read at once: quantiles, tails and p-values on stacked arrays.

The verdict reads a dozen numbers from each of a cell's bootstrap distributions (two-sided
intervals at two levels, the band's one-sided bounds, p-values with their Monte Carlo errors),
for every cell and every judge configuration. Read one at a time, each quantile is a
Newton root of the smoothed distribution function (:meth:`ReplicateDistribution._root
<judge_transfer_audit.verdict.intervals.ReplicateDistribution.quantile>`: a handful of kernel sums over the
replicates, each a few numpy calls on one row) and each p-value a kernel sum plus a few
Student-t evaluations; with thousands of cells the per-call cost is the Python around the
arithmetic, not the arithmetic.

:func:`prefetch` computes all the readings a caller is about to make in one pass: the
distributions' rows of replicates are stacked (grouped by replicate count, in chunks of
``CHUNK_ELEMENTS``), every root runs the scalar Newton iteration in lockstep (the same start,
steps, bisection safeguard and stopping rule per row; a row leaves the iteration where the
scalar loop would return), and the results are stored in each distribution's own caches, so
that the per-cell code that follows reads them instead of computing them. Every reading is
the scalar path's number, bit for bit: the same operations on the same floats, each row's
kernel sum a row reduction of a C-contiguous array (numpy sums a row of a 2-D array as it
sums a 1-D array), the Student-t tails those of :data:`judge_transfer_audit.statistics.distributions.t`, as the scalar
path's (tests/audit/verdict/test_stacked.py compares every reading with the scalar one on random
and edge-case distributions).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from judge_transfer_audit.verdict.intervals import _SQRT_2PI, P_MIN, MirroredDistribution, ReplicateDistribution

CHUNK_ELEMENTS = 1_000_000  #: replicates per stacked array (rows x replicates) in one pass


# ---- the stacked kernels
def _base(d) -> ReplicateDistribution:
    while isinstance(d, MirroredDistribution):
        d = d.base
    return d


def _smoothed(d: ReplicateDistribution) -> bool:
    """Whether ``d``'s readings are kernel sums (defined, replicates that vary)."""
    return d.defined and d._h > 0


def _groups(items: list, n_of) -> Iterable[list]:
    """``items`` grouped by replicate count, each group in chunks of at most ``CHUNK_ELEMENTS`` replicates."""
    by_n: dict[int, list] = defaultdict(list)
    for item in items:
        by_n[n_of(item)].append(item)
    for n, group in by_n.items():
        rows = max(1, CHUNK_ELEMENTS // max(n, 1))
        for start in range(0, len(group), rows):
            yield group[start : start + rows]


def _sorted_quantile(reps: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``np.quantile(reps[i], prob[i])`` for sorted rows (numpy's default linear method, the same arithmetic)."""
    n = reps.shape[1]
    virtual = (n - 1) * prob
    previous = np.floor(virtual)
    above, below = virtual >= n - 1, virtual < 0
    lo_i = np.where(above, n - 1, np.where(below, 0, previous)).astype(np.intp)
    hi_i = np.where(above, n - 1, np.where(below, 0, previous + 1)).astype(np.intp)
    rows = np.arange(reps.shape[0])
    a, b = reps[rows, lo_i], reps[rows, hi_i]
    gamma = virtual - previous
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


def _roots(reps: np.ndarray, h: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``ReplicateDistribution._root`` of every row at once (rows: sorted smoothed replicates, ``h > 0``)."""
    lo = reps[:, 0] - 40 * h
    hi = reps[:, -1] + 40 * h
    x = np.clip(_sorted_quantile(reps, np.minimum(np.maximum(prob, 0.0), 1.0)), lo, hi)
    tol_f = 1e-13 * np.maximum(np.minimum(prob, 1.0 - prob), 1e-300)
    out = np.full(prob.shape, np.nan)
    active = np.arange(prob.size)
    from scipy.special import ndtr

    for _ in range(200):
        r, hh = reps[active], h[active]
        xa = x[active]
        z = (xa[:, None] - r) / hh[:, None]
        f = np.mean(ndtr(z), axis=1) - prob[active]
        done = np.abs(f) <= tol_f[active]
        out[active[done]] = xa[done]
        left = f < 0
        lo[active[left]] = xa[left]
        hi[active[~left]] = xa[~left]
        zc = np.clip(z, -40.0, 40.0)
        dens = np.mean(np.exp(-0.5 * zc * zc), axis=1) / (hh * _SQRT_2PI)
        with np.errstate(divide="ignore", invalid="ignore"):
            new = np.where(dens > 0, xa - f / dens, np.nan)
        la, ha = lo[active], hi[active]
        outside = ~((la < new) & (new < ha))
        new = np.where(outside, 0.5 * (la + ha), new)
        scale = 1e-15 * np.maximum(1.0, np.abs(xa))
        stop = ~done & ((np.abs(new - xa) <= scale) | (ha - la <= scale))
        out[active[stop]] = new[stop]
        x[active] = new
        keep = ~(done | stop)
        active = active[keep]
        if not active.size:
            return out
    out[active] = x[active]
    return out


def _kernel_means(reps: np.ndarray, h: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the smoothed ``F(x)`` and the mean kernel ``mean(exp(-z^2 / 2))`` at ``x`` (``z`` clipped at 40)."""
    from scipy.special import ndtr

    z = (x[:, None] - reps) / h[:, None]
    return np.mean(ndtr(z), axis=1), z


def _stack(dists: list[ReplicateDistribution]) -> tuple[np.ndarray, np.ndarray]:
    return np.stack([d._reps for d in dists]), np.array([d._h for d in dists], float)


# ---- what the caches receive
def prefetch_quantiles(requests: Iterable[tuple[ReplicateDistribution, float]]) -> None:
    """Fill ``d._quantiles[prob]`` for every ``(d, prob)`` not cached (``d`` unmirrored, smoothed)."""
    todo, seen = [], set()
    for d, prob in requests:
        prob = float(prob)
        if not _smoothed(d) or prob in d._quantiles or (id(d), prob) in seen:
            continue
        seen.add((id(d), prob))
        todo.append((d, prob))
    for group in _groups(todo, lambda item: item[0].n):
        reps, h = _stack([d for d, _ in group])
        roots = _roots(reps, h, np.array([p for _, p in group], float))
        for (d, prob), x in zip(group, roots.tolist()):
            d._quantiles[prob] = x


def prefetch_tails(requests: Iterable[tuple[ReplicateDistribution, float]]) -> None:
    """Fill ``d._tails[a]`` (the t-calibrated tail probability) for every ``(d, a)`` with a finite df."""
    from scipy.special import ndtr

    from judge_transfer_audit.statistics.distributions import t as _t

    todo = [(d, float(a)) for d, a in requests if np.isfinite(d.df) and float(a) not in d._tails]
    if not todo:
        return
    a = np.array([a for _, a in todo], float)
    df = np.array([d.df for d, _ in todo], float)
    tails = ndtr(-_t.ppf(1.0 - a, df))
    for (d, key), tail in zip(todo, tails.tolist()):
        d._tails[key] = tail


def prefetch_p(requests: Iterable[tuple[ReplicateDistribution, float, bool]]) -> None:
    """Fill ``d._ps[(null, lower_tail)]`` (p-value and Monte Carlo SE) for every request not cached
    (``d`` unmirrored): ``ReplicateDistribution._p_uncached``'s arithmetic on arrays."""
    from scipy.special import ndtr, ndtri

    from judge_transfer_audit.statistics.distributions import t as _t

    todo, seen = [], set()
    for d, null, lower in requests:
        key = (float(null), bool(lower))
        if not _smoothed(d) or not np.isfinite(key[0]) or key in d._ps or (id(d), key) in seen:
            continue
        seen.add((id(d), key))
        todo.append((d, key))
    if not todo:
        return
    c = np.empty(len(todo))
    index = {id(item): i for i, item in enumerate(todo)}
    for group in _groups(todo, lambda item: item[0].n):
        reps, h = _stack([d for d, _ in group])
        means, _ = _kernel_means(reps, h, np.array([key[0] for _, key in group], float))
        for item, value in zip(group, means):
            c[index[id(item)]] = value
    dists = [d for d, _ in todo]
    null = np.array([key[0] for _, key in todo], float)
    lower = np.array([key[1] for _, key in todo], bool)
    n = np.array([float(d.n) for d in dists])
    pa = np.array([d.p_anchor for d in dists])
    raw = np.minimum(np.maximum(np.where(lower, c, 1.0 - c), P_MIN), 1.0)
    z = np.where(raw > 0.5, -ndtri(1.0 - raw), ndtri(raw))
    se = np.sqrt(raw * (1.0 - raw) / n)
    dz = se / np.maximum(_normal_pdf(z), 1e-300)
    beyond_anchor = np.flatnonzero(raw < pa)
    if beyond_anchor.size:
        _prefetch_anchors([(dists[i], bool(lower[i])) for i in beyond_anchor])
        x_a = np.array([dists[i]._anchors["lower" if lower[i] else "upper"][0] for i in beyond_anchor])
        f_a = np.array([dists[i]._anchors["lower" if lower[i] else "upper"][1] for i in beyond_anchor])
        lw, nl, p_a, nn = lower[beyond_anchor], null[beyond_anchor], pa[beyond_anchor], n[beyond_anchor]
        beyond = np.maximum(np.where(lw, x_a - nl, nl - x_a), 0.0)
        s = np.array([dists[i].sd for i in beyond_anchor])
        z_tail = ndtri(p_a) - beyond / s
        heavier = z_tail > z[beyond_anchor]
        with np.errstate(divide="ignore"):
            se_x = np.where(f_a > 0, np.sqrt(p_a * (1.0 - p_a) / nn) / np.where(f_a > 0, f_a, 1.0), np.inf)
        kurt = np.array([dists[i]._kurtosis for i in beyond_anchor])
        kurt = np.where(np.isfinite(kurt), kurt, 3.0)
        se_s = s * np.sqrt(np.maximum(kurt - 1.0, 0.0) / (4.0 * nn))
        dz_tail = np.hypot(se_x / s, beyond * se_s / (s * s))
        at = beyond_anchor[heavier]
        z[at], dz[at] = z_tail[heavier], dz_tail[heavier]
    df = np.array([d.df for d in dists])
    df_se = np.array([d.df_se for d in dists])
    finite = np.isfinite(df)
    p, dens, slope = ndtr(z), _normal_pdf(z), np.zeros(len(todo))
    if finite.any():
        zf, dff = z[finite], df[finite]
        p[finite], dens[finite] = _t.cdf(zf, dff), _t.pdf(zf, dff)
        sloped = finite & (df_se > 0)
        if sloped.any():
            zs, dfs = z[sloped], df[sloped]
            step = 0.01 * dfs
            slope[sloped] = (_t.cdf(zs, dfs + step) - _t.cdf(zs, dfs - step)) / (2.0 * step)
    p_out = np.minimum(np.maximum(p, P_MIN), 1.0)
    se_out = np.hypot(dens * dz, slope * df_se)
    for (d, key), pv, sv in zip(todo, p_out.tolist(), se_out.tolist()):
        d._ps[key] = (pv, sv)


def _normal_pdf(z: np.ndarray) -> np.ndarray:
    """:func:`judge_transfer_audit.verdict.intervals.ndtr_pdf` on an array."""
    zc = np.minimum(np.maximum(z, -40.0), 40.0)
    return np.exp(-0.5 * zc * zc) / _SQRT_2PI


def _prefetch_anchors(requests: list[tuple[ReplicateDistribution, bool]]) -> None:
    """Fill ``d._anchors`` (the anchor quantile of a tail and the density there) for every request."""
    todo, seen = [], set()
    for d, lower in requests:
        key = "lower" if lower else "upper"
        if key in d._anchors or (id(d), key) in seen:
            continue
        seen.add((id(d), key))
        todo.append((d, key))
    if not todo:
        return
    prefetch_quantiles((d, d.p_anchor if key == "lower" else 1.0 - d.p_anchor) for d, key in todo)
    for group in _groups(todo, lambda item: item[0].n):
        dists = [d for d, _ in group]
        reps, h = _stack(dists)
        x = np.array([d._quantiles[d.p_anchor if key == "lower" else 1.0 - d.p_anchor] for d, key in group], float)
        z = np.clip((x[:, None] - reps) / h[:, None], -40.0, 40.0)
        dens = np.mean(np.exp(-0.5 * z * z), axis=1) / (h * _SQRT_2PI)
        for (d, key), xv, fv in zip(group, x.tolist(), dens.tolist()):
            d._anchors[key] = (xv, fv)


# ---- building many distributions at once
def materialize(requests: Iterable[tuple[object, str]]) -> None:
    """Build, at once, the distributions ``(bootstrap, statistic)`` that are not built yet
    (:class:`~judge_transfer_audit.verdict.paired_bootstrap.LazyDistributions`; a mirrored cell bootstrap's through the
    one it mirrors): the smoothing and the Satterthwaite df of same-length replicate rows on stacked
    arrays, each distribution the one its own construction gives, bit for bit."""
    swap = {"d_lo": "d_hi", "d_hi": "d_lo"}
    todo, seen = [], set()
    for boot, name in requests:
        while getattr(boot, "mirror_of", None) is not None:
            boot, name = boot.mirror_of, swap.get(name, name)
        lazy = boot.distributions
        pending = lazy.pending(name) if hasattr(lazy, "pending") else None
        if pending is None or (id(lazy), name) in seen:
            continue
        seen.add((id(lazy), name))
        todo.append((lazy, name, pending))
    built = build_distributions([p for _, _, p in todo])
    for (lazy, name, _), d in zip(todo, built):
        lazy.put(name, d)


def _stackable(p) -> bool:
    r, q = p.replicates, p.pairs_only
    return (
        r.ndim == 1
        and r.size >= 3
        and r.shape == q.shape
        and np.isfinite(p.estimate)
        and bool(np.isfinite(r).all() and np.isfinite(q).all())
    )


def build_distributions(pending: list) -> list[ReplicateDistribution]:
    """``[p() for p in pending]`` (:class:`~judge_transfer_audit.verdict.paired_bootstrap.PendingDistribution`), rows
    of the same length, pair and reader counts built together (rows with non-finite replicates, fewer than three
    replicates or a non-finite estimate one by one)."""
    out: list[ReplicateDistribution | None] = [None] * len(pending)
    groups: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for i, p in enumerate(pending):
        if _stackable(p):
            groups[(p.replicates.size, int(p.n_pairs), int(p.n_readers))].append(i)
        else:
            out[i] = p()
    for (n, n_pairs, n_readers), members in groups.items():
        rows = max(1, CHUNK_ELEMENTS // n)
        for start in range(0, len(members), rows):
            chunk = members[start : start + rows]
            for i, d in zip(chunk, _build_rows([pending[i] for i in chunk], n_pairs, n_readers)):
                out[i] = d
    return out  # type: ignore[return-value]


def _build_rows(pending: list, n_pairs: int, n_readers: int) -> list[ReplicateDistribution]:
    """:class:`~judge_transfer_audit.verdict.paired_bootstrap.PendingDistribution` calls of finite rows of one length
    (n >= 3)."""
    from judge_transfer_audit.verdict.paired_bootstrap import _df_from_variances

    total = np.stack([p.replicates for p in pending])
    pairs_only = np.stack([p.pairs_only for p in pending])
    n = total.shape[1]
    # the Satterthwaite df and its jackknife SE (paired_bootstrap._satterthwaite on every row)
    # one by one: the scalar df squares its reader part as a numpy scalar (a power, not always the
    # product an array's square is)
    df = np.array(
        [
            _df_from_variances(float(a), float(b), n_pairs, n_readers)
            for a, b in zip(np.var(total, ddof=1, axis=1), np.var(pairs_only, ddof=1, axis=1))
        ]
    )
    with np.errstate(invalid="ignore", divide="ignore"):  # rows without a finite df keep an SE of 0, as alone
        left_out = _df_from_variances(_leave_one_out_rows(total), _leave_one_out_rows(pairs_only), n_pairs, n_readers)
        jack = np.sqrt((n - 1) / n * np.sum((left_out - left_out.mean(axis=1, keepdims=True)) ** 2, axis=1))
    df_se = np.where(np.isfinite(df) & np.isfinite(left_out).all(axis=1), jack, 0.0)
    # the smoothing (ReplicateDistribution.__init__ on every row)
    sd = total.std(ddof=1, axis=1)
    mean = total.mean(axis=1)
    centred = total - mean[:, None]
    m2 = np.mean(centred**2, axis=1)
    m4 = np.mean(centred**4, axis=1)
    ordered = np.sort(total, axis=1)
    q75 = _sorted_quantile(ordered, np.full(len(pending), 0.75))
    q25 = _sorted_quantile(ordered, np.full(len(pending), 0.25))
    shrink = np.ones(len(pending))
    out = []
    for i, p in enumerate(pending):
        d = ReplicateDistribution.__new__(ReplicateDistribution)
        d.bounds = (float(p.bounds[0]), float(p.bounds[1]))
        d.estimate = float(p.estimate)
        dfi = float(df[i])
        d.df = dfi if np.isfinite(dfi) and dfi > 0 else float("inf")
        se = float(df_se[i])
        d.df_se = se if np.isfinite(d.df) and np.isfinite(se) and se > 0 else 0.0
        d.n = n
        d._anchors, d._quantiles, d._tails, d._ps = {}, {}, {}, {}
        s = float(sd[i])
        d.sd = s
        m2i = float(m2[i])
        d._kurtosis = float(m4[i] / m2i**2) if m2i > 0 else float("nan")
        spread = min(s, (q75[i] - q25[i]) / 1.349) if q75[i] > q25[i] else s
        h = 0.9 * spread * n ** (-0.2)
        if s > 0 and h > 0:
            shrink[i] = np.sqrt(1.0 + (h / s) ** 2)
        d._h = float(h)
        out.append(d)
    smoothed = np.array([d.sd > 0 and d._h > 0 for d in out])
    if smoothed.any():
        rows = total[smoothed]
        m = mean[smoothed][:, None]
        shrunk = np.sort(m + (rows - m) / shrink[smoothed][:, None], axis=1)
    k = 0
    for i, d in enumerate(out):
        if smoothed[i]:
            d._reps = shrunk[k]
            k += 1
        else:
            d._reps = ordered[i]
    return out


def _leave_one_out_rows(x: np.ndarray) -> np.ndarray:
    """:func:`judge_transfer_audit.verdict.paired_bootstrap._leave_one_out_var` of every row."""
    n = x.shape[1]
    c = x - x.mean(axis=1)[:, None]
    s2 = np.sum(c * c, axis=1)[:, None]
    return (s2 - c * c * n / (n - 1)) / (n - 2)


# ---- readings as callers name them (mirrored distributions resolved to their base)
def prefetch(
    intervals: Iterable[tuple[object, float]] = (), p_values: Iterable[tuple[object, float, bool]] = ()
) -> None:
    """Compute, for many distributions at once, what the caller is about to read (module doc).

    ``intervals``: ``(distribution, a)`` for a ``lower(a)`` / ``upper(a)`` / ``interval(1 - 2 a)`` reading
    (both one-sided bounds are computed); ``p_values``: ``(distribution, null, greater)`` for
    ``p_greater(null)`` (``greater``) or ``p_less(null)`` and their :meth:`p_mc_se`. Distributions may be
    mirrored (:class:`~judge_transfer_audit.verdict.intervals.MirroredDistribution`). Readings that are not kernel sums
    (undefined distributions, constant replicates) are left to the distribution itself.
    """
    bases = [(_base(d), float(a)) for d, a in intervals]
    prefetch_tails((d, a) for d, a in bases if _smoothed(d))
    quantiles = []
    for d, a in bases:
        if _smoothed(d):
            tail = d.tail(a)
            quantiles += [(d, tail), (d, 1.0 - tail)]
    prefetch_quantiles(quantiles)
    prefetch_p(_p_source(d, null, greater) for d, null, greater in p_values)


def _p_source(d, null: float, greater: bool) -> tuple[ReplicateDistribution, float, bool]:
    """The base distribution, null and tail that ``d.p_greater(null)`` (``greater``) or ``d.p_less(null)`` reads."""
    while isinstance(d, MirroredDistribution):
        null, greater, d = d.about - null, not greater, d.base
    return d, float(null), bool(greater)


__all__ = [
    "CHUNK_ELEMENTS",
    "build_distributions",
    "materialize",
    "prefetch",
    "prefetch_p",
    "prefetch_quantiles",
    "prefetch_tails",
]
