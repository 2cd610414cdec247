"""The Model's arrays packed for the numba kernels, and the column layout of the Data workspaces.

A numba call pays for every array argument it unboxes, so a kernel takes a handful of 2-D arrays whose
columns are named by the constants below instead of twenty separate arrays: ``mi`` (int64) and ``mf``
(float64) with one row per body then one row per velocity coordinate, seen as

* ``bi`` (nb, 6) and ``bf`` (nb, 55): the body rows (topology, joint placement, inertia);
* ``di`` (nv, 6) and ``df`` (nv, 55): the dof rows (S, rotor, friction; only the first 3 and 24 columns);
* ``fb`` (nf,) int64 and ``ff`` (nf, 12) float64: the frames;
* Data's ``ws`` (nb, WS_SIZE) and ``wd`` (nv, WD_SIZE): per-body and per-dof workspaces (``engine.model.data``).

Rotor bookkeeping (seed 002 §2.3, L136-L142).  ``model.body_inertia`` is the inertia of the carrier link
*with the rotors it carries counted as frozen* (the assembled link's CAD inertia, the seed's J_i).  The rotor
of joint k spins relative to its carrier (the parent body of joint k) at alpha qdot_k about eps_k, so the
kernels split the carrier into J'_i = J_i - sum J_m (``BF_IBARP``) moving with the body and one massless
rotor per geared dof with central inertia J_m = j_m eps eps^T + i_m (1 - eps eps^T) (``DF_JM``).  The
rotor's mass and the parallel-axis part of its inertia stay in the carrier.  A rotor whose carrier is the
fixed base (parent -1) still contributes its reflected inertia alpha^2 j_m.  Rotors exist on 1-DOF joints
only.
"""
from __future__ import annotations

import numpy as np

from engine.errors import ModelError
from engine.spatial import skew

# bi: body ints
BI_PARENT, BI_TYPE, BI_IQ, BI_IV, BI_NQ, BI_NV = range(6)
BI_SIZE = 6
# bf: body floats. Joint placement (R0, p0) (parent body -> joint frame at q = 0), spatial inertia about
# the body origin as (m, h = m c, Ibar = I_c - m [c]x [c]x), IBARP: Ibar without the carried rotors (J');
# for the joint axis k: R0 [k]x, R0 [k]x^2 (a revolute liMi is R0 + sin q R0[k]x + (1 - cos q) R0[k]x^2)
# and R0 k (a prismatic one moves by q R0 k).
BF_JR, BF_JP, BF_MASS, BF_H, BF_IBAR, BF_IBARP, BF_RK, BF_RKK, BF_RAXIS = 0, 9, 12, 13, 16, 25, 34, 43, 52
BF_SIZE = 55
# di: dof ints. CARRIER: body carrying the dof's rotor, the parent of its joint (-1: the base); QSPRING:
# index in q of the spring coordinate (-1: none); ROTOR: 1 when the dof has a rotor.
DI_CARRIER, DI_QSPRING, DI_ROTOR = range(3)
DI_SIZE = 3
# df: dof floats. S column (body frame), rotor axis eps (carrier frame), j_m, alpha, central rotor inertia
# J_m (3x3, carrier frame), viscous damping, dry friction, stiffness, spring reference.
DF_S, DF_EPS, DF_JROT, DF_ALPHA, DF_JM, DF_DAMP, DF_FRIC, DF_STIFF, DF_QREF = 0, 6, 9, 10, 11, 20, 21, 22, 23
DF_SIZE = 24
# ff: frame placement in its body (R row-major, p)
FF_R, FF_P = 0, 9
FF_SIZE = 12

# ws: per-body workspace of Data. Placements, velocities and accelerations (body frame, a without gravity,
# a_gf with it), joint wrenches f; ABA's articulated inertia IA (6x6), bias pA, velocity product c and the
# inverse joint-space inertia Dinv (nv_i x nv_i, stride 6); the composite inertia Yc in the world frame
# (m, h, Ibar) for the CRBA and the centre-of-mass algorithms.
WS_OMI_R, WS_OMI_P, WS_LIMI_R, WS_LIMI_P = 0, 9, 12, 21
WS_V, WS_A, WS_A_GF, WS_F = 24, 30, 36, 42
WS_IA, WS_PA, WS_C, WS_DINV = 48, 84, 90, 96
WS_YC_M, WS_YC_H, WS_YC_I = 132, 133, 136
WS_SIZE = 145
# wd: per-dof workspace. World motion-subspace column oS (Jacobian column at the world origin); ABA's
# U = IA S moved to the parent frame (plus the rotor's share) and u' = tau - S^T pA - U^T c.
WD_OS, WD_U, WD_UP = 0, 6, 12
WD_SIZE = 13

#: tolerance on J' = J - sum J_m >= 0 (relative to the body's largest principal moment)
_PSD_TOL = 1e-9


