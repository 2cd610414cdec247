"""Kernels: joint motion, forward kinematics (placements, velocities, accelerations), input checks."""
from __future__ import annotations

import math

from numba import types

from engine.dynamics._kernels.algebra import (F1, F2, I2, INT, STATUS, add, cross, entry, inline, kernel, load3, load9,
                                              mm, motion_cross, motion_to_child, mtv, mv, quat_to_rotation, scale,
                                              split, store3, store9, tuple_op)
from engine.dynamics.pack import (BF_JP, BF_JR, BF_RAXIS, BF_RK, BF_RKK, BI_IQ, BI_IV, BI_NQ, BI_NV, BI_PARENT,
                                  BI_TYPE, DF_S, WS_A, WS_A_GF, WS_C, WS_LIMI_P, WS_LIMI_R, WS_OMI_P, WS_OMI_R, WS_V)

REVOLUTE, PRISMATIC, SPHERICAL, FREE, PLANAR = 0, 1, 2, 3, 4  # engine.model.JointType

OK, WARN, BAD = 0, 1, 2      # status returned by the kernels: fine / a unit vector was renormalised / bad input
UNIT_SILENT, UNIT_WARN = 1e-6, 1e-3  # |norm - 1| of quaternions and planar (cos, sin): thresholds


@tuple_op
def unit_status(n2):
    """Status of a (finite) quaternion or planar (cos, sin) of squared norm n2."""
    e = abs(math.sqrt(n2) - 1.0)
    return OK if e <= UNIT_SILENT else (WARN if e <= UNIT_WARN else BAD)


@kernel
def check_q(bi, q):
    """OK, WARN (a quaternion is off unit by more than 1e-6 and at most 1e-3) or BAD (wrong size, non-finite
    entry or a quaternion off unit by more than 1e-3)."""
    nb = bi.shape[0]
    if q.shape[0] != (0 if nb == 0 else bi[nb - 1, BI_IQ] + bi[nb - 1, BI_NQ]):
        return BAD
    for k in range(q.shape[0]):
        if not math.isfinite(q[k]):
            return BAD
    status = OK
    for i in range(bi.shape[0]):
        t, k = bi[i, BI_TYPE], bi[i, BI_IQ]
        if t == SPHERICAL:
            s = unit_status(q[k] ** 2 + q[k + 1] ** 2 + q[k + 2] ** 2 + q[k + 3] ** 2)
        elif t == FREE:
            s = unit_status(q[k + 3] ** 2 + q[k + 4] ** 2 + q[k + 5] ** 2 + q[k + 6] ** 2)
        elif t == PLANAR:
            s = unit_status(q[k + 2] ** 2 + q[k + 3] ** 2)
        else:
            s = OK
        status = max(status, s)
    return status


@kernel
def check_vector(x, n):
    """OK when the 1-D array x has n entries, all finite, else BAD."""
    if x.shape[0] != n:
        return BAD
    for k in range(n):
        if not math.isfinite(x[k]):
            return BAD
    return OK


@kernel
def check_wrenches(f, nb):
    """OK when f is (nb, 6) and finite, else BAD."""
    if f.shape[0] != nb or f.shape[1] != 6:
        return BAD
    return check_vector(f.reshape(6 * nb), 6 * nb)


@kernel
def check_dynamics(bi, df, q, v, x, fext, g):
    """Status of the inputs (q, v, a or tau, f_ext, gravity) of rnea and aba."""
    nv = df.shape[0]
    return max(max(check_q(bi, q), check_vector(v, nv)),
               max(max(check_vector(x, nv), check_wrenches(fext, bi.shape[0])), check_vector(g, 3)))


