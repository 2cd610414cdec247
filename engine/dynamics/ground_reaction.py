"""Ground reaction of a floating robot estimated from its motion, and its zero-moment point.

Seed 004 §5.5 (ORHRO, raw L2393-2398): the wrench the environment exerts on the whole robot is the rate of
change of its momentum minus its weight; the ground's share is that total minus the other known actions
(a user or haptic force).  On a horizontal ground plane the ZMP (equal to the centre of pressure of the
contact forces) is the point about which this wrench has no horizontal moment (seed 004 eq. 83-84).

Wrenches here are ``(force, moment about the base-frame origin)`` (6,) in the base frame (the world when the
multibody sits at the origin), z up; q, v, a as for ``rnea``; gravity (3,) in the base frame.
"""
from __future__ import annotations

import numpy as np

from engine.dynamics.centroidal import com
from engine.dynamics.inputs import GRAVITY
from engine.dynamics.kinematics import forward_kinematics
from engine.dynamics.rnea import rnea


def _to_base(data, f_body):
    """Body-frame wrenches (nb, 6) at the body origins -> one wrench at the base origin: sum_i oX_i^* f_i."""
    f = np.einsum("bij,bj->bi", data.oMi_R, f_body[:, :3])
    n = np.einsum("bij,bj->bi", data.oMi_R, f_body[:, 3:]) + np.cross(data.oMi_p, f)
    return np.concatenate([f.sum(axis=0), n.sum(axis=0)])


def _force_cross(v, f):
    """v x* f for rows of motions (linear, angular) and forces (force, moment): (w x f, w x n + v x f)."""
    w, n = v[:, 3:], f[:, 3:]
    return np.concatenate([np.cross(w, f[:, :3]), np.cross(w, n) + np.cross(v[:, :3], f[:, :3])], axis=1)


def _rotor_spin_rates(model, data, v, a):
    """(nbodies + 1, 6): rate of the rotors' spin momentum j_m alpha qdot eps relative to their carrier c,
    summed per carrier in its frame (last row: the base), d/dt = j_m alpha (qddot eps + qdot omega_c x eps)."""
    carrier = model.body_parent[model.dof_joint]
    eps = model.dof_rotor_axis
    w_c = np.where(carrier[:, None] >= 0, data.v[carrier, 3:], 0.0)
    spin = (model.dof_rotor_inertia * model.dof_gear_ratio)[:, None] * (a[:, None] * eps
                                                                         + v[:, None] * np.cross(w_c, eps))
    rates = np.zeros((model.nbodies + 1, 6))
    np.add.at(rates[:, 3:], carrier, spin)
    return rates


def momentum_rate(model, data, q, v, a):
    """dh/dt (6,): rate of the robot's momentum h = sum_i oX_i^* I_i v_i (linear; angular about the base
    origin), base frame.  Per body, in its frame, Newton-Euler: dh_i = I_i a_i + v_i x* I_i v_i; plus the
    spin of the geared rotors relative to their carriers (seed 002 §2.3)."""
    forward_kinematics(model, data, q, v, a)
    I = model.body_inertia
    dh = np.einsum("bij,bj->bi", I, data.a) + _force_cross(data.v, np.einsum("bij,bj->bi", I, data.v))
    spin = _rotor_spin_rates(model, data, np.asarray(v, dtype=float), np.asarray(a, dtype=float))
    return _to_base(data, dh + spin[:-1]) + spin[-1]


def gravity_wrench(model, data, q, gravity=GRAVITY):
    """The weight as a wrench at the base origin: (m g, c x m g)."""
    mg = model.total_mass * np.asarray(gravity, dtype=float)
    return np.concatenate([mg, np.cross(com(model, data, q), mg)])


def external_wrench(model, data, q, v, a, gravity=GRAVITY):
    """Total wrench of the environment on the robot: dh/dt - (m g, c x m g) (seed 004 §5.5).  For a floating
    robot moving as ``a = aba(q, v, tau, f_ext)`` this is the sum of f_ext, in the base frame."""
    return momentum_rate(model, data, q, v, a) - gravity_wrench(model, data, q, gravity)


def ground_wrench(model, data, q, v, a, f_known=None, gravity=GRAVITY):
    """The ground's share: the external wrench minus the known actions ``f_known`` ((nbodies, 6) body-frame
    wrenches at the body origins, as ``rnea``'s f_ext) (seed 004 §5.5, ORHRO step 3)."""
    w = external_wrench(model, data, q, v, a, gravity)
    return w if f_known is None else w - _to_base(data, np.asarray(f_known, dtype=float))


