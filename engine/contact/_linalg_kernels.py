"""numba kernels of the contact solvers' linear algebra (used by the active-set step of ``_kernels.polish``, the
Newton steps of ``_newton_kernels`` and the body-space solves of ``_factor_kernels``): least-norm solutions of
symmetric positive semidefinite systems (pivoted Cholesky), a factor kept from step to step with conjugate
gradients on it, a factor remembered between the Newton steps of one solve, and the least-norm solution of any
system by QR with column pivoting. Arrays in, arrays out.
"""
from __future__ import annotations

import math
import warnings

import llvmlite.binding as ll
import numpy as np
import scipy.linalg
from numba import config, njit, types
from numba.extending import get_cython_function_address

POLISH_RCOND = 1e-10        # pivots of W_SS below this times its largest diagonal are treated as zero
REUSE_ROWS = 48             # an active set of this many rows keeps its Cholesky factor for the next solve …
REUSE_ITERATIONS = 4        # … which preconditions conjugate gradients, at most this many, on the same rows …
REUSE_TOL = 1e-12           # … until ‖W_SS x − b‖ ≤ REUSE_TOL ‖b‖ (else W_SS is factored again)
RANK_TOL = 1e-12            # |R_kk| below this times |R_00| ends the rank (``least_norm_rows``: QR, column pivoting)


# BLAS's dsyrk (scipy's, whose dgemm numba's np.dot calls), by a symbol name: the kernels that call it stay cacheable
ll.add_symbol("articula_dsyrk", get_cython_function_address("scipy.linalg.cython_blas", "dsyrk"))
_dsyrk = types.ExternalFunction("articula_dsyrk", types.void(*(types.voidptr,) * 10))


@njit(cache=True, nogil=True)
def gram_upper(B, out):
    """The upper triangle of out (n × n, C-contiguous) = B Bᵀ, B (n, k) C-contiguous, by BLAS's dsyrk (half the
    flops of a product; Talos lying, n = 180, k = 37: 25.5 against 43.5 µs); the lower triangle is left as it was.
    Row-major B is column-major Bᵀ: dsyrk's C = Aᵀ A with A = Bᵀ (k × n), its lower triangle the upper here."""
    n, k = B.shape
    chars = np.array([ord("L"), ord("T")], np.uint8)
    sizes = np.array([n, k, k, n], np.int32)
    scalars = np.array([1.0, 0.0])
    _dsyrk(chars[0:].ctypes, chars[1:].ctypes, sizes[0:].ctypes, sizes[1:].ctypes, scalars[0:].ctypes, B.ctypes,
           sizes[2:].ctypes, scalars[1:].ctypes, out.ctypes, sizes[3:].ctypes)


def _gram_upper(B, out):
    """``gram_upper`` in numpy, for NUMBA_DISABLE_JIT (BLAS by a symbol name is for compiled code only)."""
    upper = np.triu_indices(len(B))
    out[upper] = (B @ B.T)[upper]


# LAPACK's dgetrf and dgetrs (scipy's): numba's np.linalg.solve calls dgesv, which is dgetrf then dgetrs; apart,
# one factorisation serves several right sides
ll.add_symbol("articula_dgetrf", get_cython_function_address("scipy.linalg.cython_lapack", "dgetrf"))
ll.add_symbol("articula_dgetrs", get_cython_function_address("scipy.linalg.cython_lapack", "dgetrs"))
_dgetrf = types.ExternalFunction("articula_dgetrf", types.void(*(types.voidptr,) * 6))
_dgetrs = types.ExternalFunction("articula_dgetrs", types.void(*(types.voidptr,) * 9))


