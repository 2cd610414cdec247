"""Kernels of the Delassus operator (seed 000 §3.2, Algs. 3-5), driven by ``engine.contact.delassus``.

Everything is written in the base frame's Plücker coordinates, as the thesis does ("nous travaillerons
exclusivement dans le repère du monde", L1541): a twist a = (a_0, alpha) is the velocity of the material point
at the base origin and the angular velocity; a wrench f = (f, n_0) has its moment about the base origin.  There
joint i transmits with no frame change:

    S_i = oX_i S_i^body,   U_i = oX*_parent (IA_i S_i + rotor)  (the core ABA's U, rotors included),
    D_i^-1 = (S^T IA S + alpha^2 j_m)^-1,   L_i = 1 - U_i D_i^-1 S_i^T                        (eq. 3.43)
    backward:  f_parent += L_i f_i                                       (Alg. 3/5, sign corrected)
    forward:   qdd_i = D_i^-1 (S_i^T f_i - U_i^T a_parent),  a_i = a_parent + S_i qdd_i     (Alg. 3/5)

and Omega_st = J_s M^-1 J_t^T (the acceleration of body s per unit wrench on body t) obeys
Omega_ii = S D^-1 S^T + L_i^T Omega_pp L_i, Omega_st = L_s^T Omega_{p(s),t} (t not below s),
Omega_st = Omega_{s,p(t)} L_t (s not below t) (eq. 3.42, Chang-Khatib).  Body indices are in tree order
(a parent before its children), so the nearest common ancestor is found by climbing the larger index.

Workspace arrays: ``Sw``, ``Uw`` (nv, 6); ``y`` (nv,) scratch; ``F``, ``A`` (nb, 6) per-column wrenches and
accelerations; ``Od`` (nb, 6, 6) the diagonal Omega_ii; ``S6`` (3, 6, 6) scratch; ``path`` (2, nb) int.
Constraint terms: term t is one body ``term_body[t]`` of block ``term_block[t]``, whose rows
``block_row[k]:block_row[k + 1]`` of Lambda see the body through ``Xw[t]`` (6, 6), padded with zero rows.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.dynamics._kernels.aba import articulated_inertias, backward_pass
from engine.dynamics._kernels.algebra import (cross, force_to_parent, inline, kernel, load3, load9, motion_to_parent,
                                              store3)
from engine.dynamics._kernels.kinematics import BAD, check_q, placements, velocities
from engine.dynamics.pack import BI_IV, BI_NV, BI_PARENT, DF_S, WD_U, WS_DINV, WS_OMI_P, WS_OMI_R


@kernel
def articulate(bi, bf, di, df, ws, wd, q, v0, f0):
    """The core ABA's passes at q with v = 0, tau = 0, f_ext = 0: placements, IA_i, D_i^-1 and U_i (rotors
    included; they depend on q only).  Returns a status (``engine.dynamics._kernels.kinematics``)."""
    status = check_q(bi, q)
    if status == BAD:
        return status
    placements(bi, bf, ws, q)
    velocities(bi, df, ws, v0)
    articulated_inertias(bi, bf, di, df, ws, v0, f0)
    backward_pass(bi, di, df, ws, wd, q, v0, v0)
    return status


@kernel
def world_axes(bi, df, ws, wd, Sw, Uw):
    """S_i = oX_i S_i and U_i = oX*_parent U_i: the joint axes and the ABA's U in base coordinates."""
    for i in range(bi.shape[0]):
        parent = bi[i, BI_PARENT]
        for k in range(bi[i, BI_IV], bi[i, BI_IV] + bi[i, BI_NV]):
            sl, sw = motion_to_parent(load9(ws, i, WS_OMI_R), load3(ws, i, WS_OMI_P), load3(df, k, DF_S),
                                      load3(df, k, DF_S + 3))
            ul, uw = load3(wd, k, WD_U), load3(wd, k, WD_U + 3)
            if parent >= 0:  # U_k is in the parent's frame
                ul, uw = force_to_parent(load9(ws, parent, WS_OMI_R), load3(ws, parent, WS_OMI_P), ul, uw)
            store3(Sw, k, 0, sl)
            store3(Sw, k, 3, sw)
            store3(Uw, k, 0, ul)
            store3(Uw, k, 3, uw)


