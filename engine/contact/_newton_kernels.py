"""numba kernels of the nonsmooth Newton solver (``newton.py``): a semismooth Newton method on the Alart–Curnier
function of the whole contact problem, with a Gauss–Seidel sweep as fallback.

Alart–Curnier function (Alart & Curnier 1991, CMAME 92; in the form of Christensen, Klarbring, Pang & Strömberg
1998, IJNME 42, §3): per contact, with v = W f + v_free, gains ρ_n = 1/W_nn and ρ_t = 1/λmax(W_tt) (``block_rho``
columns 0 and 2, from ``_kernels.prepare_blocks``),

    p_n = f_n − ρ_n v_n,   V = f_t − ρ_t v_t,   r = μ [p_n]₊,
    φ_n = f_n − [p_n]₊,    φ_t = f_t − proj_disc(r)(V),

and φ = 0 exactly at a solution of Signorini + Coulomb (the exact cone). φ is piecewise smooth; its generalized
Jacobian on each piece gives the Newton step J Δf = −φ (Newton's method on a semismooth function, Qi & Sun 1993):

* separated, p_n ≤ 0:          φ = f                          → Δf = −f (the rows leave the linear system);
* stick, ‖V‖ ≤ r:              φ = (ρ_n v_n, ρ_t v_t)           → rows ρ W_i· (a linear solve for v_i = 0);
* slip, ‖V‖ > r:               φ_n = ρ_n v_n, φ_t = f_t − r V̂
                               dφ_t = df_t − V̂ dr − (r/‖V‖)(I − V̂V̂ᵀ) dV,  dr = μ dp_n,  dV = df_t − ρ_t W_t· df;
* frictionless (μ = 0):        φ_t = f_t                       → Δf_t = −f_t;
* bilateral rows:              φ = ρ v                         → rows ρ W_b·;
* one-row block (friction: |f| ≤ b; limit: f ≥ 0), p = f − ρ v:
                               p inside the set: φ = ρ v        → a row ρ W_b·, like a bilateral one;
                               otherwise: φ = f − proj(p)       → Δf = proj(p) − f (the row leaves, CLAMPED).

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
(``plateau_step``); where contacts slip, the sticking rows' system is the one with the slipping contacts' forces
held (status HELD: Δf = 0 on their rows), whose least-squares residual lies in null W as well; where that finds
no move either, the whole system with the slipping rows is inconsistent (a cube sliding on four corners whose
targets are not a rigid motion's) and the forces move along null J_AA to the first constraint (``null_step``).
Where no step length does otherwise, or Newton steps stop cutting the natural residual (cone.py), a phase of
Gauss–Seidel–Newton sweeps (seed 000 Alg. 1, ``_kernels._sweep``) takes over from the best iterate, the "hybrid"
strategy of Daviet, Bertails-Descoubes & Boissieux (2011, ACM TOG 30(6) 139). Where PATIENCE iterations in a
row have not halved the best residual, the callers (``newton.py``, ``_stepping_kernels.solve_groups``) go on from
the best iterate with the proximal point method (``proximal_iterations``: problems with W + η I, each solved by
these iterations). Every iterate is in K.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._factor_kernels import factor_slip_solve, factor_solve
from engine.contact._kernels import (BILATERAL, CONTACT, FRICTION, INERT, LIMIT, _sweep, natural_residual,
                                    project_cone, project_row)
from engine.contact._linalg_kernels import RANK_TOL, least_norm_rows, memo_definite, memo_solve, no_memo

SEPARATED, STICK, SLIP, FRICTIONLESS, BOUND, CLAMPED, HELD = 0, 1, 2, 3, 4, 5, 6   # per block: how its rows enter
# (HELD: a slipping contact whose force ``plateau_step`` keeps, its rows out of the system)
LINE_SEARCH_STEPS = 24          # step lengths 1, 1/2, …, 1/2²³ before the fallback sweeps
STALL_STEPS, STALL_FACTOR = 6, 0.9   # Newton steps that do not cut the best residual by this factor …
FIRST_PHASE, LAST_PHASE = 4.0, 32.0  # … start a phase of Gauss–Seidel sweeps this long (doubling each time)
STAGNATION_ITERATIONS, STAGNATION_FACTOR = 100, 0.5   # the proximal attempt gives up after 100 iterations that
# do not halve the best residual
BOUNDARY = 1e-6                 # ‖f_t‖ ≥ (1 − this) μ f_n: a force on its cone's boundary (``_slip_leaving``)
PLATEAU_FRACTION = 1e-6         # ‖r_A‖ ≥ this × ‖v_A‖: the active rows' system is inconsistent (``plateau_step``)
PATIENCE = 20                   # Newton's iterations without halving its best residual before the proximal attempt
PROXIMAL_WEIGHT = 1e-4          # η = this × the mean of W's diagonal (``proximal_iterations``)
PROXIMAL_INNER, PROXIMAL_TOL = 30, 1e-9   # iterations and relative tolerance of each proximal problem
PROXIMAL_GROWTH = 10.0          # ‖f‖ beyond this × its start (or the zero force's residual): diverging, stop


@njit(cache=True, nogil=True)
def force_norm(f):
    """‖f‖₂."""
    acc = 0.0
    for k in range(f.shape[0]):
        acc += f[k] * f[k]
    return math.sqrt(acc)


@njit(cache=True, nogil=True)
def _classify(f, v, block_start, block_kind, block_mu, block_rho, block_state, status, slip):
    """Each block's piece of φ (SEPARATED, STICK, SLIP, FRICTIONLESS, BOUND = bilateral or a one-row block inside
    its set, CLAMPED = a one-row block on its boundary, its force in slip[b, 0]); for a slipping contact
    slip[b] = (V̂1, V̂2, M11, M12, M22) with M = (r/‖V‖)(I − V̂V̂ᵀ). Returns (active rows, any slip)."""
    m, slipping = 0, False
    for b in range(block_kind.shape[0]):
        s, e = block_start[b], block_start[b + 1]
        if block_kind[b] == BILATERAL:
            status[b] = BOUND
            m += e - s
            continue
        if block_kind[b] >= FRICTION:
            p = f[s] - block_rho[b, 0] * v[s]
            inside = p > 0.0 if block_kind[b] == LIMIT else abs(p) <= block_mu[b]
            if block_state[b] != INERT and inside:
                status[b] = BOUND
                m += 1
            else:
                status[b] = CLAMPED
                slip[b, 0] = project_row(p, block_kind[b], block_mu[b]) if block_state[b] != INERT else 0.0
            continue
        pn = f[s] - block_rho[b, 0] * v[s]
        if block_state[b] == INERT or pn <= 0.0:
            status[b] = SEPARATED
            continue
        mu = block_mu[b]
        if mu == 0.0:
            status[b] = FRICTIONLESS
            m += 1
            continue
        rt = block_rho[b, 2]
        V1, V2 = f[s + 1] - rt * v[s + 1], f[s + 2] - rt * v[s + 2]
        nV, r = math.hypot(V1, V2), mu * pn
        m += 3
        if nV <= r:
            status[b] = STICK
            continue
        status[b] = SLIP
        slipping = True
        u1, u2, c = V1 / nV, V2 / nV, r / nV
        slip[b, 0], slip[b, 1] = u1, u2
        slip[b, 2], slip[b, 3], slip[b, 4] = c * (1.0 - u1 * u1), -c * u1 * u2, c * (1.0 - u2 * u2)
    return m, slipping


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
def _leaving(W, f, block_start, block_kind, status, slip, rows, df, wd):
    """Δf_D into ``df`` (−f on the rows that leave the system, a CLAMPED row to its projection, 0 elsewhere), the
    active rows into ``rows``, W Δf_D into ``wd``."""
    n = f.shape[0]
    k = 0
    for b in range(block_kind.shape[0]):
        s, e = block_start[b], block_start[b + 1]
        st = status[b]
        for r in range(s, e):
            active = st == BOUND or st == STICK or st == SLIP or (st == FRICTIONLESS and r == s)
            df[r] = 0.0 if active or st == HELD else (slip[b, 0] if st == CLAMPED else 0.0) - f[r]
            if active:
                rows[k] = r
                k += 1
    _times_W(W, df, wd)


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
def _slip_system(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, rows, wd, A, b):
    """J_AA (into A) and b = −φ_A − J_AD Δf_D (``wd`` = W Δf_D) with the rows of φ listed in the module docstring;
    the columns of A follow ``rows``."""
    m = A.shape[0]
    k = 0
    for blk in range(block_kind.shape[0]):
        s, e, st = block_start[blk], block_start[blk + 1], status[blk]
        if st == SEPARATED or st == CLAMPED:
            continue
        rn, rt = block_rho[blk, 0], block_rho[blk, 2]
        if st == BOUND:                                  # ρ W_b· ; φ = ρ v
            for r in range(s, e):
                for c in range(m):
                    A[k, c] = rn * W[r, rows[c]]
                b[k] = -rn * (v[r] + wd[r])
                k += 1
            continue
        for c in range(m):                               # normal row: ρ_n W_n·, φ_n = ρ_n v_n
            A[k, c] = rn * W[s, rows[c]]
        b[k] = -rn * (v[s] + wd[s])
        k += 1
        if st == FRICTIONLESS:
            continue
        if st == STICK:
            for t in range(s + 1, s + 3):
                for c in range(m):
                    A[k, c] = rt * W[t, rows[c]]
                b[k] = -rt * (v[t] + wd[t])
                k += 1
            continue
        u1, u2, m11, m12, m22 = slip[blk, 0], slip[blk, 1], slip[blk, 2], slip[blk, 3], slip[blk, 4]
        mu, pn = block_mu[blk], f[s] - rn * v[s]
        V1, V2 = f[s + 1] - rt * v[s + 1], f[s + 2] - rt * v[s + 2]
        nV = math.hypot(V1, V2)
        r = mu * pn
        for a in range(2):                               # rows t1, t2 of dφ_t
            ua = u1 if a == 0 else u2
            Ma0, Ma1 = (m11, m12) if a == 0 else (m12, m22)
            for c in range(m):
                col = rows[c]
                dpn = (1.0 if col == s else 0.0) - rn * W[s, col]
                dV0 = (1.0 if col == s + 1 else 0.0) - rt * W[s + 1, col]
                dV1 = (1.0 if col == s + 2 else 0.0) - rt * W[s + 2, col]
                A[k, c] = (1.0 if col == s + 1 + a else 0.0) - mu * ua * dpn - Ma0 * dV0 - Ma1 * dV1
            phi = f[s + 1 + a] - r * (V1 if a == 0 else V2) / nV
            # J_AD Δf_D: the identity parts sit on own rows (all active), so only the W parts reach Δf_D
            jd = mu * ua * rn * wd[s] + rt * (Ma0 * wd[s + 1] + Ma1 * wd[s + 2])
            b[k] = -phi - jd
            k += 1


@njit(cache=True, nogil=True)
def _slip_rows(block_start, block_kind, block_mu, block_rho, status, slip, m):
    """The rows of ``_slip_system`` as ``_factor_kernels.factor_slip_solve`` takes them: per position, ρ of a row
    ρ W_a· (0 for the tangential rows of a slipping contact), whether it belongs to a slipping contact, and for a
    tangential row of one, the W part of its row as Σ_k q_coef[k] W_{q_pos[k]}·."""
    row_rho, in_T = np.zeros(m), np.zeros(m, np.bool_)
    q_pos, q_coef = np.zeros((m, 3), np.int64), np.zeros((m, 3))
    k = 0
    for blk in range(block_kind.shape[0]):
        s, e, st = block_start[blk], block_start[blk + 1], status[blk]
        if st == SEPARATED or st == CLAMPED:
            continue
        rn, rt = block_rho[blk, 0], block_rho[blk, 2]
        if st == BOUND or st == STICK:
            for r in range(s, e):
                row_rho[k] = rn if st == BOUND or r == s else rt
                k += 1
            continue
        row_rho[k] = rn                                  # normal row (FRICTIONLESS or SLIP)
        k += 1
        if st == FRICTIONLESS:
            continue
        in_T[k - 1] = in_T[k] = in_T[k + 1] = True
        for a in range(2):                               # dφ_t's W part: μ u_a ρ_n W_n· + ρ_t (M_a1 W_t1· + M_a2 W_t2·)
            q_pos[k, 0], q_pos[k, 1], q_pos[k, 2] = k - 1 - a, k - a, k + 1 - a
            q_coef[k, 0] = block_mu[blk] * slip[blk, a] * rn
            q_coef[k, 1] = rt * (slip[blk, 2] if a == 0 else slip[blk, 3])
            q_coef[k, 2] = rt * (slip[blk, 3] if a == 0 else slip[blk, 4])
            k += 1
    return row_rho, in_T, q_pos, q_coef


@njit(cache=True, nogil=True)
def ac_merit(f, v, block_start, block_kind, block_mu, block_rho):
    """½‖φ(f)‖² of the Alart–Curnier function (module docstring) at (f, v = W f + v_free)."""
    acc = 0.0
    for b in range(block_kind.shape[0]):
        s, e = block_start[b], block_start[b + 1]
        rn = block_rho[b, 0]
        if block_kind[b] == BILATERAL:
            for r in range(s, e):
                acc += (rn * v[r]) ** 2
            continue
        if block_kind[b] >= FRICTION:
            acc += (f[s] - project_row(f[s] - rn * v[s], block_kind[b], block_mu[b])) ** 2
            continue
        pn = max(f[s] - rn * v[s], 0.0)
        rt = block_rho[b, 2]
        V1, V2 = f[s + 1] - rt * v[s + 1], f[s + 2] - rt * v[s + 2]
        nV, r = math.hypot(V1, V2), block_mu[b] * pn
        c = 1.0 if nV <= r else r / nV                   # proj_disc(r)(V) = c V
        acc += (f[s] - pn) ** 2 + (f[s + 1] - c * V1) ** 2 + (f[s + 2] - c * V2) ** 2
    return 0.5 * acc


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
        slipping = True
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
        if not _step_direction(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, m, False, rows,
                               df, wd, keep, memo, B_col, B_val, width):
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
def _consistent(v, w, rows):
    """Whether the active rows' system is consistent: ‖v_A + w_A‖ < PLATEAU_FRACTION ‖v_A‖ (w = W Δf)."""
    size, rest = 0.0, 0.0
    for i in rows:
        size += (v[i] + w[i]) ** 2
        rest += v[i] * v[i]
    return not size > PLATEAU_FRACTION ** 2 * rest


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
def _times_W(W, x, w):
    """w = W x, skipping the zeros of x (W symmetric: its rows as columns)."""
    for i in range(x.shape[0]):
        w[i] = 0.0
    for j in range(x.shape[0]):
        if x[j] != 0.0:
            for i in range(x.shape[0]):
                w[i] += W[j, i] * x[j]


