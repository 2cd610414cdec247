"""numba kernels of the contact stage (driven by ``stepping.py``): arrays in; the per-body and per-contact kernels
allocate nothing, ``solve_groups`` its per-call work arrays. The groups' Delassus operators:
``_group_delassus_kernels``.

Bodies: every body of the universe has a global index g = offset[m] + b (body b of multibody m); the last row
``static = offset[-1]`` stands for every side that does not move (a static body, a multibody's fixed base) and
keeps a zero velocity.  ``body_R`` (n, 3, 3), ``body_p`` (n, 3): world placements; ``V``, ``V_free`` (n, 6): the
spatial velocities (v_o, ω) of the body origins, world axes, at v and at v_free.

Contacts (seed 000 eqs. 3.37-3.45, ``problem.py``): contact i acts on the sides ``side[i] = (g_a, g_b)`` through
the maps ``X[i, s]`` (3, 6) = ±C [1, −[p − o_s]×] (+ for a, − for b, zero for the static side), C the frame rows
(n, t1, t2); ``u[i]`` is the free velocity of its rows minus the normal target.  Closures (kernel in
``problem.py``): closure c of multibody ``closure_mb[c]`` has ``closure_nrows[c]`` bilateral rows on its two
sides, maps ``closure_X[c, s]`` (rows, 6) and free velocity ``closure_u[c]`` (maps times V_free, plus the drift
bias).

Groups (seed 000 §3.2(d), layout by ``groups.group_layout``): group k owns the rows ``row_start[k]:row_start[k+1]``
of the stacked vectors (its contacts, 3 rows each, then the closures of its members), the blocks
``block_offset[k]:block_offset[k+1]`` and the entries ``w_start[k]:w_start[k+1]`` of the flat buffer holding its
W (n_k × n_k, row-major).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._kernels import BILATERAL, gauss_seidel_sweeps, natural_residual, prepare_blocks, velocity
from engine.contact._linalg_kernels import no_memo
from engine.contact._newton_kernels import PATIENCE, newton_iterations, solved_at_start, start_out
from engine.contact._proximal_kernels import UNLIMITED, second_attempts
from engine.contact.frames import contact_frame
from engine.dynamics._kernels.algebra import cross, inline, kernel, tuple_op
from engine.dynamics.pack import WS_OMI_P, WS_OMI_R, WS_V

SLOW_IMPACT = 2.0 * 9.81        # m/s²: impacts slower than this times δt are inelastic (see normal_target)


# ---- bodies ------------------------------------------------------------------------------------------------------

@kernel
def world_bodies(ws, R_m, p_m, lo, body_R, body_p, V):
    """Body g = lo + i of a multibody placed at (R_m, p_m): R_g = R_m oR_i, p_g = R_m op_i + p_m, and its
    body-frame velocity (v, ω) (``data.v``) in world axes, V_g = (R_g v, R_g ω)."""
    for i in range(ws.shape[0]):
        g = lo + i
        for r in range(3):
            p = p_m[r]
            for k in range(3):
                p += R_m[r, k] * ws[i, WS_OMI_P + k]
            body_p[g, r] = p
            for c in range(3):
                s = 0.0
                for k in range(3):
                    s += R_m[r, k] * ws[i, WS_OMI_R + 3 * k + c]
                body_R[g, r, c] = s
    world_velocities(ws, lo, body_R, V)


@kernel
def world_velocities(ws, lo, body_R, V):
    """V_g = (R_g v, R_g ω) for the body-frame velocities of ``ws`` (placements already in body_R)."""
    for i in range(ws.shape[0]):
        g = lo + i
        for r in range(3):
            vl = vw = 0.0
            for c in range(3):
                vl += body_R[g, r, c] * ws[i, WS_V + c]
                vw += body_R[g, r, c] * ws[i, WS_V + 3 + c]
            V[g, r], V[g, 3 + r] = vl, vw


@kernel
def all_finite(x):
    """No NaN or ±inf in the 1-D or 2-D array x."""
    for v in x.flat:
        if not math.isfinite(v):
            return False
    return True


@kernel
def body_wrenches(wrench, body_R, lo, f_body):
    """World wrenches at the body origins → body frames: f_body[i] = (R_gᵀ f, R_gᵀ n), g = lo + i.
    Returns whether any is non-zero."""
    nonzero = False
    for i in range(f_body.shape[0]):
        g = lo + i
        for r in range(3):
            f = n = 0.0
            for c in range(3):
                f += body_R[g, c, r] * wrench[g, c]
                n += body_R[g, c, r] * wrench[g, 3 + c]
            f_body[i, r], f_body[i, 3 + r] = f, n
            nonzero = nonzero or f != 0.0 or n != 0.0
    return nonzero


@kernel
def free_body_wrenches(wrench, body_R, row, mb, group_of, ng, f_body, in_contact):
    """``body_wrenches`` for the batch of free rigid bodies (``engines/free_bodies.py``: body i in row ``row[i]``,
    of multibody ``mb[i]``) in one call: a body of one of the ``ng`` collision groups (``group_of[mb[i]]`` ≥ 0)
    gets its body-frame wrench f_body[i] and ``in_contact[i]``; another, if in contact before, is zeroed."""
    for i in range(row.shape[0]):
        if ng > 0 and group_of[mb[i]] >= 0:
            in_contact[i] = body_wrenches(wrench, body_R, row[i], f_body[i:i + 1])
        elif in_contact[i]:
            f_body[i, :] = 0.0
            in_contact[i] = False


# ---- contacts ----------------------------------------------------------------------------------------------------

@tuple_op
def normal_target(depth, u_before, u_free, restitution, dt, erp, slop):
    """The normal velocity the contact must reach at least, u_n⁺ ≥ target.

    * gap g = −depth > 0 (a proximity contact, seen one step early): target = −g/δt — the bodies may approach
      until they touch, not further;
    * penetration beyond ``slop``: target = erp (depth − slop)/δt — pushed back out (Baumgarte-like bias;
      erp = 0 without correction);
    * Newton restitution (seed 000 eq. 3.5, v⁺ = −e v⁻): when the contact is touching or closes within the step
      (g + δt u_free ≤ 0) at a speed u_n⁻ < −v_min, target = max(target, −e u_n⁻); slower impacts are inelastic
      so that resting contacts do not jitter (v_min = 2 · 9.81 m/s² · δt, two steps of free fall).
    """
    target = depth / dt if depth < 0.0 else 0.0
    target += erp * max(depth - slop, 0.0) / dt
    closing = depth >= 0.0 or dt * u_free <= depth
    if closing and u_before < -SLOW_IMPACT * dt and restitution > 0.0:
        target = max(target, -restitution * u_before)
    return target


@kernel
def contact_rows(point, normal, depth, pair, pair_object, object_multibody, object_body, pair_mu, pair_restitution,
                 offset, body_p, V, V_free, dt, erp, slop, side, side_mb, C, X, u, target, mu):
    """Per contact: its sides (global bodies ``side``, multibodies ``side_mb``, −1 when static), frame C, maps
    X[i, s] = ±C [1, −[p − o_s]×], its normal target and u = C (v_a(p) − v_b(p)) at v_free − (target, 0, 0)."""
    static = offset[offset.shape[0] - 1]
    for i in range(depth.shape[0]):
        k = pair[i]
        for s in range(2):
            o = pair_object[k, s]
            m, b = object_multibody[o], object_body[o]
            moving = m >= 0 and b >= 0
            side[i, s] = offset[m] + b if moving else static
            side_mb[i, s] = m if moving else -1
        rows = contact_frame((normal[i, 0], normal[i, 1], normal[i, 2]))
        un = 0.0
        for r in range(3):
            c = rows[r]
            for j in range(3):
                C[i, r, j] = c[j]
            u[i, r] = 0.0
            for s in range(2):
                g, sign = side[i, s], 1.0 if s == 0 else -1.0
                if g == static:
                    sign = 0.0
                m = cross((point[i, 0] - body_p[g, 0], point[i, 1] - body_p[g, 1], point[i, 2] - body_p[g, 2]), c)
                for j in range(3):             # row c of C [1, −[r]×] is (c, r × c)
                    X[i, s, r, j] = sign * c[j]
                    X[i, s, r, 3 + j] = sign * m[j]
                for j in range(6):
                    u[i, r] += X[i, s, r, j] * V_free[g, j]
                    if r == 0:
                        un += X[i, s, r, j] * V[g, j]
        target[i] = normal_target(depth[i], un, u[i, 0], pair_restitution[k], dt, erp, slop)
        u[i, 0] -= target[i]
        mu[i] = pair_mu[k]


@kernel
def self_contacts(pair, pair_object, object_multibody):
    """How many contacts join two objects of the same multibody (the static side has multibody −1)."""
    count = 0
    for i in range(pair.shape[0]):
        m = object_multibody[pair_object[pair[i], 0]]
        count += m >= 0 and m == object_multibody[pair_object[pair[i], 1]]
    return count


@kernel
def warm_start(pair, point, prev_pair, prev_point, prev_force, radius, f0):
    """f0[i] = the last force of the previous contact of the same pair nearest to point[i] within ``radius``
    (0 if none); previous contacts come sorted by pair, as the detection returns them."""
    for i in range(pair.shape[0]):
        j = _previous(pair[i], point[i], prev_pair, prev_point, radius)
        for r in range(3):
            f0[i, r] = prev_force[j, r] if j >= 0 else 0.0


@kernel
def warm_start_rows(ng, solved, contact_start, contacts, contact_row, pair, point, prev_pair, prev_point, prev_force,
                    radius, f_all):
    """``warm_start`` of the contacts of the groups but those ``solved`` (indices, increasing: solved stick-first,
    ``ContactStage._stick_first``), into their rows of the stacked forces f_all."""
    k = 0
    for g in range(ng):
        if k < solved.shape[0] and solved[k] == g:
            k += 1
            continue
        for c in range(contact_start[g], contact_start[g + 1]):
            i = contacts[c]
            j = _previous(pair[i], point[i], prev_pair, prev_point, radius)
            for r in range(3):
                f_all[contact_row[i] + r] = prev_force[j, r] if j >= 0 else 0.0


@inline
def _previous(pair, point, prev_pair, prev_point, radius):
    """The previous contact of ``pair`` nearest to ``point`` within ``radius`` (the last of equals; −1 if none)."""
    n_prev = prev_pair.shape[0]
    lo, hi = 0, n_prev                         # first previous contact with pair >= pair
    while lo < hi:
        mid = (lo + hi) // 2
        if prev_pair[mid] < pair:
            lo = mid + 1
        else:
            hi = mid
    best, nearest = -1, radius * radius
    j = lo
    while j < n_prev and prev_pair[j] == pair:
        d2 = 0.0
        for r in range(3):
            d2 += (point[r] - prev_point[j, r]) ** 2
        if d2 <= nearest:
            best, nearest = j, d2
        j += 1
    return best


# ---- solve -----------------------------------------------------------------------------------------------------

GAUSS_SEIDEL, GAUSS_SEIDEL_NEWTON, NONSMOOTH_NEWTON = 0, 1, 2   # solver codes of ``solve_groups``


@njit(cache=True, nogil=True)
def solve_groups(W, w_start, u_all, f, row_start, block_offset, block_start, block_kind, block_mu, solver, tol,
                 max_iter, stats, keep, B_col, B_val, B_width):
    """Every group's problem without a time budget, from the warm start f (in K): ``gauss_seidel`` (seed 000
    Alg. 1; ``solver`` GAUSS_SEIDEL or GAUSS_SEIDEL_NEWTON, sweeps until eq. 3.34 < tol) or ``nonsmooth_newton``
    (NONSMOOTH_NEWTON, until the relative natural residual ≤ tol), at most ``max_iter`` iterations; unless
    converged, the iterate of lowest natural residual. stats[k] = (iterations, natural residual, cone violation,
    converged, last relative change (NaN for Newton), Newton failures or fallback sweeps, natural residual of the
    zero force). ``keep``: the factor kept from solve to solve (``_linalg_kernels.kept_solve``; with several large
    groups, the last one's); (B_col, B_val, B_width): the factors W_k = B Bᵀ of ``rigid_delassus`` (rows as f's;
    width 0: none), for Newton's linear solves (``_factor_kernels``)."""
    ng = row_start.shape[0] - 1
    n_max, nb_max, inv_max = 1, 1, 1                  # work arrays for the largest group, sliced per group
    for k in range(ng):
        n_max = max(n_max, row_start[k + 1] - row_start[k])
        nb_max = max(nb_max, block_offset[k + 1] - block_offset[k])
        squares = 0                                   # Σ (block size)²: the blocks' W_bb⁻¹
        for b in range(block_offset[k] + k, block_offset[k + 1] + k):
            squares += (block_start[b + 1] - block_start[b]) ** 2
        inv_max = max(inv_max, squares)
    inv_all, state_all, rho_all = np.zeros(inv_max), np.zeros(nb_max, np.int64), np.zeros((nb_max, 3))
    v_all, best_all, zero_all = np.empty(n_max), np.empty(n_max), np.zeros(n_max)
    status, slip, rows = np.zeros(nb_max, np.int64), np.zeros((nb_max, 5)), np.zeros(n_max, np.int64)
    df, wd, f_trial, v_trial = np.zeros(max(n_max, 3)), np.zeros(n_max), np.zeros(n_max), np.zeros(n_max)
    dnorm, fnorm, inv_start_all = np.zeros(nb_max), np.zeros(nb_max), np.zeros(nb_max + 1, np.int64)
    for k in range(ng):
        s, e, b0, b1 = row_start[k], row_start[k + 1], block_offset[k], block_offset[k + 1]
        n, nb = e - s, b1 - b0
        Wk = W[w_start[k]:w_start[k + 1]].reshape((n, n))
        start, kind, mu = block_start[b0 + k:b1 + k + 1], block_kind[b0:b1], block_mu[b0:b1]
        inv_start = inv_start_all[:nb + 1]
        for b in range(nb):
            size = start[b + 1] - start[b]
            inv_start[b + 1] = inv_start[b] + size * size
        block_inv, block_state, block_rho = inv_all[:inv_start[nb]], state_all[:nb], rho_all[:nb]
        prepare_blocks(Wk, start, kind, inv_start, block_inv, block_state, block_rho)
        for b in range(nb):                            # bilateral blocks: W_bb⁺
            if kind[b] == BILATERAL:
                a, z = start[b], start[b + 1]
                block_inv[inv_start[b]:inv_start[b + 1]] = np.linalg.pinv(Wk[a:z, a:z].copy(), 1e-10).ravel()
        fk, v, best = f[s:e], v_all[:n], best_all[:n]
        velocity(Wk, fk, u_all[s:e], v)
        residual, violation = natural_residual(fk, v, start, kind, mu, block_rho)
        zero = natural_residual(zero_all[:n], u_all[s:e], start, kind, mu, block_rho)[0]
        best[:] = fk
        if solver == NONSMOOTH_NEWTON:
            out = np.empty(9)
            start_out(out, residual)
            sweeps, converged = 0, solved_at_start(fk, residual, zero, tol)   # else one step at least
            if not converged:
                sweeps, converged = newton_iterations(
                    Wk, start, kind, mu, inv_start, block_inv, block_state, block_rho, max_iter, PATIENCE, tol, zero,
                    fk, v, best, status[:nb], slip[:nb], rows[:n], df[:max(n, 3)], wd[:n], f_trial[:n], v_trial[:n],
                    dnorm[:nb], fnorm[:nb], out, keep, no_memo(n), B_col[s:e], B_val[s:e], B_width[k])
            if not converged and max_iter > sweeps:    # stalled: the second attempts with the rest of the budget
                interior, extra, converged = second_attempts(
                    Wk, u_all[s:e], start, kind, mu, inv_start, block_inv, block_state, block_rho, max_iter - sweeps,
                    UNLIMITED, tol, zero, fk, v, best, status[:nb], slip[:nb], rows[:n], df[:max(n, 3)], wd[:n],
                    f_trial[:n], v_trial[:n], dnorm[:nb], fnorm[:nb], keep, B_col[s:e], B_val[s:e])
                sweeps += interior + extra
            change, failures = math.nan, out[2]
        else:
            out = np.array([residual, np.inf, 0.0, 0.0])
            sweeps, converged = gauss_seidel_sweeps(Wk, start, kind, mu, inv_start, block_inv, block_state, block_rho,
                                                    solver == GAUSS_SEIDEL_NEWTON, max_iter, tol, fk, v, best,
                                                    dnorm[:nb], fnorm[:nb], df[:max(n, 1)], out, keep)
            change, failures = out[1], out[2]
        if not converged:
            fk[:] = best
            velocity(Wk, fk, u_all[s:e], v)
        if sweeps > 0 or not converged:                # else f and v are the start's: their residual is known
            residual, violation = natural_residual(fk, v, start, kind, mu, block_rho)
        stats[k, 0], stats[k, 1], stats[k, 2] = sweeps, residual, max(violation, 0.0)
        stats[k, 3], stats[k, 4], stats[k, 5] = 1.0 if converged else 0.0, change, failures
        stats[k, 6] = zero