@kernel
def world_terms(ws, term_body, X, Xw):
    """X acts on (v_o, omega) at the body origin o, base axes (Pinocchio's LOCAL_WORLD_ALIGNED); in Plücker
    coordinates at the base origin v_o = a_0 + omega x o, so each row (x_l, x_a) becomes (x_l, x_a + o x x_l)."""
    for t in range(term_body.shape[0]):
        o = load3(ws, term_body[t], WS_OMI_P)
        for e in range(6):
            xl = (X[t, e, 0], X[t, e, 1], X[t, e, 2])
            m = cross(o, xl)
            for r in range(3):
                Xw[t, e, r] = xl[r]
                Xw[t, e, 3 + r] = X[t, e, 3 + r] + m[r]


@inline
def joint_load(bi, Sw, y, F, i):
    """y_i = S_i^T F_i, the load F_i of the articulated body i on its joint's dofs."""
    k0, n = bi[i, BI_IV], bi[i, BI_NV]
    for b in range(n):
        s = 0.0
        for r in range(6):
            s += Sw[k0 + b, r] * F[i, r]
        y[k0 + b] = s


@inline
def transmit(bi, ws, Sw, Uw, y, F, i, p):
    """F_p += L_i F_i = F_i - U_i D_i^-1 S_i^T F_i (the articulated body i passes its load to its parent; y_i =
    S_i^T F_i left in y)."""
    k0, n = bi[i, BI_IV], bi[i, BI_NV]
    joint_load(bi, Sw, y, F, i)
    for r in range(6):
        F[p, r] += F[i, r]
    for a in range(n):
        z = 0.0
        for b in range(n):
            z += ws[i, WS_DINV + 6 * a + b] * y[k0 + b]
        for r in range(6):
            F[p, r] -= Uw[k0 + a, r] * z


@inline
def accelerate(bi, ws, Sw, Uw, y, F, A, i):
    """qdd_i = D_i^-1 (S_i^T F_i - U_i^T a_parent), A_i = a_parent + S_i qdd_i (the fixed base: a = 0)."""
    k0, n, p = bi[i, BI_IV], bi[i, BI_NV], bi[i, BI_PARENT]
    for b in range(n):
        s = 0.0
        for r in range(6):
            s += Sw[k0 + b, r] * F[i, r]
        if p >= 0:
            for r in range(6):
                s -= Uw[k0 + b, r] * A[p, r]
        y[k0 + b] = s
    for r in range(6):
        A[i, r] = A[p, r] if p >= 0 else 0.0
    for a in range(n):
        qdd = 0.0
        for b in range(n):
            qdd += ws[i, WS_DINV + 6 * a + b] * y[k0 + b]
        for r in range(6):
            A[i, r] += Sw[k0 + a, r] * qdd


@inline
def mirror(Lam):
    """Copy the upper triangle onto the lower one (only the upper triangle is computed, seed 000 L1659)."""
    for i in range(Lam.shape[0]):
        for j in range(i):
            Lam[i, j] = Lam[j, i]


@kernel
def test_force(bi, ws, Sw, Uw, y, F, A, term_body, term_block, block_row, block_term, Xw, Lam):
    """Alg. 3 (initial method): for each row j of each block k, the unit contact force X_k^T e_j on the block's
    bodies, a full backward pass (every body) and a full forward pass, then Lambda[:j + 1, j] = X a."""
    nb = bi.shape[0]
    for k in range(block_row.shape[0] - 1):
        for e in range(block_row[k + 1] - block_row[k]):
            j = block_row[k] + e
            for i in range(nb):
                for r in range(6):
                    F[i, r] = 0.0
            for t in range(block_term[k], block_term[k + 1]):
                for r in range(6):
                    F[term_body[t], r] += Xw[t, e, r]
            for i in range(nb - 1, -1, -1):
                if bi[i, BI_PARENT] >= 0:
                    transmit(bi, ws, Sw, Uw, y, F, i, bi[i, BI_PARENT])
            for i in range(nb):
                accelerate(bi, ws, Sw, Uw, y, F, A, i)
            for t in range(block_term[k + 1]):
                r0, b = block_row[term_block[t]], term_body[t]
                for e2 in range(min(block_row[term_block[t] + 1], j + 1) - r0):
                    s = 0.0
                    for r in range(6):
                        s += Xw[t, e2, r] * A[b, r]
                    Lam[r0 + e2, j] += s
    mirror(Lam)