@njit(cache=True, nogil=True)
def lu_factor(A, lu, pivots):
    """lu (n × n, C-contiguous) and pivots (n, int32) ← the LU factors of A with partial pivoting (dgetrf), stored
    as LAPACK leaves them in column-major order: the factors of numba's ``np.linalg.solve(A, ·)``, whose solutions
    ``lu_solve`` gives to the last bit. False where A is not finite or singular (nothing to solve with)."""
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            if not math.isfinite(A[i, j]):
                return False
            lu[j, i] = A[i, j]                       # row-major Aᵀ: column-major A
    sizes = np.array([n, n, n, 0], np.int32)         # m, n, lda, info
    _dgetrf(sizes[0:].ctypes, sizes[1:].ctypes, lu.ctypes, sizes[2:].ctypes, pivots.ctypes, sizes[3:].ctypes)
    return sizes[3] == 0


@njit(cache=True, nogil=True)
def lu_solve(lu, pivots, b):
    """A⁻¹ b from ``lu_factor(A, lu, pivots)`` (dgetrs), or an empty array where b or the solution is not finite."""
    x = b.copy()
    trans = np.array([ord("N")], np.uint8)
    sizes = np.array([b.shape[0], 1, b.shape[0], b.shape[0], 0], np.int32)    # n, nrhs, lda, ldb, info
    _dgetrs(trans.ctypes, sizes[0:].ctypes, sizes[1:].ctypes, lu.ctypes, sizes[2:].ctypes, pivots.ctypes, x.ctypes,
            sizes[3:].ctypes, sizes[4:].ctypes)
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return np.empty(0)
    return x


def _lu_factor(A, lu, pivots):
    """``lu_factor`` by scipy, for NUMBA_DISABLE_JIT."""
    if not np.all(np.isfinite(A)):
        return False
    with warnings.catch_warnings():                  # a singular A: False, as compiled
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        factors, perm = scipy.linalg.lu_factor(A, check_finite=False)
    lu[:], pivots[:] = factors.T, perm + 1
    return bool(np.all(np.diag(factors) != 0.0))


def _lu_solve(lu, pivots, b):
    """``lu_solve`` by scipy, for NUMBA_DISABLE_JIT."""
    x = scipy.linalg.lu_solve((lu.T, pivots - 1), b, check_finite=False)
    return x if np.all(np.isfinite(x)) else np.empty(0)


if config.DISABLE_JIT:
    gram_upper, lu_factor, lu_solve = _gram_upper, _lu_factor, _lu_solve  # noqa: F811


def no_keep():
    """A ``keep`` argument with no factor kept and room for none (a solve of one problem)."""
    return np.zeros(0), np.zeros(1, np.int64), np.zeros(0), np.zeros(1, np.int64)


@njit(cache=True, nogil=True)
def kept_solve(A, b, rows, keep):
    """``least_norm_solve(A, b)`` for A = W_SS, the rows ``rows`` of W, cheaper on a contact set that persists
    from step to step (a robot standing on FEM soles: 240 rows, a dense 240³/3-flop Cholesky per solve).

    ``keep`` = (L, meta, L_new, meta_new): L (cap²,) the Cholesky factor, row after row, of an earlier W_SS of
    m ≥ REUSE_ROWS rows (meta[0] = m, meta[1:m + 1] its rows; m = 0: none), read only; a factor computed here
    goes to L_new, meta_new (meta_new[0] = −1: forget the kept one), which the caller then keeps in its place
    (the kept arrays are never written, so a saved state can refer to them). When ``rows`` are the kept rows,
    W_SS has only moved with the configuration, and conjugate gradients preconditioned by the kept L Lᵀ
    (``_kept_cg``) reach ‖W_SS x − b‖ ≤ REUSE_TOL ‖b‖ in one or two O(m²) iterations. Otherwise, or if CG does
    not get there in REUSE_ITERATIONS, W_SS is factored anew (and kept when positive definite); a semidefinite
    W_SS (a hyperstatic rigid set) takes the pivoted path of ``least_norm_solve`` on a copy, which keeps nothing.
    A is left unchanged."""
    L_old, meta_old, L_new, meta_new = keep
    m = A.shape[0]
    if REUSE_ROWS <= m and m * m <= L_new.shape[0]:
        L_keep, meta = (L_new, meta_new) if meta_new[0] != 0 else (L_old, meta_old)
        if meta[0] == m and _same_rows(meta, rows):
            x = _kept_cg(A, b, L_keep[:m * m].reshape((m, m)))     # contiguous
            if x.shape[0]:
                return x
        L = definite_cholesky(A)
        if L.shape[0]:
            L_new[:m * m] = L.ravel()
            meta_new[0] = m
            meta_new[1:m + 1] = rows
            return _cholesky_solve(L, b)
        meta_new[0] = -1
    return least_norm_solve(A.copy(), b)


