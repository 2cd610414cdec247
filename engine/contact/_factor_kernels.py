"""numba kernel of the Newton step's linear solve in body space: W_AA x = b, least-norm, through a factor of W.

For a group of free rigid bodies W = δt G M⁻¹ Gᵀ = B Bᵀ with B = √δt G L, L Lᵀ = M⁻¹ per body
(``_group_delassus_kernels.rigid_delassus``): B has 6k columns for k bodies, and each contact row of B touches the
columns of its two bodies only. For a group on one multibody, B = √δt J Aᵀ D^-1/2
(``_delassus_kernels.tree_factor``) has at most nv columns, a row those of the dofs on its bodies' paths to the
base. A set A of m active rows (a pile of k boxes: m ≈ 23 k, W_AA of rank ≤ 6k) is then solved in the 6k columns
instead of the m rows. With B_A the rows A of B and C = B_Aᵀ B_A (p × p),

    W_AA⁺ = (B_A B_Aᵀ)⁺ = B_A (C⁺)² B_Aᵀ       (B_A = U Σ Vᵀ: both sides are U Σ⁻² Uᵀ),

so x = B_A C⁺ C⁺ B_Aᵀ b is the least-norm solution the dense path (``_linalg_kernels.least_norm_solve`` on W_AA,
O(m² r)) returns, for O(m p_row²) to form C and O(p³) to factor it (p_row = the nonzero columns of a row: 12 for
a contact between two bodies). C is factored as W_AA is on the dense path: LAPACK's Cholesky when it is
numerically definite, the pivoted factorisation of ``_linalg_kernels.pivoted_cholesky`` otherwise (a body with
fewer than three active contacts).

Factor layout, per row i of the group: ``B_col[i, s]`` (K entries) the column blocks it touches (−1: none),
``B_val[i, s]`` (K, w) its values on them; block c covers the columns w c … w c + w − 1 of B (rigid bodies: K = 2
sides, w = 6, block = the body's place in its group; a multibody's joint-space factor: w = 1, a block is one dof,
K the most dofs a row touches); ``width`` = p, the number of columns.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.contact._linalg_kernels import (RANK_TOL, _cholesky_solve, definite_cholesky, gram_upper,
                                           least_norm_rows, pivoted_cholesky, pseudo_inverse_apply)

SLIP_CHECK = 1e-10          # ‖Jᵀ(J x − b)‖ ≤ this × ‖J‖ (‖J‖ ‖x‖ + ‖b‖), else the slip system goes to the dense path


@njit(cache=True, nogil=True)
def factor_solve(B_col, B_val, width, rows, b):
    """x = W_AA⁺ b (module docstring) for the rows ``rows`` (m,) of W = B Bᵀ, B in the layout of the module
    docstring with ``width`` columns. Returns x (m,)."""
    m, K, w = rows.shape[0], B_col.shape[1], B_val.shape[2]
    C, c = _normal_matrix(B_col, B_val, width, rows, np.ones(m)), np.zeros(width)
    for a in range(m):                                   # C = B_Aᵀ B_A, c = B_Aᵀ b
        _add_row(B_col, B_val, rows[a], b[a], c)
    L = definite_cholesky(C)
    if L.shape[0]:                                       # z = C⁻² c
        z = _cholesky_solve(L, _cholesky_solve(L, c))
    else:                                                # z = (C⁺)² c
        Bt, perm, G = pivoted_cholesky(C)
        z = pseudo_inverse_apply(Bt, perm, G, pseudo_inverse_apply(Bt, perm, G, c))
    x = np.zeros(m)
    for a in range(m):                                   # x = B_A z
        i = rows[a]
        for s in range(K):
            cs = B_col[i, s]
            if cs >= 0:
                for p in range(w):
                    x[a] += B_val[i, s, p] * z[w * cs + p]
    return x


@njit(cache=True, nogil=True)
def factor_slip_solve(J, b, B_col, B_val, width, rows, row_rho, in_T, q_pos, q_coef):
    """x = J⁺ b, the least-squares solution of least norm, for a Newton system with slipping contacts,
    J = P + Q W_AA (m × m, ``_newton_kernels``) and W = B Bᵀ of ``width`` = p columns; an empty array where this
    path does not apply (the caller then takes the dense QR of ``_linalg_kernels.least_norm_rows``). ``rows`` (m,) the
    active rows of W; per position a of J: ``row_rho[a]`` = ρ > 0 for a row Q_a = ρ e_a with P_a = 0 (stick,
    normal, bilateral rows: the set N), 0 for a tangential row of a slipping contact (the set S), whose
    Q_a = Σ_k q_coef[a, k] e_{q_pos[a, k]}; ``in_T[a]``: a row of a slipping contact (T, the columns where P is
    not zero).

    The solution of least norm lies in range(Jᵀ) ⊆ span(e_T) ⊕ range(B_N̄), B_N̄ = B_A with the rows T zeroed
    (J = U Vᵀ with V = [E_T, B_A]). With C_N = B_N̄ᵀ B_N̄ = L_N L_Nᵀ, x = (x_T, B_N̄ L_N⁻ᵀ η) maps ζ = (x_T, η)
    isometrically onto that space, and J x = K ζ with K = [J E_T | Q B_A L_N] (P B_N̄ = 0, B_Aᵀ B_N̄ = C_N). The
    rows N of K are D_N B_N [B_Tᵀ | L_N] (D_N = diag ρ) = Q₁ L₁ᵀ [B_Tᵀ | L_N] with (D_N B_N)ᵀ(D_N B_N) = L₁ L₁ᵀ,
    so ‖K_N ζ − b_N‖² = ‖L₁ᵀ [B_Tᵀ | L_N] ζ − L₁⁻¹ B_Nᵀ D_N b_N‖² + a constant: the least-squares problem keeps
    p of the |N| rows. ζ is the solution of least norm of those p + |S| rows in 3s + p unknowns (s slipping
    contacts; ``_least_norm_wide``, LAPACK's QR, or the pivoted ``least_norm_rows`` where they are dependent),
    which is their least-squares solution when they are independent, and x = J⁺ b. Applies when C_N and
    (D_N B_N)ᵀ(D_N B_N) are definite and x meets the normal equations Jᵀ(J x − b) = 0 to SLIP_CHECK.

    For a consistent system x is the dense path's solution. For an inconsistent one (normal targets, e.g. the
    proximity gaps of touching cubes, put the right side outside the range of J) it is the least-squares step of
    Gauss–Newton on the active rows, where the dense QR solves a maximal set of independent rows exactly and
    ignores the others: the Newton direction differs there (the line search and the stopping test are the same;
    10 touching cubes: the same configurations after 300 steps, to 1e-17 m)."""
    m, K, w, p = rows.shape[0], B_col.shape[1], B_val.shape[2], width
    c_N, not_T = np.zeros(p), np.empty(m)
    nT, nS = 0, 0
    for a in range(m):
        nT += in_T[a]
        nS += row_rho[a] == 0.0
        not_T[a] = 0.0 if in_T[a] else 1.0
        if row_rho[a] > 0.0:
            _add_row(B_col, B_val, rows[a], row_rho[a] * b[a], c_N)
    C_N, G_N = _normal_matrix(B_col, B_val, p, rows, not_T), _normal_matrix(B_col, B_val, p, rows, row_rho)
    # contiguous from its first value, for BLAS's products below (numba types a variable once, from all its values)
    L_N, L_1 = np.ascontiguousarray(definite_cholesky(C_N)), definite_cholesky(G_N)
    if not L_N.shape[0] or not L_1.shape[0]:
        return np.zeros(0)
    q = nT + p
    F = np.zeros((p, q))                                  # [B_Tᵀ | L_N]
    T = np.empty(nT, np.int64)
    j = 0
    for a in range(m):
        if in_T[a]:
            T[j] = a
            for s in range(K):
                if B_col[rows[a], s] >= 0:
                    for k in range(w):
                        F[w * B_col[rows[a], s] + k, j] += B_val[rows[a], s, k]
            j += 1
    F[:, nT:] = L_N
    Kr, rhs = np.zeros((p + nS, q)), np.zeros(p + nS)
    Kr[:p] = np.dot(L_1.T.copy(), F)
    rhs[:p] = _forward(L_1, c_N)
    i, qb = p, np.zeros(p)
    for a in range(m):
        if row_rho[a] > 0.0:
            continue
        for c in range(nT):
            Kr[i, c] = J[a, T[c]]
        qb[:] = 0.0
        for k in range(q_pos.shape[1]):
            _add_row(B_col, B_val, rows[q_pos[a, k]], q_coef[a, k], qb)
        Kr[i, nT:] = np.dot(qb, L_N)
        rhs[i] = b[a]
        i += 1
    zeta = _least_norm_wide(Kr, rhs)
    x, eta = np.zeros(m), _backward(L_N, zeta[nT:])       # x_N̄ = B_N̄ L_N⁻ᵀ η
    for c in range(nT):
        x[T[c]] = zeta[c]
    for a in range(m):
        if not in_T[a]:
            for s in range(K):
                if B_col[rows[a], s] >= 0:
                    for k in range(w):
                        x[a] += B_val[rows[a], s, k] * eta[w * B_col[rows[a], s] + k]
    g = np.dot(np.dot(J, x) - b, J)                       # normal equations: Jᵀ (J x − b) = 0
    norm_J = np.sqrt(np.sum(J * J))
    if not np.sqrt(np.dot(g, g)) <= SLIP_CHECK * norm_J * (norm_J * np.sqrt(np.dot(x, x)) + np.sqrt(np.dot(b, b))):
        return np.zeros(0)
    return x


@njit(cache=True, nogil=True)
def _least_norm_wide(A, b):
    """``least_norm_rows(A, b)`` by LAPACK where the rows of A (r, q), r ≤ q, are independent: Aᵀ = Q R
    (Householder QR, blocked), ζ = Q R⁻ᵀ b, the solution of least norm (in range(Aᵀ)). Rows that are not
    (a diagonal of R at most RANK_TOL of the largest) take the pivoted QR of ``least_norm_rows``."""
    r = A.shape[0]
    if r > A.shape[1]:
        return least_norm_rows(A, b)
    Q, R = np.linalg.qr(A.T.copy())
    top = 0.0
    for i in range(r):
        top = max(top, abs(R[i, i]))
    for i in range(r):
        if not abs(R[i, i]) > RANK_TOL * top:
            return least_norm_rows(A, b)
    y = np.empty(r)
    for i in range(r):                                   # Rᵀ y = b
        acc = b[i]
        for k in range(i):
            acc -= R[k, i] * y[k]
        y[i] = acc / R[i, i]
    return np.dot(y, np.ascontiguousarray(Q.T))          # Q y; numba types Q as 'A', LAPACK returns it by columns: a
                                                         # view, which BLAS takes


@njit(cache=True, nogil=True)
def _normal_matrix(B_col, B_val, width, rows, weight):
    """Σ_a weight[a]² B_iᵀ B_i over the rows i = rows[a] of B (width × width). A joint-space factor (w = 1: a row
    touches up to K of the width dofs, 16 of 38 for Talos lying) is gathered into the dense (width, m) matrix of
    the weighted rows, whose product BLAS's dsyrk forms (``gram_upper``; Talos lying, 60 rows: 4 against 30 µs for
    the rows' outer products one entry at a time, whose scattered sums do not vectorize); the free rigid bodies'
    factor (w = 6, two bodies a row of 6k columns: mostly zeros) adds the rows' 6 × 6 blocks (``_add_outer``)."""
    K, w = B_col.shape[1], B_val.shape[2]
    C = np.zeros((width, width))
    if w > 1:
        for a in range(rows.shape[0]):
            if weight[a] != 0.0:
                _add_outer(B_col, B_val, rows[a], weight[a] * weight[a], C)
        return C
    Bt = np.zeros((width, rows.shape[0]))
    for a in range(rows.shape[0]):
        for s in range(K):
            if B_col[rows[a], s] >= 0:
                Bt[B_col[rows[a], s], a] += weight[a] * B_val[rows[a], s, 0]
    gram_upper(Bt, C)
    for i in range(width):
        for j in range(i):
            C[i, j] = C[j, i]
    return C


