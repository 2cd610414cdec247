"""Frame and point Jacobians and their time variation times v."""
from __future__ import annotations

import numpy as np

from engine.dynamics._kernels import jacobians as _k
from engine.dynamics._kernels import kinematics as _kin
from engine.dynamics.inputs import REFUSED, RETRY, index_of, pack_of, rerun

REFERENCES = {"local": _k.LOCAL, "world": _k.WORLD, "local_world_aligned": _k.LOCAL_WORLD_ALIGNED}
_NO_GRAVITY = np.zeros(3)


def _reference(reference):
    try:
        return REFERENCES[reference]
    except (KeyError, TypeError):
        raise ValueError(f"reference must be one of {sorted(REFERENCES)}, got {reference!r}") from None


def frame_jacobian(model, data, q, frame_index, reference="local"):
    """J (6, nv) with (v, w) = J qdot the twist of frame ``frame_index`` (Pinocchio's conventions):

    * ``"world"``: the frame's twist at the world origin, world axes: column k = oX_j S_k for every dof
      k of a joint j supporting the frame's body (seed 000 eq. 2.8, phi_i = sum of the supporting columns);
    * ``"local_world_aligned"``: linear velocity of the frame origin p and angular velocity, world axes:
      (v_o + w x p, w);
    * ``"local"``: the same twist in the frame's own axes: (R^T (v_o + w x p), R^T w).

    Also updates the body placements in ``data``.
    """
    pack, ref = pack_of(model, data), _reference(reference)
    frame_index = _frame(model, frame_index)
    try:
        status = _k.frame_jacobian(pack.mi, pack.mf, data.ws, pack.fb, pack.ff, q, frame_index, ref, data.J)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_k.frame_jacobian, model, (pack.mi, pack.mf, data.ws, pack.fb, pack.ff),
              dict(q=q, frame_index=frame_index), (ref, data.J))
    return data.J.copy()


def point_jacobian(model, data, body, point_body):
    """J (3, nv): world velocity of a point fixed on ``body`` (coordinates ``point_body`` in the body frame)
    per unit joint velocity, from the placements of the last ``forward_kinematics`` (or any algorithm that
    ran it): column k = v_k + w_k x x for the supporting columns (v_k, w_k) = oS_k, x the point in world."""
    pack, body = pack_of(model, data), _body(model, body)
    try:
        status = _k.point_jacobian(pack.mi, pack.mf, data.ws, body, point_body, data.J)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_k.point_jacobian, model, (pack.mi, pack.mf, data.ws), dict(body=body, point_body=point_body),
              (data.J,))
    return data.J[:3].copy()


def frame_jacobian_dot_v(model, data, q, v, frame_index, reference="local"):
    """Jdot(q, v) v (6,) for ``frame_jacobian(..., reference)``: the frame's acceleration when ddq = 0, so
    that its acceleration is J ddq + Jdot v.  ``"local"``/``"world"``: spatial acceleration;
    ``"local_world_aligned"``: classical acceleration of the frame origin and angular acceleration, world
    axes (the contact bias term).  Also fills ``data.v`` and, in ``data.a``, every body's drift."""
    pack, ref = pack_of(model, data), _reference(reference)
    frame_index = _frame(model, frame_index)
    head = (pack.mi, pack.mf, data.ws, pack.fb, pack.ff)
    try:
        status = _k.frame_acceleration_drift(*head, q, v, data.v_zero, _NO_GRAVITY, frame_index, ref, data.out)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_k.frame_acceleration_drift, model, head, dict(q=q, v=v),
              (data.v_zero, _NO_GRAVITY, index_of(model, "frame_index", frame_index, len(model.frame_name)), ref,
               data.out))
    return data.out.copy()


def point_classical_acceleration(model, data, body, point_body):
    """Classical acceleration (3,), world axes, of a point fixed on ``body`` from the body's ``data.v`` and
    ``data.a`` (body frame): x'' = R (a_l + alpha x r + w x (v_l + w x r)).  After
    ``forward_kinematics(model, data, q, v)`` (a = 0) this is the point's Jdot v; after ``aba`` or
    ``rnea`` it is the point's actual acceleration."""
    pack_of(model, data)
    body = _body(model, body)
    try:
        status = _kin.body_point_classical_acceleration(data.ws, body, point_body, data.out)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_kin.body_point_classical_acceleration, model, (data.ws,), dict(body=body, point_body=point_body),
              (data.out,))
    return data.out[:3].copy()


def _frame(model, i):
    """The frame index as a Python int (a bool, a float or a numpy integer takes the checked path)."""
    return i if type(i) is int else index_of(model, "frame_index", i, len(model.frame_name))


def _body(model, i):
    return i if type(i) is int else index_of(model, "body", i, model.nbodies)