@njit(cache=True, nogil=True)
def plateau_step(W, block_start, block_kind, block_mu, status, rows, f, v, wd, r):
    """Where the Newton step finds no descent: the sticking rows' system W_AA Δf_A = b (``rows``; the slipping
    contacts held, ``newton_step``) is inconsistent and ½‖φ‖² is flat along the internal forces. Moves f along
    them to the nearest cone boundary.

    The least-squares Δf (``_direction``, W Δf in ``wd``) leaves the velocity r_A = v_A + (W Δf)_A, which lies in
    null W_AA (W symmetric PSD: W_AA r_A = 0, so W r = 0 and v does not change with f along r). It is a sticking
    rigid foot's part of the targets no rigid motion meets (a push-out at some corners only): φ_A = ρ v_A keeps it
    whatever the forces, and the exact solution has a contact slipping, its force on the cone's boundary (the
    walk's recorded problems: Lemke on a 64-facet cone then one Newton step, 9e-7 relative). f ← f − t r, t the
    step to the first constraint it meets (the ratio test of active-set methods, Nocedal & Wright 2006 §16.5):
    the contact's tangential force then opposes its remaining velocity, and the next classification lets it slip.
    Not beyond ‖t r‖ = ‖f‖: internal forces that meet no boundary sooner squeeze (a box wedged between parallel
    walls, whose forces would grow until rounding in W f moved it). Returns whether f moved (``r`` is scratch)."""
    n = f.shape[0]
    if _consistent(v, wd, rows):                         # a kink, not a plateau
        return False
    r[:] = 0.0
    size = 0.0
    for i in rows:
        r[i] = v[i] + wd[i]
        size += r[i] * r[i]
    t = math.inf
    for b in range(block_kind.shape[0]):
        s = block_start[b]
        if status[b] == STICK:
            t = min(t, _cone_exit(f[s], f[s + 1], f[s + 2], r[s], r[s + 1], r[s + 2], block_mu[b]))
        elif status[b] == FRICTIONLESS and r[s] > 0.0:
            t = min(t, f[s] / r[s])
        elif status[b] == BOUND and block_kind[b] >= FRICTION:     # a one-row block inside its set
            low = 0.0 if block_kind[b] == LIMIT else -block_mu[b]
            if r[s] > 0.0:
                t = min(t, (f[s] - low) / r[s])
            elif r[s] < 0.0 and block_kind[b] == FRICTION:
                t = min(t, (f[s] - block_mu[b]) / r[s])
    if not (0.0 < t and t * math.sqrt(size) <= force_norm(f)):     # no boundary within ‖f‖: a squeeze (a box
        return False                                                 # wedged between walls), not a plateau step
    for i in rows:
        d = -t * r[i]
        f[i] += d
        for j in range(n):
            v[j] += W[i, j] * d
    return True


