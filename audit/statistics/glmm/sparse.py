"""Sparse Cholesky of the reader block of the penalised Hessian.

After the largest factor (the pairs) is eliminated exactly, the remaining block is
``S = E - C' D^{-1} C`` (``m x m``, ``m`` = levels of the other factors). Its pattern is fixed by
the design: two readers are coupled when they read a common pair. This module factorises ``S``
with CHOLMOD (through scikit-sparse, optional extra ``sparse``) under a fill-reducing ordering
computed once, and gives

* ``logdet``: from the factor;
* solves with ``S``: the factor's sparse triangular solves;
* ``S^{-1}`` on the pattern of ``S`` (what the analytic gradient needs): the selected inverse,
  computed supernode by supernode on the pattern of the factor (Takahashi's recurrences), so no
  dense inverse is formed and memory stays O(nnz of the factor).

:func:`choose_path` is the cost rule that picks this path or the dense one; see docs/glmm.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

# Below this Schur dimension the dense path is always used (a dense factorisation is cheap).
DENSE_ALWAYS_MAX = 1500
# Flops of the sparse path (factor + selected inverse) are weighted by this against LAPACK's
# dense potrf + potri: CHOLMOD with Debian's reference BLAS and the supernode loop in Python run
# at a lower rate per flop. Measured on the arena-shaped 100k votes / 4k readers cell: one
# evaluation 3.2 s sparse (5.4e8 predicted flops) against 14 s dense (2.1e10): a rate ~9x lower.
SPARSE_FLOP_PENALTY = 10.0
# The dense path holds S, its factor and its inverse: past this many bytes it is not used.
DENSE_MEMORY_MAX = 3.0e9
# Past this many (weighted) flops per factorisation a fit takes hours on one core: warn.
SLOW_FLOPS = 1e12


def sksparse_available() -> bool:
    """True when scikit-sparse's CHOLMOD wrapper imports."""
    try:
        import sksparse.cholmod  # noqa: F401
    except ImportError:
        return False
    return True


# ----------------------------------------------------------------------------- symbolic analysis
def elimination_tree(indptr: np.ndarray, indices: np.ndarray, n: int) -> np.ndarray:
    """Elimination tree of a symmetric matrix given by its lower triangle in CSC form
    (Liu's algorithm with path compression; O(nnz alpha))."""
    # rows i > j of column j of the lower triangle are the entries (j, i) of the upper triangle,
    # i.e. column i of the upper triangle holds row j: iterate over the upper triangle by column
    upper = sp.csc_matrix((np.ones(indices.size), indices, indptr), shape=(n, n)).T.tocsc()
    up_ptr, up_idx = upper.indptr.tolist(), upper.indices.tolist()
    parent = [-1] * n
    ancestor = [-1] * n
    for k in range(n):
        for p in range(up_ptr[k], up_ptr[k + 1]):
            i = up_idx[p]
            while i != -1 and i < k:
                inext = ancestor[i]
                ancestor[i] = k
                if inext == -1:
                    parent[i] = k
                i = inext
    return np.array(parent, dtype=np.int64)


def _postorder(parent: np.ndarray) -> np.ndarray:
    n = parent.size
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for j in range(n - 1, -1, -1):
        p = int(parent[j])
        (roots if p == -1 else children[p]).append(j)
    post = []
    stack = roots[::-1]
    # iterative DFS; children lists were filled in decreasing order, pop gives increasing
    visit: list[tuple[int, bool]] = [(r, False) for r in roots]
    while visit:
        node, done = visit.pop()
        if done:
            post.append(node)
            continue
        visit.append((node, True))
        for c in children[node]:
            visit.append((c, False))
    del stack
    return np.array(post, dtype=np.int64)


