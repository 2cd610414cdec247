"""Joint torques and contact forces of a prescribed motion (seed 003 §5.D and §2.8, Chessé II.34–II.41).

In double support a biped is a closed chain with more actuators than degrees of freedom: the inverse dynamics

    M q̈ + h = Sᵀ τ + J_cᵀ f                                                      (Lagrange, I.7)

leaves (τ, f) undetermined.  Chessé distributes it by the least weighted effort, l = ½ Σ ξ_i (γ_i u_i)²
(II.5–II.6), with the support forces among the controls u (II.36) and kept unilateral and inside the friction
cone, N > 0 and |T| < μ N (II.34–II.35, II.38–II.39) — the per-instant QP the thesis left unimplemented (§2.8):

    min_u  ½ uᵀ W u,   u = (τ, f),   W = diag(ξ γ²)
    s.t.   [Sᵀ J_cᵀ] u = M q̈ + h                                                  (the dynamics, nv rows)
           N_k ≥ 0,   μ N_k ∓ T_k,j ≥ 0                                            (each contact k, tangent j)

solved by proxsuite (dense ProxQP), then polished: the equality-constrained problem on the active set the
solver found is solved exactly (its KKT system), so that the dynamics hold to rounding.  When no u meets the
cones, the motion itself can be relaxed along one direction n, q̈ + s n, s one more unknown costing ½ w s².  In single support
there is one stance foot and fewer unknowns than rows; ``hybrid_contact`` then solves the square system of
prescribed accelerations on some coordinates (seed 004's hybrid dynamics) with the stance contact held.

Contact forces are given in contact coordinates: per contact k its rows of J_c are (normal, tangents...), the
point Jacobian projected on the world normal n_k and tangents t_k,j, so f_k = (N_k, T_k,1[, T_k,2]).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.control._proxsuite import proxqp

_SOLVED = proxqp.QPSolverOutput.PROXQP_SOLVED
ACTIVE = 1e-9               # an inequality within this of its bound (or with a multiplier) is active


class Distribution(NamedTuple):
    """``tau`` (na,) actuated joint forces, ``f`` (n_c·k,) contact forces (N, T...) per contact,
    ``residual`` = ‖Sᵀτ + J_cᵀf − M q̈ − h‖∞ (q̈ moved by ``s`` along a relaxed direction), ``solved`` False if
    the QP is infeasible (``tau``, ``f`` then the least-squares weighted minimum norm of the dynamics alone,
    outside the cones), ``s`` how far the motion left q̈ (0 without ``relax``)."""

    tau: np.ndarray
    f: np.ndarray
    residual: float
    solved: bool
    s: float = 0.0


def cone_rows(n_contacts: int, k: int, mu: float) -> np.ndarray:
    """C (n_c (2k − 1), n_c k) with C f ≥ 0 the linearised Coulomb cone of every contact: N ≥ 0 and
    μ N ∓ T_j ≥ 0 for its k − 1 tangents (exact in the plane, k = 2; a square pyramid in 3D)."""
    block = [[1.0] + [0.0] * (k - 1)]
    for j in range(1, k):
        for sign in (-1.0, 1.0):
            row = [mu] + [0.0] * (k - 1)
            row[j] = sign
            block.append(row)
    return np.kron(np.eye(n_contacts), np.array(block))


def distribute(M, h, qdd, S, Jc, weights, mu, k=2, relax=None) -> Distribution:
    """The minimum weighted-norm (τ, f) of the motion q̈ (module docstring).  M (nv, nv), h (nv,), S (na, nv)
    the actuated rows, Jc (n_c k, nv) contact rows (normal, tangents) per contact, weights (na + n_c k,) the
    diagonal of W (ξ_i γ_i²), mu the friction coefficient of the cones.  ``relax`` = (n, w) lets the motion be
    q̈ + s n, n (nv,), at the cost ½ w s²: s is one more unknown, its column of the dynamics −M n."""
    A = np.hstack([S.T, Jc.T])
    b = M @ qdd + h
    W = np.asarray(weights, float)
    if W.shape != (A.shape[1],) or np.any(W <= 0.0):
        raise ValueError(f"weights must be {A.shape[1]} positive numbers, got {W}")
    if relax is not None:
        A, W = np.hstack([A, -(M @ relax[0])[:, None]]), np.append(W, relax[1])
    na, nf = S.shape[0], Jc.shape[0]
    C = np.zeros(((2 * k - 1) * (nf // k), A.shape[1]))
    C[:, na:na + nf] = cone_rows(nf // k, k, mu)
    qp = proxqp.dense.QP(A.shape[1], A.shape[0], C.shape[0])
    qp.settings.eps_abs, qp.settings.eps_rel, qp.settings.max_iter = 1e-9, 0.0, 1000
    qp.init(np.diag(W), np.zeros(A.shape[1]), A, b, C, np.zeros(C.shape[0]), np.full(C.shape[0], 1e20))
    qp.solve()
    x = qp.results.x
    solved = qp.results.info.status == _SOLVED and bool(np.all(np.isfinite(x)))
    if solved:
        active = (C @ x < ACTIVE * (1.0 + np.abs(b).max())) | (np.abs(qp.results.z) > ACTIVE)
        u = _equality_min_norm(W, np.vstack([A, C[active]]), np.concatenate([b, np.zeros(active.sum())]))
    else:
        u = _equality_min_norm(W, A, b)
    return Distribution(u[:na], u[na:na + nf], float(np.abs(A @ u - b).max()), solved,
                        float(u[-1]) if relax is not None else 0.0)


def _equality_min_norm(W, A, b):
    """argmin ½ uᵀ W u s.t. A u = b: u = W⁻¹ Aᵀ y with (A W⁻¹ Aᵀ) y = b (least squares if A is rank-deficient)."""
    AWi = A / W
    y = np.linalg.lstsq(AWi @ A.T, b, rcond=None)[0]
    return AWi.T @ y


def hybrid_contact(M, h, S, Jc, dJc_v, E, e):
    """(q̈, τ, f) with the prescribed accelerations E q̈ = e, the contacts held (J_c q̈ + J̇_c v = 0) and the
    dynamics M q̈ + h = Sᵀτ + J_cᵀ f: the square system

        [ M   −Sᵀ  −J_cᵀ ] [q̈]   [ −h      ]
        [ J_c  0    0    ] [τ] = [ −J̇_c v  ]          (square when E has as many rows as there are actuators)
        [ E    0    0    ] [f]   [  e      ]

    seed 004's hybrid dynamics (driven rows E, free the rest) with a stance contact (seed 003's single support,
    Chessé's q1 = const)."""
    nv, na, nf = M.shape[0], S.shape[0], Jc.shape[0]
    K = np.zeros((nv + nf + E.shape[0], nv + na + nf))
    K[:nv, :nv], K[:nv, nv:nv + na], K[:nv, nv + na:] = M, -S.T, -Jc.T
    K[nv:nv + nf, :nv], K[nv + nf:, :nv] = Jc, E
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"{E.shape[0]} prescribed accelerations for {K.shape[1] - nv - nf} unknowns: "
                         f"the system is not square")
    x = np.linalg.solve(K, np.concatenate([-h, -dJc_v, e]))
    return x[:nv], x[nv:nv + na], x[nv + na:]
