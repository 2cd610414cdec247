"""numba kernels of the contact solvers (seed 000 §3.4): block Gauss–Seidel with the Alart–Curnier local solve,
the natural-map residual and the active-set step (Lemke's pivots are in _lemke_kernels.py, the linear algebra of
the active-set and Newton steps in _linalg_kernels.py). Arrays in, no allocation inside the sweeps; 3-vectors are
tuples.

Block layout (``ConstraintBlocks`` in cone.py): block b owns rows ``s = block_start[b] .. e = block_start[b+1]``,
``block_kind[b]`` is CONTACT (rows n, t1, t2), BILATERAL, or a one-row block: FRICTION (force in the box
|f| ≤ ``block_mu[b]``: a joint's dry friction) or LIMIT (force f ≥ 0: a joint limit, Signorini on one row).
``prepare_blocks`` fills, per block, ``block_inv`` (W_bb⁻¹ flattened, from ``inv_start[b]``), ``block_state``
(INERT, SINGULAR or REGULAR) and ``block_rho`` (ρ_n, ρ_t for Newton by eq. 3.30, ρ_t for the projection step;
1/W_bb for a one-row block).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._linalg_kernels import kept_solve

CONTACT, BILATERAL, FRICTION, LIMIT = 0, 1, 2, 3   # FRICTION and after: one-row blocks
INERT, SINGULAR, REGULAR = 0, 1, 2

NEWTON_MAX_ITER = 30
NEWTON_TOL = 1e-12          # relative to the force scale max(‖f‖, ρ_n ‖b‖)
LINE_SEARCH_STEPS = 20
INERT_TOL = 1e-12           # W_nn below this times max diag W: the normal row does not move
REGULAR_TOL = 1e-10         # det W_ii / (W_nn W_t1t1 W_t2t2) above this: W_ii is invertible
POLISH_BELOW = 0.5          # the active-set step (polish) is tried once eq. 3.34 is below this …
POLISH_EVERY = 4            # … at most every this many sweeps


@njit(cache=True, nogil=True)
def scan_problem(W, v_free):
    """(first non-finite flat index of W or −1, of v_free or −1, max |W − Wᵀ|, max |W|, argmin diag W)."""
    n = W.shape[0]
    bad_w, bad_v, asym, scale, dmin = -1, -1, 0.0, 0.0, 0
    for i in range(n):
        if bad_v < 0 and not math.isfinite(v_free[i]):
            bad_v = i
        for j in range(n):
            w = W[i, j]
            if not math.isfinite(w):
                if bad_w < 0:
                    bad_w = i * n + j
                continue
            scale = max(scale, abs(w))
            asym = max(asym, abs(w - W[j, i]))
        if W[i, i] < W[dmin, dmin]:
            dmin = i
    return bad_w, bad_v, asym, scale, dmin


@njit(cache=True, nogil=True)
def project_cone(fn, f1, f2, mu):
    """Euclidean projection of (f_n, f_t1, f_t2) onto K_μ = {‖f_t‖ ≤ μ f_n} (inside / polar / lateral)."""
    nt = math.sqrt(f1 * f1 + f2 * f2)
    if nt <= mu * fn:
        return fn, f1, f2
    if mu * nt <= -fn:
        return 0.0, 0.0, 0.0
    pn = (fn + mu * nt) / (1.0 + mu * mu)          # f_n' = (f_n + μ‖f_t‖)/(1 + μ²)
    c = mu * pn / nt                               # f_t' = μ f_n' f_t/‖f_t‖
    return pn, c * f1, c * f2


@njit(cache=True, nogil=True)
def project_row(x, kind, bound):
    """The projection of a one-row block's force x onto its set: [−bound, bound] (FRICTION) or [0, ∞) (LIMIT)."""
    if kind == LIMIT:
        return max(x, 0.0)
    return min(max(x, -bound), bound)


@njit(cache=True, nogil=True)
def row_violation(x, kind, bound):
    """How far a one-row block's force x is outside its set (≤ 0 inside)."""
    return -x if kind == LIMIT else abs(x) - bound


@njit(cache=True, nogil=True)
def row_at_bound(x, kind, bound):
    """Whether a one-row block's force is on its set's boundary (a joint sliding, a limit not pushing)."""
    return x <= 0.0 if kind == LIMIT else abs(x) >= bound * (1.0 - 1e-9)