DEFINITE, SEMIDEFINITE = -1, -2   # ``memo``'s meta[1] besides a rank: L holds W_SS's Cholesky factor; W_SS is not
                                  # definite, its pivoted factor not computed yet


@njit(cache=True, nogil=True)
def no_factor():
    """The (B_col, B_val, width) arguments of the kernels for a W that comes without its factor (width 0)."""
    return np.zeros((0, 1), np.int64), np.zeros((0, 1, 1)), 0


@njit(cache=True, nogil=True)
def no_memo(n):
    """A ``memo`` argument of ``memo_solve`` and ``memo_definite`` for a problem of n rows, with nothing in it."""
    return np.zeros(n + 2, np.int64), np.empty(n * n), np.empty(n, np.int64), np.empty(n * n)


@njit(cache=True, nogil=True)
def memo_solve(A, b, rows, keep, memo):
    """``kept_solve(A, b, rows, keep)`` for the successive Newton steps of one problem (one W): where kept_solve
    factors W_SS for this solve only (m < REUSE_ROWS rows, or no room to keep its factor), the factor is
    remembered in ``memo`` and reused while the active rows stay the same — the same factor and the same
    substitutions, so the same solution to the last bit, without the factorisation.

    ``memo`` = (meta, L, perm, G) from ``no_memo``: meta[0] = m the rows of what it holds (0: nothing),
    meta[2:m + 2] these rows, meta[1] = DEFINITE (L is the Cholesky factor of W_SS, m × m), SEMIDEFINITE, or the
    rank r of ``pivoted_cholesky``'s factors: Bt (r × m) in L, the order in perm and the Cholesky factor of BᵀB
    (r × r) in G."""
    m = A.shape[0]
    if REUSE_ROWS <= m and m * m <= keep[2].shape[0]:
        return kept_solve(A, b, rows, keep)
    meta, L, perm, G = memo
    if not memo_definite(A, rows, memo) and meta[1] == SEMIDEFINITE:    # least_norm_solve(A.copy(), b)'s factor
        Bt, order, L_G = pivoted_cholesky(A.copy())
        r = Bt.shape[0]
        meta[1] = r
        L[:r * m], perm[:m], G[:r * r] = Bt.ravel(), order, L_G.ravel()
    r = meta[1]
    if r == DEFINITE:
        return _cholesky_solve(L[:m * m].reshape((m, m)), b)
    return pseudo_inverse_apply(L[:r * m].reshape((r, m)), perm[:m], G[:r * r].reshape((r, r)), b)


@njit(cache=True, nogil=True)
def memo_definite(A, rows, memo):
    """Whether W_SS = A, the rows ``rows`` of W, is numerically positive definite (``definite_cholesky``), from
    ``memo`` when it holds these rows (``memo_solve``), else found and remembered there. A is read only when the
    rows are new."""
    meta, L = memo[0], memo[1]
    m = rows.shape[0]
    if meta[0] != m or not _same_rows(meta[1:], rows):
        L_A = definite_cholesky(A)
        meta[0], meta[1] = m, DEFINITE if L_A.shape[0] else SEMIDEFINITE
        meta[2:m + 2] = rows
        if L_A.shape[0]:
            L[:m * m] = L_A.ravel()
    return meta[1] == DEFINITE


@njit(cache=True, nogil=True)
def _same_rows(meta, rows):
    for i in range(rows.shape[0]):
        if meta[i + 1] != rows[i]:
            return False
    return True