@njit(cache=True, nogil=True)
def tree_factor(bi, ws, Sw, Uw, y, F, term_body, block_term, block_row, Xw, scale, row_map, B_col, B_val):
    """The rows of B = scale · J Aᵀ D^-1/2 (scale = √δt: W = δt Λ = B Bᵀ) into B_col, B_val (the layout of
    ``_factor_kernels`` with one column a block, w = 1: row i's entries are the dofs ``B_col[i, :]``, −1 past its
    last); the columns are the multibody's dofs on the terms' paths to the base, in dof order. Returns the width.

    The ABA's inward pass is a factor of the inverse mass matrix (the innovations factorization of Rodriguez,
    Jain & Kreutz-Delgado 1991; Jain, Robot and Multibody Dynamics, 2011, §7.2): with u = A τ the innovations
    y_i = S_iᵀ F_i it computes from the joint forces τ (``transmit``), M⁻¹ = Aᵀ D⁻¹ A, D = diag(D_i). For the
    wrench Xᵀ e_j of row j (its terms' rows ``Xw``), τ = J_jᵀ, so Λ_jl = Σ_i y_jiᵀ D_i⁻¹ y_li and, with
    D_i⁻¹ = G_i G_iᵀ (Cholesky), B_j,i = G_iᵀ y_ji. The pass climbs from the row's bodies to the base only: row j
    touches the dofs of its bodies' ancestors (Featherstone, RBDA §6.5: the branch-induced sparsity of J L⁻¹)."""
    nb, nv = bi.shape[0], Sw.shape[0]
    col, on, G = np.full(nv, -1, np.int64), np.zeros(nb, np.bool_), np.zeros((nv, 6))
    for t in range(term_body.shape[0]):                   # the columns: the terms' paths
        i = term_body[t]
        while i >= 0 and not on[i]:
            on[i] = True
            i = bi[i, BI_PARENT]
    width = 0
    for i in range(nb):
        if on[i]:
            k0, n = bi[i, BI_IV], bi[i, BI_NV]
            for a in range(n):
                col[k0 + a], width = width, width + 1
                for b in range(a + 1):                    # D_i⁻¹ = G Gᵀ, G lower (row k0 + a)
                    s = ws[i, WS_DINV + 6 * a + b]
                    for c in range(b):
                        s -= G[k0 + a, c] * G[k0 + b, c]
                    G[k0 + a, b] = np.sqrt(s) if a == b else s / G[k0 + b, b]
    for k in range(block_row.shape[0] - 1):
        t0, t1 = block_term[k], block_term[k + 1]
        for e in range(block_row[k + 1] - block_row[k]):
            for t in range(t0, t1):                       # F = 0 on the paths, then the row's wrench
                i = term_body[t]
                while i >= 0:
                    for r in range(6):
                        F[i, r] = 0.0
                    i = bi[i, BI_PARENT]
            for t in range(t0, t1):
                for r in range(6):
                    F[term_body[t], r] += Xw[t, e, r]
            row = row_map[block_row[k] + e]
            p0, p1, count = term_body[t0], term_body[t1 - 1], 0
            while p0 >= 0 or p1 >= 0:                     # the paths' bodies, deepest first (tree order)
                i = max(p0, p1)
                k0, n, p = bi[i, BI_IV], bi[i, BI_NV], bi[i, BI_PARENT]
                if p >= 0:                                # y_i = S_iᵀ F_i, F_p += F_i − U_i D_i⁻¹ y_i
                    transmit(bi, ws, Sw, Uw, y, F, i, p)
                else:
                    joint_load(bi, Sw, y, F, i)
                for a in range(n):                        # B_j,i = G_iᵀ y_i
                    s = 0.0
                    for b in range(a, n):
                        s += G[k0 + b, a] * y[k0 + b]
                    B_col[row, count], B_val[row, count, 0], count = col[k0 + a], scale * s, count + 1
                p0, p1 = p if p0 == i else p0, p if p1 == i else p1
            for c in range(count, B_col.shape[1]):
                B_col[row, c] = -1
    return width