@njit(cache=True, nogil=True)
def project_forces(f, block_start, block_kind, block_mu):
    """f ← proj_K(f) in place: each contact force onto its cone, each one-row block's onto its set, bilateral
    forces unchanged."""
    for b in range(len(block_kind)):
        s = block_start[b]
        if block_kind[b] == CONTACT:
            f[s], f[s + 1], f[s + 2] = project_cone(f[s], f[s + 1], f[s + 2], block_mu[b])
        elif block_kind[b] >= FRICTION:
            f[s] = project_row(f[s], block_kind[b], block_mu[b])


@njit(cache=True, nogil=True)
def _project_disc(x1, x2, r):
    """Projection of (x1, x2) onto the disc of radius r ≥ 0."""
    nx = math.sqrt(x1 * x1 + x2 * x2)
    if nx <= r:
        return x1, x2
    return r * x1 / nx, r * x2 / nx


@njit(cache=True, nogil=True)
def _cofactors(r0, r1, r2):
    """Columns c0 = r1 × r2, c1 = r2 × r0, c2 = r0 × r1 of det · J⁻¹ for J with rows r0, r1, r2, and det J."""
    c0 = (r1[1] * r2[2] - r1[2] * r2[1], r1[2] * r2[0] - r1[0] * r2[2], r1[0] * r2[1] - r1[1] * r2[0])
    c1 = (r2[1] * r0[2] - r2[2] * r0[1], r2[2] * r0[0] - r2[0] * r0[2], r2[0] * r0[1] - r2[1] * r0[0])
    c2 = (r0[1] * r1[2] - r0[2] * r1[1], r0[2] * r1[0] - r0[0] * r1[2], r0[0] * r1[1] - r0[1] * r1[0])
    return c0, c1, c2, r0[0] * c0[0] + r0[1] * c0[1] + r0[2] * c0[2]


@njit(cache=True, nogil=True)
def _inverse3(W, s):
    """W[s:s+3, s:s+3]⁻¹ (row-major) and det/(W00 W11 W22), which is in (0, 1] for a PSD block (0: singular)."""
    c0, c1, c2, det = _cofactors((W[s, s], W[s, s + 1], W[s, s + 2]), (W[s + 1, s], W[s + 1, s + 1], W[s + 1, s + 2]),
                                 (W[s + 2, s], W[s + 2, s + 1], W[s + 2, s + 2]))
    hadamard = W[s, s] * W[s + 1, s + 1] * W[s + 2, s + 2]
    if hadamard <= 0.0 or det <= REGULAR_TOL * hadamard:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), 0.0
    return (c0[0] / det, c1[0] / det, c2[0] / det, c0[1] / det, c1[1] / det, c2[1] / det,
            c0[2] / det, c1[2] / det, c2[2] / det), det / hadamard


