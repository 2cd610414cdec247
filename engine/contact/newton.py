"""Nonsmooth Newton on the Alart–Curnier function of the whole contact problem, exact Coulomb cone.

Same problem as ``gauss_seidel.py`` (seed 000 eqs. 3.26–3.27): v = W f + v_free, each contact force in its cone
with Signorini's condition and Coulomb's law, bilateral blocks with v_b = 0. Gauss–Seidel converges linearly,
and very slowly on the large, rank-deficient W of a robot lying on the floor (a third of its contacts are
self-contacts; W 195 × 195 of rank 38: 100 sweeps leave a natural residual of 1e-4 of the force, 10 000 of 1e-5).
A Newton method on the semismooth Alart–Curnier function φ(f) = 0 (Alart & Curnier 1991; Christensen et al. 1998;
the "NSN-AC" solver of Siconos, compared by Acary, Brémond & Huber 2018) converges superlinearly once it knows
which contacts separate, stick and slip, and the step's linear system only has the rows of the contacts that
carry load (12 of those 65). Kernels and equations in ``_newton_kernels.py`` (φ's pieces in
``_alart_curnier_kernels.py``, the fallback moves in ``_fallback_kernels.py``, the second attempts in
``_interior_point_kernels.py`` and ``_proximal_kernels.py``).

    f, stats = nonsmooth_newton(W, v_free, mu, tol=1e-6, max_iter=100, f0=None, time_budget=None, factor=None)

Each iteration is a damped Newton step (or, on a plateau of its merit function where the sticking contacts'
system is inconsistent, the slipping ones' forces held, a move of the internal forces to the nearest cone
boundary, ``plateau_step``; where the system with the slipping contacts is inconsistent, a move along its null
space to the first constraint, ``null_step``), or, where the step fails or stalls, a Gauss–Seidel–Newton sweep
(seed 000 Alg. 1). It stops when the natural residual (cone.py) is at most ``tol · max(‖f‖₂, r₀)``, r₀ the residual
of the zero force (the scale of the problem: tol is *relative*), after ``max_iter`` iterations, or when
``time_budget`` runs out. Where 20 iterations in a row (``PATIENCE``) have not halved the best residual (jammed
self-contacts with high friction from some warm starts, Talos lying where W_AA is nearly singular), second attempts
follow (``_proximal_kernels.second_attempts``, which the contact stage's ``solve_groups`` calls too). First, where
the problem has no bilateral block and no frictionless contact, a primal–dual interior-point method on the exact
problem from a cold start (``_interior_point_kernels.interior_point_attempt``, at most 3 × 50 iterations of its own,
counted in the stats but not in ``max_iter``): it follows the central path from inside the cones instead of
searching for the active set, and solves the jammed supports Newton stalls on (82 of the 83 steps of one recorded
fall); all or nothing, its solution or no change. Then, unconverged, the proximal point method from the best iterate
with the rest of ``max_iter`` (the time budget's rest when the attempts begin, if less): a sequence of problems with
W + η I, positive definite, each solved by the same Newton iterations (``_proximal_kernels.proximal_iterations``).
That gives up in turn (``stopped_by = "stalled"``) after 100 iterations in a row that do not halve the best
residual, or once ‖f‖ grows tenfold (a problem without a solution). Last, where the interior-point method applies
and both failed, Newton again, from the solution of the associated problem (De Saxcé's term dropped: convex), which
the interior-point method reaches where the exact problem's path jams
(``_interior_point_kernels.associated_attempt``; its iterations and Newton's, at most 50 and 100, its own; it solves
part d's one step left in session 21). Under a time budget, all these attempts share the iterations its rest allows
at the rate of the iterations so far: they end near the budget (``stopped_by = "time_budget"``) instead of running
their own caps (11 ms for a 1 ms budget on a recorded landing before session 23).
Unless converged, the iterate of lowest residual is returned, with ``converged = False``. At least one
iteration is taken unless the residual is zero, or, for a problem of more than 36 rows, the start is already the
solution to rounding
(``_newton_kernels.solved_at_start``: a natural residual within 1e-14 of the scale, or the tolerance if smaller): a
warm start that only meets the tolerance is refined by one Newton step, which lands on the exact solution when the
contacts keep their state (a box at rest then carries its weight to rounding, as after Gauss–Seidel's active-set
step). Every returned contact force is in its cone; nothing here produces a NaN from
finite input (a non-finite step is rejected). ``factor`` = (B_col, B_val, width), a factor W = B Bᵀ in the layout of
``_factor_kernels`` (the contact stage passes the body-space factor of free rigid bodies): the sticking steps with
more active rows than ``width`` are then solved in its ``width`` columns, to the same least-norm solution.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from engine.contact import _kernels as GK
from engine.contact import _newton_kernels as K
from engine.contact._linalg_kernels import no_factor, no_keep, no_memo
from engine.contact._proximal_kernels import UNLIMITED, second_attempts
from engine.contact.cone import ConstraintBlocks, SolverStats, check_problem, writeable
from engine.contact.gauss_seidel import _check_settings, _check_vector, _prepare

NAME = "nonsmooth-newton"


def nonsmooth_newton(W, v_free, mu, tol=1e-6, max_iter=100, f0=None, time_budget=None, factor=None):
    """Solve the frictional contact problem (W, v_free, mu) by nonsmooth Newton.

    W (n, n) symmetric PSD, v_free (n,), mu a scalar, an (m,) array (n = 3m contacts) or ``ConstraintBlocks``;
    f0 (n,) a warm start (projected on K); factor (B_col (n, K), B_val (n, K, w), width) with W = B Bᵀ, or None.
    Returns (f (n,), ``SolverStats``).
    """
    t0 = perf_counter()
    W, v_free = check_problem(W, v_free)
    blocks = ConstraintBlocks.coerce(mu, len(v_free))
    _check_settings(tol, max_iter, time_budget)
    f = np.zeros(len(v_free)) if f0 is None else blocks.project(_check_vector("f0", f0, len(v_free)))
    if factor is not None:
        factor = _check_factor(factor, len(v_free))
    return nonsmooth_newton_blocks(W, v_free, blocks.block_start, blocks.block_kind, blocks.block_mu, f, tol,
                                   max_iter, time_budget, blocks.inv_start, t0, factor)


def nonsmooth_newton_blocks(W, v_free, block_start, block_kind, block_mu, f, tol, max_iter, time_budget=None,
                            inv_start=None, t0=None, factor=None):
    """``nonsmooth_newton`` on a problem its caller has built and checked (as ``gauss_seidel_blocks``): ``f`` (n,)
    a warm start in K, overwritten by the returned force. Returns (f, ``SolverStats``)."""
    t0 = perf_counter() if t0 is None else t0
    block_start, block_kind, block_mu = writeable(block_start, block_kind, block_mu)
    if inv_start is None:
        sizes = np.diff(block_start)
        inv_start = np.zeros(len(block_kind) + 1, dtype=np.int64)
        np.cumsum(sizes * sizes, out=inv_start[1:])
    block_inv, block_state, block_rho = _prepare(W, block_start, block_kind, inv_start)
    n, nb = len(f), len(block_kind)
    v = np.empty_like(f)
    GK.velocity(W, f, v_free, v)
    residual = GK.natural_residual(f, v, block_start, block_kind, block_mu, block_rho)[0]
    zero = GK.natural_residual(np.zeros(n), v_free, block_start, block_kind, block_mu, block_rho)[0]
    out = np.empty(9)                                   # K.newton_iterations' state
    K.start_out(out, residual)
    best = f.copy()
    problem = (W, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho)
    state = (f, v, best, np.zeros(nb, np.int64), np.zeros((nb, 5)), np.zeros(n, np.int64), np.zeros(max(n, 3)),
             np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(nb), np.zeros(nb))   # iterates and scratch
    keep, (B_col, B_val, width) = no_keep(), no_factor() if factor is None else factor
    work = (*state, out, keep, no_memo(n), B_col, B_val, width)
    iterations, converged, stopped_by = 0, K.solved_at_start(f, residual, zero, tol), "tolerance"   # else one step
    chunk = max_iter if time_budget is None else 1
    while not converged and iterations < max_iter:
        k, converged = K.newton_iterations(*problem, min(chunk, max_iter - iterations), K.PATIENCE, tol, zero, *work)
        iterations += k
        stopped_by = "tolerance" if converged else "max_iter"
        if not converged and out[8] >= K.PATIENCE:
            stopped_by = "stalled"
            break
        if not converged and time_budget is not None:
            elapsed = perf_counter() - t0
            if elapsed >= time_budget:
                stopped_by = "time_budget"
                break
            chunk = max(1, int(0.5 * (time_budget - elapsed) * iterations / elapsed))
    steps = _steps_left(max_iter, iterations, time_budget, t0) if stopped_by == "stalled" else 0
    if steps > 0:                                         # the second attempts, with what is left of the budget
        budget = UNLIMITED if time_budget is None else steps     # under a time budget, the attempts share its rest
        interior, k, converged = second_attempts(W, v_free, *problem[1:], steps, budget, tol, zero, *state, keep, B_col,
                                                 B_val)
        iterations += interior + k
        if converged:
            stopped_by = "tolerance"
        elif interior + k >= budget:                      # the time budget's rest, used up
            stopped_by = "time_budget"
        else:
            stopped_by = "stalled" if k < steps else "max_iter"
    if not converged:
        f[:] = best
        GK.velocity(W, f, v_free, v)
    residual, violation = GK.natural_residual(f, v, block_start, block_kind, block_mu, block_rho)
    return f, SolverStats(NAME, iterations, float(residual), float(max(violation, 0.0)), bool(converged), stopped_by,
                          perf_counter() - t0, float("nan"), int(out[2]))


def _steps_left(max_iter, iterations, time_budget, t0):
    """The iterations left of ``max_iter``, fewer if the time budget, at the rate so far, allows fewer."""
    steps = max_iter - iterations
    if time_budget is not None:
        elapsed = perf_counter() - t0
        steps = min(steps, int((time_budget - elapsed) * iterations / elapsed))
    return steps


def _check_factor(factor, n):
    """(B_col, B_val, width) as the kernels take them, or ValueError naming what is wrong."""
    B_col, B_val, width = np.ascontiguousarray(factor[0], np.int64), np.ascontiguousarray(factor[1], float), factor[2]
    if B_col.ndim != 2 or B_val.shape[:2] != B_col.shape or B_col.shape[0] != n or B_val.ndim != 3:
        raise ValueError(f"factor: B_col {B_col.shape} and B_val {B_val.shape} must be (n, K) and (n, K, w) with "
                         f"n = {n}")
    if int(width) != width or not (B_col < int(width) // B_val.shape[2]).all():
        raise ValueError(f"factor: width {width} must be an integer covering the column blocks of B_col "
                         f"(max {B_col.max(initial=-1)}) of {B_val.shape[2]} columns")
    if not np.isfinite(B_val[B_col >= 0]).all():
        raise ValueError("factor: B_val is not finite on the blocks B_col names")
    return B_col, B_val, int(width)
