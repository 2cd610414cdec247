"""Articula's dynamics exported to CasADi: the recursive Newton–Euler algorithm over ``casadi.SX``.

Why a symbolic export and not a callback.  Direct collocation asks IPOPT for the Jacobian of every defect and
the Hessian of the Lagrangian, thousands of times.  A callback around the numba ``rnea`` would give them by
finite differences (n + 1 calls per Jacobian and noisy second derivatives) or by a hand-written adjoint of
every kernel.  RNEA is ~40 lines of spatial algebra, so writing it once more over ``SX``, from the Model's own
arrays, gives CasADi's exact and sparse first and second derivatives by algorithmic differentiation.  The
price is a second copy of the equations; ``tests/optimise/test_symbolic.py`` holds it equal to
``engine.rnea`` to 1e-12 on random states of every shipped model, so the two cannot drift apart.

Conventions are Articula's (engine/spatial.py): spatial vectors (linear, angular), body velocities in the body
frame, a joint's placement (R, p) in its parent, the base accelerating at −g (Featherstone's trick).  The
algorithm is ``engine.dynamics.rnea`` (seed 002 §3, §4.3), with the same rotors and passive forces:

    v_i = ⁱX_λ v_λ + S_i q̇_i                 a_i = ⁱX_λ a_λ + S_i q̈_i + v_i × S_i q̇_i
    f_i = I'_i a_i + v_i ×* I'_i v_i − f_ext,i
    τ_i = S_iᵀ f_i + passive_i + rotors_i    f_λ += ⁱX_λᵀ f_i
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from engine.dynamics.inputs import GRAVITY
from engine.model.model import JointType


def skew(x):
    """[x]× of a 3-vector."""
    return ca.vertcat(ca.horzcat(0, -x[2], x[1]), ca.horzcat(x[2], 0, -x[0]), ca.horzcat(-x[1], x[0], 0))


def quaternion_rotation(x, y, z, w):
    """Rotation of the quaternion (x, y, z, w) / |(x, y, z, w)| (as engine.spatial, used normalised)."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    return ca.vertcat(ca.horzcat(1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)),
                      ca.horzcat(s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)),
                      ca.horzcat(s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)))


def joint_placement(model, i, q):
    """(R, p) of body i in its parent at q: the fixed placement followed by the joint's motion."""
    R0, p0 = ca.DM(model.joint_placement_R[i]), ca.DM(model.joint_placement_p[i])
    t, k, axis = model.joint_type[i], int(model.joint_idx_q[i]), ca.DM(model.joint_axis[i])
    if t == JointType.REVOLUTE:          # Rodrigues: Rot(k, q) = 1 + sin q [k]× + (1 − cos q) [k]×²
        K = skew(axis)
        return R0 @ (ca.DM.eye(3) + ca.sin(q[k]) * K + (1 - ca.cos(q[k])) * (K @ K)), p0
    if t == JointType.PRISMATIC:
        return R0, p0 + R0 @ axis * q[k]
    if t == JointType.SPHERICAL:
        return R0 @ quaternion_rotation(q[k], q[k + 1], q[k + 2], q[k + 3]), p0
    if t == JointType.FREE:
        return R0 @ quaternion_rotation(q[k + 3], q[k + 4], q[k + 5], q[k + 6]), p0 + R0 @ q[k:k + 3]
    n = ca.sqrt(q[k + 2] ** 2 + q[k + 3] ** 2)                    # planar (x, y, cos θ, sin θ)
    c, s = q[k + 2] / n, q[k + 3] / n
    Rz = ca.vertcat(ca.horzcat(c, -s, 0), ca.horzcat(s, c, 0), ca.horzcat(0, 0, 1))
    return R0 @ Rz, p0 + R0 @ ca.vertcat(q[k], q[k + 1], 0)


def motion_transform(R, p):
    """ⁱX_λ (6×6): a parent twist seen in the child placed at (R, p), (linear, angular) order."""
    Rt = R.T
    return ca.vertcat(ca.horzcat(Rt, -Rt @ skew(p)), ca.horzcat(ca.SX.zeros(3, 3), Rt))


def crm(v):
    """v× for twists: v × m = (ω × m_l + v_l × m_ω, ω × m_ω)."""
    return ca.vertcat(ca.horzcat(skew(v[3:]), skew(v[:3])), ca.horzcat(ca.SX.zeros(3, 3), skew(v[3:])))


def crf(v):
    """v×* = −(v×)ᵀ for wrenches."""
    return -crm(v).T


def placements(model, q):
    """(R, p) of every body in the base frame (oMi), a list."""
    oM = []
    for i in range(model.nbodies):
        R, p = joint_placement(model, i, q)
        parent = int(model.body_parent[i])
        oM.append((R, p) if parent < 0 else (oM[parent][0] @ R, oM[parent][1] + oM[parent][0] @ p))
    return oM


def point_position(model, q, body, point):
    """Base-frame position of ``point`` (3,) fixed in ``body`` (−1: the base frame)."""
    if body < 0:
        return ca.DM(point)
    R, p = placements(model, q)[body]
    return p + R @ ca.DM(point)


def rotor_inertias(model):
    """Per dof, J_m = j_m εεᵀ + i_m (1 − εεᵀ) (seed 002 §2.3), and per body I' = I − Σ J_m of its rotors."""
    J_m = np.zeros((model.nv, 3, 3))
    inertia = np.array(model.body_inertia, dtype=float)
    for k in range(model.nv):
        eps = np.asarray(model.dof_rotor_axis[k], dtype=float)
        J_m[k] = (model.dof_rotor_inertia[k] * np.outer(eps, eps)
                  + model.dof_rotor_transverse[k] * (np.eye(3) - np.outer(eps, eps)))
        carrier = int(model.body_parent[model.dof_joint[k]])
        if carrier >= 0:
            inertia[carrier, 3:, 3:] -= J_m[k]
    return J_m, inertia


