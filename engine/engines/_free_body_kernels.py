"""Kernels of ``free_bodies.py``: every free rigid body of a universe advanced in one compiled call per stage.

A free body (one body on a free joint, Pinocchio's convention: q = (p, quaternion) of the body frame in the
multibody's base frame, v = (v_o, ω) in the body frame) moves by Newton–Euler about its origin (Featherstone
2008 eq. 2.92; spatial vectors linear first, as ``engine.spatial``):

    I a = f − v ×* (I v) + I a_g,     v ×* (h_f, h_m) = (ω × h_f, ω × h_m + v_o × h_f),   a_g = (Rᵀ g, 0)

with I the spatial inertia about the origin, f the applied wrench (controller τ, user f_ext, contact f_c; body
frame, at the origin) and g the gravity in the base frame: ``aba`` on a one-body tree gives the same a.
Each body i keeps its scratch in ``work[i]`` (``WORK`` columns); ``row[i]`` is its row of the WorldBodies.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.collision._kernels import detect_native
from engine._borrowed import borrowed
from engine.contact._rigid_kernels import rigid_contacts
from engine.contact._stepping_kernels import free_body_wrenches
from engine.dynamics.lie import _integrate_free
from engine.engines._step_arrays import StepArrays

WORK = 64
R_Q, G_B, F, XI, TMP, R_W, Q_NEXT, LIE = 0, 9, 12, 18, 24, 36, 45, 52


@njit(cache=True, nogil=True)
def _rotation(q, R):
    """R (row-major 9,) of the unit quaternion q[3:7] = (x, y, z, w)."""
    x, y, z, w = q[3], q[4], q[5], q[6]
    R[0], R[1], R[2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    R[3], R[4], R[5] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    R[6], R[7], R[8] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)


@njit(cache=True, nogil=True)
def _acceleration(I, I_inv, v, f, g_body, a, tmp):
    """a = I⁻¹ (f − v ×* I v) + (g_body, 0); ``tmp`` (12,) scratch."""
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += I[r, c] * v[c]
        tmp[r] = s                                            # h = I v = (h_f, h_m)
    wx, wy, wz = v[3], v[4], v[5]
    hf0, hf1, hf2, hm0, hm1, hm2 = tmp[0], tmp[1], tmp[2], tmp[3], tmp[4], tmp[5]
    tmp[6] = f[0] - (wy * hf2 - wz * hf1)                     # f − v ×* h
    tmp[7] = f[1] - (wz * hf0 - wx * hf2)
    tmp[8] = f[2] - (wx * hf1 - wy * hf0)
    tmp[9] = f[3] - (wy * hm2 - wz * hm1 + v[1] * hf2 - v[2] * hf1)
    tmp[10] = f[4] - (wz * hm0 - wx * hm2 + v[2] * hf0 - v[0] * hf2)
    tmp[11] = f[5] - (wx * hm1 - wy * hm0 + v[0] * hf1 - v[1] * hf0)
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += I_inv[r, c] * tmp[6 + c]
        a[r] = s + (g_body[r] if r < 3 else 0.0)


@njit(cache=True, nogil=True)
def _transpose_times(R, x, out):
    """out = Rᵀ x (R row-major 9,)."""
    for r in range(3):
        out[r] = R[r] * x[0] + R[3 + r] * x[1] + R[6 + r] * x[2]


@njit(cache=True, nogil=True)
def _world(R, x, out):
    """out = (R x_lin, R x_ang), R (3, 3)."""
    for r in range(3):
        out[r] = R[r, 0] * x[0] + R[r, 1] * x[1] + R[r, 2] * x[2]
        out[3 + r] = R[r, 0] * x[3] + R[r, 1] * x[4] + R[r, 2] * x[5]


@njit(cache=True, nogil=True)
def _beyond(x, bound) -> bool:
    """A non-finite entry of x, or one beyond its bound."""
    for k in range(x.shape[0]):
        if not (abs(x[k]) <= bound[k]):
            return True
    return False


@njit(cache=True, nogil=True)
def free_dynamics(I, I_inv, gravity, q, v, tau, f_ext, speed, dt, row, body_R, a_free, V_free, work):
    """Stage "dynamics": a_free = I⁻¹(τ + f_ext − v ×* I v) + a_g and the world velocity at v + δt a_free into
    ``V_free[row]`` (axes of the current placement ``body_R[row]``). Returns the first body whose v + δt a_free
    is not finite or beyond its speed bound (the caller names the fault), else −1."""
    flagged = -1
    for i in range(q.shape[0]):
        w = work[i]
        _rotation(q[i], w[R_Q:R_Q + 9])
        _transpose_times(w[R_Q:R_Q + 9], gravity[i], w[G_B:G_B + 3])
        for r in range(6):
            w[F + r] = tau[i, r] + f_ext[i, r]
        _acceleration(I[i], I_inv[i], v[i], w[F:F + 6], w[G_B:G_B + 3], a_free[i], w[TMP:TMP + 12])
        for r in range(6):
            w[XI + r] = v[i, r] + dt * a_free[i, r]
        _world(body_R[row[i]], w[XI:XI + 6], V_free[row[i]])
        if flagged < 0 and _beyond(w[XI:XI + 6], speed[i]):
            flagged = i
    return flagged


@njit(cache=True, nogil=True)
def free_integrate(I, I_inv, gravity, base_R, base_p, q, v, tau, f_ext, f_contact, in_contact, a_free, speed,
                   kinetic_good, energy_floor, energy_jump, dt, row, body_R, body_p, V, V_last, a, kinetic, work):
    """Stage "integration": v⁺ = v + δt a (a = a_free, or with the contact wrench f_c added to f when
    ``in_contact``), q⁺ = q ⊕ δt v⁺ (SE(3) exponential), a = (v⁺ − v)/δt, the new placement (base frame times
    q⁺) and world velocity into the WorldBodies rows (the old one kept in ``V_last[i]``), the kinetic energy
    ½ v⁺ᵀ I v⁺. Returns the first body with a non-finite q⁺ or v⁺, a v⁺ beyond its speed bound or a kinetic
    energy beyond its bound energy_jump (T + energy_floor) from the last good state's T = ``kinetic_good``
    (``faults.RunLimits.energy_bound``), else −1."""
    flagged = -1
    for i in range(q.shape[0]):
        w = work[i]
        if in_contact[i]:
            _rotation(q[i], w[R_Q:R_Q + 9])
            _transpose_times(w[R_Q:R_Q + 9], gravity[i], w[G_B:G_B + 3])
            for r in range(6):
                w[F + r] = tau[i, r] + f_ext[i, r] + f_contact[i, r]
            _acceleration(I[i], I_inv[i], v[i], w[F:F + 6], w[G_B:G_B + 3], a[i], w[TMP:TMP + 12])
        else:
            for r in range(6):
                a[i, r] = a_free[i, r]
        for r in range(6):
            v[i, r] += dt * a[i, r]
            w[XI + r] = dt * v[i, r]
        _integrate_free(q[i], 0, w[XI:XI + 6], 0, w[Q_NEXT:Q_NEXT + 7], w[LIE:LIE + 8])
        for r in range(7):
            q[i, r] = w[Q_NEXT + r]
        _rotation(q[i], w[R_Q:R_Q + 9])                      # the new placement: base (R_m, p_m) times q⁺
        g = row[i]
        for r in range(3):
            for c in range(3):
                body_R[g, r, c] = (base_R[i, r, 0] * w[R_Q + c] + base_R[i, r, 1] * w[R_Q + 3 + c]
                                   + base_R[i, r, 2] * w[R_Q + 6 + c])
            body_p[g, r] = base_R[i, r, 0] * q[i, 0] + base_R[i, r, 1] * q[i, 1] + base_R[i, r, 2] * q[i, 2] \
                + base_p[i, r]
        for r in range(6):
            V_last[i, r] = V[g, r]
        _world(body_R[g], v[i], V[g])
        energy = 0.0
        for r in range(6):
            s = 0.0
            for c in range(6):
                s += I[i, r, c] * v[i, c]
            energy += 0.5 * v[i, r] * s
        kinetic[i] = energy
        if flagged < 0 and (not np.all(np.isfinite(q[i])) or _beyond(v[i], speed[i])
                            or not energy <= energy_jump[i] * (kinetic_good[i] + energy_floor[i])):
            flagged = i
    return flagged


DONE, DYNAMICS_FAULT, NON_FINITE, ROOM, INTEGRATION_FAULT = range(5)     # ``free_step``'s status


@njit(cache=True, nogil=True)
def commit(q, v, tau, kinetic, q_good, v_good, tau_good, kinetic_good):
    """The last good state ← the current one (``FreeBodies.commit``): one call instead of four copies."""
    q_good[:] = q
    v_good[:] = v
    tau_good[:] = tau
    kinetic_good[:] = kinetic


@njit(cache=True)
def step_arrays(I, I_inv, gravity, base_R, base_p, q, v, tau, f_ext, f_contact, in_contact, a_free, a, speed,
                kinetic_good, energy_floor, energy_jump, kinetic, row, V_last, work, body_R, body_p, V, V_free, shapes,
                pairs, ws, cache, margin, n_max, reduction_tol, reuse_distance, rigid, out_point, out_normal,
                out_depth, out_pair, f_local, forces, q_good, v_good, tau_good, prev_pair, prev_point, prev_force,
                keep):
    """The arrays ``free_step`` reads — those of ``rigid_contacts`` in the contact stage's ``RigidArrays``
    ``rigid`` — and the last good state's of ``commit``, as one ``StepArrays`` (``free_step``, ``commit_of``)."""
    return StepArrays(I, I_inv, gravity, base_R, base_p, q, v, tau, f_ext, f_contact, in_contact, a_free, a, speed,
                      kinetic_good, energy_floor, energy_jump, kinetic, row, V_last, work, body_R, body_p, V, V_free,
                      shapes, pairs, ws, cache, margin, n_max, reduction_tol, reuse_distance, rigid, out_point,
                      out_normal, out_depth, out_pair, f_local, forces, q_good, v_good, tau_good, prev_pair,
                      prev_point, prev_force, keep)


