"""Kernels: motor rotors and passive joint forces (seed 002 §2.3, §3.1 and eq. (3)).

The rotor of dof k is a massless body with central inertia J_m, carried by the parent body c of joint k and
spinning at omega_m = omega_c + alpha qdot_k eps (eps in the carrier frame).  See ``engine.dynamics.pack``
for the split J_c = J'_c + J_m of the carrier's inertia.
"""
from __future__ import annotations

from engine.dynamics._kernels.algebra import add, cross, inline, load3, load9, mv, scale
from engine.dynamics.pack import (DF_ALPHA, DF_DAMP, DF_EPS, DF_FRIC, DF_JM, DF_QREF, DF_STIFF, DI_CARRIER, DI_QSPRING,
                                  WS_V)


@inline
def carrier_angular(di, ws, k, o):
    """The carrier's angular velocity (o = WS_V) or acceleration (o = WS_A_GF), 0 for the fixed base."""
    c = di[k, DI_CARRIER]
    return (0.0, 0.0, 0.0) if c < 0 else load3(ws, c, o + 3)


@inline
def rotor_gyroscopic(di, df, ws, k, qd):
    """omega_m x J_m omega_m with omega_m = omega_c + alpha qd eps (seed 002 §3.1), and omega_c."""
    w_c = carrier_angular(di, ws, k, WS_V)
    w_m = add(w_c, scale(df[k, DF_ALPHA] * qd, load3(df, k, DF_EPS)))
    return cross(w_m, mv(load9(df, k, DF_JM), w_m)), w_c


@inline
def rotor_inertial_moment(di, df, ws, k, o_acc, qd, qdd):
    """c_a = J_m omegadot_m + omega_m x J_m omega_m, with
    omegadot_m = omegadot_c + alpha (qdd eps + qd omega_c x eps)   (seed 002 §3.1, L183)."""
    eps, alpha = load3(df, k, DF_EPS), df[k, DF_ALPHA]
    gyro, w_c = rotor_gyroscopic(di, df, ws, k, qd)
    wd_m = add(carrier_angular(di, ws, k, o_acc), scale(alpha, add(scale(qdd, eps), scale(qd, cross(w_c, eps)))))
    return add(mv(load9(df, k, DF_JM), wd_m), gyro)


@inline
def passive_force(di, df, k, q, qd):
    """Joint friction and spring reflected to the joint (seed 002 eq. (3)):
    xi_v qd + q_s sign(qd) + k (q - q_ref), with sign(0) = 0 (stiction is the contact solver's business)."""
    sign = 1.0 if qd > 0.0 else (-1.0 if qd < 0.0 else 0.0)
    tau = df[k, DF_DAMP] * qd + df[k, DF_FRIC] * sign
    iq = di[k, DI_QSPRING]
    if iq >= 0:
        tau += df[k, DF_STIFF] * (q[iq] - df[k, DF_QREF])
    return tau