def column_counts(indptr: np.ndarray, indices: np.ndarray, n: int, parent: np.ndarray) -> np.ndarray:
    """Number of nonzeros in each column of the Cholesky factor (diagonal included) of a
    symmetric matrix given by its lower triangle, without forming the factor (the
    Gilbert-Ng-Peyton skeleton algorithm, as CSparse's ``cs_counts``)."""
    post = _postorder(parent)
    first = [-1] * n
    delta = [0] * n
    par = parent.tolist()
    for k, j in enumerate(post.tolist()):
        delta[j] = 1 if first[j] == -1 else 0
        while j != -1 and first[j] == -1:
            first[j] = k
            j = par[j]
    ancestor = list(range(n))
    maxfirst = [-1] * n
    prevleaf = [-1] * n
    ptr, idx = indptr.tolist(), indices.tolist()
    for j in post.tolist():
        if par[j] != -1:
            delta[par[j]] -= 1
        fj = first[j]
        # rows i > j of column j of the lower triangle (the row structure A(i, j), i > j)
        for p in range(ptr[j], ptr[j + 1]):
            i = idx[p]
            if i <= j or fj <= maxfirst[i]:
                continue
            maxfirst[i] = fj
            jprev = prevleaf[i]
            prevleaf[i] = j
            delta[j] += 1
            if jprev != -1:
                q = jprev
                while q != ancestor[q]:
                    q = ancestor[q]
                s = jprev
                while s != q:
                    sprev = ancestor[s]
                    ancestor[s] = q
                    s = sprev
                delta[q] -= 1
        if par[j] != -1:
            ancestor[j] = par[j]
    counts = np.array(delta, dtype=np.int64)
    for j in post.tolist():  # children before parents
        if par[j] != -1:
            counts[par[j]] += counts[j]
    return counts


@dataclass(frozen=True)
class PathChoice:
    """Outcome of :func:`choose_path`."""

    path: str  # "dense" or "sparse"
    reason: str
    m: int
    nnz_factor: int | None = None  # predicted nonzeros of the sparse factor (lower triangle)
    sparse_flops: float | None = None
    dense_flops: float | None = None


def choose_path(pattern_lower: sp.csc_matrix, force: str | None = None) -> tuple[PathChoice, object | None]:
    """The cost rule. Returns the choice and, for the sparse path, the CHOLMOD symbolic analysis.

    * ``m <= DENSE_ALWAYS_MAX``: dense (no analysis).
    * otherwise, with scikit-sparse installed: CHOLMOD's fill-reducing ordering (AMD), then the
      exact column counts ``c_j`` of the factor under it (symbolic, O(nnz(S))). The sparse path
      costs about ``sum c_j^2`` flops per factorisation and as much again per selected inverse;
      the dense one ``m^3 / 3`` and ``2 m^3 / 3``. Sparse is chosen when
      ``SPARSE_FLOP_PENALTY * sum c_j^2 < m^3 / 3``, or when the dense path would need more than
      ``DENSE_MEMORY_MAX`` bytes (three m x m arrays).
    * without scikit-sparse: dense, and the reason says how to install the sparse path when it
      would have been considered.

    ``force`` ("dense" / "sparse") skips the rule (tests and benchmarks).
    """
    m = pattern_lower.shape[0]
    dense_flops = m**3 / 3.0
    if force == "dense" or (force is None and m <= DENSE_ALWAYS_MAX):
        return PathChoice(
            "dense", "forced" if force else f"Schur block {m} <= {DENSE_ALWAYS_MAX}", m, dense_flops=dense_flops
        ), None
    if not sksparse_available():
        if force == "sparse":
            from judge_transfer_audit.core.optional import import_optional

            import_optional("sksparse.cholmod", "the sparse GLMM path")
        return PathChoice(
            "dense",
            "scikit-sparse is not installed (pip install 'judge-transfer-audit[sparse]', needs "
            "libsuitesparse-dev): dense path",
            m,
            dense_flops=dense_flops,
        ), None
    from sksparse.cholmod import analyze

    sym = pattern_lower + sp.triu(pattern_lower.T, 1)
    symbolic = analyze(sym.tocsc(), mode="supernodal", ordering_method="amd")
    perm = symbolic.P()
    permuted = sp.tril(sym[perm][:, perm]).tocsc()
    permuted.sort_indices()
    parent = elimination_tree(permuted.indptr, permuted.indices, m)
    counts = column_counts(permuted.indptr, permuted.indices, m, parent)
    nnz = int(counts.sum())
    sparse_flops = float(np.sum(counts.astype(float) ** 2))
    dense_bytes = 3.0 * 8.0 * m * m
    if force == "sparse":
        choice = PathChoice("sparse", "forced", m, nnz, sparse_flops, dense_flops)
    elif SPARSE_FLOP_PENALTY * sparse_flops < dense_flops:
        choice = PathChoice(
            "sparse",
            f"predicted factor {nnz:,} nonzeros ({100 * nnz / (m * (m + 1) / 2):.1f}% of "
            f"dense), {sparse_flops:.3g} flops against {dense_flops:.3g}",
            m,
            nnz,
            sparse_flops,
            dense_flops,
        )
    elif dense_bytes > DENSE_MEMORY_MAX:
        choice = PathChoice(
            "sparse", f"dense path would need {dense_bytes / 1e9:.1f} GB", m, nnz, sparse_flops, dense_flops
        )
    else:
        choice = PathChoice(
            "dense",
            f"predicted sparse factor {nnz:,} nonzeros "
            f"({100 * nnz / (m * (m + 1) / 2):.1f}% of dense): dense is cheaper",
            m,
            nnz,
            sparse_flops,
            dense_flops,
        )
    cost = SPARSE_FLOP_PENALTY * sparse_flops if choice.path == "sparse" else dense_flops
    if cost > SLOW_FLOPS:
        import warnings

        warnings.warn(
            f"GLMM: the {m}-level reader block has a nearly dense factor ({nnz:,} nonzeros predicted); each "
            f"of the ~20-40 factorisations of this fit costs ~{cost:.1g} flops (hours on one core). Exact "
            "Laplace needs that; fit a subsample of readers or pairs to go faster",
            RuntimeWarning,
            stacklevel=2,
        )
    return choice, (symbolic if choice.path == "sparse" else None)


