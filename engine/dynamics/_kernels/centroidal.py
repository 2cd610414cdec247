"""Kernels: centre of mass and its Jacobian, centroidal momentum, kinetic and potential energy."""
from __future__ import annotations

from numba import types

from engine.dynamics._kernels.algebra import (F1, F2, I2, STATUS, add, cross, dot, entry, force_to_parent, inertia_mul,
                                              inline, kernel, load3, load9, mv, scale, split, store3, sub)
from engine.dynamics._kernels.jacobians import world_column
from engine.dynamics._kernels.kinematics import BAD, check_q, check_vector, placements, velocities
from engine.dynamics._kernels.rotors import carrier_angular
from engine.dynamics.pack import (BF_H, BF_IBAR, BF_MASS, BI_IV, BI_NV, BI_PARENT, DF_ALPHA, DF_EPS, DF_JROT,
                                  DI_CARRIER, DI_ROTOR, WS_OMI_P, WS_OMI_R, WS_V, WS_YC_H, WS_YC_M)


@kernel
def subtree_mass_moments(bi, bf, ws):
    """After ``placements``: mass m_i and first moment h_i = sum m c (world) of every subtree, in the
    composite-inertia columns (leaves to root)."""
    for i in range(bi.shape[0]):
        ws[i, WS_YC_M] = bf[i, BF_MASS]
        h = add(mv(load9(ws, i, WS_OMI_R), load3(bf, i, BF_H)), scale(bf[i, BF_MASS], load3(ws, i, WS_OMI_P)))
        store3(ws, i, WS_YC_H, h)
    for i in range(bi.shape[0] - 1, -1, -1):
        parent = bi[i, BI_PARENT]
        if parent >= 0:
            ws[parent, WS_YC_M] += ws[i, WS_YC_M]
            store3(ws, parent, WS_YC_H, add(load3(ws, parent, WS_YC_H), load3(ws, i, WS_YC_H)))


@entry(STATUS(I2, F2, F2, F1, F1))
def centre_of_mass(mi, mf, ws, q, out):
    """out[:3] = c = sum m_i c_i / sum m_i (world); returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_q(bi, q)
    if status == BAD:
        return status
    placements(bi, bf, ws, q)
    m, h = 0.0, (0.0, 0.0, 0.0)
    for i in range(bi.shape[0]):
        m += bf[i, BF_MASS]
        h = add(h, add(mv(load9(ws, i, WS_OMI_R), load3(bf, i, BF_H)), scale(bf[i, BF_MASS], load3(ws, i, WS_OMI_P))))
    out[0], out[1], out[2] = scale(1.0 / m, h)
    return status


@entry(STATUS(I2, F2, F2, F1, F2))
def com_jacobian(mi, mf, ws, q, J):
    """J[:3] (3, nv): dc/dq.  Dof k of joint j moves its subtree (mass m_j, moment h_j) rigidly:
    column k = (m_j l_k + w_k x h_j) / M with (l_k, w_k) = oS_k.  Returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_q(bi, q)
    if status == BAD:
        return status
    placements(bi, bf, ws, q)
    subtree_mass_moments(bi, bf, ws)
    total = 0.0
    for i in range(bi.shape[0]):
        total += bf[i, BF_MASS]
    J[:, :] = 0.0
    for j in range(bi.shape[0]):
        for k in range(bi[j, BI_IV], bi[j, BI_IV] + bi[j, BI_NV]):
            l, w = world_column(df, ws, j, k)
            J[0, k], J[1, k], J[2, k] = scale(1.0 / total, add(scale(ws[j, WS_YC_M], l),
                                                              cross(w, load3(ws, j, WS_YC_H))))
    return status


