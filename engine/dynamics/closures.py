"""Closed chains as constrained dynamics (seed 003 §2.2-2.4, §5.A): the loop closures of a model as
velocity rows J v = 0, the accelerations that keep them, and the projection of a velocity onto them.

Lagrange's equations with multipliers (Chessé 2002 eq. I.7a-b), ``M a + h = τ + Jᵀ λ`` with the closures
differentiated twice, ``J a + J̇ v = 0`` (I.15), give (I.16, the multipliers eliminated)

    a = a₀ − M⁻¹ Jᵀ μ,   (J M⁻¹ Jᵀ) μ = J a₀ + J̇ v,   a₀ = M⁻¹ (τ − h)   (``aba``),

solved in the least-squares sense (a planar loop's out-of-plane rows are zero).  Integrated by the universe's
integrator (RK4: its energy error is O(δt⁴) per unit time, where the time-stepping scheme's velocity projection
dissipates O(δt)), then projected back onto the closures: positions by ``contact.problem.project_closures``,
velocities by ``project_velocity``.  Rows are those of ``contact.problem.closure_blocks``, base frame: a point
closure's anchors coincide, u = v_a(x_a) − v_b(x_b); a hinge adds (ω_a − ω_b)·e_k for the two axes e_k ⟂ z_a.
"""
from __future__ import annotations

import numpy as np

from engine.dynamics.aba import aba
from engine.dynamics.crba import crba
from engine.dynamics.inputs import GRAVITY
from engine.dynamics.jacobians import frame_jacobian, frame_jacobian_dot_v, point_classical_acceleration, point_jacobian
from engine.dynamics.kinematics import forward_kinematics

RCOND = 1e-10   # rows whose J M⁻¹ Jᵀ singular value falls below RCOND × the largest are redundant


def closure_rows(model, data, q, v):
    """(J (rows, nv), J̇ v (rows,)) of every closure of ``model`` at (q, v), base frame."""
    forward_kinematics(model, data, q, v)
    J, Jdot_v = [], []
    for c in model.closures:
        ends = [(c.body_a, c.R_a, c.p_a, 1.0), (c.body_b, c.R_b, c.p_b, -1.0)]
        Jp, ap = np.zeros((3, model.nv)), np.zeros(3)
        for body, _, p, sign in ends:
            if body >= 0:                       # the base (body -1) does not move
                Jp += sign * point_jacobian(model, data, body, p)
                ap += sign * point_classical_acceleration(model, data, body, p)
        J.append(Jp)
        Jdot_v.append(ap)
        if c.kind == "hinge":
            Jw, aw, w = np.zeros((3, model.nv)), np.zeros(3), np.zeros(3)
            axes = (data.oMi_R[c.body_a] @ c.R_a if c.body_a >= 0 else c.R_a)[:, :2]
            for body, _, _, sign in ends:
                if body >= 0:
                    frame = model.frame_index(model.joint_name[body])
                    Jw += sign * frame_jacobian(model, data, q, frame, "local_world_aligned")[3:]
                    aw += sign * frame_jacobian_dot_v(model, data, q, v, frame, "local_world_aligned")[3:]
                    w += sign * data.oMi_R[body] @ data.v[body][3:]
            w_a = data.oMi_R[c.body_a] @ data.v[c.body_a][3:] if c.body_a >= 0 else np.zeros(3)
            J.append(axes.T @ Jw)               # d/dt (w·e_k) = alpha·e_k + w·(w_a x e_k), e_k fixed on a
            Jdot_v.append(axes.T @ aw + np.cross(w_a, axes.T) @ w)
    return np.vstack(J), np.concatenate(Jdot_v)


def closed_chain_acceleration(model, data, q, v, tau, f_ext=None, gravity=GRAVITY):
    """a (nv,) with J a + J̇ v = 0: the free accelerations of ``aba`` corrected by the closure forces (I.16)."""
    a0 = aba(model, data, q, v, tau, f_ext=f_ext, gravity=gravity)
    J, Jdot_v = closure_rows(model, data, q, v)
    Minv_JT = np.linalg.solve(crba(model, data, q), J.T)
    mu = np.linalg.lstsq(J @ Minv_JT, J @ a0 + Jdot_v, rcond=RCOND)[0]
    return a0 - Minv_JT @ mu


def project_velocity(model, data, q, v):
    """The velocity nearest to ``v`` in the kinetic-energy metric with J v = 0: v − M⁻¹Jᵀ (J M⁻¹ Jᵀ)⁺ J v."""
    J, _ = closure_rows(model, data, q, v)
    Minv_JT = np.linalg.solve(crba(model, data, q), J.T)
    return v - Minv_JT @ np.linalg.lstsq(J @ Minv_JT, J @ v, rcond=RCOND)[0]