@njit(cache=True, nogil=True)
def prepare_blocks(W, block_start, block_kind, inv_start, block_inv, block_state, block_rho):
    """Per contact block: W_ii⁻¹, the state, ρ_n = 1/W_nn and ρ_t = λmin/λmax² of W_tt (seed 000 eq. 3.30).

    ρ_t of eq. 3.30 vanishes when W_tt is singular; then (and for the projection step, where W_tt is symmetric
    and 1/λmax is the largest safe projected-gradient step) ρ_t = 1/λmax. Bilateral blocks get ρ = 1/max diag;
    their pseudo-inverse is filled by the driver. A one-row block gets ρ = W_bb⁻¹ = 1/W_bb (INERT when W_bb ≈ 0).
    """
    scale = 0.0
    for k in range(W.shape[0]):
        scale = max(scale, W[k, k])
    floor = 1.0 / scale if scale > 0.0 else 1.0
    for b in range(len(block_kind)):
        s, e = block_start[b], block_start[b + 1]
        if block_kind[b] == BILATERAL:
            dmax = 0.0
            for k in range(s, e):
                dmax = max(dmax, W[k, k])
            block_rho[b, 0] = 1.0 / dmax if dmax > INERT_TOL * scale and dmax > 0.0 else floor
            block_state[b] = REGULAR if dmax > INERT_TOL * scale and dmax > 0.0 else INERT
            continue
        wnn = W[s, s]
        if block_kind[b] >= FRICTION:
            regular = wnn > INERT_TOL * scale and wnn > 0.0
            block_rho[b, 0] = block_rho[b, 1] = block_rho[b, 2] = 1.0 / wnn if regular else floor
            block_inv[inv_start[b]] = 1.0 / wnn if regular else 0.0
            block_state[b] = REGULAR if regular else INERT
            continue
        if not (wnn > INERT_TOL * scale and wnn > 0.0):
            block_state[b] = INERT
            block_rho[b, 0] = block_rho[b, 1] = block_rho[b, 2] = floor
            continue
        inv, quality = _inverse3(W, s)
        for k in range(9):
            block_inv[inv_start[b] + k] = inv[k]
        block_state[b] = REGULAR if quality > 0.0 else SINGULAR
        mean = 0.5 * (W[s + 1, s + 1] + W[s + 2, s + 2])
        rad = math.hypot(0.5 * (W[s + 1, s + 1] - W[s + 2, s + 2]), 0.5 * (W[s + 1, s + 2] + W[s + 2, s + 1]))
        lmax, lmin = mean + rad, mean - rad
        block_rho[b, 0] = 1.0 / wnn
        if lmax <= INERT_TOL * scale:
            block_rho[b, 1] = block_rho[b, 2] = 1.0 / wnn
        elif lmin <= 1e-8 * lmax:
            block_rho[b, 1] = block_rho[b, 2] = 1.0 / lmax
        else:
            block_rho[b, 1] = lmin / (lmax * lmax)
            block_rho[b, 2] = 1.0 / lmax


@njit(cache=True, nogil=True)
def _local_velocity(W, s, b, f):
    """v = W_ii f + b for one contact (seed 000 eq. 3.27)."""
    return (b[0] + W[s, s] * f[0] + W[s, s + 1] * f[1] + W[s, s + 2] * f[2],
            b[1] + W[s + 1, s] * f[0] + W[s + 1, s + 1] * f[1] + W[s + 1, s + 2] * f[2],
            b[2] + W[s + 2, s] * f[0] + W[s + 2, s + 1] * f[1] + W[s + 2, s + 2] * f[2])


@njit(cache=True, nogil=True)
def _ac_function(W, s, b, mu, rn, rt, f):
    """Alart–Curnier φ (seed 000 eq. 3.28) with φ1, φ2 eliminated (v = W_ii f + b exactly): returns
    G(f) = (φ3, φ4) and its Jacobian dG/df = ∂φ/∂f + ∂φ/∂v W_ii from the blocks of eq. 3.33 (rows of 3)."""
    v = _local_velocity(W, s, b, f)
    if f[0] - rn * v[0] > 0.0:                       # contact: φ3 = ρ_n v_n (eq. 3.31, corrected)
        g0 = rn * v[0]
        J0 = (rn * W[s, s], rn * W[s, s + 1], rn * W[s, s + 2])
    else:                                            # separation: φ3 = f_n
        g0 = f[0]
        J0 = (1.0, 0.0, 0.0)
    V1, V2 = f[1] - rt * v[1], f[2] - rt * v[2]      # V = f_t − ρ_t v_t
    nV = math.sqrt(V1 * V1 + V2 * V2)
    r = mu * max(f[0], 0.0)                          # disc radius μ f_n
    if nV <= r:                                      # stick: φ4 = ρ_t v_t
        g1, g2 = rt * v[1], rt * v[2]
        J1 = (rt * W[s + 1, s], rt * W[s + 1, s + 1], rt * W[s + 1, s + 2])
        J2 = (rt * W[s + 2, s], rt * W[s + 2, s + 1], rt * W[s + 2, s + 2])
    else:                                            # slip: φ4 = f_t − μ f_n V/‖V‖ (eq. 3.32)
        u1, u2 = V1 / nV, V2 / nV
        c = r / nV                                   # μ f_n M(V) = μ f_n (I − V̂V̂ᵀ)/‖V‖
        m11, m12, m22 = c * (1.0 - u1 * u1), -c * u1 * u2, c * (1.0 - u2 * u2)
        dmu = mu if f[0] > 0.0 else 0.0              # ∂φ4/∂f_n = −μ V̂
        dV1 = (-rt * W[s + 1, s], 1.0 - rt * W[s + 1, s + 1], -rt * W[s + 1, s + 2])   # dV/df
        dV2 = (-rt * W[s + 2, s], -rt * W[s + 2, s + 1], 1.0 - rt * W[s + 2, s + 2])
        g1, g2 = f[1] - r * u1, f[2] - r * u2
        J1 = (-dmu * u1 - m11 * dV1[0] - m12 * dV2[0], 1.0 - m11 * dV1[1] - m12 * dV2[1],
              -m11 * dV1[2] - m12 * dV2[2])
        J2 = (-dmu * u2 - m12 * dV1[0] - m22 * dV2[0], -m12 * dV1[1] - m22 * dV2[1],
              1.0 - m12 * dV1[2] - m22 * dV2[2])
    return (g0, g1, g2), (J0, J1, J2)


