"""Lemke's complementary pivoting (AMELIFLCP, seed 000 §2.3.2 and §5.3) and the contact LCPs it solves.

``lemke(M, q)`` finds z with 0 ≤ z ⊥ M z + q ≥ 0 by pivoting on w − M z − d z0 = q from the artificial
variable z0 (covering vector d = 1), with the lexicographic minimum-ratio rule (no cycling on degenerate
problems). It ends on a solution (z0 leaves the basis), on a secondary ray (no row bounds the entering
variable: the LCP is infeasible, or M is not copositive-plus) or at the pivot cap.

LCP builders from a contact problem (W, v_free) in the local frames of cone.py, each with G such that the
local forces are f = G z:

* ``frictionless_lcp``: 0 ≤ f_n ⊥ W_nn f_n + v_n^free ≥ 0 (seed 000 eq. 2.24, velocity form), size m;
* ``faceted_lcp``: the cone replaced by the polygon with ``facets`` unit directions d_j in the tangent plane,
  f_t = D β, unknowns (f_n, β_1..β_k, λ) per contact, size (k+2)m (seed 000 eqs. 2.33–2.35, Stewart–Trinkle /
  Anitescu–Potra):

      0 ≤ v_n                  ⊥ f_n ≥ 0
      0 ≤ λ 1 + Dᵀ v_t         ⊥ β   ≥ 0
      0 ≤ μ f_n − 1ᵀ β         ⊥ λ   ≥ 0

  The polygon is inscribed in the cone (its vertices μ f_n d_j lie on it), so f = G z is always in K_μ.
"""
from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

import numpy as np

from engine.contact import _lemke_kernels as K
from engine.contact.cone import ConstraintBlocks

STATUS = {K.SOLVED: "solution", K.RAY: "ray", K.MAX_ITER: "max_iter"}


@dataclass(frozen=True)
class LemkeStats:
    """pivots; status "solution", "inaccurate" (a solution spoiled by rounding: Mz + q < −1e-8 max|q| or
    |z_i w_i| > 1e-8 max|q| max z), "ray" or "max_iter"; residual max_i |min(z_i, (Mz + q)_i)|; time in s."""

    pivots: int
    status: str
    residual: float
    time: float


def lemke(M, q, max_iter=None):
    """z (n,) with 0 ≤ z ⊥ M z + q ≥ 0 by Lemke's method, and ``LemkeStats`` (``max_iter`` default 50 n + 100)."""
    t0 = perf_counter()
    M, q = np.asarray(M, dtype=float), np.asarray(q, dtype=float)
    n = len(q)
    if M.shape != (n, n) or q.shape != (n,):
        raise ValueError(f"lemke needs M (n, n) and q (n,) (got {M.shape} and {q.shape})")
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(q))):
        raise ValueError("lemke: M and q must be finite")
    max_iter = 50 * n + 100 if max_iter is None else int(max_iter)
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1 (got {max_iter})")
    T = np.zeros((n, 2 * n + 2))                     # [I, −M, −d, q]
    T[np.arange(n), np.arange(n)] = 1.0
    T[:, n:2 * n] = -M
    T[:, 2 * n] = -1.0
    T[:, 2 * n + 1] = q
    basis = np.empty(n, dtype=np.int64)
    pivots, status = K.lemke_pivots(T, basis, np.empty(n, dtype=np.int64), max_iter)
    z = np.zeros(n)                                  # z0 is 0 at a solution, whether basic or not
    is_z = (basis >= n) & (basis < 2 * n)
    z[basis[is_z] - n] = np.maximum(T[is_z, 2 * n + 1], 0.0)
    w = M @ z + q
    residual = float(np.abs(np.minimum(z, w)).max()) if n else 0.0
    status = STATUS[int(status)]
    tol = 1e-8 * (float(np.abs(q).max()) if n else 0.0)
    if status == "solution" and n and (w.min() < -tol or np.abs(z * w).max() > tol * max(z.max(), 1e-300)):
        status = "inaccurate"
    return z, LemkeStats(int(pivots), status, residual, perf_counter() - t0)