@inline
def motion_energy(bi, bf, di, df, ws, v):
    """T of the body velocities in ws (after ``velocities``): sum of 1/2 v_i . I_i v_i (frozen rotors) plus each
    rotor's alpha qdot j_m eps . omega_c + alpha^2 j_m qdot^2 / 2 (seed 002 §4.1, L209)."""
    T = 0.0
    for i in range(bi.shape[0]):
        vl, w = load3(ws, i, WS_V), load3(ws, i, WS_V + 3)
        fl, fn = inertia_mul(bf[i, BF_MASS], load3(bf, i, BF_H), load9(bf, i, BF_IBAR), vl, w)   # I_i v_i
        T += 0.5 * (dot(vl, fl) + dot(w, fn))
    for k in range(v.shape[0]):
        if di[k, DI_ROTOR]:
            spin = df[k, DF_ALPHA] * v[k] * df[k, DF_JROT]
            T += spin * dot(load3(df, k, DF_EPS), carrier_angular(di, ws, k, WS_V))
            T += 0.5 * df[k, DF_ALPHA] * spin * v[k]
    return T


@entry(types.Tuple((STATUS, types.float64))(I2, F2, F2, F1, F1, F1))
def momentum(mi, mf, ws, q, v, out):
    """out = (P, L_G): linear momentum and angular momentum about the centre of mass, world axes, and the
    kinetic energy T (``motion_energy``) returned with the status as (status, T).  Bodies with frozen rotors
    (I_i) plus each rotor's spin: momentum (0, alpha qdot j_m eps) (seed 002 §4.1)."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = max(check_q(bi, q), check_vector(v, df.shape[0]))
    if status == BAD:
        return status, 0.0
    placements(bi, bf, ws, q)
    velocities(bi, df, ws, v)
    P, L, h, m = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0
    for i in range(bi.shape[0]):
        R, p, mi = load9(ws, i, WS_OMI_R), load3(ws, i, WS_OMI_P), bf[i, BF_MASS]
        fl, fn = inertia_mul(mi, load3(bf, i, BF_H), load9(bf, i, BF_IBAR), load3(ws, i, WS_V),
                             load3(ws, i, WS_V + 3))                                # I_i v_i, body frame
        fl, fn = force_to_parent(R, p, fl, fn)                                        # world, at the origin
        P, L = add(P, fl), add(L, fn)
        m, h = m + mi, add(h, add(mv(R, load3(bf, i, BF_H)), scale(mi, p)))
    for k in range(v.shape[0]):
        if di[k, DI_ROTOR]:
            spin, eps, c = df[k, DF_ALPHA] * v[k] * df[k, DF_JROT], load3(df, k, DF_EPS), di[k, DI_CARRIER]
            L = add(L, scale(spin, eps if c < 0 else mv(load9(ws, c, WS_OMI_R), eps)))
    L = sub(L, cross(scale(1.0 / m, h), P))                                            # L_G = L_o - c x P
    out[0], out[1], out[2], out[3], out[4], out[5] = P[0], P[1], P[2], L[0], L[1], L[2]
    return status, motion_energy(bi, bf, di, df, ws, v)


@entry(types.Tuple((STATUS, types.float64))(I2, F2, F2, F1))
def kinetic_energy_of_motion(mi, mf, ws, v):
    """(status, T) of the body velocities the last forward kinematics with velocity v left in ws."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_vector(v, df.shape[0])
    if status == BAD:
        return status, 0.0
    return status, motion_energy(bi, bf, di, df, ws, v)


@entry(types.Tuple((STATUS, types.float64))(I2, F2, F2, F1, F1))
def potential_energy(mi, mf, ws, q, g):
    """(status, V) with V = -sum m_i g . c_i (world)."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = max(check_q(bi, q), check_vector(g, 3))
    if status == BAD:
        return status, 0.0
    placements(bi, bf, ws, q)
    V = 0.0
    for i in range(bi.shape[0]):
        mc = add(mv(load9(ws, i, WS_OMI_R), load3(bf, i, BF_H)), scale(bf[i, BF_MASS], load3(ws, i, WS_OMI_P)))
        V -= g[0] * mc[0] + g[1] * mc[1] + g[2] * mc[2]
    return status, V