class ModelPack:
    """The kernel view of one Model (built once, by ``Data``); ``owner`` is the Model it packs."""

    def __init__(self, model):
        nb, nv = model.nbodies, model.nv
        self.owner = model
        self.mi = np.zeros((nb + nv, max(BI_SIZE, DI_SIZE)), np.int64)  # bi then di rows
        self.mf = np.zeros((nb + nv, max(BF_SIZE, DF_SIZE)))            # bf then df rows
        self.bi, self.di, self.bf, self.df = self.mi[:nb], self.mi[nb:], self.mf[:nb], self.mf[nb:]
        self.bi[:, BI_PARENT], self.bi[:, BI_TYPE] = model.body_parent, model.joint_type
        self.bi[:, BI_IQ], self.bi[:, BI_IV] = model.joint_idx_q, model.joint_idx_v
        self.bi[:, BI_NQ], self.bi[:, BI_NV] = model.joint_nq, model.joint_nv
        self.bf[:, BF_JR:BF_JR + 9] = model.joint_placement_R.reshape(nb, 9)
        self.bf[:, BF_JP:BF_JP + 3] = model.joint_placement_p
        for i in range(nb):
            R0, K = model.joint_placement_R[i], skew(model.joint_axis[i])
            self.bf[i, BF_RK:BF_RK + 9] = (R0 @ K).ravel()
            self.bf[i, BF_RKK:BF_RKK + 9] = (R0 @ K @ K).ravel()
            self.bf[i, BF_RAXIS:BF_RAXIS + 3] = R0 @ model.joint_axis[i]
        self.bf[:, BF_MASS] = model.body_mass
        self.bf[:, BF_H:BF_H + 3] = model.body_mass[:, None] * model.body_com
        ibar = model.body_inertia[:, 3:, 3:].reshape(nb, 9)
        self.bf[:, BF_IBAR:BF_IBAR + 9] = ibar
        self.bf[:, BF_IBARP:BF_IBARP + 9] = ibar
        self._pack_dofs(model)
        self.fb = np.array(model.frame_body, dtype=np.int64)
        self.ff = np.zeros((len(model.frame_name), FF_SIZE))
        self.ff[:, FF_R:FF_R + 9] = model.frame_R.reshape(-1, 9)
        self.ff[:, FF_P:FF_P + 3] = model.frame_p

    def _pack_dofs(self, model):
        carried = np.zeros((model.nbodies, 3, 3))  # sum of the central inertias of the rotors each body carries
        for k in range(model.nv):
            i = int(model.dof_joint[k])
            parent, one_dof = int(model.body_parent[i]), int(model.joint_nv[i]) == 1
            j_m, i_m = float(model.dof_rotor_inertia[k]), float(model.dof_rotor_transverse[k])
            eps = np.asarray(model.dof_rotor_axis[k], dtype=float)
            self.di[k, :DI_SIZE] = (parent, int(model.joint_idx_q[i]) if one_dof else -1, 0)
            self.df[k, DF_S:DF_S + 6] = model.dof_S[k]
            self.df[k, DF_DAMP], self.df[k, DF_FRIC] = model.dof_damping[k], model.dof_friction[k]
            self.df[k, DF_STIFF], self.df[k, DF_QREF] = model.dof_stiffness[k], model.dof_spring_reference[k]
            if j_m == 0.0 and i_m == 0.0:
                continue
            if not one_dof:
                raise ModelError(f"joint '{model.joint_name[i]}': rotors are supported on 1-DOF joints only",
                                 model.source, value=j_m)
            if not (j_m >= 0.0 and i_m >= 0.0 and abs(np.linalg.norm(eps) - 1.0) <= 1e-9):
                raise ModelError(f"joint '{model.joint_name[i]}': rotor inertias must be >= 0 and its axis a "
                                 f"unit vector", model.source, value=(j_m, i_m, eps.tolist()))
            J_m = j_m * np.outer(eps, eps) + i_m * (np.eye(3) - np.outer(eps, eps))
            self.di[k, DI_ROTOR] = 1
            self.df[k, DF_EPS:DF_EPS + 3], self.df[k, DF_JROT] = eps, j_m
            self.df[k, DF_ALPHA], self.df[k, DF_JM:DF_JM + 9] = model.dof_gear_ratio[k], J_m.ravel()
            if parent >= 0:  # J'_carrier = J_carrier - J_m (seed 002 L142)
                self.bf[parent, BF_IBARP:BF_IBARP + 9] -= J_m.ravel()
                carried[parent] += J_m
        bad = np.flatnonzero(~np.isfinite(self.df).all(axis=1))
        if len(bad):
            k = int(bad[0])
            raise ModelError(f"joint '{model.joint_name[model.dof_joint[k]]}': its friction, spring and rotor "
                             f"parameters must be finite", model.source, value=self.df[k].tolist())
        for i in np.flatnonzero(carried.any(axis=(1, 2))):
            J = model.body_inertia_com[i]
            eig = np.linalg.eigvalsh(J - carried[i])
            if eig.min() < -_PSD_TOL * np.linalg.eigvalsh(J).max():
                raise ModelError(f"body '{model.body_name[i]}': the rotors it carries have more inertia than the "
                                 f"body itself (J' = J - sum J_m is not positive semi-definite)", model.source,
                                 value=eig.round(12).tolist())