def _contact_rows(blocks: ConstraintBlocks):
    if not blocks.contacts_only:
        raise ValueError("the LCP formulations take unilateral contacts only; bilateral blocks and joint friction "
                         "need 'nonsmooth-newton', 'gauss-seidel-newton' or 'gauss-seidel'")
    return blocks.block_start[:-1]


def frictionless_lcp(W, v_free, blocks: ConstraintBlocks):
    """(M, q, G) of the frictionless contact LCP: z = f_n (m,), M = W_nn, q = v_n^free, f = G z (3m,)."""
    rows = _contact_rows(blocks)
    G = np.zeros((len(v_free), len(rows)))
    G[rows, np.arange(len(rows))] = 1.0
    return W[np.ix_(rows, rows)], v_free[rows], G


def facet_directions(facets):
    """D (2, k): k unit directions d_j = (cos 2πj/k, sin 2πj/k) spanning the tangent plane positively."""
    if int(facets) != facets or facets < 3:
        raise ValueError(f"a faceted cone needs an integer number of facets >= 3 (got {facets!r})")
    angles = 2.0 * np.pi * np.arange(int(facets)) / int(facets)
    return np.vstack([np.cos(angles), np.sin(angles)])


def faceted_lcp(W, v_free, blocks: ConstraintBlocks, facets=8):
    """(M, q, G) of the faceted-cone LCP of size (k+2)m (seed 000 eq. 2.35). Per contact pair (i, j):

        M_ij = [[W_nn,    W_nt D,    0 ],        plus on the diagonal blocks   [[0, 0, 0],
                [Dᵀ W_tn, Dᵀ W_tt D, 0 ],                                      [0, 0, 1],
                [0,       0,         0 ]]                                      [μ, −1ᵀ, 0]]
    and q_i = (v_n, Dᵀ v_t, 0). W enters as W/w̄ (w̄ = mean of diag W) so that its entries are of order 1 like
    the ±1, μ couplings, which pivoting needs; z then holds w̄ (f_n, β), and f = G z undoes the scaling."""
    _contact_rows(blocks)
    D, k = facet_directions(facets), int(facets)
    m = blocks.n_blocks
    w = float(np.mean(np.diag(W))) if m else 1.0
    w = w if w > 0.0 else 1.0
    Wr, vr = W.reshape(m, 3, m, 3) / w, v_free.reshape(m, 3)     # Wr[i, a, j, b] = W[3i + a, 3j + b] / w̄
    beta, lam, i = slice(1, k + 1), k + 1, np.arange(m)
    M = np.zeros((m, k + 2, m, k + 2))
    M[:, 0, :, 0] = Wr[:, 0, :, 0]
    M[:, 0, :, beta] = np.einsum("ijb,bl->ijl", Wr[:, 0, :, 1:], D)
    M[:, beta, :, 0] = np.einsum("ak,iaj->ikj", D, Wr[:, 1:, :, 0])
    M[:, beta, :, beta] = np.einsum("ak,iajb,bl->ikjl", D, Wr[:, 1:, :, 1:], D)
    M[i, beta, i, lam] = 1.0
    M[i, lam, i, 0] = blocks.block_mu
    M[i, lam, i, beta] = -1.0
    q = np.zeros((m, k + 2))
    q[:, 0], q[:, beta] = vr[:, 0], np.einsum("ia,ak->ik", vr[:, 1:], D)
    G = np.zeros((m, 3, m, k + 2))                                # f_i = (z_fn, D z_β)
    G[i, 0, i, 0] = 1.0 / w
    G[i, 1:, i, beta] = D / w
    return M.reshape((k + 2) * m, -1), q.reshape(-1), G.reshape(3 * m, -1)
