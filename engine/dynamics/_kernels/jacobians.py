"""Kernels: frame and point Jacobians, and the frame acceleration drift Jdot v."""
from __future__ import annotations

from numba import types

from engine.dynamics._kernels.algebra import (F1, F2, I2, INT, STATUS, add, cross, entry, inline, load3, load9, mm,
                                              motion_to_child, motion_to_parent, mtv, mv, split)
from engine.dynamics._kernels.kinematics import BAD, OK, accelerations, check_q, check_vector, placements, velocities
from engine.dynamics.pack import BI_IV, BI_NV, BI_PARENT, DF_S, FF_P, FF_R, WS_A, WS_OMI_P, WS_OMI_R, WS_V

LOCAL, WORLD, LOCAL_WORLD_ALIGNED = 0, 1, 2


@inline
def frame_in_world(fb, ff, ws, frame):
    """oMf = oM_body bMf (the base frame's own frames: bMf)."""
    R, p, body = load9(ff, frame, FF_R), load3(ff, frame, FF_P), fb[frame]
    if body < 0:
        return R, p
    oR = load9(ws, body, WS_OMI_R)
    return mm(oR, R), add(mv(oR, p), load3(ws, body, WS_OMI_P))


@inline
def world_column(df, ws, j, k):
    """oS_k = oX_j S_k: the twist (at the world origin, world axes) of unit velocity of dof k of joint j."""
    return motion_to_parent(load9(ws, j, WS_OMI_R), load3(ws, j, WS_OMI_P), load3(df, k, DF_S),
                            load3(df, k, DF_S + 3))


@entry(STATUS(I2, F2, F2, types.int64[::1], F2, F1, INT, INT, F2))
def frame_jacobian(mi, mf, ws, fb, ff, q, frame, reference, J):
    """J (6, nv): the frame's twist per unit joint velocity, in the reference frame.  Returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_q(bi, q)
    if status == BAD or not 0 <= frame < fb.shape[0]:
        return BAD
    placements(bi, bf, ws, q)
    R, p = frame_in_world(fb, ff, ws, frame)
    J[:, :] = 0.0
    j = fb[frame]
    while j >= 0:
        for k in range(bi[j, BI_IV], bi[j, BI_IV] + bi[j, BI_NV]):
            l, w = world_column(df, ws, j, k)
            if reference != WORLD:            # velocity of the frame origin: v_o + w x p
                l = add(l, cross(w, p))
            if reference == LOCAL:
                l, w = mtv(R, l), mtv(R, w)
            J[0, k], J[1, k], J[2, k], J[3, k], J[4, k], J[5, k] = l[0], l[1], l[2], w[0], w[1], w[2]
        j = bi[j, BI_PARENT]
    return status


@entry(STATUS(I2, F2, F2, INT, F1, F2))
def point_jacobian(mi, mf, ws, body, r, J):
    """J[:3] (3, nv): world velocity of the point r (body frame) per unit joint velocity, from the stored
    placements: column k = l_k + w_k x x with x = oR r + op and (l_k, w_k) = oS_k.  Returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    if not 0 <= body < bi.shape[0] or check_vector(r, 3) == BAD:
        return BAD
    x = add(mv(load9(ws, body, WS_OMI_R), (r[0], r[1], r[2])), load3(ws, body, WS_OMI_P))
    J[:, :] = 0.0
    j = body
    while j >= 0:
        for k in range(bi[j, BI_IV], bi[j, BI_IV] + bi[j, BI_NV]):
            l, w = world_column(df, ws, j, k)
            J[0, k], J[1, k], J[2, k] = add(l, cross(w, x))
        j = bi[j, BI_PARENT]
    return OK


@entry(STATUS(I2, F2, F2, types.int64[::1], F2, F1, F1, F1, F1, INT, INT, F1))
def frame_acceleration_drift(mi, mf, ws, fb, ff, q, v, a0, g0, frame, reference, out):
    """out (6,) = Jdot v: the frame's acceleration at zero joint acceleration, in the reference frame
    (local and world: spatial acceleration; local_world_aligned: classical acceleration of the origin
    and angular acceleration, world axes).  a0 = zeros(nv), g0 = zeros(3); the drift of every body lands
    in ws[:, WS_A].  Returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = max(check_q(bi, q), check_vector(v, df.shape[0]))
    if status == BAD or not 0 <= frame < fb.shape[0]:
        return BAD
    placements(bi, bf, ws, q)
    velocities(bi, df, ws, v)
    accelerations(bi, df, ws, a0, g0)
    body = fb[frame]
    al = aw = vl = w = (0.0, 0.0, 0.0)
    if body >= 0:
        bR, bp = load9(ff, frame, FF_R), load3(ff, frame, FF_P)
        al, aw = motion_to_child(bR, bp, load3(ws, body, WS_A), load3(ws, body, WS_A + 3))  # frame axes
        vl, w = motion_to_child(bR, bp, load3(ws, body, WS_V), load3(ws, body, WS_V + 3))
    R, p = frame_in_world(fb, ff, ws, frame)
    if reference == WORLD:
        al, aw = motion_to_parent(R, p, al, aw)
    elif reference == LOCAL_WORLD_ALIGNED:
        al, aw = mv(R, add(al, cross(w, vl))), mv(R, aw)
    out[0], out[1], out[2], out[3], out[4], out[5] = al[0], al[1], al[2], aw[0], aw[1], aw[2]
    return status