@njit(cache=True, nogil=True)
def _newton_step(J, g):
    """dx with J dx = −g by cofactors; ok = False when J is (numerically) singular."""
    r0, r1, r2 = J
    c0, c1, c2, det = _cofactors(r0, r1, r2)
    hadamard = math.sqrt((r0[0] ** 2 + r0[1] ** 2 + r0[2] ** 2) * (r1[0] ** 2 + r1[1] ** 2 + r1[2] ** 2)
                         * (r2[0] ** 2 + r2[1] ** 2 + r2[2] ** 2))
    if not abs(det) > 1e-14 * hadamard:
        return (0.0, 0.0, 0.0), False
    k = -1.0 / det                                   # J⁻¹ = [c0 c1 c2] / det (columns)
    return ((c0[0] * g[0] + c1[0] * g[1] + c2[0] * g[2]) * k,
            (c0[1] * g[0] + c1[1] * g[1] + c2[1] * g[2]) * k,
            (c0[2] * g[0] + c1[2] * g[1] + c2[2] * g[2]) * k), True


@njit(cache=True, nogil=True)
def _norm3(x):
    return math.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])


@njit(cache=True, nogil=True)
def _ac_newton(W, s, b, mu, rn, rt, f):
    """NewtonContactSolver (seed 000 Alg. 2) on G(f) = 0, damped by an Armijo backtracking on ‖G‖.
    Returns the last iterate and whether ‖G‖ ≤ NEWTON_TOL · max(‖f‖, ρ_n ‖b‖)."""
    g, J = _ac_function(W, s, b, mu, rn, rt, f)
    ng = _norm3(g)
    tol = NEWTON_TOL * max(_norm3(f), rn * _norm3(b))
    trial, gt, Jt, ngt = f, g, J, ng
    for _ in range(NEWTON_MAX_ITER):
        if ng <= tol:
            return f, True
        dx, ok = _newton_step(J, g)
        if not ok:
            return f, False
        alpha, accepted = 1.0, False
        for _ls in range(LINE_SEARCH_STEPS):
            trial = (f[0] + alpha * dx[0], f[1] + alpha * dx[1], f[2] + alpha * dx[2])
            gt, Jt = _ac_function(W, s, b, mu, rn, rt, trial)
            ngt = _norm3(gt)
            if ngt <= (1.0 - 1e-4 * alpha) * ng:
                accepted = True
                break
            alpha *= 0.5
        if not accepted:
            return f, False
        f, g, J, ng = trial, gt, Jt, ngt
    return f, ng <= tol


@njit(cache=True, nogil=True)
def _ac_projection(W, s, b, mu, rn, rt, f):
    """One fixed-point step of the contracting maps (seed 000 eq. 3.29), Gauss–Seidel over the rows:
    f_n ← proj_R+(f_n − ρ_n v_n) (exact with ρ_n = 1/W_nn), then f_t ← proj_disc(μ f_n)(f_t − ρ_t v_t)."""
    vn = b[0] + W[s, s] * f[0] + W[s, s + 1] * f[1] + W[s, s + 2] * f[2]
    fn = max(0.0, f[0] - rn * vn)
    v1 = b[1] + W[s + 1, s] * fn + W[s + 1, s + 1] * f[1] + W[s + 1, s + 2] * f[2]
    v2 = b[2] + W[s + 2, s] * fn + W[s + 2, s + 1] * f[1] + W[s + 2, s + 2] * f[2]
    t1, t2 = _project_disc(f[1] - rt * v1, f[2] - rt * v2, mu * fn)
    return fn, t1, t2