@kernel
def tree_factor_support(bi, term_body, block_term):
    """The most dofs a row of ``tree_factor`` touches: over the blocks, the dofs on their terms' paths."""
    most = 0
    for k in range(block_term.shape[0] - 1):
        p0, p1, count = term_body[block_term[k]], term_body[block_term[k + 1] - 1], 0
        while p0 >= 0 or p1 >= 0:
            i = max(p0, p1)
            count += bi[i, BI_NV]
            p = bi[i, BI_PARENT]
            p0, p1 = p if p0 == i else p0, p if p1 == i else p1
        most = max(most, count)
    return most


@kernel
def reach(bi, bodies, mark, union):
    """mark[i] = the largest c whose contact body bodies[c] has i on its path to the base (-1: none); the
    bodies with mark >= 0 (the union of the paths, tree order) go to ``union``.  Returns their count and
    whether a contact body is a proper ancestor of another one (they share a branch)."""
    for i in range(bi.shape[0]):
        mark[i], union[i] = -1, 0
    for c in range(bodies.shape[0]):
        union[bodies[c]] = 1
    shared = False
    for c in range(bodies.shape[0]):
        i = bodies[c]
        mark[i] = max(mark[i], c)
        i = bi[i, BI_PARENT]
        while i >= 0:
            shared = shared or union[i] == 1
            mark[i] = max(mark[i], c)
            i = bi[i, BI_PARENT]
    n = 0
    for i in range(bi.shape[0]):
        if mark[i] >= 0:
            union[n] = i
            n += 1
    return n, shared


@kernel
def thesis_omega(bi, ws, Sw, Uw, y, F, A, bodies, mark, union, Om):
    """Alg. 5 (the thesis's method): 6 unit wrenches per contact body c; backward pass from the body to the
    base only, forward pass over the paths of the contact bodies c' >= c; Omega_{c'c} = their accelerations
    (eqs. 3.47-3.49), Omega_{cc'} = Omega_{c'c}^T (eq. 3.44)."""
    C = bodies.shape[0]
    for c in range(C):
        for col in range(6):
            for u in range(union.shape[0]):
                for r in range(6):
                    F[union[u], r] = 0.0
            F[bodies[c], col] = 1.0
            i = bodies[c]
            while bi[i, BI_PARENT] >= 0:
                transmit(bi, ws, Sw, Uw, y, F, i, bi[i, BI_PARENT])
                i = bi[i, BI_PARENT]
            for u in range(union.shape[0]):
                if mark[union[u]] >= c:
                    accelerate(bi, ws, Sw, Uw, y, F, A, union[u])
            for c2 in range(c, C):
                for r in range(6):
                    Om[c2, c, r, col] = A[bodies[c2], r]
    for c in range(C):
        for r in range(6):
            for s in range(r):  # Omega_cc is symmetric: keep one computed value for both entries
                Om[c, c, r, s] = Om[c, c, s, r]
        for c2 in range(c + 1, C):
            for r in range(6):
                for s in range(6):
                    Om[c, c2, r, s] = Om[c2, c, s, r]


@inline
def diagonal_step(bi, ws, Sw, Uw, Od, S6, i, p):
    """Omega_ii = S D^-1 S^T + L^T Omega_pp L with L^T Omega L = Omega - Psi_1 - Psi_1^T + Psi_3 (L1645-1653):
    V = S D^-1, W = Omega U, G = U^T W, Omega_ii = Omega + V S^T - V W^T - W V^T + V G V^T."""
    k0, n = bi[i, BI_IV], bi[i, BI_NV]
    for a in range(n):
        for r in range(6):
            v = w = 0.0
            for b in range(n):
                v += Sw[k0 + b, r] * ws[i, WS_DINV + 6 * b + a]
            if p >= 0:
                for c in range(6):
                    w += Od[p, r, c] * Uw[k0 + a, c]
            S6[0, r, a], S6[1, r, a] = v, w
        for b in range(n):
            g = 0.0
            for c in range(6):
                g += Uw[k0 + b, c] * S6[1, c, a]
            S6[2, b, a] = g
    for r in range(6):
        for c in range(r, 6):
            s = Od[p, r, c] if p >= 0 else 0.0
            for a in range(n):
                s += S6[0, r, a] * (Sw[k0 + a, c] - S6[1, c, a]) - S6[1, r, a] * S6[0, c, a]
                for b in range(n):
                    s += S6[0, r, a] * S6[2, a, b] * S6[0, c, b]
            Od[i, r, c] = Od[i, c, r] = s


