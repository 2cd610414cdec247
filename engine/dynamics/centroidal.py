"""Centre of mass and its Jacobian, centroidal momentum, kinetic and potential energy."""
from __future__ import annotations

from engine.dynamics._kernels import centroidal as _k
from engine.dynamics.inputs import GRAVITY, REFUSED, RETRY, gravity_array, pack_of, rerun


def com(model, data, q):
    """Centre of mass c = sum m_i c_i / sum m_i (3,), world frame; also updates the placements."""
    pack = pack_of(model, data)
    try:
        status = _k.centre_of_mass(pack.mi, pack.mf, data.ws, q, data.out)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_k.centre_of_mass, model, (pack.mi, pack.mf, data.ws), dict(q=q), (data.out,))
    return data.out[:3].copy()


def com_jacobian(model, data, q):
    """J_c (3, nv) = dc/dq: dof k of joint j moves the subtree of j (mass m_j, centre c_j) rigidly, so
    column k = m_j (v_k + w_k x c_j) / M with (v_k, w_k) = oS_k its world twist column."""
    pack = pack_of(model, data)
    try:
        status = _k.com_jacobian(pack.mi, pack.mf, data.ws, q, data.J)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_k.com_jacobian, model, (pack.mi, pack.mf, data.ws), dict(q=q), (data.J,))
    return data.J[:3].copy()


def _momentum(model, data, q, v):
    """(P, L_G) into data.out; returns the kinetic energy."""
    pack = pack_of(model, data)
    head = (pack.mi, pack.mf, data.ws)
    try:
        status, T = _k.momentum(*head, q, v, data.out)
    except REFUSED:
        status = RETRY
    if status:
        status, T = rerun(_k.momentum, model, head, dict(q=q, v=v), (data.out,), stacklevel=5)
    return T


def centroidal_momentum(model, data, q, v):
    """h_G (6,) = (P, L_G): linear momentum and angular momentum about the centre of mass, world axes
    (Pinocchio's ``hg``): the sum over bodies of X*_i (I_i v_i) moved to the centre of mass, plus each geared
    rotor's spin alpha qdot_k j_m eps (seed 002 §4.1; body inertias count their rotors frozen)."""
    _momentum(model, data, q, v)
    return data.out.copy()


def kinetic_energy(model, data, q, v):
    """T = 1/2 sum v_i . I_i v_i + sum over rotors (alpha qdot j_m eps . omega_c + alpha^2 j_m qdot^2 / 2),
    the direct sum of seed 002 L209 (rotor spin relative to the frozen carrier); equals 1/2 v^T M v."""
    return _momentum(model, data, q, v)


def kinetic_energy_of_motion(model, data, v):
    """T of ``kinetic_energy`` from the body velocities already in ``data``: the last call on it must be
    ``forward_kinematics(model, data, q, v)`` with this v (no second kinematics pass; the simulation's energy
    check after each step)."""
    pack = pack_of(model, data)
    try:
        status, T = _k.kinetic_energy_of_motion(pack.mi, pack.mf, data.ws, v)
    except REFUSED:
        status = RETRY
    if status:
        status, T = rerun(_k.kinetic_energy_of_motion, model, (pack.mi, pack.mf, data.ws), dict(v=v))
    return T


def potential_energy(model, data, q, gravity=GRAVITY):
    """V = -sum m_i g . c_i (J), zero at the base-frame origin."""
    pack = pack_of(model, data)
    g = gravity_array(gravity)
    try:
        status, V = _k.potential_energy(pack.mi, pack.mf, data.ws, q, g)
    except REFUSED:
        status = RETRY
    if status:
        status, V = rerun(_k.potential_energy, model, (pack.mi, pack.mf, data.ws), dict(q=q, gravity=g))
    return V