@njit(cache=True, nogil=True)
def solve_and_retry(W, w_start, u_all, f, row_start, block_offset, block_start, block_kind, block_mu, solver, tol,
                    max_iter, stats, keep, B_col, B_val, B_width, contacts, contact_start, contact_row, target):
    """``solve_groups`` over the ng = len(stats) groups, then each failed group (not converged, and not even half-way
    from the zero force in residual) solved again without its positive normal targets (``drop_positive_targets``):
    ``stepping.ContactStage._solve_groups``'s rule, for the one-call stages (``_rigid_kernels``, ``_tree_kernels``)."""
    ng = stats.shape[0]
    solve_groups(W, w_start, u_all, f, row_start[:ng + 1], block_offset, block_start, block_kind, block_mu, solver,
                 tol, max_iter, stats, keep, B_col, B_val, B_width)
    for g in range(ng):
        if stats[g, 3] == 0.0 and stats[g, 1] > 0.5 * stats[g, 6]:
            drop_positive_targets(contacts[contact_start[g]:contact_start[g + 1]], contact_row, target, u_all, f)
            solve_groups(W, w_start[g:g + 2], u_all, f, row_start[g:g + 2], block_offset[g:g + 2], block_start[g:],
                         block_kind, block_mu, solver, tol, max_iter, stats[g:g + 1], keep, B_col, B_val,
                         B_width[g:g + 1])


