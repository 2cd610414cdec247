"""numba kernels of the nonsmooth Newton solver's fallback moves (``_newton_kernels.newton_step``), for the steps
where no step length meets Armijo's condition because the active rows' system is inconsistent: the merit ½‖φ‖²
(``_alart_curnier_kernels``) is then flat along the forces that change no velocity, and the forces move along
them to the first constraint (the ratio test of active-set methods, Nocedal & Wright 2006 §16.5).

* ``plateau_step``: the sticking contacts' system W_AA Δf_A = b is inconsistent (a rigid foot's corners that
  cannot all stick); f moves along the internal forces r_A ∈ null W_AA to the nearest cone boundary. Where
  contacts slip, ``newton_step`` holds their forces (status HELD) and asks this of the sticking rows.
* ``null_step``: the whole system with the slipping rows is inconsistent (a cube sliding on four corners whose
  targets are not a rigid motion's); f moves along null J_AA to the first constraint.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._alart_curnier_kernels import (BOUND, FRICTIONLESS, SLIP, STICK, _classify, _leaving,
                                                  _slip_system, _times_W, force_norm)
from engine.contact._kernels import CONTACT, FRICTION, LIMIT, project_cone, project_row
from engine.contact._linalg_kernels import RANK_TOL

PLATEAU_FRACTION = 1e-6         # ‖r_A‖ ≥ this × ‖v_A‖: the active rows' system is inconsistent (``plateau_step``)


@njit(cache=True, nogil=True)
def _consistent(v, w, rows):
    """Whether the active rows' system is consistent: ‖v_A + w_A‖ < PLATEAU_FRACTION ‖v_A‖ (w = W Δf)."""
    size, rest = 0.0, 0.0
    for i in rows:
        size += (v[i] + w[i]) ** 2
        rest += v[i] * v[i]
    return not size > PLATEAU_FRACTION ** 2 * rest


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