@njit(cache=True, nogil=True)
def _kept_cg(A, b, L):
    """x with ‖A x − b‖ ≤ REUSE_TOL ‖b‖ by conjugate gradients on A (symmetric positive definite) preconditioned
    with L Lᵀ (Golub & Van Loan, Alg. 11.5.1), at most REUSE_ITERATIONS; an empty array when not reached."""
    m = b.shape[0]
    bound = REUSE_TOL * math.sqrt(np.dot(b, b))
    x = np.zeros(m)
    r = b.copy()
    if bound == 0.0:
        return x
    z = _cholesky_solve(L, r)
    p = z.copy()
    rz = np.dot(r, z)
    for _ in range(REUSE_ITERATIONS):
        Ap = np.dot(A, p)
        alpha = rz / np.dot(p, Ap)
        x += alpha * p
        r -= alpha * Ap
        if math.sqrt(np.dot(r, r)) <= bound:
            return x
        z = _cholesky_solve(L, r)
        rz, rz_old = np.dot(r, z), rz
        p = z + (rz / rz_old) * p
    return np.zeros(0)


@njit(cache=True, nogil=True)
def least_norm_solve(A, b):
    """y = A⁺ b for A (m, m) symmetric positive semidefinite, by a pivoted Cholesky factorisation (overwrites A).

    P A Pᵀ = B Bᵀ with B (m, r) lower trapezoidal, r the number of pivots above POLISH_RCOND × max diag A.
    Then A⁺ = Pᵀ B (BᵀB)⁻² Bᵀ P, so y = Pᵀ B G⁻¹ G⁻¹ Bᵀ P b with G = BᵀB (r × r, positive definite).
    """
    L = definite_cholesky(A)
    if L.shape[0]:
        return _cholesky_solve(L, b)
    Bt, perm, G = pivoted_cholesky(A)
    return pseudo_inverse_apply(Bt, perm, G, b)


@njit(cache=True, nogil=True)
def pivoted_cholesky(A):
    """(Bt, perm, L_G) of ``least_norm_solve``'s factorisation P A Pᵀ = B Bᵀ (overwrites A, reads and updates
    its lower triangle only: A exactly symmetric): Bt (r, m) the columns of B, perm the pivot order, L_G the
    Cholesky factor of G = BᵀB (r × r)."""
    m = A.shape[0]
    perm = np.arange(m)
    Bt = np.zeros((m, m))                            # Bt[k] = column k of B (contiguous)
    cut = 0.0
    for i in range(m):
        cut = max(cut, A[i, i])
    cut *= POLISH_RCOND
    r = 0
    while r < m:
        j = r                                        # pivot: the largest remaining diagonal
        for i in range(r + 1, m):
            if A[i, i] > A[j, j]:
                j = i
        if A[j, j] <= cut:
            break
        _swap(A, Bt, perm, r, j)
        d = math.sqrt(A[r, r])
        for i in range(r, m):
            Bt[r, i] = A[i, r] / d                   # column r
        for i in range(r + 1, m):                    # Schur complement (lower triangle)
            bi = Bt[r, i]
            if bi != 0.0:
                for k in range(r + 1, i + 1):
                    A[i, k] -= bi * Bt[r, k]
        r += 1
    G = np.zeros((r, r))
    for k in range(r):
        for l in range(k + 1):
            acc = 0.0
            for i in range(k, m):
                acc += Bt[k, i] * Bt[l, i]
            G[k, l] = G[l, k] = acc
    return Bt[:r], perm, np.linalg.cholesky(G)


@njit(cache=True, nogil=True)
def pseudo_inverse_apply(Bt, perm, L, b):
    """A⁺ b = Pᵀ B G⁻¹ G⁻¹ Bᵀ P b from ``pivoted_cholesky``'s (Bt, perm, L = chol(G))."""
    r, m = Bt.shape[0], perm.shape[0]
    Bb = np.zeros(r)                                 # c = Bᵀ P b
    for k in range(r):
        for i in range(k, m):
            Bb[k] += Bt[k, i] * b[perm[i]]
    w = _cholesky_solve(L, _cholesky_solve(L, Bb))
    y = np.zeros(m)
    for k in range(r):
        for i in range(k, m):
            y[perm[i]] += Bt[k, i] * w[k]
    return y