@kernel
def drop_positive_targets(contacts, contact_row, target, u_all, f):
    """u_n += max(target, 0) and f = 0 for the given contacts: the group is solved again with the bodies allowed
    to stay where they are (a positive target — a push-out or a bounce — may be unreachable, e.g. for a box
    wedged between two parallel faces, where no velocity leaves both)."""
    for k in range(contacts.shape[0]):
        i = contacts[k]
        row = contact_row[i]
        u_all[row] += max(target[i], 0.0)
        for r in range(3):
            f[row + r] = 0.0


# ---- forces --------------------------------------------------------------------------------------------------------

@kernel
def gather(contact_row, u, f0, closure_row, closure_nrows, closure_u, closure_f, u_all, f_all):
    """The stacked free velocity and warm start of every group."""
    for i in range(contact_row.shape[0]):
        row = contact_row[i]
        if row >= 0:
            for r in range(3):
                u_all[row + r], f_all[row + r] = u[i, r], f0[i, r]
    for c in range(closure_row.shape[0]):
        row = closure_row[c]
        if row >= 0:
            for r in range(closure_nrows[c]):
                u_all[row + r], f_all[row + r] = closure_u[c, r], closure_f[c, r]


@kernel
def scatter(f_all, contact_row, C, side, X, closure_row, closure_nrows, closure_side, closure_X, f_local, forces,
            closure_f, wrench):
    """Gᵀf: each block's force to the wrenches on its sides (world axes, at the body origins, ``wrench``);
    per contact its local force (warm start) and its world force on body a, Cᵀ f."""
    for g in range(wrench.shape[0]):
        for r in range(6):
            wrench[g, r] = 0.0
    for i in range(contact_row.shape[0]):
        row = contact_row[i]
        for r in range(3):
            f_local[i, r] = f_all[row + r] if row >= 0 else 0.0
        for r in range(3):
            forces[i, r] = C[i, 0, r] * f_local[i, 0] + C[i, 1, r] * f_local[i, 1] + C[i, 2, r] * f_local[i, 2]
        if row >= 0:
            _add_wrenches(side[i], X[i], f_all, row, 3, wrench)
    for c in range(closure_row.shape[0]):
        row = closure_row[c]
        for r in range(closure_nrows[c]):
            closure_f[c, r] = f_all[row + r] if row >= 0 else 0.0
        if row >= 0:
            _add_wrenches(closure_side[c], closure_X[c], f_all, row, closure_nrows[c], wrench)


