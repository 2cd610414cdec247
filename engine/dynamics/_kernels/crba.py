"""Kernel: joint-space inertia matrix by the composite (backward) recurrence with rotors (seed 002 §4)."""
from __future__ import annotations

from engine.dynamics._kernels.algebra import (F1, F2, I2, STATUS, add, entry, inertia_mul, inertia_to_parent, inline,
                                              load3, load9, madd, motion_to_parent, mv, scale, split, store3, store9)
from engine.dynamics._kernels.kinematics import BAD, check_q, placement
from engine.dynamics.pack import (BF_H, BF_IBAR, BF_MASS, BI_IV, BI_NV, BI_PARENT, DF_ALPHA, DF_EPS, DF_JROT, DF_S,
                                  DI_CARRIER, DI_ROTOR, WD_OS, WS_OMI_R, WS_YC_H, WS_YC_I, WS_YC_M)


@inline
def world_inertias(bi, bf, df, ws, wd, q):
    """Placements; each body's inertia (m, h, Ibar) in the world frame about the world origin (the start of
    its composite inertia Yc_i) and each dof's world motion column oS_k = oX_i S_k.  Returns a status."""
    status = check_q(bi, q)
    if status == BAD:
        return status
    for i in range(bi.shape[0]):
        R, p = placement(bi, bf, ws, i, q)
        h, I = inertia_to_parent(R, p, bf[i, BF_MASS], load3(bf, i, BF_H), load9(bf, i, BF_IBAR))
        ws[i, WS_YC_M] = bf[i, BF_MASS]
        store3(ws, i, WS_YC_H, h)
        store9(ws, i, WS_YC_I, I)
        for k in range(bi[i, BI_IV], bi[i, BI_IV] + bi[i, BI_NV]):
            sl, sw = motion_to_parent(R, p, load3(df, k, DF_S), load3(df, k, DF_S + 3))
            store3(wd, k, WD_OS, sl)
            store3(wd, k, WD_OS + 3, sw)
    return status


@inline
def dot_os(wd, k, fl, fn):
    """oS_k^T F."""
    return (wd[k, WD_OS] * fl[0] + wd[k, WD_OS + 1] * fl[1] + wd[k, WD_OS + 2] * fl[2] +
            wd[k, WD_OS + 3] * fn[0] + wd[k, WD_OS + 4] * fn[1] + wd[k, WD_OS + 5] * fn[2])


@entry(STATUS(I2, F2, F2, F2, F1, F2))
def crba(mi, mf, ws, wd, q, M):
    """M (nv, nv), both triangles (``mass_matrix``).  Returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    return mass_matrix(bi, bf, di, df, ws, wd, q, M)


@inline
def mass_matrix(bi, bf, di, df, ws, wd, q, M):
    """M (nv, nv), both triangles.  Seed 002 §4.1-4.2 in the world frame: the composite inertias
    Yc_parent += Yc_i need no transfer matrix there, and M[j, k] = oS_j^T Yc_i oS_k for every dof j
    supporting body i.  Rotors: M[k, k] += alpha^2 j_m (a_kk, including the term printed L243 omits) and the
    rotor's momentum alpha j_m eps couples dof k to the dofs supporting its carrier (g_{k-1,k} of §4.1).
    Returns the status of q (placements filled)."""
    status = world_inertias(bi, bf, df, ws, wd, q)
    if status == BAD:
        return status
    M[:, :] = 0.0
    for i in range(bi.shape[0] - 1, -1, -1):
        m, h, I = ws[i, WS_YC_M], load3(ws, i, WS_YC_H), load9(ws, i, WS_YC_I)
        k0, nvi = bi[i, BI_IV], bi[i, BI_NV]
        for k in range(k0, k0 + nvi):
            fl, fn = inertia_mul(m, h, I, load3(wd, k, WD_OS), load3(wd, k, WD_OS + 3))  # F = Yc_i oS_k
            for j in range(k0, k + 1):
                M[j, k] = M[k, j] = dot_os(wd, j, fl, fn)
            if di[k, DI_ROTOR]:
                M[k, k] += df[k, DF_ALPHA] ** 2 * df[k, DF_JROT]
                c = di[k, DI_CARRIER]
                if c >= 0:  # F += (0, alpha j_m oR_c eps): the rotor's spin momentum per unit qdot_k
                    eps_w = mv(load9(ws, c, WS_OMI_R), load3(df, k, DF_EPS))
                    fn = add(fn, scale(df[k, DF_ALPHA] * df[k, DF_JROT], eps_w))
            parent = bi[i, BI_PARENT]
            while parent >= 0:
                for j in range(bi[parent, BI_IV], bi[parent, BI_IV] + bi[parent, BI_NV]):
                    M[j, k] = M[k, j] = dot_os(wd, j, fl, fn)
                parent = bi[parent, BI_PARENT]
        parent = bi[i, BI_PARENT]
        if parent >= 0:  # Yc_parent += Yc_i
            ws[parent, WS_YC_M] += m
            store3(ws, parent, WS_YC_H, add(load3(ws, parent, WS_YC_H), h))
            store9(ws, parent, WS_YC_I, madd(load9(ws, parent, WS_YC_I), I))
    return status