@njit(cache=True, nogil=True)
def least_norm_rows(J, b):
    """x (q,) of least norm with J x = b on a maximal independent set of the rows of J (m, q), any J.

    Householder QR with column pivoting of Jᵀ (Golub & Van Loan, Matrix Computations, Alg. 5.4.1): Jᵀ P = Q R,
    so J = P Rᵀ Qᵀ and J x = b reads Rᵀ (Qᵀ x) = Pᵀ b. With r the numerical rank (|R_kk| > RANK_TOL |R_00|),
    y₁ = R₁₁⁻ᵀ (Pᵀ b)₁ by forward substitution and x = Q (y₁, 0), the solution of least norm of the r independent
    rows (for a consistent system, of all of them). Unlike the normal equations J Jᵀ, it resolves singular values
    down to ~RANK_TOL of the largest: a slipping contact about to stick gives J singular values of 1e-8.
    The norms and the reflections take four rows of A at a time (``_largest_row``, ``_reflect_rows``).
    """
    m, q = J.shape
    A = J.copy()                                     # row k of A = column k of Jᵀ (contiguous); R in the rows'
    perm = np.arange(m)                              # tails, reflector vectors w below them (row k, from k)
    beta, w0 = np.zeros(m), np.zeros(m)              # reflector k: H = I − β w wᵀ, w = (w0, A[k, k+1:])
    r, first = 0, 0.0
    for k in range(min(m, q)):
        p, best = _largest_row(A, k)                 # the remaining column of Jᵀ of largest norm (from entry k)
        norm = math.sqrt(best)
        if k == 0:
            first = norm
        if norm == 0.0 or norm <= RANK_TOL * first:
            break
        if p != k:
            for i in range(q):
                A[k, i], A[p, i] = A[p, i], A[k, i]
            perm[k], perm[p] = perm[p], perm[k]
        alpha = -norm if A[k, k] >= 0.0 else norm    # H x = α e₁
        A[k, k] -= alpha
        ww = 0.0
        for i in range(k, q):
            ww += A[k, i] * A[k, i]
        beta[k] = 2.0 / ww
        _reflect_rows(A, k, beta[k])
        w0[k], A[k, k] = A[k, k], alpha
        r = k + 1
    y = np.zeros(q)
    for i in range(r):                               # R₁₁ᵀ y₁ = (Pᵀ b)₁, R_ki = A[i, k] (k ≤ i)
        acc = b[perm[i]]
        for k in range(i):
            acc -= A[i, k] * y[k]
        y[i] = acc / A[i, i]
    for k in range(r - 1, -1, -1):                   # x = H₀ … H_{r−1} (y₁, 0)
        acc = w0[k] * y[k]
        for i in range(k + 1, q):
            acc += A[k, i] * y[i]
        acc *= beta[k]
        y[k] -= acc * w0[k]
        for i in range(k + 1, q):
            y[i] -= acc * A[k, i]
    return y


@njit(cache=True, nogil=True)
def _largest_row(A, k):
    """(j, ‖A[j, k:]‖²) of the row j ≥ k of largest norm from entry k (the first of equal ones). Four rows at a
    time: four sums, each in the order of one row alone (the same bits), whose chains of additions run side by
    side instead of one after the other (``least_norm_rows`` on 60 × 60: 120 → 59 µs with ``_reflect_rows``)."""
    m, q = A.shape
    p, best, j = k, -1.0, k
    while j + 4 <= m:
        a0 = a1 = a2 = a3 = 0.0
        for i in range(k, q):
            a0 += A[j, i] * A[j, i]
            a1 += A[j + 1, i] * A[j + 1, i]
            a2 += A[j + 2, i] * A[j + 2, i]
            a3 += A[j + 3, i] * A[j + 3, i]
        if a0 > best:
            p, best = j, a0
        if a1 > best:
            p, best = j + 1, a1
        if a2 > best:
            p, best = j + 2, a2
        if a3 > best:
            p, best = j + 3, a3
        j += 4
    for j in range(j, m):
        acc = 0.0
        for i in range(k, q):
            acc += A[j, i] * A[j, i]
        if acc > best:
            p, best = j, acc
    return p, best