@inline
def _add_wrenches(sides, maps, f_all, row, rows, wrench):
    for s in range(2):
        for j in range(6):
            w = 0.0
            for r in range(rows):
                w += maps[s, r, j] * f_all[row + r]
            wrench[sides[s], j] += w


# ---- deformable soles (soles.py) -----------------------------------------------------------------------------------

@kernel
def sole_frames(contact_row, index, C, R, slot, weight, U, dt, u_all, frames):
    """For sole contacts i (contacts index[i], rows contact_row[index[i]] of the stack, 3 each; spread on nodes
    slot[i, :] with weights weight[i, :]): F_i = C_i R (sole frame → contact frame i) into ``frames`` (k, 3, 3),
    and their free velocity u_i −= Σ_a d_ia F_i U_c[s_ia] / δt (4.21, 4.32 as corrected; soles.py, step 2)."""
    inv_dt = 1.0 / dt
    for i in range(slot.shape[0]):
        Ci = C[index[i]]
        for a in range(3):
            for x in range(3):
                frames[i, a, x] = Ci[a, 0] * R[0, x] + Ci[a, 1] * R[1, x] + Ci[a, 2] * R[2, x]
        for a in range(3):
            acc = 0.0
            for ja in range(3):
                if weight[i, ja] != 0.0:
                    for x in range(3):
                        acc += weight[i, ja] * frames[i, a, x] * U[3 * slot[i, ja] + x]
            u_all[contact_row[index[i]] + a] -= acc * inv_dt