@inline
def times_L(bi, ws, Sw, Uw, S6, M, m0, m1, k):
    """M <- M L_k = M - (M U_k) D^-1 S_k^T for the block M[m0, m1]."""
    k0, n = bi[k, BI_IV], bi[k, BI_NV]
    for r in range(6):
        for a in range(n):
            w = 0.0
            for c in range(6):
                w += M[m0, m1, r, c] * Uw[k0 + a, c]
            S6[1, r, a] = w
    for r in range(6):
        for a in range(n):
            z = 0.0
            for b in range(n):
                z += S6[1, r, b] * ws[k, WS_DINV + 6 * b + a]
            for c in range(6):
                M[m0, m1, r, c] -= z * Sw[k0 + a, c]


@inline
def L_transpose_times(bi, ws, Sw, Uw, S6, M, m0, m1, k):
    """M <- L_k^T M = M - S_k D^-1 (U_k^T M) for the block M[m0, m1]."""
    k0, n = bi[k, BI_IV], bi[k, BI_NV]
    for c in range(6):
        for a in range(n):
            w = 0.0
            for r in range(6):
                w += Uw[k0 + a, r] * M[m0, m1, r, c]
            S6[1, a, c] = w
    for c in range(6):
        for a in range(n):
            z = 0.0
            for b in range(n):
                z += ws[k, WS_DINV + 6 * a + b] * S6[1, b, c]
            for r in range(6):
                M[m0, m1, r, c] -= Sw[k0 + a, r] * z


@kernel
def chang_khatib_omega(bi, ws, Sw, Uw, Od, S6, path, bodies, union, Om):
    """Alg. 4 (Chang-Khatib): Omega_ii down the paths of the contact bodies, then for each pair (s, t) with
    nearest common ancestor h, Omega_st = L_s^T ... L_k1^T Omega_hh L_k1' ... L_t (eq. 3.42)."""
    for u in range(union.shape[0]):
        diagonal_step(bi, ws, Sw, Uw, Od, S6, union[u], bi[union[u], BI_PARENT])
    C = bodies.shape[0]
    for c in range(C):
        for c2 in range(c, C):
            s, t, ns, nt = bodies[c], bodies[c2], 0, 0
            while s != t:  # climb to the nearest common ancestor (-1: the fixed base)
                if s > t:
                    path[0, ns], ns, s = s, ns + 1, bi[s, BI_PARENT]
                else:
                    path[1, nt], nt, t = t, nt + 1, bi[t, BI_PARENT]
            for r in range(6):
                for col in range(6):
                    Om[c, c2, r, col] = Od[s, r, col] if s >= 0 else 0.0
            for m in range(nt - 1 if s >= 0 else -1, -1, -1):
                times_L(bi, ws, Sw, Uw, S6, Om, c, c2, path[1, m])
            for m in range(ns - 1 if s >= 0 else -1, -1, -1):
                L_transpose_times(bi, ws, Sw, Uw, S6, Om, c, c2, path[0, m])
            for r in range(6):
                for col in range(6):
                    Om[c2, c, col, r] = Om[c, c2, r, col]