@njit(cache=True, nogil=True, inline="always")
def _add_outer(B_col, B_val, i, scale, C):
    """C += scale B_iᵀ B_i for row i of B."""
    K, w = B_col.shape[1], B_val.shape[2]
    for s in range(K):
        cs = B_col[i, s]
        if cs < 0:
            continue
        for t in range(K):
            ct = B_col[i, t]
            if ct < 0:
                continue
            for p in range(w):
                x = scale * B_val[i, s, p]
                for q in range(w):
                    C[w * cs + p, w * ct + q] += x * B_val[i, t, q]


@njit(cache=True, nogil=True, inline="always")
def _add_row(B_col, B_val, i, scale, c):
    """c += scale B_iᵀ for row i of B."""
    w = B_val.shape[2]
    for s in range(B_col.shape[1]):
        cs = B_col[i, s]
        if cs >= 0:
            for p in range(w):
                c[w * cs + p] += scale * B_val[i, s, p]


@njit(cache=True, nogil=True)
def _forward(L, c):
    """L⁻¹ c, L lower triangular."""
    z = np.empty(c.shape[0])
    for i in range(c.shape[0]):
        acc = c[i]
        for k in range(i):
            acc -= L[i, k] * z[k]
        z[i] = acc / L[i, i]
    return z


@njit(cache=True, nogil=True)
def _backward(L, c):
    """L⁻ᵀ c, L lower triangular."""
    z = c.copy()
    for i in range(c.shape[0] - 1, -1, -1):
        z[i] /= L[i, i]
        for k in range(i):
            z[k] -= L[i, k] * z[i]
    return z