def step_residual(model, data, q, v, v_next, dt, f_applied, gravity=GRAVITY) -> float:
    """The Newton–Euler check of one time step of a floating robot (seed 003 §5.B, seed 004 §5.5), in N (and
    N m): the environment's wrench estimated from the motion — the momentum rate at (q, v) with the step's
    acceleration (v_next − v)/δt, less the weight — against the wrenches the step applied, ``f_applied``
    ((nbodies, 6), body frames at the body origins: contacts, closures' reactions on the robot's bodies, user
    forces), the largest component of the difference. Joint torques, springs and the joints' own reactions
    are internal and cancel, so a step that integrated v_next = v + δt aba(q, v, τ, f_applied) checks to
    round-off, whatever the contact solver found: it validates the stages after the solve."""
    a = (np.asarray(v_next, dtype=float) - np.asarray(v, dtype=float)) / dt
    w = external_wrench(model, data, q, v, a, gravity) - _to_base(data, np.asarray(f_applied, dtype=float))
    return float(np.abs(w).max())


def joint_reactions(model, data, q, v, a, f_ext=None, gravity=GRAVITY) -> np.ndarray:
    """(nbodies, 6) the wrench each joint transmits, parent on child, in the child's frame at its origin
    (force N, moment N m): the backward pass of Newton–Euler (``rnea``'s ``data.f``, seed 004 §2.5's EPRE) at
    the motion (q, v, a) under the external wrenches ``f_ext``."""
    rnea(model, data, q, v, a, f_ext, gravity)
    return np.array(data.f)


def zmp(wrench, height=0.0, min_normal_force=1e-9):
    """Zero-moment point (3,) on the ground plane z = height: the point P where the wrench (f, n_O) has no
    horizontal moment, n_O - P x f = (0, 0, *) (seed 004 eq. 83-84 with z as the normal):
    x = (h f_x - n_y) / f_z, y = (h f_y + n_x) / f_z.  ``None`` when f_z <= min_normal_force (no support:
    flight or free fall)."""
    f, n = wrench[:3], wrench[3:]
    if not f[2] > min_normal_force:
        return None
    return np.array([(height * f[0] - n[1]) / f[2], (height * f[1] + n[0]) / f[2], height])


def centre_of_pressure(points, forces):
    """Centre of pressure (3,) of point forces (n, 3) applied at points (n, 3) lying on a horizontal plane:
    sum_i f_z,i p_i / sum_i f_z,i (the ZMP of their wrench).  ``None`` without a positive normal force."""
    points, forces = np.asarray(points, dtype=float), np.asarray(forces, dtype=float)
    fz = forces[:, 2].sum()
    return forces[:, 2] @ points / fz if fz > 0.0 else None


def friction_ratio(wrench, min_normal_force=1e-9):
    """|f_t| / f_n, the least friction coefficient the ground must offer (seed 003 §5.C's cone margin; seed
    004 eq. 81's clutch-disc variant for the twisting moment needs the sole radius).  ``None`` without
    support."""
    f = wrench[:3]
    return float(np.hypot(f[0], f[1]) / f[2]) if f[2] > min_normal_force else None


def heel_toe(points, forces, normals, heel, toe):
    """A foot on its heel and toe (seed 003 §5.C, Chessé's two-point foot, Annex D): the normal forces
    (N_heel, N_toe) of the contacts nearest each point, and the centre of pressure along the sole measured from
    the heel, x_cop = (Σ N_i p_i / Σ N_i − heel)·e, e the unit vector heel → toe — for contacts at the heel and
    the toe x_cop = l N_toe / (N_heel + N_toe), l = ‖toe − heel‖, the foot's ZMP condition being 0 < x_cop < l.
    points, forces, normals (n, 3) world; heel, toe (3,) world.  x_cop is NaN without a pressing contact."""
    points, forces = np.asarray(points, float).reshape(-1, 3), np.asarray(forces, float).reshape(-1, 3)
    N = np.einsum("ni,ni->n", forces, np.asarray(normals, float).reshape(-1, 3))
    at_toe = np.linalg.norm(points - toe, axis=1) < np.linalg.norm(points - heel, axis=1)
    e = (toe - heel) / np.linalg.norm(toe - heel)
    cop = float((N @ points / N.sum() - heel) @ e) if N.sum() > 0.0 else float("nan")
    return float(N[~at_toe].sum()), float(N[at_toe].sum()), cop
