"""Kernel: Featherstone's articulated-body algorithm with multi-DOF joints and geared rotors.

Rotor of dof k (carried by the parent c of joint k): a massless body driven by the same coordinate as
joint k, so the pair (body k, rotor) is one articulated cluster with the stacked motion subspace
[S_k; alpha (0, eps)].  Working out the ABA step for that cluster in the parent frame gives, exactly and
still in O(n):  D = S^T IA S + alpha^2 j_m,  U = X* IA S + alpha (0, j_m eps),
u = tau - S^T pA - alpha eps.(omega_m x J_m omega_m), and the rotor's bias
(0, omega_m x J_m omega_m + J_m alpha qdot omega_c x eps) joins the carrier's; the rotor's inertia J_m is
already inside the carrier's frozen inertia, which starts IA_c.
"""
from __future__ import annotations

from engine.dynamics._kernels.algebra import (F1, F2, I2, STATUS, add, cross, dot, entry, force_cross, force_to_parent,
                                              inertia_mul, inline, kernel, load3, load9, madd, mv, rotate_sym, scale,
                                              skew_mul, split, store3, sub, transpose, tuple_op)
from engine.dynamics._kernels.kinematics import (BAD, check_dynamics, parent_motion, placements, store_acceleration,
                                                 store_acceleration_without_gravity, velocities)
from engine.dynamics._kernels.rotors import passive_force, rotor_gyroscopic
from engine.dynamics.pack import (BF_H, BF_IBAR, BF_IBARP, BF_MASS, BI_IV, BI_NV, BI_PARENT, DF_ALPHA, DF_EPS, DF_JM,
                                  DF_JROT, DF_S, DI_CARRIER, DI_ROTOR, WD_U, WD_UP, WS_A_GF, WS_C, WS_DINV, WS_IA,
                                  WS_LIMI_P, WS_LIMI_R, WS_PA, WS_V)


@inline
def block(ws, i, r, c):
    """The 3x3 block (r, c) of IA_i (r, c in {0, 3})."""
    o = WS_IA + 6 * r + c
    return (ws[i, o], ws[i, o + 1], ws[i, o + 2], ws[i, o + 6], ws[i, o + 7], ws[i, o + 8], ws[i, o + 12],
            ws[i, o + 13], ws[i, o + 14])


@inline
def add_block(ws, i, r, c, X):
    o = WS_IA + 6 * r + c
    for a in range(3):
        for b in range(3):
            ws[i, o + 6 * a + b] += X[3 * a + b]


@inline
def set_inertia(ws, i, m, h, I):
    """IA_i = [[m 1, -[h]x], [[h]x, Ibar]]."""
    for k in range(36):
        ws[i, WS_IA + k] = 0.0
    add_block(ws, i, 0, 0, (m, 0.0, 0.0, 0.0, m, 0.0, 0.0, 0.0, m))
    add_block(ws, i, 0, 3, (0.0, h[2], -h[1], -h[2], 0.0, h[0], h[1], -h[0], 0.0))
    add_block(ws, i, 3, 0, (0.0, -h[2], h[1], h[2], 0.0, -h[0], -h[1], h[0], 0.0))
    add_block(ws, i, 3, 3, I)


@inline
def add_congruence_to_parent(ws, i, parent, R, p):
    """IA_parent += X* IA_i X*^T with the blocks A, B, C rotated (A^ = R A R^T, ...) then moved by p:
    A' = A^,  B' = B^ - A^ [p]x,  C' = C^ + [p]x B^ + ([p]x B^)^T - [p]x A^ [p]x."""
    A, B, C = rotate_sym(R, block(ws, i, 0, 0)), rotate_sym(R, block(ws, i, 0, 3)), rotate_sym(R, block(ws, i, 3, 3))
    PAt = transpose(skew_mul(p, A))     # A^ [p]x = -([p]x A^)^T
    PB = skew_mul(p, B)
    B2 = madd(B, PAt)
    add_block(ws, parent, 0, 0, A)
    add_block(ws, parent, 0, 3, B2)
    add_block(ws, parent, 3, 0, transpose(B2))
    add_block(ws, parent, 3, 3, madd(madd(C, PB), madd(transpose(PB), skew_mul(p, PAt))))