@njit(cache=True, nogil=True)
def _reflect_rows(A, k, beta):
    """A[j, k:] −= β (w · A[j, k:]) w for the rows j > k, w = A[k, k:] (the reflector H = I − β w wᵀ applied to
    the columns of Jᵀ after k). Four rows at a time, as ``_largest_row``: the same bits as one row at a time."""
    m, q = A.shape
    j = k + 1
    while j + 4 <= m:
        d0 = d1 = d2 = d3 = 0.0
        for i in range(k, q):
            w = A[k, i]
            d0 += w * A[j, i]
            d1 += w * A[j + 1, i]
            d2 += w * A[j + 2, i]
            d3 += w * A[j + 3, i]
        d0, d1, d2, d3 = d0 * beta, d1 * beta, d2 * beta, d3 * beta
        for i in range(k, q):
            w = A[k, i]
            A[j, i] -= d0 * w
            A[j + 1, i] -= d1 * w
            A[j + 2, i] -= d2 * w
            A[j + 3, i] -= d3 * w
        j += 4
    for j in range(j, m):
        acc = 0.0
        for i in range(k, q):
            acc += A[k, i] * A[j, i]
        acc *= beta
        for i in range(k, q):
            A[j, i] -= acc * A[k, i]


@njit(cache=True, nogil=True)
def definite_cholesky(A):
    """L with L Lᵀ = A by LAPACK when A is numerically positive definite — every pivot L_ii² above
    POLISH_RCOND × max diag A, so that A⁺ = A⁻¹ and the pivoted factorisation would find the same solution (a
    compliant contact set: FEM soles make W_SS full rank) — else an empty (0, 0) array. A is left unchanged."""
    m = A.shape[0]
    cut = 0.0
    for i in range(m):
        cut = max(cut, A[i, i])
    cut *= POLISH_RCOND
    if m == 0 or cut <= 0.0:
        return np.zeros((0, 0))
    try:
        L = np.linalg.cholesky(A)
    except Exception:                                # not positive definite
        return np.zeros((0, 0))
    for i in range(m):
        if not L[i, i] * L[i, i] > cut:
            return np.zeros((0, 0))
    return L


@njit(cache=True, nogil=True)
def _swap(A, Bt, perm, r, j):
    """Symmetric swap of rows and columns r < j of the trailing block A[r:, r:], in its lower triangle (and of the
    rows of B built so far: columns of Bt)."""
    if j == r:
        return
    A[r, r], A[j, j] = A[j, j], A[r, r]
    for k in range(r + 1, j):
        A[k, r], A[j, k] = A[j, k], A[k, r]
    for k in range(j + 1, A.shape[0]):
        A[k, r], A[k, j] = A[k, j], A[k, r]
    for k in range(r):
        Bt[k, r], Bt[k, j] = Bt[k, j], Bt[k, r]
    perm[r], perm[j] = perm[j], perm[r]


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _cholesky_solve(L, c):
    """x with L Lᵀ x = c, both sweeps along the rows of L (contiguous): forward by dot products, backward by
    axpys."""
    n = c.shape[0]
    z = np.empty(n)
    for i in range(n):
        acc = c[i]
        for k in range(i):
            acc -= L[i, k] * z[k]
        z[i] = acc / L[i, i]
    for i in range(n - 1, -1, -1):
        z[i] /= L[i, i]
        x = z[i]
        for k in range(i):
            z[k] -= L[i, k] * x
    return z
