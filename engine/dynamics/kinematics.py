"""Forward kinematics: body placements, velocities and accelerations; frame placements."""
from __future__ import annotations

import numpy as np

from engine.dynamics._kernels import kinematics as _k
from engine.dynamics.inputs import REFUSED, RETRY, index_of, rerun, wrong_data

_NO_GRAVITY = np.zeros(3)  # kinematics: body accelerations without the base's -g


def forward_kinematics(model, data, q, v=None, a=None):
    """Fill ``data.liMi_R/liMi_p`` (body in parent), ``data.oMi_R/oMi_p`` (body in base frame) and, when v
    is given, the body velocities ``data.v`` and accelerations ``data.a`` (body frame, no gravity;
    a = None means a = 0, so ``data.a`` is then the velocity-product term Jdot v of every body).

    Featherstone's forward pass: oM_i = oM_parent liM_i, v_i = X^-1 v_parent + S_i v_i,
    a_i = X^-1 a_parent + S_i a_i + v_i x S_i v_i (seed 000 eq. 2.8; S_i is constant in the body frame).
    """
    pack = data.model_pack
    if pack.owner is not model:
        wrong_data(model, data)
    with_motion = v is not None
    v = data.v_zero if v is None else v
    a = data.v_zero if a is None else a
    try:
        status = _k.forward_kinematics(pack.mi, pack.mf, data.ws, q, v, a, _NO_GRAVITY, with_motion)
    except REFUSED:
        status = RETRY
    if status:
        rerun(_k.forward_kinematics, model, (pack.mi, pack.mf, data.ws), dict(q=q, v=v, a=a),
              (_NO_GRAVITY, with_motion))


def frame_placement(model, data, frame_index):
    """(R, p) of frame ``frame_index`` in the base frame, from the placements of the last
    ``forward_kinematics``: oMf = oM_body bMf (bMf = ``model.frame_R/frame_p``)."""
    f = index_of(model, "frame_index", frame_index, len(model.frame_name))
    body = int(model.frame_body[f])
    if body < 0:
        return model.frame_R[f].copy(), model.frame_p[f].copy()
    R, p = data.oMi_R[body], data.oMi_p[body]
    return R @ model.frame_R[f], R @ model.frame_p[f] + p
