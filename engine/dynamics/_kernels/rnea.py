"""Kernel: recursive Newton-Euler inverse dynamics with geared rotors and joint friction (seed 002 §3)."""
from __future__ import annotations

from engine.dynamics._kernels.algebra import (F1, F2, I2, STATUS, add, dot, entry, force_cross, force_to_parent,
                                              inertia_mul, inline, load3, load9, split, store3, sub)
from engine.dynamics._kernels.kinematics import BAD, accelerations, check_dynamics, placements, velocities
from engine.dynamics._kernels.rotors import passive_force, rotor_inertial_moment
from engine.dynamics.pack import (BF_H, BF_IBARP, BF_MASS, BI_IV, BI_NV, BI_PARENT, DF_ALPHA, DF_EPS, DF_S, DI_CARRIER,
                                  DI_ROTOR, WS_A_GF, WS_F, WS_LIMI_P, WS_LIMI_R, WS_V)


@inline
def body_forces(bi, bf, ws, fext):
    """f_i = I'_i a_i + v_i x* I'_i v_i - f_ext,i: the body without its rotors' spin (J', seed 002 L142)."""
    for i in range(bi.shape[0]):
        vl, w = load3(ws, i, WS_V), load3(ws, i, WS_V + 3)
        al, aw = load3(ws, i, WS_A_GF), load3(ws, i, WS_A_GF + 3)
        m, h, I = bf[i, BF_MASS], load3(bf, i, BF_H), load9(bf, i, BF_IBARP)
        fl, fn = inertia_mul(m, h, I, al, aw)
        hl, hn = inertia_mul(m, h, I, vl, w)
        bl, bn = force_cross(vl, w, hl, hn)
        store3(ws, i, WS_F, sub(add(fl, bl), load3(fext, i, 0)))
        store3(ws, i, WS_F + 3, sub(add(fn, bn), load3(fext, i, 3)))


@inline
def rotor_and_passive_forces(di, df, ws, q, v, a, tau):
    """tau_k = passive_k + alpha eps . c_a, and the carrier bears c_a (seed 002 §3.1)."""
    for k in range(tau.shape[0]):
        tau[k] = passive_force(di, df, k, q, v[k])
        if di[k, DI_ROTOR]:
            c_a = rotor_inertial_moment(di, df, ws, k, WS_A_GF, v[k], a[k])
            tau[k] += df[k, DF_ALPHA] * dot(load3(df, k, DF_EPS), c_a)
            c = di[k, DI_CARRIER]
            if c >= 0:
                store3(ws, c, WS_F + 3, add(load3(ws, c, WS_F + 3), c_a))


@inline
def backward_pass(bi, df, ws, tau):
    """tau_i += S_i^T f_i and f_parent += X* f_i, leaves to root."""
    for i in range(bi.shape[0] - 1, -1, -1):
        f, n = load3(ws, i, WS_F), load3(ws, i, WS_F + 3)
        for k in range(bi[i, BI_IV], bi[i, BI_IV] + bi[i, BI_NV]):
            tau[k] += dot(load3(df, k, DF_S), f) + dot(load3(df, k, DF_S + 3), n)
        parent = bi[i, BI_PARENT]
        if parent >= 0:
            fp, np_ = force_to_parent(load9(ws, i, WS_LIMI_R), load3(ws, i, WS_LIMI_P), f, n)
            store3(ws, parent, WS_F, add(load3(ws, parent, WS_F), fp))
            store3(ws, parent, WS_F + 3, add(load3(ws, parent, WS_F + 3), np_))


@entry(STATUS(I2, F2, F2, F1, F1, F1, F2, F1, F1))
def rnea(mi, mf, ws, q, v, a, fext, g, tau):
    """tau = Q_a(q, v, a) + passive forces; joint wrenches in ws[:, WS_F].  Returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_dynamics(bi, df, q, v, a, fext, g)
    if status == BAD:
        return status
    inverse_dynamics(bi, bf, di, df, ws, q, v, a, fext, g, tau)
    return status


@inline
def inverse_dynamics(bi, bf, di, df, ws, q, v, a, fext, g, tau):
    """The passes of ``rnea`` on checked inputs: placements, velocities, accelerations (ws[:, WS_A] is each
    body's acceleration without gravity: its drift when a = 0), body wrenches, tau."""
    placements(bi, bf, ws, q)
    velocities(bi, df, ws, v)
    accelerations(bi, df, ws, a, g)   # the base accelerates at -g: gravity acts on every body
    body_forces(bi, bf, ws, fext)
    rotor_and_passive_forces(di, df, ws, q, v, a, tau)
    backward_pass(bi, df, ws, tau)