def rnea(model, q, v, a, f_ext=None, gravity=GRAVITY, friction_speed=None):
    """τ (nv,) = rnea(q, v, a) as ``engine.rnea``, over SX (or MX) symbols.  ``f_ext``: a list of nbodies
    wrenches (6,) (force, moment) in each body frame at its origin, or None.  ``friction_speed`` v_s: the dry
    friction q_s sign(q̇) smoothed as q_s tanh(q̇ / v_s) for an optimiser (sign has no derivative at 0)."""
    S, (J_m, I) = np.asarray(model.dof_S), rotor_inertias(model)
    Xup, vel, acc, f = [], [], [], []
    for i in range(model.nbodies):
        iv, parent = slice(int(model.joint_idx_v[i]), int(model.joint_idx_v[i] + model.joint_nv[i])), \
            int(model.body_parent[i])
        X = motion_transform(*joint_placement(model, i, q))
        Si = ca.DM(S[iv].T)
        vJ = Si @ v[iv]
        v_p, a_p = (vel[parent], acc[parent]) if parent >= 0 else (ca.DM.zeros(6), ca.vertcat(-ca.DM(gravity), 0, 0, 0))
        vel.append(X @ v_p + vJ)
        acc.append(X @ a_p + Si @ a[iv] + crm(vel[i]) @ vJ)
        f_i = ca.DM(I[i]) @ acc[i] + crf(vel[i]) @ (ca.DM(I[i]) @ vel[i])
        f.append(f_i - (f_ext[i] if f_ext is not None else 0))
        Xup.append(X)
    tau = [None] * model.nv
    for k in range(model.nv):                 # passive forces and rotors (seed 002 eq. (3), §3.1)
        i = int(model.dof_joint[k])
        sign = ca.sign(v[k]) if friction_speed is None else ca.tanh(v[k] / friction_speed)
        tau[k] = model.dof_damping[k] * v[k] + model.dof_friction[k] * sign
        if model.dof_stiffness[k] != 0.0 and model.joint_nv[i] == 1:
            tau[k] += model.dof_stiffness[k] * (q[int(model.joint_idx_q[i])] - model.dof_spring_reference[k])
        if np.any(J_m[k]):
            c, eps, alpha = int(model.body_parent[i]), ca.DM(model.dof_rotor_axis[k]), model.dof_gear_ratio[k]
            w_c, wd_c = (vel[c][3:], acc[c][3:]) if c >= 0 else (ca.DM.zeros(3), ca.DM.zeros(3))
            w_m = w_c + alpha * v[k] * eps                                # ω_m = ω_c + α q̇ ε
            wd_m = wd_c + alpha * (a[k] * eps + v[k] * ca.cross(w_c, eps))
            c_a = ca.DM(J_m[k]) @ wd_m + ca.cross(w_m, ca.DM(J_m[k]) @ w_m)
            tau[k] += alpha * ca.dot(eps, c_a)
            if c >= 0:
                f[c] = f[c] + ca.vertcat(ca.DM.zeros(3), c_a)
    for i in range(model.nbodies - 1, -1, -1):            # τ_i += S_iᵀ f_i, f_λ += ⁱX_λᵀ f_i
        for k in range(int(model.joint_idx_v[i]), int(model.joint_idx_v[i] + model.joint_nv[i])):
            tau[k] += ca.dot(ca.DM(S[k]), f[i])
        parent = int(model.body_parent[i])
        if parent >= 0:
            f[parent] = f[parent] + Xup[i].T @ f[i]
    return ca.vertcat(*tau)


def rnea_function(model, gravity=GRAVITY, friction_speed=None):
    """A casadi.Function ``rnea(q, v, a) -> tau``, built once per model."""
    q, v, a = ca.SX.sym("q", model.nq), ca.SX.sym("v", model.nv), ca.SX.sym("a", model.nv)
    tau = rnea(model, q, v, a, gravity=gravity, friction_speed=friction_speed)
    return ca.Function("rnea", [q, v, a], [tau], ["q", "v", "a"], ["tau"])


def angular_velocity(model, q, v, body):
    """ω (3,) of ``body`` in the base frame: Σ over its ancestors j of ᵒR_j S_j,ω q̇_j."""
    if body < 0:
        return ca.DM.zeros(3)
    oM, w, i = placements(model, q), 0, body
    while i >= 0:
        iv = slice(int(model.joint_idx_v[i]), int(model.joint_idx_v[i] + model.joint_nv[i]))
        w = w + oM[i][0] @ (ca.DM(np.asarray(model.dof_S)[iv, 3:].T) @ v[iv])
        i = int(model.body_parent[i])
    return w


def point_wrench(model, q, body, point, force, moment=None):
    """A force (3,) through ``point`` of ``body`` (and a moment), both in the base frame, as the body-frame
    wrench at the body origin that ``rnea``'s f_ext takes: f = ᵒRᵀ F, n = p × f + ᵒRᵀ M."""
    R = placements(model, q)[body][0]
    f = R.T @ force
    n = ca.cross(ca.DM(point), f) + (R.T @ moment if moment is not None else 0)
    return ca.vertcat(f, n)
