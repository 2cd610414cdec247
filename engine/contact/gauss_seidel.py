"""Block Gauss–Seidel over contacts with the exact Coulomb cone (seed 000 §3.1.4.2, Alg. 1 and Alg. 2).

Problem (seed 000 eqs. 3.26–3.27): find f with v = W f + v_free, each contact force in its Coulomb cone and
Coulomb's law between f_i and v_i (separation, stick v_i = 0, or slip f_t = −μ f_n v̂_t); bilateral blocks have
a free force and v_b = 0. Each sweep visits the blocks in order (Alg. 1):

1. local free velocity  b_i = v_free,i + Σ_{j≠i} W_ij f_j;
2. no contact           b_n ≥ 0            → f_i = 0;
3. stick                f_i = −W_ii⁻¹ b_i, kept if ‖f_t‖ ≤ μ f_n;
4. slip                 ``newton=True`` (AMELIFGSNEWTON): Alart–Curnier Newton (Alg. 2, eqs. 3.28–3.33) with
                        ρ_n = 1/W_nn, ρ_t = λmin/λmax² of W_tt, damped by backtracking, one projection step if it
                        fails; ``newton=False`` (AMELIFGS): one step of the projection maps (3.29);
   bilateral            f_b ← f_b − W_bb⁺ v_b.

Once the iterates settle, an active-set step (``_kernels.polish``, not in the thesis) solves the sticking
contacts exactly — on a hyperstatic set such as a foot on four points Gauss–Seidel alone converges slowly.
It stops when Σ_i ‖f_i^{k+1} − f_i^k‖/‖f_i^{k+1}‖ < tol (eq. 3.34), after ``max_iter`` sweeps, or when the
wall-clock ``time_budget`` runs out (at least one sweep is done); unless converged, the iterate of lowest
natural residual is returned. Every returned contact force is in its cone.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np

from engine.contact import _kernels as K
from engine.contact._linalg_kernels import no_keep
from engine.contact.cone import BILATERAL, ConstraintBlocks, SolverStats, check_problem, writeable


def prepare(W, blocks: ConstraintBlocks):
    """Per-block data of one solve: (block_inv, block_state, block_rho) (see _kernels)."""
    return _prepare(W, blocks.block_start, blocks.block_kind, blocks.inv_start)


def _prepare(W, block_start, block_kind, inv_start):
    block_inv = np.zeros(inv_start[-1])
    block_state = np.zeros(len(block_kind), dtype=np.int64)
    block_rho = np.zeros((len(block_kind), 3))
    K.prepare_blocks(W, block_start, block_kind, inv_start, block_inv, block_state, block_rho)
    for b in np.flatnonzero(block_kind == BILATERAL):
        s, e = block_start[b], block_start[b + 1]
        block_inv[inv_start[b]:inv_start[b + 1]] = np.linalg.pinv(W[s:e, s:e], rcond=1e-10, hermitian=True).ravel()
    return block_inv, block_state, block_rho


def _check_settings(tol, max_iter, time_budget):
    if not (np.isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be finite and >= 0 (got {tol!r})")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1 (got {max_iter!r})")
    if time_budget is not None and not time_budget > 0.0:
        raise ValueError(f"time_budget must be > 0 seconds or None (got {time_budget!r})")


def gauss_seidel(W, v_free, mu, tol=1e-6, max_iter=100, f0=None, time_budget=None, newton=True):
    """Solve the frictional contact problem (W, v_free, mu) by block Gauss–Seidel (seed 000 Alg. 1).

    W (n, n) symmetric PSD, v_free (n,), mu a scalar, an (m,) array (n = 3m contacts) or ``ConstraintBlocks``;
    f0 (n,) a warm start (projected on K). Returns (f (n,), ``SolverStats``).
    """
    t0 = perf_counter()
    W, v_free = check_problem(W, v_free)
    blocks = ConstraintBlocks.coerce(mu, len(v_free))
    _check_settings(tol, max_iter, time_budget)
    f = np.zeros(len(v_free)) if f0 is None else blocks.project(_check_vector("f0", f0, len(v_free)))
    return gauss_seidel_blocks(W, v_free, blocks.block_start, blocks.block_kind, blocks.block_mu, f, tol, max_iter,
                               time_budget, newton, blocks.inv_start, t0)


def gauss_seidel_blocks(W, v_free, block_start, block_kind, block_mu, f, tol, max_iter, time_budget=None,
                        newton=True, inv_start=None, t0=None):
    """``gauss_seidel`` on a problem its caller has built and checked (the simulation's contact stage): W (n, n)
    symmetric PSD, float64, C-contiguous; the block arrays as in ``ConstraintBlocks``; ``f`` (n,) a warm start
    in K, overwritten by the returned force. Returns (f, ``SolverStats``)."""
    t0 = perf_counter() if t0 is None else t0
    block_start, block_kind, block_mu = writeable(block_start, block_kind, block_mu)
    if inv_start is None:
        sizes = np.diff(block_start)
        inv_start = np.zeros(len(block_kind) + 1, dtype=np.int64)
        np.cumsum(sizes * sizes, out=inv_start[1:])
    block_inv, block_state, block_rho = _prepare(W, block_start, block_kind, inv_start)
    problem = (W, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho, newton)
    v = np.empty_like(f)
    K.velocity(W, f, v_free, v)
    residual = K.natural_residual(f, v, block_start, block_kind, block_mu, block_rho)[0]
    out = np.array([residual, np.inf, 0.0, 0.0])     # best residual, change, failures, sweeps since polish
    best = f.copy()
    work = (f, v, best, np.zeros(len(block_kind)), np.zeros(len(block_kind)), np.zeros(max(len(f), 1)), out,
            no_keep())
    sweeps, converged, stopped_by = _iterate(problem, work, tol, max_iter, time_budget, t0)
    if not converged:
        f[:] = best
        K.velocity(W, f, v_free, v)
    residual, violation = K.natural_residual(f, v, block_start, block_kind, block_mu, block_rho)
    return f, SolverStats("gauss-seidel-newton" if newton else "gauss-seidel", sweeps, float(residual),
                          float(max(violation, 0.0)), converged, stopped_by, perf_counter() - t0, float(out[1]),
                          int(out[2]))


def _iterate(problem, work, tol, max_iter, time_budget, t0):
    """Sweeps until eq. 3.34 < tol, ``max_iter`` or the time budget (checked between chunks of sweeps sized
    from the measured time per sweep). Returns (sweeps, converged, stopped_by)."""
    sweeps, chunk = 0, max_iter if time_budget is None else 1
    while sweeps < max_iter:
        k, converged = K.gauss_seidel_sweeps(*problem, min(chunk, max_iter - sweeps), tol, *work)
        sweeps += k
        if converged:
            return sweeps, True, "tolerance"
        if time_budget is not None:
            elapsed = perf_counter() - t0
            if elapsed >= time_budget:
                return sweeps, False, "time_budget"
            chunk = max(1, int(0.5 * (time_budget - elapsed) * sweeps / elapsed))
    return sweeps, False, "max_iter"


def _residual(f, v, blocks, block_rho):
    residual, violation = K.natural_residual(f, v, blocks.block_start, blocks.block_kind, blocks.block_mu, block_rho)
    return float(residual), float(max(violation, 0.0))


def _check_vector(name, x, n):
    x = np.asarray(x, dtype=float)
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be a finite array of shape ({n},) (got shape {x.shape})")
    return x


def contact_residual(W, v_free, f, mu):
    """(natural-map residual, cone violation) of a force ``f`` for the problem (W, v_free, mu), in N (cone.py)."""
    W, v_free = check_problem(W, v_free)
    blocks = ConstraintBlocks.coerce(mu, len(v_free))
    return residual_of(W, v_free, _check_vector("f", f, len(v_free)), blocks)


def residual_of(W, v_free, f, blocks: ConstraintBlocks):
    """``contact_residual`` for inputs already checked (W from ``check_problem``)."""
    v = np.empty_like(f)
    K.velocity(W, f, v_free, v)
    return _residual(f, v, blocks, prepare(W, blocks)[2])
