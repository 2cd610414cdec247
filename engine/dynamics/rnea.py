"""Inverse dynamics: the recursive Newton-Euler algorithm with geared motor rotors and joint friction."""
from __future__ import annotations

from engine.dynamics._kernels import rnea as _k
from engine.dynamics.inputs import GRAVITY, REFUSED, RETRY, gravity_array, rerun, wrong_data


def rnea(model, data, q, v, a, f_ext=None, gravity=GRAVITY):
    """Joint forces tau (nv,) that produce the accelerations a at state (q, v) (seed 002 §3, §4.3):

        tau = Q_a(q, v, a) + xi_v v + q_s sign(v) + k (q - q_ref)

    Q_a is Newton-Euler with motor rotors (seed 002 §3.1): forward pass v_i, a_i (the base accelerating at
    -gravity), body wrench f_i = I'_i a_i + v_i x* I'_i v_i - f_ext,i with the carrier inertia J' = J - J_m;
    the rotor of dof k, carried by the parent c of joint k, spins at omega_m = omega_c + alpha v_k eps and
    costs c_a = J_m omegadot_m + omega_m x J_m omega_m, borne by its carrier and reflected as alpha eps.c_a
    to joint k (gyroscopic terms and the reflected inertia alpha^2 j_m included); backward pass
    tau_i = S_i^T f_i, f_parent += X* f_i.  The passive terms are seed 002's actuator law (3): viscous and
    dry joint friction (sign(0) = 0) and the joint spring; they vanish for URDFs without <dynamics>.

    f_ext: (nbodies, 6) wrenches (force, moment) applied to each body, in the body frame at its origin
    (Pinocchio's local convention).  gravity: (3,) in the base frame.  On return ``data.f`` holds the joint
    wrenches: the wrench the parent exerts on the subtree through joint i, body-i frame (seed 004 §2.5's
    "EPRE", action on the child by the parent in the child frame); ``data.v``, ``data.a`` and the placements
    are filled as by ``forward_kinematics``.
    """
    pack = data.model_pack
    if pack.owner is not model:
        wrong_data(model, data)
    fext, g = data.fext_zero if f_ext is None else f_ext, gravity_array(gravity)
    try:
        status = _k.rnea(pack.mi, pack.mf, data.ws, q, v, a, fext, g, data.tau)
    except REFUSED:  # first call, or inputs to convert
        status = RETRY
    if status:
        rerun(_k.rnea, model, (pack.mi, pack.mf, data.ws),
              dict(q=q, v=v, a=a, f_ext=fext, gravity=g), (data.tau,))
    return data.tau.copy()