@njit(cache=True, nogil=True)
def _contact_update(W, s, b, mu, rho, state, inv, newton, f):
    """One contact of Alg. 1 (seed 000): no contact / stick / slip, given its local free velocity ``b``
    (v_free,i + Σ_{j≠i} W_ij f_j) and its current force ``f``. Returns the new force (in K_μ) and whether the
    Newton solve failed (then one projection step is taken instead). Alg. 1 assumes W_ii invertible; a SINGULAR
    block (two links a joint or two apart: their relative velocity at the point spans a plane) takes the
    projection step: its null direction may lie inside the cone, where Alg. 2's tolerance, relative to ‖f‖,
    is met by forces growing without bound (tests/contact/test_hard_problems.py, talos_wedged)."""
    if state == INERT or b[0] >= 0.0:                # no contact: v_n^free ≥ 0 → f = 0
        return (0.0, 0.0, 0.0), False
    stick = (0.0, 0.0, 0.0)
    if state == REGULAR:                             # stick: v = 0 → f = −W_ii⁻¹ v_free
        stick = (-(inv[0] * b[0] + inv[1] * b[1] + inv[2] * b[2]),
                 -(inv[3] * b[0] + inv[4] * b[1] + inv[5] * b[2]),
                 -(inv[6] * b[0] + inv[7] * b[1] + inv[8] * b[2]))
        if stick[0] >= 0.0 and math.hypot(stick[1], stick[2]) <= mu * stick[0]:
            return stick, False
    if not newton or state == SINGULAR:              # slip, AMELIFGS or a singular W_ii: projection
        return _ac_projection(W, s, b, mu, rho[0], rho[2], f), False
    if f[0] > 0.0:                                   # slip, AMELIFGSNEWTON: warm-started Newton
        start = f
    elif state == REGULAR:
        start = project_cone(stick[0], stick[1], stick[2], mu)
    else:
        start = (-rho[0] * b[0], 0.0, 0.0)
    fnew, ok = _ac_newton(W, s, b, mu, rho[0], rho[1], start)
    if not ok:
        fnew = _ac_projection(W, s, b, mu, rho[0], rho[2], fnew)
    return project_cone(fnew[0], fnew[1], fnew[2], mu), not ok


@njit(cache=True, nogil=True)
def _apply_delta(W, v, s, e, delta):
    """v += W[:, s:e] Δ, using the rows s:e (W symmetric, rows are contiguous)."""
    for r in range(e - s):
        d = delta[r]
        if d != 0.0:
            for k in range(v.shape[0]):
                v[k] += W[s + r, k] * d


@njit(cache=True, nogil=True)
def _sweep(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho, newton,
           f, v, dnorm, fnorm, delta):
    """One Gauss–Seidel sweep over the blocks (seed 000 Alg. 1, eq. 2.39 with its sign corrected), keeping
    v = W f + v_free up to date. Returns the number of failed Newton solves."""
    failures = 0
    for blk in range(len(block_kind)):
        s, e = block_start[blk], block_start[blk + 1]
        if block_kind[blk] == CONTACT:
            fold = (f[s], f[s + 1], f[s + 2])
            wf = _local_velocity(W, s, (0.0, 0.0, 0.0), fold)
            b = (v[s] - wf[0], v[s + 1] - wf[1], v[s + 2] - wf[2])     # local free velocity
            inv = block_inv[inv_start[blk]:inv_start[blk] + 9]
            fnew, failed = _contact_update(W, s, b, block_mu[blk], block_rho[blk], block_state[blk], inv,
                                           newton, fold)
            if failed:
                failures += 1
            for r in range(3):
                delta[r] = fnew[r] - fold[r]
        elif block_kind[blk] >= FRICTION:            # one row, v = 0 inside its set: f ← proj(f − v/W_bb)
            delta[0] = project_row(f[s] - block_inv[inv_start[blk]] * v[s], block_kind[blk], block_mu[blk]) - f[s]
        else:                                        # bilateral: v_b = 0 → f_b ← f_b − W_bb⁺ v_b
            n_b, o = e - s, inv_start[blk]
            for r in range(n_b):
                acc = 0.0
                for c in range(n_b):
                    acc += block_inv[o + r * n_b + c] * v[s + c]
                delta[r] = -acc
        d2, f2 = 0.0, 0.0
        for r in range(e - s):
            f[s + r] += delta[r]
            d2 += delta[r] * delta[r]
            f2 += f[s + r] * f[s + r]
        dnorm[blk], fnorm[blk] = math.sqrt(d2), math.sqrt(f2)
        _apply_delta(W, v, s, e, delta)
    return failures