@inline
def row_dot(ws, i, o, xl, xw):
    """Row of ws starting at column o, dotted with the 6-vector (xl, xw)."""
    return (ws[i, o] * xl[0] + ws[i, o + 1] * xl[1] + ws[i, o + 2] * xl[2] + ws[i, o + 3] * xw[0] +
            ws[i, o + 4] * xw[1] + ws[i, o + 5] * xw[2])


@inline
def ia_times(ws, i, xl, xw):
    """IA_i (xl, xw), as (linear, angular)."""
    o = WS_IA
    return ((row_dot(ws, i, o, xl, xw), row_dot(ws, i, o + 6, xl, xw), row_dot(ws, i, o + 12, xl, xw)),
            (row_dot(ws, i, o + 18, xl, xw), row_dot(ws, i, o + 24, xl, xw), row_dot(ws, i, o + 30, xl, xw)))


@inline
def invert_spd(ws, i, o, n):
    """In-place Gauss-Jordan inverse of the SPD n x n matrix at ws[i, o:] (row stride 6), no pivoting."""
    for c in range(n):
        pivot = ws[i, o + 7 * c]
        ws[i, o + 7 * c] = 1.0
        for j in range(n):
            ws[i, o + 6 * c + j] /= pivot
        for r in range(n):
            if r != c:
                f = ws[i, o + 6 * r + c]
                ws[i, o + 6 * r + c] = 0.0
                for j in range(n):
                    ws[i, o + 6 * r + j] -= f * ws[i, o + 6 * c + j]


@kernel
def articulated_inertias(bi, bf, di, df, ws, v, fext):
    """IA_i = I_i (rotors frozen) and the bias forces (``bias_forces``), after ``velocities``."""
    for i in range(bi.shape[0]):
        set_inertia(ws, i, bf[i, BF_MASS], load3(bf, i, BF_H), load9(bf, i, BF_IBAR))
    bias_forces(bi, bf, di, df, ws, v, fext)


@inline
def bias_forces(bi, bf, di, df, ws, v, fext):
    """pA_i = v_i x* I'_i v_i - f_ext,i and each rotor's bias on its carrier (seed 000 eq. 2.11-2.12), after
    ``velocities``."""
    for i in range(bi.shape[0]):
        vl, w = load3(ws, i, WS_V), load3(ws, i, WS_V + 3)
        m, h = bf[i, BF_MASS], load3(bf, i, BF_H)
        hl, hn = inertia_mul(m, h, load9(bf, i, BF_IBARP), vl, w)
        bl, bn = force_cross(vl, w, hl, hn)
        store3(ws, i, WS_PA, sub(bl, load3(fext, i, 0)))
        store3(ws, i, WS_PA + 3, sub(bn, load3(fext, i, 3)))
    for k in range(v.shape[0]):
        c = di[k, DI_CARRIER]
        if di[k, DI_ROTOR] and c >= 0:
            gyro, w_c = rotor_gyroscopic(di, df, ws, k, v[k])
            spin = mv(load9(df, k, DF_JM), scale(df[k, DF_ALPHA] * v[k], cross(w_c, load3(df, k, DF_EPS))))
            store3(ws, c, WS_PA + 3, add(load3(ws, c, WS_PA + 3), add(gyro, spin)))


@inline
def joint_terms(bi, di, df, ws, wd, i, q, v, tau):
    """For each dof k of joint i: U_k = IA_i S_k, D = S^T IA_i S (+ alpha^2 j_m), inverted in ws[i, WS_DINV],
    u'_k = tau_k - passive_k - S_k^T pA_i - U_k^T c_i (- alpha eps.(omega_m x J_m omega_m)) in wd[k, WD_UP],
    and U_k moved to the parent frame (+ alpha j_m (0, eps)) in wd[k, WD_U]."""
    k0, nvi = bi[i, BI_IV], bi[i, BI_NV]
    R, p = load9(ws, i, WS_LIMI_R), load3(ws, i, WS_LIMI_P)
    cl, cw = load3(ws, i, WS_C), load3(ws, i, WS_C + 3)
    pl, pw = load3(ws, i, WS_PA), load3(ws, i, WS_PA + 3)
    for k in range(k0, k0 + nvi):
        ul, uw = ia_times(ws, i, load3(df, k, DF_S), load3(df, k, DF_S + 3))
        for j in range(k0, k0 + nvi):
            ws[i, WS_DINV + 6 * (j - k0) + k - k0] = row_dot(df, j, DF_S, ul, uw)
        wd[k, WD_UP] = bias_torque(di, df, ws, k, q, v, tau, ul, uw, cl, cw, pl, pw)
        ul, uw = force_to_parent(R, p, ul, uw)
        if di[k, DI_ROTOR]:
            alpha, eps = df[k, DF_ALPHA], load3(df, k, DF_EPS)
            ws[i, WS_DINV] += alpha * alpha * df[k, DF_JROT]
            uw = add(uw, scale(alpha * df[k, DF_JROT], eps))
        store3(wd, k, WD_U, ul)
        store3(wd, k, WD_U + 3, uw)
    invert_spd(ws, i, WS_DINV, nvi)