@njit(cache=True, nogil=True)
def null_step(W, block_start, block_kind, block_mu, block_rho, block_state, f, v, status, slip, rows, df, wd):
    """Where the line search fails with contacts slipping and ``plateau_step`` (the slipping contacts held) finds
    no move: the whole Newton system J_AA Δf_A = b (``_slip_system``) is inconsistent. Moves f along null J_AA to
    the first constraint it meets, as ``plateau_step`` does along null W_AA.

    A cube sliding on four face corners (W 12 × 12 of rank 6, μ = 0.6; tests/engines/test_free_bodies.py's ten
    cubes, 8 of 359 steps unconverged on 92f983b): the corners' Baumgarte targets (ERP × the depth beyond the
    slop, clipped at 0) are not those of a rigid motion, the four normal rows of J meet one relation
    (ρ⁻¹-weighted (1, −1, −1, 1): the corners' normal velocities of a rigid body) which b does not, and the exact
    solution has a corner separating. With J_AA = U Σ Vᵀ (numerically singular columns U₀, V₀: σ ≤ RANK_TOL σ₀, as
    ``least_norm_rows``), the part of b no step meets is ε = U₀ U₀ᵀ b (in force units, −ρ times the velocity
    ``plateau_step`` calls r), and x = V₀ V₀ᵀ ε moves the forces without changing the linearized φ, towards the
    corners whose targets are not met — for a symmetric J_AA (all sticking) the direction −r of ``plateau_step``.
    f_A ← f_A + t x, t the ratio test (a sticking contact's cone, a slipping or frictionless contact's normal
    force ≥ 0, a one-row block's set; Nocedal & Wright 2006 §16.5), not beyond ‖t x‖ = ‖f‖; then projected on K
    (a slipping contact's force leaves its cone to second order). The next classification sees the corner
    separate; Newton then converges (the seven cubes' problems it solves: 5–9 iterations to ≤ 1e-7 relative).
    An SVD of J_AA: only on this path (line search and plateau step failed). Returns whether f moved."""
    n = f.shape[0]
    m, slipping = _classify(f, v, block_start, block_kind, block_mu, block_rho, block_state, status, slip)
    if not slipping:
        return False
    _leaving(W, f, block_start, block_kind, status, slip, rows, df, wd)
    A, b = np.empty((m, m)), np.empty(m)
    _slip_system(W, f, v, block_start, block_kind, block_mu, block_rho, status, slip, rows, wd, A, b)
    U, sigma, Vt = np.linalg.svd(A)
    rank = 0
    while rank < m and sigma[rank] > RANK_TOL * sigma[0]:
        rank += 1
    eps = _span_part(U, rank, b)                                     # ε = U₀ U₀ᵀ b
    if not force_norm(eps) > PLATEAU_FRACTION * force_norm(b):      # consistent: a kink, not a plateau
        return False
    x = _span_part(Vt.T, rank, eps)                                  # x = V₀ V₀ᵀ ε
    df[:] = 0.0
    for a in range(m):
        df[rows[a]] = x[a]
    t = math.inf
    for blk in range(block_kind.shape[0]):
        s, st = block_start[blk], status[blk]
        if st == STICK:
            t = min(t, _cone_exit(f[s], f[s + 1], f[s + 2], -df[s], -df[s + 1], -df[s + 2], block_mu[blk]))
        elif (st == SLIP or st == FRICTIONLESS) and df[s] < 0.0:
            t = min(t, -f[s] / df[s])
        elif st == BOUND and block_kind[blk] >= FRICTION:          # a one-row block inside its set
            low = 0.0 if block_kind[blk] == LIMIT else -block_mu[blk]
            if df[s] < 0.0:
                t = min(t, (low - f[s]) / df[s])
            elif df[s] > 0.0 and block_kind[blk] == FRICTION:
                t = min(t, (block_mu[blk] - f[s]) / df[s])
    if not (0.0 < t and t * force_norm(x) <= force_norm(f)):
        return False
    for blk in range(block_kind.shape[0]):                           # f⁺ = proj_K(f + t x), Δf into df
        s, e = block_start[blk], block_start[blk + 1]
        if block_kind[blk] == CONTACT:
            p = project_cone(f[s] + t * df[s], f[s + 1] + t * df[s + 1], f[s + 2] + t * df[s + 2], block_mu[blk])
            for r in range(3):
                df[s + r] = p[r] - f[s + r]
        elif block_kind[blk] >= FRICTION:
            df[s] = project_row(f[s] + t * df[s], block_kind[blk], block_mu[blk]) - f[s]
        else:
            for r in range(s, e):
                df[r] *= t
    _times_W(W, df, wd)
    for i in range(n):
        f[i] += df[i]
        v[i] += wd[i]
    return True