@njit(cache=True, nogil=True)
def relative_change(dnorm, fnorm):
    """Σ_i ‖f_i^{k+1} − f_i^k‖ / ‖f_i^{k+1}‖ (seed 000 eq. 3.34); a zero force counts against 1e-12 of the
    largest block force, and a change to an all-zero solution is infinite."""
    floor = 0.0
    for b in range(len(fnorm)):
        floor = max(floor, fnorm[b])
    floor *= 1e-12
    total = 0.0
    for b in range(len(dnorm)):
        if dnorm[b] > 0.0:
            den = max(fnorm[b], floor)
            if den == 0.0:
                return math.inf
            total += dnorm[b] / den
    return total


@njit(cache=True, nogil=True)
def natural_residual(f, v, block_start, block_kind, block_mu, block_rho):
    """(‖f − proj_K(f − ρ ũ)‖₂, max cone violation) with ũ = (v_n + μ‖v_t‖, v_t) per contact (De Saxcé),
    r = ρ v per bilateral block and r = f − proj(f − ρ v) per one-row block (see cone.py)."""
    r2, viol = 0.0, 0.0
    for blk in range(len(block_kind)):
        s, e = block_start[blk], block_start[blk + 1]
        rho = block_rho[blk, 0]
        if block_kind[blk] == BILATERAL:
            for k in range(s, e):
                r2 += (rho * v[k]) ** 2
            continue
        if block_kind[blk] >= FRICTION:
            r2 += (f[s] - project_row(f[s] - rho * v[s], block_kind[blk], block_mu[blk])) ** 2
            viol = max(viol, row_violation(f[s], block_kind[blk], block_mu[blk]))
            continue
        mu = block_mu[blk]
        un = v[s] + mu * math.hypot(v[s + 1], v[s + 2])
        p = project_cone(f[s] - rho * un, f[s + 1] - rho * v[s + 1], f[s + 2] - rho * v[s + 2], mu)
        r2 += (f[s] - p[0]) ** 2 + (f[s + 1] - p[1]) ** 2 + (f[s + 2] - p[2]) ** 2
        viol = max(viol, math.hypot(f[s + 1], f[s + 2]) - mu * f[s], -f[s])
    return math.sqrt(r2), viol


@njit(cache=True, nogil=True)
def velocity(W, f, v_free, v):
    """v = W f + v_free (seed 000 eq. 3.26)."""
    v[:] = np.dot(W, f) + v_free                    # BLAS: the matrix-vector product of every solve


@njit(cache=True, nogil=True)
def gauss_seidel_sweeps(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho,
                        newton, max_sweeps, tol, f, v, best_f, dnorm, fnorm, delta, out, keep):
    """Up to ``max_sweeps`` sweeps from (f, v = W f + v_free); stops when eq. 3.34 < tol. Tracks the iterate
    of lowest natural residual in ``best_f``. ``out`` (in/out) = [best residual, last change, failures, sweeps
    since the last active-set step]. Once the change falls below POLISH_BELOW, an active-set step (``polish``)
    is tried every POLISH_EVERY sweeps; ``keep``: its kept factor (``kept_solve``). Returns (sweeps done,
    converged)."""
    for k in range(max_sweeps):
        out[2] += _sweep(W, block_start, block_kind, block_mu, inv_start, block_inv, block_state, block_rho,
                         newton, f, v, dnorm, fnorm, delta)
        out[1] = relative_change(dnorm, fnorm)
        res, _ = natural_residual(f, v, block_start, block_kind, block_mu, block_rho)
        if out[1] < tol:
            _keep_best(f, res, best_f, out)
            return k + 1, True
        out[3] += 1
        if out[1] < POLISH_BELOW and out[3] >= POLISH_EVERY:
            out[3] = 0
            res = polish(W, block_start, block_kind, block_mu, block_rho, f, v, res, delta, keep)
        _keep_best(f, res, best_f, out)
    return max_sweeps, False