@kernel
def project(term_contact, term_block, block_row, Xw, Om, Y, Lam):
    """Lambda_kl = sum over the bodies s of block k and t of block l of X_ks Omega_st X_lt^T (eq. 3.45):
    Y_a = X_a Omega_{s_a, .} (rows_a, 6C) per term, then the upper triangle Y_a X_b^T, mirrored."""
    nt, C = term_contact.shape[0], Om.shape[0]
    for a in range(nt):
        ka, ca = term_block[a], term_contact[a]
        for e in range(block_row[ka + 1] - block_row[ka]):
            for c in range(C):
                for col in range(6):
                    s = 0.0
                    for r in range(6):
                        s += Xw[a, e, r] * Om[ca, c, r, col]
                    Y[a, e, 6 * c + col] = s
    for a in range(nt):
        ka = term_block[a]
        for b in range(nt):
            kb, o = term_block[b], 6 * term_contact[b]
            if kb < ka:
                continue
            for e in range(block_row[ka + 1] - block_row[ka]):
                i = block_row[ka] + e
                for e2 in range(max(0, i - block_row[kb]), block_row[kb + 1] - block_row[kb]):
                    s = 0.0
                    for col in range(6):
                        s += Y[a, e, o + col] * Xw[b, e2, col]
                    Lam[i, block_row[kb] + e2] += s
    mirror(Lam)


DENSE_BODIES = 2   # ``project_dense`` for blocks on at most this many bodies (one or two feet)


@njit(cache=True, nogil=True)
def project_dense(term_contact, term_block, block_row, Xw, Om, rows):
    """``project``'s Λ (rows × rows) as two BLAS products for blocks on few bodies (C ≤ DENSE_BODIES): Λ = X Ω Xᵀ
    (eq. 3.45) with the factors of ``dense_factors``, then mirrored, as ``project`` leaves it exactly symmetric.
    Twice C times the flops of ``project``'s loops, yet twice as fast for C ≤ 2 (a robot standing on 80 sole
    contacts: 240 rows through a 12-column X)."""
    X, Omega = dense_factors(term_contact, term_block, block_row, Xw, Om, rows)
    Lam = np.dot(np.dot(X, Omega), X.T)
    mirror(Lam)
    return Lam


@njit(cache=True, nogil=True)
def dense_factors(term_contact, term_block, block_row, Xw, Om, rows):
    """The factors of Λ = X Ω Xᵀ (eq. 3.45): X (rows, 6C) each term's rows in its body's six columns, Ω (6C, 6C)
    the blocks Omega_st."""
    C = Om.shape[0]
    X, Omega = np.zeros((rows, 6 * C)), np.empty((6 * C, 6 * C))
    for a in range(term_contact.shape[0]):
        r0, o = block_row[term_block[a]], 6 * term_contact[a]
        for e in range(block_row[term_block[a] + 1] - r0):
            for r in range(6):
                X[r0 + e, o + r] += Xw[a, e, r]
    for c in range(C):
        for c2 in range(C):
            for r in range(6):
                for col in range(6):
                    Omega[6 * c + r, 6 * c2 + col] = Om[c, c2, r, col]
    return X, Omega


@kernel
def to_body_origins(ws, bodies, Om, out):
    """Omega in the LOCAL_WORLD_ALIGNED convention: out_st = T_s Omega_st T_t^T with T_s (a_0, alpha) =
    (a_0 + alpha x o_s, alpha) = (a_0 - [o_s]x alpha, alpha)."""
    C = bodies.shape[0]
    for c in range(C):
        for c2 in range(C):
            o, o2 = load3(ws, bodies[c], WS_OMI_P), load3(ws, bodies[c2], WS_OMI_P)
            for r in range(6):  # rows: out[r] = Om[r] - [o]x Om[3 + r] for the linear rows
                for col in range(6):
                    out[c, c2, r, col] = Om[c, c2, r, col]
                if r < 3:
                    for col in range(6):
                        out[c, c2, r, col] += (o[(r + 2) % 3] * Om[c, c2, 3 + (r + 1) % 3, col] -
                                               o[(r + 1) % 3] * Om[c, c2, 3 + (r + 2) % 3, col])
            for r in range(6):  # columns: out[:, col] -= out[:, 3 + .] [o2]x^T
                for col in range(3):
                    out[c, c2, r, col] += (o2[(col + 2) % 3] * out[c, c2, r, 3 + (col + 1) % 3] -
                                           o2[(col + 1) % 3] * out[c, c2, r, 3 + (col + 2) % 3])