@inline
def joint_placement(bi, bf, i, q):
    """liMi = (R0, p0) (joint motion) for body i (seed 000 §3.6: quaternions, used normalised)."""
    t, k = bi[i, BI_TYPE], bi[i, BI_IQ]
    R0, p0 = load9(bf, i, BF_JR), load3(bf, i, BF_JP)
    if t == REVOLUTE:  # R0 Rot(k, q) = R0 + sin q R0 [k]x + (1 - cos q) R0 [k]x^2 (Rodrigues)
        s, d = math.sin(q[k]), 1.0 - math.cos(q[k])
        A, B = load9(bf, i, BF_RK), load9(bf, i, BF_RKK)
        return (R0[0] + s * A[0] + d * B[0], R0[1] + s * A[1] + d * B[1], R0[2] + s * A[2] + d * B[2],
                R0[3] + s * A[3] + d * B[3], R0[4] + s * A[4] + d * B[4], R0[5] + s * A[5] + d * B[5],
                R0[6] + s * A[6] + d * B[6], R0[7] + s * A[7] + d * B[7], R0[8] + s * A[8] + d * B[8]), p0
    if t == PRISMATIC:
        return R0, add(p0, scale(q[k], load3(bf, i, BF_RAXIS)))
    if t == SPHERICAL:
        return mm(R0, quat_to_rotation(q[k], q[k + 1], q[k + 2], q[k + 3])), p0
    if t == FREE:
        return (mm(R0, quat_to_rotation(q[k + 3], q[k + 4], q[k + 5], q[k + 6])),
                add(p0, mv(R0, (q[k], q[k + 1], q[k + 2]))))
    n = math.sqrt(q[k + 2] ** 2 + q[k + 3] ** 2)  # planar (x, y, cos t, sin t)
    c, s = q[k + 2] / n, q[k + 3] / n
    return mm(R0, (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)), add(p0, mv(R0, (q[k], q[k + 1], 0.0)))


@inline
def placement(bi, bf, ws, i, q):
    """liMi and oMi = oMparent liMi, stored in ws; returns oMi as (R, p)."""
    R, p = joint_placement(bi, bf, i, q)
    store9(ws, i, WS_LIMI_R, R)
    store3(ws, i, WS_LIMI_P, p)
    parent = bi[i, BI_PARENT]
    if parent >= 0:
        pR = load9(ws, parent, WS_OMI_R)
        R, p = mm(pR, R), add(load3(ws, parent, WS_OMI_P), mv(pR, p))
    store9(ws, i, WS_OMI_R, R)
    store3(ws, i, WS_OMI_P, p)
    return R, p


@inline
def joint_motion_vector(bi, df, i, x):
    """S_i x_i: the joint's motion (6-vector as (linear, angular)) for its slice of x (v or a)."""
    k0, nv = bi[i, BI_IV], bi[i, BI_NV]
    l0 = l1 = l2 = w0 = w1 = w2 = 0.0
    for k in range(k0, k0 + nv):
        l0 += df[k, DF_S] * x[k]
        l1 += df[k, DF_S + 1] * x[k]
        l2 += df[k, DF_S + 2] * x[k]
        w0 += df[k, DF_S + 3] * x[k]
        w1 += df[k, DF_S + 4] * x[k]
        w2 += df[k, DF_S + 5] * x[k]
    return (l0, l1, l2), (w0, w1, w2)


@inline
def parent_motion(bi, ws, i, o, base_l):
    """The parent's twist (at ws column o) or the base's (base_l, 0)."""
    parent = bi[i, BI_PARENT]
    if parent < 0:
        return base_l, (0.0, 0.0, 0.0)
    return load3(ws, parent, o), load3(ws, parent, o + 3)


@kernel
def placements(bi, bf, ws, q):
    """liMi and oMi of every body."""
    for i in range(bi.shape[0]):
        placement(bi, bf, ws, i, q)