@inline
def bias_torque(di, df, ws, k, q, v, tau, ul, uw, cl, cw, pl, pw):
    """u'_k = tau_k - passive_k - S_k^T pA_i - U_k^T c_i (- alpha eps.(omega_m x J_m omega_m)), U_k = (ul, uw) =
    IA_i S_k in the joint's frame, c_i = (cl, cw), pA_i = (pl, pw)."""
    u = tau[k] - passive_force(di, df, k, q, v[k]) - row_dot(df, k, DF_S, pl, pw) - dot6(ul, uw, cl, cw)
    if di[k, DI_ROTOR]:
        u -= df[k, DF_ALPHA] * dot(load3(df, k, DF_EPS), rotor_gyroscopic(di, df, ws, k, v[k])[0])
    return u


@tuple_op
def dot6(al, aw, bl, bw):
    return dot(al, bl) + dot(aw, bw)


@inline
def dinv_times(ws, wd, i, k0, nvi, a, x):
    """Row a of D_i^-1 times x, where x_b = wd[k0 + b, WD_UP] - U_b^T (xl, xw) (the joint's u' - U^T a)."""
    s = 0.0
    for b in range(nvi):
        s += ws[i, WS_DINV + 6 * a + b] * (wd[k0 + b, WD_UP] - row_dot(wd, k0 + b, WD_U, x[0], x[1]))
    return s


@kernel
def backward_pass(bi, di, df, ws, wd, q, v, tau):
    """IA_parent += X* IA_i X*^T - U D^-1 U^T and pA_parent += X* (pA_i + IA_i c_i) + U D^-1 u'
    (seed 000 eq. 2.11-2.13 with Gamma_j, multi-DOF form eq. 3.51-3.55)."""
    for i in range(bi.shape[0] - 1, -1, -1):
        joint_terms(bi, di, df, ws, wd, i, q, v, tau)
        parent, k0, nvi = bi[i, BI_PARENT], bi[i, BI_IV], bi[i, BI_NV]
        if parent < 0:
            continue
        R, p = load9(ws, i, WS_LIMI_R), load3(ws, i, WS_LIMI_P)
        bias_to_parent(ws, wd, i, parent, k0, nvi, R, p)
        add_congruence_to_parent(ws, i, parent, R, p)
        for a in range(nvi):
            ual, uaw = load3(wd, k0 + a, WD_U), load3(wd, k0 + a, WD_U + 3)
            for b in range(nvi):
                d = ws[i, WS_DINV + 6 * a + b]
                ubl, ubw = load3(wd, k0 + b, WD_U), load3(wd, k0 + b, WD_U + 3)
                for r in range(3):
                    for c in range(3):  # IA_parent -= U_a D^-1_ab U_b^T, block by block
                        ws[parent, WS_IA + 6 * r + c] -= d * ual[r] * ubl[c]
                        ws[parent, WS_IA + 6 * r + c + 3] -= d * ual[r] * ubw[c]
                        ws[parent, WS_IA + 6 * r + c + 18] -= d * uaw[r] * ubl[c]
                        ws[parent, WS_IA + 6 * r + c + 21] -= d * uaw[r] * ubw[c]


