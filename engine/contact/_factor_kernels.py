"""numba kernel of the Newton step's linear solve in body space: W_AA x = b, least-norm, through a factor of W.

For a group of free rigid bodies W = δt G M⁻¹ Gᵀ = B Bᵀ with B = √δt G L, L Lᵀ = M⁻¹ per body
(``_stepping_kernels.rigid_delassus``): B has 6k columns for k bodies, and each contact row of B touches the
columns of its two bodies only. A set A of m active rows (a pile of k boxes: m ≈ 23 k, W_AA of rank ≤ 6k) is
then solved in the 6k columns instead of the m rows. With B_A the rows A of B and C = B_Aᵀ B_A (p × p),

    W_AA⁺ = (B_A B_Aᵀ)⁺ = B_A (C⁺)² B_Aᵀ       (B_A = U Σ Vᵀ: both sides are U Σ⁻² Uᵀ),

so x = B_A C⁺ C⁺ B_Aᵀ b is the least-norm solution the dense path (``_kernels.least_norm_solve`` on W_AA, O(m² r))
returns, for O(m p_row²) to form C and O(p³) to factor it (p_row = the nonzero columns of a row: 12 for a
contact between two bodies). C is factored as W_AA is on the dense path: LAPACK's Cholesky when it is
numerically definite, the pivoted factorisation of ``_kernels.pivoted_cholesky`` otherwise (a body with fewer than
three active contacts).

Factor layout, per row i of the group: ``B_col[i, s]`` (K entries) the column blocks it touches (−1: none),
``B_val[i, s]`` (K, w) its values on them; block c covers the columns w c … w c + w − 1 of B (rigid bodies: K = 2
sides, w = 6, block = the body's place in its group); ``width`` = p, the number of columns.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.contact._kernels import _cholesky_solve, definite_cholesky, pivoted_cholesky, pseudo_inverse_apply


@njit(cache=True, nogil=True)
def factor_solve(B_col, B_val, width, rows, b):
    """x = W_AA⁺ b (module docstring) for the rows ``rows`` (m,) of W = B Bᵀ, B in the layout of the module
    docstring with ``width`` columns. Returns x (m,)."""
    m, K, w = rows.shape[0], B_col.shape[1], B_val.shape[2]
    C, c = np.zeros((width, width)), np.zeros(width)
    for a in range(m):                                   # C = B_Aᵀ B_A, c = B_Aᵀ b
        i = rows[a]
        for s in range(K):
            cs = B_col[i, s]
            if cs < 0:
                continue
            for t in range(K):
                ct = B_col[i, t]
                if ct < 0:
                    continue
                for p in range(w):
                    x = B_val[i, s, p]
                    for q in range(w):
                        C[w * cs + p, w * ct + q] += x * B_val[i, t, q]
            for p in range(w):
                c[w * cs + p] += B_val[i, s, p] * b[a]
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
