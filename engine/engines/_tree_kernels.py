"""The dynamics and integration stages of one articulated multibody (a tree: ``ArticulaEngine``'s ``trees``), each
in one compiled call (issue 16 (b)), driven by ``articula.ArticulaEngine._free_dynamics`` / ``_euler_step``.

They chain the kernels the readable steps call one by one — ``aba``'s passes, ``forward_kinematics``',
``integrate_kernel``, ``world_bodies`` / ``world_velocities``, ``kinetic_energy_of_motion``'s sum and the fault
checks' ``first_non_finite`` / ``first_beyond`` — on the same arrays in the same order, so q, v and every
intermediate are the same to the last bit. A stage crosses from Python into numba once instead of five to seven
times. Inputs the dynamics kernels would refuse (a quaternion off the unit sphere, a non-finite wrench: statuses
other than OK) make a kernel stop before it writes anything (``REDO``): the readable steps then run and warn or
raise as they always do. A checked quantity out of bounds (``FAULT``) is left for the Simulation's checks, which
raise the usual error naming it.
"""
from __future__ import annotations

from numba import njit

from engine.contact._stepping_kernels import world_bodies, world_velocities
from engine.dynamics._kernels.aba import aba_passes, bias_passes
from engine.dynamics._kernels.algebra import split
from engine.dynamics._kernels.centroidal import motion_energy
from engine.dynamics._kernels.kinematics import (OK, accelerations, check_dynamics, check_q, check_vector,
                                                 placements, velocities)
from engine.dynamics.lie import integrate_kernel
from engine.dynamics.pack import WS_V
from engine.engines._step_arrays import MotionArrays
from engine.faults._kernels import first_beyond, first_non_finite

DONE, REDO, FAULT, KINEMATICS = 0, 1, 2, 3     # what a stage's kernel returns (KINEMATICS: integrated, the
                                               # kinematics of q⁺ refused: ``MultiBodyRun.refresh`` redoes them)


@njit(cache=True)
def motion_arrays(mi, mf, ws, wd, ws_free, q, v, tau, f_ext, f_contact, f_total, g, ddq, a_free, g0, zero, joint_type,
                  idx_q, idx_v, xi, q_next, scratch, speed, a, R_m, p_m, lo, body_R, body_p, V, V_free, V_last):
    """The arrays of ``free_motion`` and ``constrained_motion`` as one ``MotionArrays``."""
    return MotionArrays(mi, mf, ws, wd, ws_free, q, v, tau, f_ext, f_contact, f_total, g, ddq, a_free, g0, zero,
                        joint_type, idx_q, idx_v, xi, q_next, scratch, speed, a, R_m, p_m, lo, body_R, body_p, V,
                        V_free, V_last)


@njit(cache=True, nogil=True)
def free_motion(s, dt):
    """Stage "dynamics" on the ``MotionArrays`` s: a_free = ABA(q, v, τ, f_ext, g) (``aba`` on the workspace ``ws``,
    ``wd``, its result also in ``ddq``), ξ = v + δt a_free, the body velocities at ξ (``forward_kinematics`` on
    ``ws_free``, a = 0, gravity g0 = 0; its placements at q are ABA's, copied) in world axes ``V_free`` (rows lo …).
    FAULT: a_free not finite, or ξ beyond ``speed`` (``Simulation.check_finite``, ``check_speed``)."""
    mi, mf, ws, wd, ws_free, q, v, tau, fext, g = s.mi, s.mf, s.ws, s.wd, s.ws_free, s.q, s.v, s.tau, s.f_ext, s.g
    ddq, g0, zero, lo, body_R, V_free = s.ddq, s.g0, s.zero, s.lo, s.body_R, s.V_free
    speed, a_free, xi = s.speed, s.a_free, s.xi
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    if check_dynamics(bi, df, q, v, tau, fext, g) != OK:
        return REDO
    aba_passes(bi, bf, di, df, ws, wd, q, v, tau, fext, g, ddq)
    a_free[:] = ddq
    if first_non_finite(a_free) >= 0:
        return FAULT
    for k in range(xi.shape[0]):                       # ξ = δt a_free + v
        xi[k] = a_free[k] * dt
        xi[k] += v[k]
    if check_vector(xi, df.shape[0]) != OK:
        return REDO
    ws_free[:, :WS_V] = ws[:, :WS_V]                   # ``placements`` at q: ABA's, just computed
    velocities(bi, df, ws_free, xi)
    accelerations(bi, df, ws_free, zero, g0)
    world_velocities(ws_free, lo, body_R, V_free)
    return FAULT if first_beyond(xi, speed) >= 0 else DONE