@inline
def bias_to_parent(ws, wd, i, parent, k0, nvi, R, p):
    """pA_parent += X* (pA_i + IA_i c_i) + U D^-1 u' (``backward_pass``)."""
    zero = (0.0, 0.0, 0.0)
    al, aw = ia_times(ws, i, load3(ws, i, WS_C), load3(ws, i, WS_C + 3))
    fl, fn = force_to_parent(R, p, add(load3(ws, i, WS_PA), al), add(load3(ws, i, WS_PA + 3), aw))
    for a in range(nvi):
        s = dinv_times(ws, wd, i, k0, nvi, a, (zero, zero))              # (D^-1 u')_a
        fl, fn = add(fl, scale(s, load3(wd, k0 + a, WD_U))), add(fn, scale(s, load3(wd, k0 + a, WD_U + 3)))
    store3(ws, parent, WS_PA, add(load3(ws, parent, WS_PA), fl))
    store3(ws, parent, WS_PA + 3, add(load3(ws, parent, WS_PA + 3), fn))


@inline
def bias_backward_pass(bi, di, df, ws, wd, q, v, tau):
    """``backward_pass`` for the bias forces only: u' (``bias_torque``, as ``joint_terms``) and pA_parent
    (``bias_to_parent``), with IA, U and D^-1 as an earlier backward pass at the same (q, v) left them."""
    for i in range(bi.shape[0] - 1, -1, -1):
        k0, nvi = bi[i, BI_IV], bi[i, BI_NV]
        cl, cw = load3(ws, i, WS_C), load3(ws, i, WS_C + 3)
        pl, pw = load3(ws, i, WS_PA), load3(ws, i, WS_PA + 3)
        for k in range(k0, k0 + nvi):
            ul, uw = ia_times(ws, i, load3(df, k, DF_S), load3(df, k, DF_S + 3))
            wd[k, WD_UP] = bias_torque(di, df, ws, k, q, v, tau, ul, uw, cl, cw, pl, pw)
        parent = bi[i, BI_PARENT]
        if parent >= 0:
            bias_to_parent(ws, wd, i, parent, k0, nvi, load9(ws, i, WS_LIMI_R), load3(ws, i, WS_LIMI_P))


@inline
def forward_pass(bi, df, ws, wd, g, ddq):
    """qdd_i = D^-1 (u' - U^T a_parent), a_i = X^-1 a_parent + c_i + S qdd_i (seed 000 eq. 2.14)."""
    base_a = (-g[0], -g[1], -g[2])
    for i in range(bi.shape[0]):
        k0, nvi = bi[i, BI_IV], bi[i, BI_NV]
        a_p = parent_motion(bi, ws, i, WS_A_GF, base_a)
        for a in range(nvi):
            ddq[k0 + a] = dinv_times(ws, wd, i, k0, nvi, a, a_p)
        al, aw = store_acceleration(bi, df, ws, i, ddq, a_p)
        store_acceleration_without_gravity(ws, i, al, aw, g)


@entry(STATUS(I2, F2, F2, F2, F1, F1, F1, F2, F1, F1))
def aba(mi, mf, ws, wd, q, v, tau, fext, g, ddq):
    """ddq = M^-1 (tau - passive - b(q, v) + J^T f_ext) in O(n); returns a status."""
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    status = check_dynamics(bi, df, q, v, tau, fext, g)
    if status == BAD:
        return status
    aba_passes(bi, bf, di, df, ws, wd, q, v, tau, fext, g, ddq)
    return status


@kernel
def aba_passes(bi, bf, di, df, ws, wd, q, v, tau, fext, g, ddq):
    """The passes of ``aba`` on inputs ``check_dynamics`` accepted."""
    placements(bi, bf, ws, q)
    velocities(bi, df, ws, v)
    articulated_inertias(bi, bf, di, df, ws, v, fext)
    backward_pass(bi, di, df, ws, wd, q, v, tau)
    forward_pass(bi, df, ws, wd, g, ddq)


@kernel
def bias_passes(bi, bf, di, df, ws, wd, q, v, tau, fext, g, ddq):
    """``aba_passes`` again at the (q, v) of the last ``aba_passes`` on ``ws``, ``wd``, under other forces: the
    placements, velocities, IA, U and D^-1 left there depend on (q, v) only (Featherstone, Rigid Body Dynamics
    Algorithms, 2008, §7.3: IA apart from pA), so only pA, u' and the forward pass are redone, each as
    aba_passes computes it: ddq is the same to the last bit, without the congruences IA_parent += X* IA_i X*^T."""
    bias_forces(bi, bf, di, df, ws, v, fext)
    bias_backward_pass(bi, di, df, ws, wd, q, v, tau)
    forward_pass(bi, df, ws, wd, g, ddq)