@njit(cache=True, nogil=True)
def _span_part(Q, rank, y):
    """Q₀ Q₀ᵀ y, Q₀ the (orthonormal) columns of Q from ``rank`` on: the part of y in their span."""
    out = np.zeros(y.shape[0])
    for j in range(rank, Q.shape[1]):
        c = 0.0
        for a in range(y.shape[0]):
            c += Q[a, j] * y[a]
        for a in range(y.shape[0]):
            out[a] += c * Q[a, j]
    return out


@njit(cache=True, nogil=True)
def _cone_exit(fn, f1, f2, rn, r1, r2, mu):
    """The smallest t > 0 at which f − t r leaves K_μ (f in K_μ), ∞ if it never does: the first root of
    μ²(f_n − t r_n)² − ‖f_t − t r_t‖² = 0, or f_n − t r_n = 0."""
    a = mu * mu * rn * rn - r1 * r1 - r2 * r2
    b = -2.0 * (mu * mu * fn * rn - f1 * r1 - f2 * r2)
    c = max(mu * mu * fn * fn - f1 * f1 - f2 * f2, 0.0)
    t = fn / rn if rn > 0.0 else math.inf
    if a == 0.0:
        if b < 0.0:
            t = min(t, -c / b)
        return t
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return t
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b))
    for root in (q / a, c / q if q != 0.0 else math.inf):
        if 0.0 < root < t and fn - root * rn >= 0.0:
            t = root
    return t


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
    diagonal, anchor, inner_best, memo = np.empty(n), np.empty(n), np.empty(n), no_memo(n)
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
        out = np.array([residual, residual, 0.0, 0.0, 0.0, FIRST_PHASE, 0.0, residual, 0.0])
        inner_best[:] = f
        k, solved = newton_iterations(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state,
                                      block_rho, min(PROXIMAL_INNER, max_steps - steps), PROXIMAL_INNER, PROXIMAL_TOL,
                                      zero_residual, f, v, inner_best, status, slip, rows, df, wd, f_trial, v_trial,
                                      dnorm, fnorm, out, keep, memo, B_col, B_val, 0)
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
def _restore(W, best_f, f, v):
    """f ← best_f, v ← v + W (best_f − f)."""
    n = f.shape[0]
    for j in range(n):
        d = best_f[j] - f[j]
        if d != 0.0:
            for i in range(n):
                v[i] += W[j, i] * d
            f[j] = best_f[j]