# ----------------------------------------------------------------------------- numeric factor
class SparseSchur:
    """A fixed sparsity pattern for ``S`` (lower triangle, CSC), its CHOLMOD symbolic analysis,
    and the index maps used to read the selected inverse at the pattern's entries."""

    def __init__(self, pattern_lower: sp.csc_matrix, symbolic):
        self.m = pattern_lower.shape[0]
        self.indptr = pattern_lower.indptr
        self.indices = pattern_lower.indices
        self.nnz = pattern_lower.nnz
        self.symbolic = symbolic
        self.perm = np.asarray(symbolic.P(), dtype=np.int64)
        self.iperm = np.empty_like(self.perm)
        self.iperm[self.perm] = np.arange(self.m)
        self._lmap = None  # (L pattern signature, positions of S's entries in the factor)
        cols = np.repeat(np.arange(self.m), np.diff(self.indptr))
        self.keys = cols * self.m + self.indices  # column-major key of each stored entry (col <= row)

    def factor(self, data: np.ndarray) -> "SparseFactor":
        S = sp.csc_matrix((data, self.indices, self.indptr), shape=(self.m, self.m))
        F = self.symbolic.cholesky(S)
        return SparseFactor(self, F)

    def positions(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Index into the stored entries of the pattern for entries (rows, cols) (either order)."""
        lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
        pos = np.searchsorted(self.keys, lo * self.m + hi)
        return pos


class SparseFactor:
    """The numeric factor of one ``S``: log-determinant, solves, selected inverse."""

    def __init__(self, owner: SparseSchur, F):
        self.owner = owner
        self.F = F
        self.logdet = float(F.logdet())

    def solve(self, b: np.ndarray) -> np.ndarray:
        return self.F.solve_A(b)

    def selected_inverse(self) -> np.ndarray:
        """``S^{-1}`` at the stored entries of the pattern of ``S`` (same order as its CSC data)."""
        o = self.owner
        L = self.F.L().tocsc()
        L.sort_indices()
        Z = selected_inverse(L)
        # entry (i, j) of S is entry (iperm[i], iperm[j]) of the permuted matrix P S P'
        sig = (L.nnz, L.indptr[-1])
        if o._lmap is None or o._lmap[0] != sig:
            cols = np.repeat(np.arange(o.m), np.diff(o.indptr))
            pi, pj = o.iperm[o.indices], o.iperm[cols]
            lo, hi = np.minimum(pi, pj), np.maximum(pi, pj)
            lkeys = np.repeat(np.arange(o.m), np.diff(L.indptr)) * o.m + L.indices
            pos = np.searchsorted(lkeys, lo * o.m + hi)
            o._lmap = (sig, pos)
        return Z[o._lmap[1]]


def _supernodes(L: sp.csc_matrix) -> np.ndarray:
    """Start columns of the fundamental supernodes of a Cholesky factor's pattern (plus n):
    column j+1 joins j's supernode when it is j's parent and their patterns nest exactly."""
    n = L.shape[0]
    counts = np.diff(L.indptr)
    if n <= 1:
        return np.array([0, n])
    nxt = np.full(n - 1, -1)
    has = counts[:-1] > 1
    nxt[has] = L.indices[L.indptr[:-2][has] + 1]
    merge = has & (nxt == np.arange(1, n)) & (counts[:-1] == counts[1:] + 1)
    starts = np.flatnonzero(np.concatenate([[True], ~merge]))
    return np.concatenate([starts, [n]])


def selected_inverse(L: sp.csc_matrix) -> np.ndarray:
    """Entries of ``(L L')^{-1}`` on the pattern of ``L`` (same order as ``L.data``).

    Supernodal Takahashi recurrences, from the last supernode to the first: with the supernode's
    columns J and the rows R below it, ``Z_RJ = -Z_RR L_RJ L_JJ^{-1}`` and
    ``Z_JJ = L_JJ^{-T} (L_JJ^{-1} - L_RJ' Z_RJ)``. ``Z_RR`` lies on the pattern of L (R is a
    clique of the filled graph), so the work and memory are those of the factorisation.
    """
    n = L.shape[0]
    indptr, indices, data = L.indptr, L.indices, L.data
    counts = np.diff(indptr)
    Z = np.zeros_like(data)
    bounds = _supernodes(L)
    sn_of = np.repeat(np.arange(bounds.size - 1), np.diff(bounds))  # supernode of each column
    keys = np.repeat(np.arange(n, dtype=np.int64), counts) * n + indices  # sorted (CSC order)
    for s in range(bounds.size - 2, -1, -1):
        j0, j1 = int(bounds[s]), int(bounds[s + 1])
        w = j1 - j0
        p0, p1 = indptr[j0], indptr[j0 + 1]
        R = indices[p0 + w : p1]
        nr = w + R.size
        # the supernode's columns as a dense trapezoid: rows (J, R) x columns J
        if w == 1:
            panel = data[p0:p1][:, None]
        else:
            panel = np.zeros((nr, w))
            for c in range(w):
                panel[c:, c] = data[indptr[j0 + c] : indptr[j0 + c + 1]]
        LJJ = panel[:w]
        LRJ = panel[w:]
        # (L_JJ L_JJ')^{-1} by LAPACK's potri (the whole of Z_JJ when R is empty)
        if w == 1:
            ZJJ = np.array([[1.0 / (LJJ[0, 0] * LJJ[0, 0])]])
        else:
            inv, info = sla.lapack.dpotri(np.asfortranarray(LJJ), lower=1)
            if info != 0:
                raise np.linalg.LinAlgError(f"potri failed on a supernode (info {info})")
            ZJJ = np.tril(inv) + np.tril(inv, -1).T
        if R.size:
            # Z_RR (lower part) from the columns of R, computed already: gather every stored
            # entry of those columns and keep the rows that are in R
            ii, jj = np.tril_indices(R.size)
            r1, r2 = R[ii], R[jj]  # r1 >= r2: entry (r1, r2) is stored in column r2
            t = sn_of[r2]
            inside = r1 < bounds[t + 1]  # row r1 is in column r2's own supernode: no search
            pos = indptr[r2] + (r1 - r2)
            out = ~inside
            if out.any():
                pos[out] = np.searchsorted(keys, r2[out] * n + r1[out])
            ZRR = np.empty((R.size, R.size))
            ZRR[ii, jj] = Z[pos]
            ZRR[jj, ii] = Z[pos]
            # Y = L_RJ L_JJ^{-1}; Z_RJ = -Z_RR Y; Z_JJ = (L_JJ L_JJ')^{-1} + Y' Z_RR Y
            if w == 1:
                Y = LRJ / LJJ[0, 0]
            else:
                Y = sla.solve_triangular(LJJ, LRJ.T, lower=True, trans="T", check_finite=False).T
            ZRJ = -(ZRR @ Y)
            ZJJ = ZJJ - Y.T @ ZRJ
        else:
            ZRJ = np.zeros((0, w))
        if w == 1:
            Z[p0] = ZJJ[0, 0]
            Z[p0 + 1 : p1] = ZRJ[:, 0]
        else:
            full = np.vstack([ZJJ, ZRJ])
            for c in range(w):
                Z[indptr[j0 + c] : indptr[j0 + c + 1]] = full[c:, c]
    return Z
