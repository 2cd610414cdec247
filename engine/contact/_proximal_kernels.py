"""numba kernel of the proximal-point phase of the nonsmooth Newton solver (``newton.py``): where Newton stalls on a
large, rank-deficient W (a robot lying on the floor: W 219 × 219 of rank 38, 73 contacts), it solves a sequence of
regularised problems instead, each one Newton can solve.

Proximal point (Rockafellar 1976, SIAM J. Control 14(5); on the exact Coulomb cone, the proximal formulation of
Carpentier, Le Lidec et al., RSS 2024, "From compliant to rigid contact simulation", §IV): from f_k,

    f_{k+1} solves the problem (W + η D, v_free − η D f_k)     (the same cones),

D diagonal, d̄ (the mean of W's non-zero diagonal) on the rows that can move and 0 on a row of W that is zero (a
contact between static bodies, which keeps its force). The velocity is (W + η D) f + v_free − η D f_k =
W f + v_free + η D (f − f_k); W + η D is positive definite on the rows that can move, so the Newton Jacobian of
its Alart–Curnier function is regular, and at a fixed point f_{k+1} = f_k the velocity is the exact problem's: f
solves the exact problem. Convergence is linear in k, faster for smaller η, while a smaller η makes the
subproblem harder: η starts at ``ETA``, grows ten-fold when a subproblem is not solved in ``INNER`` Newton
iterations (f_k kept), and shrinks ten-fold when a step cuts the exact problem's natural residual below ``GOOD``
times what it was. The residual is always measured on the exact problem (W, v_free), and the iterate of lowest
residual is returned.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.contact._kernels import BILATERAL, natural_residual, prepare_blocks, velocity
from engine.contact._newton_kernels import FIRST_PHASE, force_norm, newton_iterations

ETA, ETA_MIN, ETA_MAX = 1e-3, 1e-8, 1e3   # η: start, bounds
INNER, INNER_TOL = 20, 0.1              # Newton iterations per subproblem, its tolerance over the solve's
GOOD = 0.3                              # a residual cut below this factor makes η ten times smaller
STAGNATION_ITERATIONS, STAGNATION_FACTOR = 100, 0.5   # give up after 100 iterations that do not halve the residual


@njit(cache=True, nogil=True)
def proximal_iterations(W, v_free, block_start, block_kind, block_mu, block_rho, max_steps, tol, zero_residual, f,
                        v, state):
    """Proximal-point iterations (module docstring) from (f, v = W f + v_free), at most ``max_steps`` Newton
    iterations in all, until the natural residual of the exact problem (``block_rho``: its gains) is at most
    tol · max(‖f‖₂, ``zero_residual``). ``state`` (in/out) = [η, best residual at the last real
    improvement, iterations since]: start with [ETA, residual of f, 0]. f, v receive the iterate of lowest
    residual. Returns (iterations done, converged); the caller tells a stagnation stop by
    state[2] ≥ STAGNATION_ITERATIONS."""
    n, nb = f.shape[0], block_kind.shape[0]
    D, trace, moving = np.zeros(n), 0.0, 0
    for i in range(n):
        trace += W[i, i]
        moving += W[i, i] > 0.0
    for i in range(n):
        D[i] = trace / moving if W[i, i] > 0.0 else 0.0
    W_eta, u, g, v_in, best_in, best = W.copy(), np.empty(n), np.empty(n), np.empty(n), np.empty(n), f.copy()
    inv_start = np.zeros(nb + 1, np.int64)
    for b in range(nb):
        size = block_start[b + 1] - block_start[b]
        inv_start[b + 1] = inv_start[b] + size * size
    block_inv, block_state, rho = np.zeros(inv_start[nb]), np.zeros(nb, np.int64), np.zeros((nb, 3))
    status, slip, rows = np.zeros(nb, np.int64), np.zeros((nb, 5)), np.zeros(n, np.int64)
    df, wd, f_trial, v_trial = np.zeros(max(n, 3)), np.zeros(n), np.zeros(n), np.zeros(n)
    dnorm, fnorm, zero = np.zeros(nb), np.zeros(nb), np.zeros(n)
    keep = (np.zeros(0), np.zeros(1, np.int64), np.zeros(0), np.zeros(1, np.int64))     # no factor kept
    B_col, B_val = np.zeros((0, 1), np.int64), np.zeros((0, 1, 1))
    residual = best_residual = natural_residual(f, v, block_start, block_kind, block_mu, block_rho)[0]
    steps, eta_set = 0, -1.0
    while steps < max_steps:
        if state[0] != eta_set:                          # W + η D and its blocks' gains
            eta_set = state[0]
            for i in range(n):
                W_eta[i, i] = W[i, i] + eta_set * D[i]
            prepare_blocks(W_eta, block_start, block_kind, inv_start, block_inv, block_state, rho)
            for b in range(nb):
                if block_kind[b] == BILATERAL:
                    s, e = block_start[b], block_start[b + 1]
                    block_inv[inv_start[b]:inv_start[b + 1]] = np.linalg.pinv(W_eta[s:e, s:e].copy(), 1e-10).ravel()
        for i in range(n):                               # from g = f_k the velocity is v: (W + ηD) f_k + u = v
            u[i] = v_free[i] - eta_set * D[i] * f[i]
            g[i], v_in[i], best_in[i] = f[i], v[i], f[i]
        r_in = natural_residual(g, v_in, block_start, block_kind, block_mu, rho)[0]
        zero_in = natural_residual(zero, u, block_start, block_kind, block_mu, rho)[0]
        out = np.array([r_in, r_in, 0.0, 0.0, 0.0, FIRST_PHASE, 0.0, r_in, 0.0])
        k, solved = newton_iterations(W_eta, block_start, block_kind, block_mu, inv_start, block_inv, block_state,
                                      rho, min(INNER, max_steps - steps), INNER_TOL * tol, zero_in, g, v_in,
                                      best_in, status, slip, rows, df, wd, f_trial, v_trial, dnorm, fnorm, out,
                                      keep, B_col, B_val, 0)
        steps += k
        state[2] += k
        if not solved:                                   # too hard: a larger η, from the same f_k
            state[0] = min(10.0 * state[0], ETA_MAX)
        else:
            f[:] = g
            velocity(W, f, v_free, v)
            new = natural_residual(f, v, block_start, block_kind, block_mu, block_rho)[0]
            if new < GOOD * residual:
                state[0] = max(0.1 * state[0], ETA_MIN)
            residual = new
            if residual < best_residual:
                best_residual = residual
                best[:] = f
            if residual <= tol * max(force_norm(f), zero_residual):
                return steps, True
            if best_residual < STAGNATION_FACTOR * state[1]:  # a real improvement: restart the count
                state[1], state[2] = best_residual, 0.0
        if state[2] >= STAGNATION_ITERATIONS:
            break
    f[:] = best
    velocity(W, f, v_free, v)
    return steps, False