@njit(cache=True, nogil=True, inline="always")
def _keep_best(f, res, best_f, out):
    if res < out[0]:
        out[0] = res
        best_f[:] = f


@njit(cache=True, nogil=True)
def polish(W, block_start, block_kind, block_mu, block_rho, f, v, residual, work, keep):
    """Active-set step: when every contact either sticks (its force strictly inside the cone; a frictionless one:
    its normal row) or carries no force, solve the sticking and bilateral rows S exactly for v_S = 0 (a friction
    row strictly inside its box, or a limit that pushes, is in S; one at ±b, or a limit that does not, keeps its
    force):

        W_SS f_S⁺ = W_SS f_S − v_S,   f_S⁺ the least-squares solution of least norm (``least_norm_solve``),

    and keep it if every sticking force stays in its cone (or box) and the natural residual decreases. On a hyperstatic
    set (a foot on 4 points: W_SS singular) Gauss–Seidel converges linearly and slowly, moving internal forces
    the contacts can exchange; this step lands on the solution directly — the one without internal forces —
    and the next sweep, leaving it unchanged, meets eq. 3.34. Not in the thesis. Returns the natural residual
    of (f, v) after the step; ``work`` (>= len(f)) is scratch, ``keep`` as in ``kept_solve``."""
    n, m = f.shape[0], 0
    for blk in range(len(block_kind)):
        s, e = block_start[blk], block_start[blk + 1]
        if block_kind[blk] == CONTACT and f[s] > 0.0:
            if block_mu[blk] == 0.0:                          # frictionless: the normal row alone
                e = s + 1
            elif math.hypot(f[s + 1], f[s + 2]) >= block_mu[blk] * f[s] * (1.0 - 1e-9):
                return residual                               # a slipping contact: not a linear problem
        if block_kind[blk] >= FRICTION and row_at_bound(f[s], block_kind[blk], block_mu[blk]):
            continue                                          # a sliding joint, an idle limit: force kept
        if block_kind[blk] != CONTACT or f[s] > 0.0:
            for r in range(s, e):
                work[m] = r
                m += 1
    if m == 0:
        return residual
    rows = work[:m].astype(np.int64)
    fS, vS = np.empty(m), np.empty(m)
    for i in range(m):
        fS[i], vS[i] = f[rows[i]], v[rows[i]]
    if m == n:                                                 # every row: W_SS = W (``kept_solve`` reads it only)
        A = W
    else:
        A = np.empty((m, m))
        for i in range(m):
            for j in range(m):
                A[i, j] = W[rows[i], rows[j]]
    fS = kept_solve(A, np.dot(A, fS) - vS, rows, keep)
    for blk in range(len(block_kind)):                         # the new sticking forces: in their cones/boxes
        s = block_start[blk]
        if block_kind[blk] == CONTACT and f[s] > 0.0:
            i = _position(rows, s)
            if fS[i] < 0.0 or (block_mu[blk] > 0.0 and math.hypot(fS[i + 1], fS[i + 2]) > block_mu[blk] * fS[i]):
                return residual
        if block_kind[blk] >= FRICTION and not row_at_bound(f[s], block_kind[blk], block_mu[blk]):
            if row_violation(fS[_position(rows, s)], block_kind[blk], block_mu[blk]) > 0.0:
                return residual
    f_old = f.copy()
    v_old = v.copy()
    step = np.zeros(n)
    for i in range(m):
        step[rows[i]] = fS[i] - f[rows[i]]
        f[rows[i]] = fS[i]
    v += np.dot(W, step)                                       # BLAS: v += W Δf (W symmetric)
    polished, _ = natural_residual(f, v, block_start, block_kind, block_mu, block_rho)
    if polished < residual:
        return polished
    f[:] = f_old
    v[:] = v_old
    return residual


@njit(cache=True, nogil=True)
def _position(rows, r):
    """Index of row r in the sorted array ``rows``."""
    for i in range(rows.shape[0]):
        if rows[i] == r:
            return i
    return -1
