"""numba kernels of the Alart–Curnier function of the whole contact problem and the pieces of its generalized
Jacobian, which the nonsmooth Newton solver (``_newton_kernels``) and its fallback moves (``_fallback_kernels``)
build their steps from.

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

``_classify`` finds each block's piece, ``_leaving`` the rows that leave the system, ``_slip_system`` the rows
J_AA of the active ones when contacts slip (``_slip_rows`` the same rows as the body-space solve of
``_factor_kernels`` takes them), ``ac_merit`` ½‖φ‖², the merit of the line search.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._kernels import BILATERAL, FRICTION, INERT, LIMIT, project_row

SEPARATED, STICK, SLIP, FRICTIONLESS, BOUND, CLAMPED, HELD = 0, 1, 2, 3, 4, 5, 6   # per block: how its rows enter
# (HELD: a slipping contact whose force ``_fallback_kernels.plateau_step`` keeps, its rows out of the system)


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
def _times_W(W, x, w):
    """w = W x, skipping the zeros of x (W symmetric: its rows as columns)."""
    for i in range(x.shape[0]):
        w[i] = 0.0
    for j in range(x.shape[0]):
        if x[j] != 0.0:
            for i in range(x.shape[0]):
                w[i] += W[j, i] * x[j]