@njit(cache=True, nogil=True)
def free_step(s, dt, slot):
    """A whole step of a world of free bodies alone (``free_bodies.FreeBodies.step``) on the arrays of the
    ``StepArrays`` s, the stages of the readable path one after the other on the same arrays: ``free_dynamics``
    (stage "dynamics"), ``collision._kernels.detect_native`` (stage "collision", on the placements ``body_R``,
    ``body_p``, which the collision workspace's are), ``rigid_contacts`` (groups to wrenches:
    ``stepping.ContactStage._rigid_step``), ``free_integrate`` (stage "integration"). The nc contacts are copied
    from the collision workspace ``ws`` into the first rows of the output slot ``slot`` of ``out_point`` …
    ``out_pair``, their local and world forces into those of ``f_local[slot]``, ``forces[slot]`` (two slots of as
    many rows as the workspace: a step writes the one the previous step's warm start does not use,
    ``FreeBodies.step``); the warm start of s (prev_pair, prev_point, prev_force) then views them, as the contact
    stage's does once the step is taken.

    Each stage's kernel gets the fields it takes, read and borrowed at its call. Handing all 67 first to one kernel
    that took them (a call CPython compiles as ``f(*args)``) cost ≈ 1.3 µs more a step (a resting cube's compiled
    step 7.2 → 5.9 µs); reading all 45 into names first, ≈ 0.25 µs more (5.45 against 5.2 µs).

    Returns (status, body, contacts, groups, self-contacts, unconverged groups). status DONE: the step is taken;
    DYNAMICS_FAULT, INTEGRATION_FAULT: ``body`` failed that stage's checks (nothing after it done); NON_FINITE: a
    placement is not finite (nothing detected); ROOM: the largest group's factor does not fit ``keep`` (detected,
    nothing solved)."""
    bad = free_dynamics(*borrowed((s.I, s.I_inv, s.gravity, s.q, s.v, s.tau, s.f_ext, s.speed, dt, s.row, s.body_R,
                                   s.a_free, s.V_free, s.work)))
    if bad >= 0:
        return DYNAMICS_FAULT, bad, 0, 0, 0, 0
    nc, _ = detect_native(*borrowed((s.shapes, s.pairs, s.ws, s.cache, s.margin, s.n_max, s.reduction_tol,
                                     s.reuse_distance)))
    if nc < 0:
        return NON_FINITE, -1, 0, 0, 0, 0
    ng = self_contacts = unconverged = 0
    rigid = s.rigid
    if nc == 0:                                      # no wrench (``ContactStage._apply(0)``)
        free_body_wrenches(*borrowed((rigid.wrench, s.body_R, s.row, rigid.batch_mb, rigid.group_of, 0, s.f_contact,
                                      s.in_contact)))
    else:
        ws = borrowed(s.ws)
        point, normal, depth, pair = borrowed((s.out_point[slot][:nc], s.out_normal[slot][:nc],
                                               s.out_depth[slot][:nc], s.out_pair[slot][:nc]))
        point[:], normal[:], depth[:], pair[:] = ws.point[:nc], ws.normal[:nc], ws.depth[:nc], ws.pair[:nc]
        ng, rows, self_contacts, unconverged = rigid_contacts(rigid, *borrowed((
            point, normal, depth, pair, s.prev_pair, s.prev_point, s.prev_force, dt, s.keep, s.f_local[slot][:nc],
            s.forces[slot][:nc])))
        if rows:
            return ROOM, -1, nc, 0, 0, 0
    bad = free_integrate(*borrowed((s.I, s.I_inv, s.gravity, s.base_R, s.base_p, s.q, s.v, s.tau, s.f_ext, s.f_contact,
                                    s.in_contact, s.a_free, s.speed, s.kinetic_good, s.energy_floor, s.energy_jump, dt,
                                    s.row, s.body_R, s.body_p, s.V, s.V_last, s.a, s.kinetic, s.work)))
    if nc > 0:
        s.prev_pair, s.prev_point, s.prev_force = s.out_pair[slot][:nc], s.out_point[slot][:nc], s.f_local[slot][:nc]
    return INTEGRATION_FAULT if bad >= 0 else DONE, bad, nc, ng, self_contacts, unconverged


@njit(cache=True, nogil=True)
def set_warm_start(s, prev_pair, prev_point, prev_force, keep):
    """The warm start and kept factor of the ``StepArrays`` s ← the contact stage's (``FreeBodies.step``)."""
    s.prev_pair, s.prev_point, s.prev_force, s.keep = prev_pair, prev_point, prev_force, keep


@njit(cache=True, nogil=True)
def commit_of(s):
    """``commit`` on the arrays of the ``StepArrays`` s."""
    commit(s.q, s.v, s.tau, s.kinetic, s.q_good, s.v_good, s.tau_good, s.kinetic_good)
