"""numba kernels of the nonsmooth Newton solver (``newton.py``): a semismooth Newton method on the Alart–Curnier
function φ of the whole contact problem (its pieces and their Jacobians: ``_alart_curnier_kernels``), with a
Gauss–Seidel sweep as fallback.

The rows that stay (the *active* rows A) form a square system J_AA Δf_A = −φ_A − J_AD Δf_D. A hyperstatic support
(a foot on four coplanar points, a stack of boxes) makes it singular: Δf_A is the solution of least norm. When no
contact slips, J_AA = diag(ρ) W_AA and the system is W_AA Δf_A = −v_A − W_AD Δf_D, solved by the pivoted Cholesky
of ``_linalg_kernels.least_norm_solve`` (from f = 0 on a sticking set this lands on the forces of least norm, as the
active-set step of Gauss–Seidel does; its factor remembered while the active rows stay, ``memo_solve``), or, given
a factor W = B Bᵀ of p < m columns (free rigid bodies: W_AA has rank ≤ p), in body space by
``_factor_kernels.factor_solve`` (the same least-norm solution); otherwise J_AA is not
symmetric and ``_linalg_kernels.least_norm_rows`` solves it by QR with column pivoting (a slipping contact about to
stick gives J singular values of 1e-8 that the normal equations J Jᵀ would lose) — in body space again, given the factor
(``_factor_kernels.factor_slip_solve``: J⁺ b, the same solution where the system is consistent, its least-squares
solution of least norm where it is not).

On the solve's first step, a sticking contact whose force lies on its cone's boundary and whose sticking step (of a
consistent system) would take it outside slips instead (``_slip_leaving``): a solve that ends with a contact's force
on the boundary at zero velocity leaves a solution of both pieces, and the next step's warm start classifies it by
its new, small velocity (Talos standing: one corner of a foot, sticking in one step of two).

Globalisation: the step is projected onto K and halved until Armijo's condition on ½‖φ‖² holds (``newton_step``).
Where no step length does because the sticking contacts' system is inconsistent (a rigid foot's corners that
cannot all stick: ½‖φ‖² is flat along the internal forces), the forces move along them to the first cone boundary
(``_fallback_kernels.plateau_step``); where contacts slip, the sticking rows' system is the one with the slipping
contacts' forces held (status HELD: Δf = 0 on their rows), whose least-squares residual lies in null W as well;
where that finds no move either, the whole system with the slipping rows is inconsistent (a cube sliding on four
corners whose targets are not a rigid motion's) and the forces move along null J_AA to the first constraint
(``_fallback_kernels.null_step``). Where no step length does otherwise, or Newton steps stop cutting the natural
residual (cone.py), a phase of Gauss–Seidel–Newton sweeps (seed 000 Alg. 1, ``_kernels._sweep``) takes over from
the best iterate, the "hybrid" strategy of Daviet, Bertails-Descoubes & Boissieux (2011, ACM TOG 30(6) 139).
Where PATIENCE iterations in a row have not halved the best residual, the callers (``newton.py``,
``_stepping_kernels.solve_groups``) go on from the best iterate with the proximal point method
(``_proximal_kernels.proximal_iterations``: problems with W + η I, each solved by these iterations). Every iterate
is in K.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._alart_curnier_kernels import (HELD, SLIP, STICK, _classify, _leaving, _slip_rows, _slip_system,
                                                  _times_W, ac_merit, force_norm)
from engine.contact._factor_kernels import factor_slip_solve, factor_solve
from engine.contact._fallback_kernels import _consistent, null_step, plateau_step
from engine.contact._kernels import CONTACT, FRICTION, _sweep, natural_residual, project_cone, project_row
from engine.contact._linalg_kernels import least_norm_rows, memo_definite, memo_solve

LINE_SEARCH_STEPS = 24          # step lengths 1, 1/2, …, 1/2²³ before the fallback sweeps
STALL_STEPS, STALL_FACTOR = 6, 0.9   # Newton steps that do not cut the best residual by this factor …
FIRST_PHASE, LAST_PHASE = 4.0, 32.0  # … start a phase of Gauss–Seidel sweeps this long (doubling each time)
STAGNATION_FACTOR = 0.5         # an improvement: the best residual halved (``newton_iterations``' patience)
BOUNDARY = 1e-6                 # ‖f_t‖ ≥ (1 − this) μ f_n: a force on its cone's boundary (``_slip_leaving``)
PATIENCE = np.int64(20)         # Newton's iterations without halving its best residual before the proximal attempt
# (np.int64 and np.bool_, never a Python literal, for what the kernels pass on: numba compiles a callee once more,
# with all it calls, for each literal argument; docs/architecture.md, Environment and first run)
ROUNDING = 1e-14                # a start within this of the scale is exact to rounding (``solved_at_start``) …
REFINE_ROWS = 36                # … and kept without Newton's refining step by a group of more rows


@njit(cache=True, nogil=True)
def start_out(out, residual):
    """``newton_iterations``' state (its ``out``) at the start of a solve from a force whose natural residual is
    ``residual``: the best and current residual, no sweeps or steps yet, the first phase of sweeps FIRST_PHASE
    long, the improvements counted from ``residual``."""
    out[0] = out[1] = out[7] = residual
    out[2] = out[3] = out[4] = out[6] = out[8] = 0.0
    out[5] = FIRST_PHASE


@njit(cache=True, nogil=True)
def solved_at_start(f, residual, zero_residual, tol):
    """Whether a solve may return its start f unchanged: its natural residual is zero, or, for a group of more than
    REFINE_ROWS rows, within min(tol, ROUNDING) of the scale max(‖f‖₂, ``zero_residual``), the rounding level of φ.
    Otherwise Newton takes one step at least, which refines a warm start that only meets the tolerance onto the
    exact solution. A small group's step is cheap and lands on an exact fixed point: a box at rest then starts each
    step from a zero residual and takes no step at all (skipped at rounding level, the box keeps a rounding-level
    velocity instead, and 5 cubes at rest took 2.5 Newton steps a step between them instead of none). A large
    group's step lands on another iterate exact to rounding only, and costs a dense solve: Talos lying still, 176
    rows, a right side of 2e-13 N for ‖f‖ ≈ 440 N, a contact on its cone's boundary, the slipping system's pivoted
    QR — 163 µs of a 240 µs solver stage. Skipped steps let the rounding build up until the residual crosses that level, then
    a step refines it: with 1e-14, Talos's velocities at rest stay below 1.4e-14; with 1e-12 they reached 1.1e-12
    rad/s (docs/architecture.md, A robot at rest takes no Newton step)."""
    if residual == 0.0:
        return True
    return f.shape[0] > REFINE_ROWS and residual <= min(tol, ROUNDING) * max(force_norm(f), zero_residual)


@njit(cache=True, nogil=True)
def _direction(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, m, slipping, rows, df, wd,
               keep, memo, B_col, B_val, width):
    """The Newton direction Δf (into ``df``): −f on the rows that leave the system, the least-norm solution of
    the active rows otherwise (when none slips: ``_factor_kernels.factor_solve`` on the factor W = B Bᵀ of
    ``width`` columns if the m active rows outnumber them, else ``_linalg_kernels.memo_solve``). ``rows`` receives the
    active rows, ``wd`` is scratch (W Δf_D)."""
    _leaving(W, f, block_start, block_kind, status, slip, rows, df, wd)
    if m == 0:
        return
    rhs = np.empty(m)
    if not slipping and 0 < width < m:                   # W_AA = B_A B_Aᵀ of rank ≤ width: in body space
        for a in range(m):
            rhs[a] = -v[rows[a]] - wd[rows[a]]
        x = factor_solve(B_col, B_val, width, rows[:m], rhs)
    elif not slipping:                                   # W_AA Δf_A = −v_A − W_AD Δf_D (symmetric PSD)
        A = np.empty((m, m))
        for a in range(m):
            for c in range(m):
                A[a, c] = W[rows[a], rows[c]]
            rhs[a] = -v[rows[a]] - wd[rows[a]]
        x = memo_solve(A, rhs, rows[:m], keep, memo)
    else:
        A = np.empty((m, m))
        _slip_system(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, rows, wd, A, rhs)
        if 0 < width < m:                                # W_AA of rank ≤ width: J⁺ rhs in body space
            x = factor_slip_solve(A, rhs, B_col, B_val, width, rows[:m], *_slip_rows(block_start, block_kind,
                                  block_mu, block_rho, status, slip, m))
        else:
            x = _regular_solve(W, rows[:m], A, rhs, memo)
        if not x.shape[0]:
            x = least_norm_rows(A, rhs)
    for a in range(m):
        df[rows[a]] = x[a]


@njit(cache=True, nogil=True)
def _regular_solve(W, rows, J, b, memo):
    """J⁻¹ b by LAPACK's LU when W_AA is numerically positive definite (``memo_definite``: the compliant
    contacts of FEM soles), where J_AA is regular and the least-norm solution is the only one; else an empty
    array (the caller's QR then finds the least-norm solution of a hyperstatic rigid set)."""
    m = J.shape[0]
    W_AA = np.empty((m, m))
    for a in range(m):
        for c in range(m):
            W_AA[a, c] = W[rows[a], rows[c]]
    if not memo_definite(W_AA, rows, memo):
        return np.zeros(0)
    x = np.linalg.solve(J, b)
    for a in range(m):
        if not math.isfinite(x[a]):
            return np.zeros(0)
    return x


@njit(cache=True, nogil=True)
def newton_step(W, block_start, block_kind, block_mu, block_rho, block_state, f, v, status, slip, rows, df, wd,
                f_trial, v_trial, keep, memo, B_col, B_val, width, first=False):
    """One damped Newton step from (f, v = W f + v_free): Δf by ``_direction`` (again with the slipping piece for
    the contacts ``_slip_leaving`` finds, on the solve's ``first`` step where no contact slips and the system is
    consistent), then f⁺ = proj_K(f + α Δf) for
    α = 1, 1/2, … until Armijo's condition ½‖φ(f⁺)‖² ≤ (1 − 10⁻⁴ α) ½‖φ(f)‖² holds (Δf is a descent direction of
    ½‖φ‖² where φ is differentiable); where no α does, ``plateau_step`` on the sticking rows — with the slipping
    contacts' forces held when some slip (their status set to HELD): the least-squares Δf of the sticking rows
    W_SS Δf_S = −v_S − W_SD Δf_D (Δf = 0 on the held rows) leaves r_S in null W_SS, so W r = 0 as without them,
    and moving f_S along r changes no velocity, the slipping contacts' φ included (Talos falling with its joints'
    limits as rows: a contact sticking with 1e-5 m/s left that no step length removed, 178 of 1000 steps
    unconverged on 0c2aeea). (B_col, B_val, width): a factor of W or width 0 (``_direction``). Returns whether a
    step was taken (f, v updated)."""
    n = f.shape[0]
    m, slipping = _classify(f, v, block_start, block_kind, block_mu, block_rho, block_state, status, slip)
    if not _step_direction(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, m, slipping, rows,
                           df, wd, keep, memo, B_col, B_val, width):
        return False
    if first and not slipping and _consistent(v, wd, rows[:m]) and _slip_leaving(f, v, df, block_start, block_mu,
                                                                                 block_rho, status, slip):
        slipping = np.bool_(True)
        if not _step_direction(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, m, slipping,
                               rows, df, wd, keep, memo, B_col, B_val, width):
            return False
    merit = ac_merit(f, v, block_start, block_kind, block_mu, block_rho)
    alpha = 1.0
    for _ in range(LINE_SEARCH_STEPS):
        for i in range(n):                               # v⁺ = v + α W Δf + W (f⁺ − f − α Δf), the last term
            f_trial[i] = f[i] + alpha * df[i]            # only where the projection moved f + α Δf
            v_trial[i] = v[i] + alpha * wd[i]
        for blk in range(block_kind.shape[0]):
            s = block_start[blk]
            if block_kind[blk] >= FRICTION:
                d = project_row(f_trial[s], block_kind[blk], block_mu[blk]) - f_trial[s]
                if d != 0.0:
                    f_trial[s] += d
                    for i in range(n):
                        v_trial[i] += W[s, i] * d
            if block_kind[blk] != CONTACT:
                continue
            p = project_cone(f_trial[s], f_trial[s + 1], f_trial[s + 2], block_mu[blk])
            for r in range(3):
                d = p[r] - f_trial[s + r]
                if d != 0.0:
                    f_trial[s + r] = p[r]
                    for i in range(n):
                        v_trial[i] += W[s + r, i] * d
        if ac_merit(f_trial, v_trial, block_start, block_kind, block_mu, block_rho) <= (1.0 - 1e-4 * alpha) * merit:
            f[:] = f_trial
            v[:] = v_trial
            return True
        alpha *= 0.5
    if slipping:                                         # the slipping contacts held: the sticking rows' system
        for b in range(block_kind.shape[0]):
            if status[b] == SLIP:
                status[b] = HELD
                m -= 3
        if not _step_direction(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, m, np.bool_(False),
                               rows, df, wd, keep, memo, B_col, B_val, width):
            return False
    if plateau_step(W, block_start, block_kind, block_mu, status, rows[:m], f, v, wd, f_trial):
        return True
    return slipping and null_step(W, block_start, block_kind, block_mu, block_rho, block_state, f, v, status, slip,
                                  rows, df, wd)


@njit(cache=True, nogil=True)
def _step_direction(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, m, slipping, rows, df, wd,
                    keep, memo, B_col, B_val, width):
    """``_direction`` into ``df``, then W Δf into ``wd``; False where Δf is not finite (no step to take)."""
    _direction(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, m, slipping, rows, df, wd, keep,
               memo, B_col, B_val, width)
    for i in range(f.shape[0]):
        if not math.isfinite(df[i]):
            return False
    _times_W(W, df, wd)
    return True


@njit(cache=True, nogil=True)
def _slip_leaving(f, v, df, block_start, block_mu, block_rho, status, slip):
    """The sticking contacts whose force is on its cone's boundary (within ``BOUNDARY``) and whose sticking step
    f + Δf leaves the cone: set to SLIP, with slip[b] as ``_classify`` sets it at (f, v) (the piece φ_t = f_t − r V̂,
    r = μ p_n, M = (r/‖V‖)(I − V̂V̂ᵀ), here with ‖V‖ ≤ r). A force left on the boundary with no velocity by the
    last step's solve is a solution of both pieces; the warm start's new velocity picks one (Talos standing,
    ``tests/contact/data/talos_standing.npz``: a corner of a foot sticking by 1 % of r), and the sticking one asks
    for a force outside the cone (by 33 N there), which the line search cuts to a few per cent: 2 iterations or a
    stall instead of 1 (the active-set rule: a sticking force that crosses the boundary slips). ``newton_step``
    asks on the solve's first step only, where no contact slips and the sticking rows' system is consistent
    (``_consistent``; where it is not, the plateau step moves the forces). Returns whether any."""
    any_slip = False
    for b in range(status.shape[0]):
        if status[b] != STICK:
            continue
        s, mu = block_start[b], block_mu[b]
        if math.hypot(f[s + 1], f[s + 2]) < (1.0 - BOUNDARY) * mu * f[s]:
            continue
        if math.hypot(f[s + 1] + df[s + 1], f[s + 2] + df[s + 2]) <= mu * (f[s] + df[s]):
            continue
        rt = block_rho[b, 2]
        V1, V2 = f[s + 1] - rt * v[s + 1], f[s + 2] - rt * v[s + 2]
        nV = math.hypot(V1, V2)
        if nV == 0.0:
            continue
        u1, u2, c = V1 / nV, V2 / nV, mu * (f[s] - block_rho[b, 0] * v[s]) / nV
        status[b] = SLIP
        slip[b, 0], slip[b, 1] = u1, u2
        slip[b, 2], slip[b, 3], slip[b, 4] = c * (1.0 - u1 * u1), -c * u1 * u2, c * (1.0 - u2 * u2)
        any_slip = True
    return any_slip


@njit(cache=True, nogil=True)
def newton_iterations(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho,
                      max_steps, patience, tol, zero_residual, f, v, best_f, status, slip, rows, df, wd, f_trial,
                      v_trial, dnorm, fnorm, out, keep, memo, B_col, B_val, width):
    """Up to ``max_steps`` iterations from (f, v = W f + v_free), each a Newton step or a Gauss–Seidel–Newton sweep
    (seed 000 Alg. 1); stops once the natural residual ≤ tol · max(‖f‖₂, ``zero_residual``). Newton steps run
    while they make progress; a step that fails its line search, or STALL_STEPS steps in a row that do not cut the
    best natural residual by STALL_FACTOR (a stationary point of ½‖φ‖², or a kink crossed back and forth), start
    a phase of sweeps, FIRST_PHASE long then doubling up to LAST_PHASE, after which Newton is tried again.
    It gives up early, unconverged, once ``patience`` iterations in a row have not cut the best residual by
    STAGNATION_FACTOR (no progress: jammed self-contacts with high friction from some warm starts, or a problem
    without an exact solution; PATIENCE before the proximal attempt).
    ``out`` (in/out) = [best residual, current residual, sweeps, Newton steps, sweeps left in this phase,
    length of the next phase, stalled steps, best residual at the last real improvement, iterations since];
    the iterate of lowest natural residual is kept in ``best_f``; ``keep``: the kept factor of the linear solves
    (``_linalg_kernels.kept_solve``); ``memo``: the last factor of W_AA (``memo_solve``; ``no_memo`` for a new W);
    (B_col, B_val, width): a factor W = B Bᵀ of ``width`` columns, or width 0 (``_factor_kernels``). Returns
    (iterations done, converged); the caller tells a stagnation stop by out[8] ≥ ``patience``."""
    for k in range(max_steps):
        if out[4] > 0:
            _sweep(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho, True, f, v,
                   dnorm, fnorm, df)
            out[2] += 1
            out[4] -= 1
            residual, _ = natural_residual(f, v, block_start, block_kind, block_mu, block_rho)
        else:
            stepped = newton_step(W, block_start, block_kind, block_mu, block_rho, block_state, f, v, status, slip,
                                  rows, df, wd, f_trial, v_trial, keep, memo, B_col, B_val, width,
                                  out[2] + out[3] == 0.0)
            out[3] += stepped
            residual, _ = natural_residual(f, v, block_start, block_kind, block_mu, block_rho)
            out[6] = 0.0 if stepped and residual < STALL_FACTOR * out[0] else out[6] + 1.0
            if not stepped or out[6] >= STALL_STEPS:       # sweeps, from the best iterate so far
                out[4], out[5], out[6] = out[5], min(2.0 * out[5], LAST_PHASE), 0.0
                if out[0] < residual:
                    _restore(W, best_f, f, v)
                    residual = out[0]
        out[1] = residual
        if residual < out[0]:
            out[0] = residual
            best_f[:] = f
        if residual <= tol * max(force_norm(f), zero_residual):
            return k + 1, True
        if out[0] < STAGNATION_FACTOR * out[7]:              # a real improvement: restart the count
            out[7], out[8] = out[0], 0.0
        else:
            out[8] += 1.0
            if out[8] >= patience:
                return k + 1, False
    return max_steps, False


@njit(cache=True, nogil=True)
def _restore(W, best_f, f, v):
    """f ← best_f, v ← v + W (best_f − f)."""
    n = f.shape[0]
    for j in range(n):
        d = best_f[j] - f[j]
        if d != 0.0:
            for i in range(n):
                v[i] += W[j, i] * d
            f[j] = best_f[j]
