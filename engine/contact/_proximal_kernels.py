"""numba kernel of the nonsmooth Newton solver's second attempt (``newton.py``, ``_stepping_kernels.solve_groups``):
the proximal point method on the contact problem, each proximal problem solved by the Newton iterations of
``_newton_kernels``, where those have gone PATIENCE iterations without halving their best residual.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.contact import _interior_point_kernels as IP
from engine.contact._alart_curnier_kernels import force_norm
from engine.contact._kernels import natural_residual, velocity
from engine.contact._linalg_kernels import no_factor, no_memo
from engine.contact._newton_kernels import PATIENCE, STAGNATION_FACTOR, _restore, newton_iterations, start_out

STAGNATION_ITERATIONS = 100     # the attempt gives up after this many iterations that do not halve the best residual
PROXIMAL_WEIGHT = 1e-4          # η = this × the mean of W's diagonal (``proximal_iterations``)
PROXIMAL_INNER, PROXIMAL_TOL = np.int64(30), 1e-9  # iterations and relative tolerance of each proximal problem
ASSOCIATED_STEPS = 100          # Newton's iterations from the associated problem's solution (``second_attempts``)
PROXIMAL_GROWTH = 10.0          # ‖f‖ beyond this × its start (or the zero force's residual): diverging, stop
UNLIMITED = np.int64(1 << 62)   # ``second_attempts``' budget without a time budget: each attempt its own caps


@njit(cache=True, nogil=True)
def proximal_iterations(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho,
                        max_steps, tol, zero_residual, f, v, best_f, status, slip, rows, df, wd, f_trial, v_trial,
                        dnorm, fnorm, keep, B_col, B_val):
    """A second attempt where ``newton_iterations`` stalled (PATIENCE iterations without halving its best
    residual): the proximal point method (Rockafellar 1976, SIAM J. Control Optim. 14(5); on the exact-cone
    contact problem it is the proximal regularization of Carpentier, Le Lidec & Montaut, RSS 2024), each proximal
    problem solved by ``newton_iterations`` (PROXIMAL_INNER iterations at most, which no patience cuts short). From
    the anchor f_k, f_{k+1} solves the contact problem of (W + η I, v_free − η f_k):

        v_k(f) = W f + v_free + η (f − f_k) = v(f) + η (f − f_k),

    whose Delassus matrix is positive definite: the internal forces of a hyperstatic support (Talos lying on 60
    contacts, W 180 × 180 of rank 37) no longer make its Newton systems singular, and a step cannot ask for 1000 N
    of them beside 37 N of load, which left the cone at once and failed every line search (session 15's diagnosis).
    A fixed point f_{k+1} = f_k solves the problem itself; each f_{k+1} is checked on it (the natural residual of
    (f, v), ``block_rho`` of W). η = PROXIMAL_WEIGHT × mean W_ii. On the problems Newton left unconverged in a
    fall of Talos (exported from its simulation, each from its warm start, 100 iterations in all): at 1e-4 it
    solves 36 of 38 with joint limits, 125 of 228 without; in a prototype, at 1e-6 none of 3 tried (the proximal
    problems are as hard as the problem) and at 1e-2 none of 25 in 50 proximal problems (each moves too little).

    Up to ``max_steps`` iterations in all, fewer once STAGNATION_ITERATIONS in a row have not halved the best
    residual (as ``newton_iterations``) or once ‖f‖ passes PROXIMAL_GROWTH times its start: the proximal iterates
    of a monotone problem without a solution are unbounded (Rockafellar 1976), and a residual relative to ‖f‖
    would call 1e6 N of internal force a solution (a body pushed out of two opposite contacts at once). On the
    exported problems ‖f‖ ends within 0.90–1.43 × the first attempt's. f starts from best_f; (f, v) and best_f as
    in ``newton_iterations``; W is restored to the bit. No factor (W + η I is not B Bᵀ); W's kept factor
    (``keep``) preconditions the conjugate gradients of ``kept_solve`` on W + η I as on W (a sole's 240 rows are
    not factored again at each proximal problem), and the factors of W_AA + η I are remembered from one proximal
    problem to the next (η is fixed). The fallback sweeps use W's block inverses, which only slows them. Returns
    (iterations, converged)."""
    n = f.shape[0]
    diagonal, anchor, inner_best, memo, out = np.empty(n), np.empty(n), np.empty(n), no_memo(n), np.empty(9)
    _restore(W, best_f, f, v)
    best, _ = natural_residual(f, v, block_start, block_kind, block_mu, block_rho)
    eta = 0.0
    for i in range(n):
        diagonal[i] = W[i, i]
        eta += W[i, i]
    eta *= PROXIMAL_WEIGHT / n
    for i in range(n):
        W[i, i] += eta
    steps, converged, residual, reference, since = 0, False, best, best, 0
    bound = PROXIMAL_GROWTH * max(force_norm(f), zero_residual)
    while steps < max_steps and not converged and since < STAGNATION_ITERATIONS and force_norm(f) <= bound:
        anchor[:] = f                                  # v_k = v at the anchor
        start_out(out, residual)
        inner_best[:] = f
        k, solved = newton_iterations(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state,
                                      block_rho, min(PROXIMAL_INNER, max_steps - steps), PROXIMAL_INNER, PROXIMAL_TOL,
                                      zero_residual, f, v, inner_best, status, slip, rows, df, wd, f_trial, v_trial,
                                      dnorm, fnorm, out, keep, memo, B_col, B_val, np.int64(0))
        steps += k
        if not solved:
            _restore(W, inner_best, f, v)
        for i in range(n):
            v[i] -= eta * (f[i] - anchor[i])           # v = v_k − η (f − f_k)
        residual, _ = natural_residual(f, v, block_start, block_kind, block_mu, block_rho)
        if residual < best:
            best = residual
            best_f[:] = f
        converged = residual <= tol * max(force_norm(f), zero_residual)
        if best < STAGNATION_FACTOR * reference:      # newton_iterations' rule for giving up
            reference, since = best, 0
        else:
            since += k
    for i in range(n):
        W[i, i] = diagonal[i]
    return steps, converged


@njit(cache=True, nogil=True)
def second_attempts(W, u, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho, max_steps,
                    budget, tol, zero_residual, f, v, best_f, status, slip, rows, df, wd, f_trial, v_trial, dnorm,
                    fnorm, keep, B_col, B_val):
    """What follows ``newton_iterations`` when they stall (``newton.py``'s module docstring; its
    ``nonsmooth_newton_blocks`` and ``_stepping_kernels.solve_groups`` both call this): where it applies
    (``_interior_point_kernels.applies``), the interior-point attempt on the exact problem from a cold start
    (``interior_point_attempt``); unconverged, the proximal attempt (``proximal_iterations``) with ``max_steps``;
    still unconverged, where it applies, Newton from the associated problem's solution (``associated_attempt``),
    with a budget of its own, ASSOCIATED_STEPS iterations: it only runs where the two others fail, so that every
    step they solve is solved as before. ``budget``: the iterations of all these attempts together, at most
    (UNLIMITED: each its own caps; a solve under a time budget passes the iterations its time left allows, so that
    the attempts end near it). (f, v), best_f and the work arrays as in ``newton_iterations``; u: the free velocity
    (W f + u = v). Returns (the interior-point iterations, the others, converged)."""
    interior, applies = 0, IP.applies(block_kind, block_mu)
    if applies:
        interior, converged = IP.interior_point_attempt(W, u, block_start, block_kind, block_mu, block_rho, tol,
                                                        zero_residual, budget, best_f)
        if converged:                                  # all or nothing: f is its solution
            _restore(W, best_f, f, v)
            return interior, 0, True
    steps, converged, left = 0, False, budget - interior
    if left > 0:
        steps, converged = proximal_iterations(W, block_start, block_kind, block_mu, inv_start, block_inv,
                                               block_state, block_rho, min(max_steps, left), tol, zero_residual, f, v,
                                               best_f, status, slip, rows, df, wd, f_trial, v_trial, dnorm, fnorm,
                                               keep, B_col, B_val)
        left -= steps
    if converged or not applies or left <= 0:
        return interior, steps, converged
    start = best_f.copy()
    k, found = IP.associated_attempt(W, u, block_start, block_kind, block_mu, block_rho, tol, zero_residual,
                                     min(IP.MAX_ITER, left), start)
    interior, left = interior + k, left - k
    if found and left > 0:
        k, converged = _newton_from(start, W, u, block_start, block_kind, block_mu, inv_start, block_inv, block_state,
                                    block_rho, min(ASSOCIATED_STEPS, left), tol, zero_residual, f, v, best_f, status,
                                    slip, rows, df, wd, f_trial, v_trial, dnorm, fnorm, keep)
        steps += k
    return interior, steps, converged


@njit(cache=True, nogil=True)
def _newton_from(start, W, u, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho,
                 max_steps, tol, zero_residual, f, v, best_f, status, slip, rows, df, wd, f_trial, v_trial, dnorm,
                 fnorm, keep):
    """``newton_iterations`` (dense linear solves) from ``start``, at most ``max_steps``; best_f stays the better of
    its own and theirs (lower natural residual). Returns (iterations, converged)."""
    n = f.shape[0]
    v_best = np.empty(n)
    velocity(W, best_f, u, v_best)
    earlier_f, earlier = best_f.copy(), natural_residual(best_f, v_best, block_start, block_kind, block_mu,
                                                         block_rho)[0]
    f[:] = start
    velocity(W, f, u, v)
    out = np.empty(9)
    start_out(out, natural_residual(f, v, block_start, block_kind, block_mu, block_rho)[0])
    best_f[:] = f
    steps, converged = newton_iterations(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state,
                                         block_rho, max_steps, PATIENCE, tol, zero_residual, f, v, best_f, status,
                                         slip, rows, df[:max(n, 3)], wd, f_trial, v_trial, dnorm, fnorm, out, keep,
                                         no_memo(n), *no_factor())
    if not converged and out[0] > earlier:          # the earlier best stays
        best_f[:] = earlier_f
    return steps, converged
