"""numba kernels of Lemke's method (seed 000 §3.4, AMELIFLCP): complementary pivoting on the tableau, driven by
``lemke.py``."""
from __future__ import annotations

import math

from numba import njit

SOLVED, RAY, MAX_ITER = 0, 1, 2
PIVOT_TOL = 1e-9            # pivot candidates above this times the largest entry of the column


@njit(cache=True, nogil=True)
def _pivot(T, r, c):
    """Gauss–Jordan pivot of the tableau on (r, c)."""
    p = T[r, c]
    for j in range(T.shape[1]):
        T[r, j] /= p
    for i in range(T.shape[0]):
        a = T[i, c]
        if i != r and a != 0.0:
            for j in range(T.shape[1]):
                T[i, j] -= a * T[r, j]
            T[i, c] = 0.0
    T[r, c] = 1.0


@njit(cache=True, nogil=True)
def _leaving_row(T, basis, c, sign, ties):
    """Lexicographic minimum-ratio test for entering column c: rows with sign·T[i, c] > 1e-9 max|T[:, c]| (smaller
    entries are rounding noise of structural zeros), minimising (rhs_i, B⁻¹_i) / (sign·T[i, c])
    lexicographically (B⁻¹ = the w columns); the z0 row wins a first-level tie. Returns −1 for a ray."""
    n = T.shape[0]
    z0 = 2 * n
    cmax = 0.0
    for i in range(n):
        cmax = max(cmax, abs(T[i, c]))
    eps = PIVOT_TOL * cmax
    nt = 0
    for i in range(n):
        if sign * T[i, c] > eps:
            ties[nt] = i
            nt += 1
    if nt == 0:
        return -1
    for col in range(-1, n):
        best = math.inf
        for t in range(nt):
            best = min(best, _ratio(T, ties[t], c, col, sign))
        keep = 0
        for t in range(nt):
            if _ratio(T, ties[t], c, col, sign) <= best + 1e-11 * (1.0 + abs(best)):
                ties[keep] = ties[t]
                keep += 1
        nt = keep
        if col < 0:
            for t in range(nt):
                if basis[ties[t]] == z0:
                    return ties[t]
        if nt == 1:
            break
    return ties[0]


@njit(cache=True, nogil=True)
def _ratio(T, i, c, col, sign):
    """Entry col of row i of [rhs, B⁻¹] over the pivot candidate sign·T[i, c] (col = −1: the rhs, clamped at 0
    once the basis is feasible, sign > 0, since a negative rhs is then rounding)."""
    if col < 0:
        r = T[i, T.shape[1] - 1]
        return (max(r, 0.0) if sign > 0.0 else r) / (sign * T[i, c])
    return T[i, col] / (sign * T[i, c])


@njit(cache=True, nogil=True)
def lemke_pivots(T, basis, ties, max_iter):
    """Lemke's complementary pivoting on the tableau T = [I, −M, −d, q] (n, 2n+2) for w − M z − d z0 = q,
    0 ≤ w ⊥ z ≥ 0 (variables: w 0..n−1, z n..2n−1, z0 2n). Ends on a solution when z0 leaves the basis or
    drops to 0 (1e-12 max|q|: the basis is then complementary). Returns (pivots, SOLVED / RAY / MAX_ITER)."""
    n = T.shape[0]
    z0, rhs = 2 * n, 2 * n + 1
    for i in range(n):
        basis[i] = i
    qmin, qmax = math.inf, 0.0
    for i in range(n):
        qmin, qmax = min(qmin, T[i, rhs]), max(qmax, abs(T[i, rhs]))
    if qmin >= 0.0:                                  # z = 0 solves it
        return 0, SOLVED
    entering = z0
    r = _leaving_row(T, basis, z0, -1.0, ties)       # z0 enters, the most negative q_i/d_i leaves
    row_z0 = r                                       # z0 stays in this row until it leaves
    for it in range(max_iter):
        leaving = basis[r]
        _pivot(T, r, entering)
        basis[r] = entering
        if leaving == z0 or T[row_z0, rhs] <= 1e-12 * qmax:
            return it + 1, SOLVED
        entering = leaving + n if leaving < n else leaving - n    # the complement enters
        r = _leaving_row(T, basis, entering, 1.0, ties)
        if r < 0:
            return it + 1, RAY
    return max_iter, MAX_ITER