@njit(cache=True, nogil=True)
def constrained_motion(s, in_contact, fresh, dt):
    """Stage "integration" under semi-implicit Euler, on the ``MotionArrays`` s: v⁺ = v + δt ABA(q, v, τ,
    f_ext + f_contact) in contact, else v + δt a_free (``fresh``: ``ws``, ``wd`` hold free_motion's ABA at this
    (q, v), untouched since — only its bias passes are redone, ``aba.bias_passes``); q⁺ = q ⊕ δt v⁺
    (``integrate_kernel``, scratch ``xi``, ``q_next``, ``scratch``); a = (v⁺ − v)/δt; then the kinematics of
    (q⁺, v⁺) (``MultiBodyRun.refresh``: ``forward_kinematics`` on ``ws``, the world rows ``body_R``, ``body_p``,
    ``V`` from lo, their previous velocities to ``V_last``). Returns (status, T⁺): FAULT when q⁺ is not finite or
    v⁺ beyond ``speed`` (then no kinematics), REDO or KINEMATICS, else T⁺ = ½ v⁺ᵀ M v⁺
    (``kinetic_energy_of_motion``) for the energy check."""
    mi, mf, ws, wd, q, v, tau, g, ddq, a_free = s.mi, s.mf, s.ws, s.wd, s.q, s.v, s.tau, s.g, s.ddq, s.a_free
    f_ext, f_contact, f_total, g0, zero, xi, a = s.f_ext, s.f_contact, s.f_total, s.g0, s.zero, s.xi, s.a
    speed, joint_type, idx_q, idx_v, q_next, scratch = s.speed, s.joint_type, s.idx_q, s.idx_v, s.q_next, s.scratch
    R_m, p_m, lo, body_R, body_p, V, V_last = s.R_m, s.p_m, s.lo, s.body_R, s.body_p, s.V, s.V_last
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    if in_contact:
        if first_non_finite(f_contact) >= 0:
            return REDO, 0.0
        for i in range(f_total.shape[0]):
            for r in range(6):
                f_total[i, r] = f_ext[i, r] + f_contact[i, r]
        if check_dynamics(bi, df, q, v, tau, f_total, g) != OK:
            return REDO, 0.0
        if fresh:
            bias_passes(bi, bf, di, df, ws, wd, q, v, tau, f_total, g, ddq)
        else:
            aba_passes(bi, bf, di, df, ws, wd, q, v, tau, f_total, g, ddq)
    a[:] = v
    for k in range(v.shape[0]):
        v[k] += dt * (ddq[k] if in_contact else a_free[k])
        xi[k] = v[k] * dt
    integrate_kernel(joint_type, idx_q, idx_v, q, xi, q_next, scratch)
    q[:] = q_next
    fault = first_non_finite(q) >= 0 or first_beyond(v, speed) >= 0
    for k in range(v.shape[0]):
        a[k] = v[k] - a[k]
        a[k] /= dt
    if fault:
        return FAULT, 0.0
    if check_q(bi, q) != OK:
        return KINEMATICS, 0.0
    V_last[:] = V[lo:lo + V_last.shape[0]]
    placements(bi, bf, ws, q)
    velocities(bi, df, ws, v)
    accelerations(bi, df, ws, zero, g0)
    world_bodies(ws, R_m, p_m, lo, body_R, body_p, V)
    return DONE, motion_energy(bi, bf, di, df, ws, v)