@kernel
def velocities(bi, df, ws, v):
    """v_i = X^-1 v_parent + S_i v_i and the velocity-product acceleration c_i = v_i x S_i v_i (at WS_C);
    S_i is constant in the body frame, so the joint bias c_J is 0 (seed 000 eq. 2.8)."""
    for i in range(bi.shape[0]):
        R, p = load9(ws, i, WS_LIMI_R), load3(ws, i, WS_LIMI_P)
        pvl, pw = parent_motion(bi, ws, i, WS_V, (0.0, 0.0, 0.0))
        vJl, vJw = joint_motion_vector(bi, df, i, v)
        xl, xw = motion_to_child(R, p, pvl, pw)
        vl, w = add(xl, vJl), add(xw, vJw)
        cl, cw = motion_cross(vl, w, vJl, vJw)
        store3(ws, i, WS_V, vl)
        store3(ws, i, WS_V + 3, w)
        store3(ws, i, WS_C, cl)
        store3(ws, i, WS_C + 3, cw)


@inline
def store_acceleration(bi, df, ws, i, ddq, a_p):
    """a_gf,i = X^-1 a_parent + S_i ddq_i + c_i with the parent's a_gf = a_p; a_i = a_gf,i - (-R_i^T g, 0)
    is stored by the caller (``store_acceleration_without_gravity``).  Returns a_gf,i."""
    xl, xw = motion_to_child(load9(ws, i, WS_LIMI_R), load3(ws, i, WS_LIMI_P), a_p[0], a_p[1])
    sl, sw = joint_motion_vector(bi, df, i, ddq)
    al, aw = add(add(xl, sl), load3(ws, i, WS_C)), add(add(xw, sw), load3(ws, i, WS_C + 3))
    store3(ws, i, WS_A_GF, al)
    store3(ws, i, WS_A_GF + 3, aw)
    return al, aw


@inline
def store_acceleration_without_gravity(ws, i, al, aw, g):
    """a_i = a_gf,i - (-R_i^T g, 0): the body acceleration with the base's -g removed."""
    store3(ws, i, WS_A, add(al, mtv(load9(ws, i, WS_OMI_R), g)))
    store3(ws, i, WS_A + 3, aw)


@kernel
def accelerations(bi, df, ws, a, g):
    """a_gf,i = X^-1 a_gf,parent + S_i a_i + c_i with the base accelerating at (-g, 0), and a_i without
    gravity (after ``velocities``)."""
    base = (-g[0], -g[1], -g[2])
    for i in range(bi.shape[0]):
        al, aw = store_acceleration(bi, df, ws, i, a, parent_motion(bi, ws, i, WS_A_GF, base))
        store_acceleration_without_gravity(ws, i, al, aw, g)


@entry(STATUS(I2, F2, F2, F1, F1, F1, F1, types.boolean))
def forward_kinematics(mi, mf, ws, q, v, a, g0, with_motion):
    """Placements of every body, and with_motion their velocities and accelerations (g0 = zeros(3));
    returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_q(bi, q)
    if with_motion:
        status = max(status, max(check_vector(v, df.shape[0]), check_vector(a, df.shape[0])))
    if status == BAD:
        return status
    placements(bi, bf, ws, q)
    if with_motion:
        velocities(bi, df, ws, v)
        accelerations(bi, df, ws, a, g0)
    return status


@entry(STATUS(F2, INT, F1, F1))
def body_point_classical_acceleration(ws, body, r, out):
    """out[:3] = classical acceleration (world) of the point r (body frame) from the body's v and a:
    xdd = R (a_l + alpha x r + w x (v_l + w x r)).  Returns a status."""
    if not 0 <= body < ws.shape[0] or check_vector(r, 3) == BAD:
        return BAD
    vl, w = load3(ws, body, WS_V), load3(ws, body, WS_V + 3)
    al, aw = load3(ws, body, WS_A), load3(ws, body, WS_A + 3)
    acc = mv(load9(ws, body, WS_OMI_R), add(add(al, cross(aw, r)), cross(w, add(vl, cross(w, r)))))
    out[0], out[1], out[2] = acc
    return OK