@kernel
def add_sole_compliance(Wg, r0, contact_row, index, frames, K_inv, slot, weight, dt, Z):
    """The sole contacts of ``sole_frames`` in the group's W (starting at row r0): W_il += Σ_ab d_ia d_lb
    F_i K_c⁻¹[s_ia, s_lb] F_lᵀ / δt (4.21 as corrected).

    In two products, W = P_F (K_c⁻¹ P_Fᵀ) with P_F the (3k, 3c) map of the weights and frames: first the rows
    Z = (K_c⁻¹ P_Fᵀ)ᵀ (3k, 3c) from the rows of K_c⁻¹ (symmetric), then the upper triangle of W from Z's rows,
    mirrored (W is symmetric); both read rows only. Z: (≥ 3k, 3c) work."""
    k, c3, inv_dt = slot.shape[0], K_inv.shape[0], 1.0 / dt
    for l in range(k):
        for b in range(3):
            q = 3 * l + b
            for r in range(c3):
                Z[q, r] = 0.0
            for jb in range(3):
                d = weight[l, jb]
                if d == 0.0:
                    continue
                s = 3 * slot[l, jb]
                for y in range(3):
                    w = d * frames[l, b, y]
                    if w != 0.0:
                        for r in range(c3):
                            Z[q, r] += w * K_inv[s + y, r]
    for l in range(k):
        for b in range(3):
            q, row = 3 * l + b, contact_row[index[l]] - r0 + b
            for i in range(l, k):
                for a in range(b if i == l else 0, 3):
                    acc = 0.0
                    for ja in range(3):
                        d = weight[i, ja]
                        if d != 0.0:
                            s = 3 * slot[i, ja]
                            acc += d * (frames[i, a, 0] * Z[q, s] + frames[i, a, 1] * Z[q, s + 1]
                                        + frames[i, a, 2] * Z[q, s + 2])
                    col = contact_row[index[i]] - r0 + a
                    Wg[row, col] += acc * inv_dt
                    if col != row:
                        Wg[col, row] += acc * inv_dt


@kernel
def sole_node_forces(frames, f_local, index, slot, weight, F):
    """F (c, 3) = Pᵀ f in the sole frame (4.26 as corrected): contact i's force f_local[index[i]] (its contact
    frame) turned to the sole frame by frames[i]ᵀ and spread on its nodes slot[i, :] with weights weight[i, :]."""
    for j in range(F.shape[0]):
        for x in range(3):
            F[j, x] = 0.0
    for i in range(index.shape[0]):
        f = f_local[index[i]]
        for x in range(3):
            fx = frames[i, 0, x] * f[0] + frames[i, 1, x] * f[1] + frames[i, 2, x] * f[2]
            for ja in range(3):
                if weight[i, ja] != 0.0:
                    F[slot[i, ja], x] += weight[i, ja] * fx
