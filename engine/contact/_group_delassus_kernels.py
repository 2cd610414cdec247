"""numba kernels of the contact stage's Delassus operators, group by group (driven by ``stepping.py``,
``_tree_kernels``, ``_rigid_kernels`` and ``_sole_kernels``): W_k += δt Λ_m for each multibody m of a collision
group k by the thesis's methods (``_delassus_kernels``) or, for a large group on one multibody, as B Bᵀ from its
joint-space factor; W_k = B Bᵀ of the groups of free rigid bodies in body space. Bodies, contacts, closures and the
groups' layout (rows, blocks, the flat buffer W) as in ``_stepping_kernels``' docstring.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.contact._delassus_kernels import (DENSE_BODIES, chang_khatib_omega, dense_factors, project, project_dense,
                                              reach, test_force, thesis_omega, tree_factor, tree_factor_support,
                                              world_axes, world_terms)
from engine.contact._linalg_kernels import gram_upper, no_factor
from engine.dynamics._kernels.algebra import inline, kernel

AUTO, THESIS, CHANG_KHATIB, TEST_FORCE = 0, 1, 2, 3      # the names of engine.contact.delassus.METHODS
JOINT_SPACE = 4          # W = B Bᵀ from the joint-space factor (``multibody_delassus_factor``; picked by AUTO)
TREE_FACTOR_ROWS = np.int64(36)  # … for a group on one multibody of this many rows or more: Talos falling, Λ by
                         # the thesis's methods against B Bᵀ, 24 rows on 2 bodies 9.6 against 9.9 µs, 42 rows on 5
                         # bodies 16.6 against 14.1, 72 on 13: 64 against 30, 177 on 17: 188 against 85 µs
                         # (np.int64: _newton_kernels.PATIENCE says why)


@njit(cache=True, nogil=True)
def multibody_delassus(lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side, closure_X,
                       closure_nrows, closure_row, bi, df, ws, wd, Sw, Uw, y, F, A, Od, S6, path, mark, union,
                       method, W, w0, n, r0, dt):
    """W[rows, rows] += δt Λ_m for the multibody with bodies lo..hi−1 of a group (``multibody_terms``): Λ_m by
    ``engine.contact.delassus`` (Alg. 3, 4 or 5; AUTO picks Alg. 4 when two contact bodies share a branch),
    from the articulated inertias of the free dynamics' ABA in ``ws``/``wd`` (``reuse_aba``), with the
    workspace arrays of ``delassus.workspace``.  Returns the method used (0: no block on this multibody)."""
    return multibody_delassus_factor(lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side,
                                     closure_X, closure_nrows, closure_row, bi, df, ws, wd, Sw, Uw, y, F, A, Od, S6,
                                     path, mark, union, method, W, w0, n, r0, dt, n + 1)[0]


@njit(cache=True, nogil=True)
def multibody_delassus_factor(lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side, closure_X,
                              closure_nrows, closure_row, bi, df, ws, wd, Sw, Uw, y, F, A, Od, S6, path, mark, union,
                              method, W, w0, n, r0, dt, factor_rows):
    """``multibody_delassus``, but where every one of the group's n rows acts on this multibody, the method is
    AUTO and n ≥ ``factor_rows``: W_group = B Bᵀ from the factor in joint space of ``_delassus_kernels.tree_factor``
    (the same ABA's inward pass, B = √δt J Aᵀ D^-1/2, the group's rows in ``_factor_kernels``' layout with w = 1;
    ``set_factor_product``: the group's W is this multibody's alone), which the solver's linear solves then take
    too (method JOINT_SPACE).
    Returns (the method used (0: no block on this multibody), B_col, B_val, width (0: no factor))."""
    nt, nb, nbodies, term_block, term_body, term_contact, block_row, block_term, bodies, row_map, Xw = _world_terms(
        lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side, closure_X, closure_nrows,
        closure_row, bi, df, ws, wd, Sw, Uw, mark)
    B_col, B_val, width = no_factor()
    if nt == 0:
        return 0, B_col, B_val, width
    rows = block_row[nb]
    if method == AUTO and rows == n and n >= factor_rows:
        K = tree_factor_support(bi, term_body, block_term)
        B_col, B_val = np.empty((n, K), np.int64), np.empty((n, K, 1))
        width = tree_factor(bi, ws, Sw, Uw, y, F, term_body, block_term, block_row, Xw, math.sqrt(dt),
                            row_map[:rows] - r0, B_col, B_val)
        set_factor_product(W, w0, B_col, B_val, width)
        return JOINT_SPACE, B_col, B_val, width
    if method == TEST_FORCE:
        Lam = np.zeros((rows, rows))
        test_force(bi, ws, Sw, Uw, y, F, A, term_body, term_block, block_row, block_term, Xw, Lam)
    else:
        method, Om = _omega(bi, ws, Sw, Uw, y, F, A, Od, S6, path, bodies, mark, union, method)
        if nbodies <= DENSE_BODIES:
            Lam = project_dense(term_contact, term_block, block_row, Xw, Om, rows)
        else:
            Lam = np.zeros((rows, rows))
            project(term_contact, term_block, block_row, Xw, Om, np.empty((nt, 6, 6 * nbodies)), Lam)
    add_delassus(W, w0, n, r0, row_map[:rows], Lam, dt)
    return method, B_col, B_val, width


@njit(cache=True, nogil=True)
def set_factor_product(W, w0, B_col, B_val, width):
    """W[w0:] (n × n, row-major, n = B's rows) = B Bᵀ for a factor of w = 1: B dense (n, width), its upper triangle
    by BLAS's dsyrk in place (``gram_upper``), mirrored."""
    n = B_col.shape[0]
    B = np.zeros((n, width))
    for i in range(n):
        for s in range(B_col.shape[1]):
            if B_col[i, s] >= 0:
                B[i, B_col[i, s]] += B_val[i, s, 0]
    Wg = W[w0:w0 + n * n].reshape((n, n))
    gram_upper(B, Wg)
    for i in range(n):
        for j in range(i):
            Wg[i, j] = Wg[j, i]


@njit(cache=True, nogil=True)
def multibody_factors(lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side, closure_X,
                      closure_nrows, closure_row, bi, df, ws, wd, Sw, Uw, y, F, A, Od, S6, path, mark, union,
                      method, n, r0):
    """Λ_m = X_m Ω Xᵀ_m (eq. 3.45) unassembled, for a group whose rows all act on this one multibody (method AUTO,
    THESIS or CHANG_KHATIB, as ``multibody_delassus``): X_m (n, 6C), the group's n rows in the C contact bodies'
    six columns (``project_dense``'s X, rows in the group's order), and Ω (6C, 6C).  Returns (method, X_m, Ω)."""
    nt, nb, nbodies, term_block, term_body, term_contact, block_row, block_term, bodies, row_map, Xw = _world_terms(
        lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side, closure_X, closure_nrows,
        closure_row, bi, df, ws, wd, Sw, Uw, mark)
    method, Om = _omega(bi, ws, Sw, Uw, y, F, A, Od, S6, path, bodies, mark, union, method)
    X_lam, Omega = dense_factors(term_contact, term_block, block_row, Xw, Om, block_row[nb])
    X_m = np.zeros((n, X_lam.shape[1]))
    for i in range(block_row[nb]):
        X_m[row_map[i] - r0] = X_lam[i]
    return method, X_m, Omega


@njit(cache=True, nogil=True)
def _world_terms(lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side, closure_X,
                 closure_nrows, closure_row, bi, df, ws, wd, Sw, Uw, mark):
    """``multibody_terms`` of a group on the multibody with bodies lo..hi−1, trimmed to their counts, and the
    terms' maps in world axes (``world_terms``)."""
    nt_max = 2 * (group_contacts.shape[0] + closures.shape[0])
    term_block, term_body = np.empty(nt_max, np.int64), np.empty(nt_max, np.int64)
    term_contact, term_X = np.empty(nt_max, np.int64), np.empty((nt_max, 6, 6))
    block_row, block_term = np.empty(nt_max + 1, np.int64), np.empty(nt_max + 1, np.int64)
    bodies, row_map = np.empty(hi - lo, np.int64), np.empty(3 * nt_max, np.int64)
    nt, nb, nbodies = multibody_terms(lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side,
                                      closure_X, closure_nrows, closure_row, mark, term_block, term_body, term_X,
                                      block_row, block_term, bodies, term_contact, row_map)
    Xw = np.empty((nt, 6, 6))
    if nt:
        world_axes(bi, df, ws, wd, Sw, Uw)
        world_terms(ws, term_body[:nt], term_X[:nt], Xw)
    return (nt, nb, nbodies, term_block[:nt], term_body[:nt], term_contact[:nt], block_row[:nb + 1],
            block_term[:nb + 1], bodies[:nbodies], row_map, Xw)


@njit(cache=True, nogil=True)
def _omega(bi, ws, Sw, Uw, y, F, A, Od, S6, path, bodies, mark, union, method):
    """(method, Ω (C, C, 6, 6)) of the contact bodies ``bodies``: Alg. 3 (THESIS) or 5 (CHANG_KHATIB); AUTO picks
    the latter when two of them share a branch."""
    nu, shared = reach(bi, bodies, mark, union)
    if method == AUTO:
        method = CHANG_KHATIB if shared else THESIS
    Om = np.empty((bodies.shape[0], bodies.shape[0], 6, 6))
    if method == THESIS:
        thesis_omega(bi, ws, Sw, Uw, y, F, A, bodies, mark, union[:nu], Om)
    else:
        chang_khatib_omega(bi, ws, Sw, Uw, Od, S6, path, bodies, union[:nu], Om)
    return method, Om


@kernel
def rigid_delassus(group_rigid, member_start, members, offset, contact_start, contacts, side, X, contact_row,
                   row_start, w_start, body_R, body_inverse_factor, W, dt, B_col, B_val, B_width):
    """W_k = B Bᵀ for each group k of free rigid bodies (``group_rigid[k]``), and its factor B (the layout of
    ``_factor_kernels``; ``B_width[k]`` = 6 × its bodies, 0 for the other groups).

    A rigid body g moves as V_g = Ω_g w_g under the wrench w_g at its origin (world axes), Ω_g = R6 M⁻¹ R6ᵀ with
    M its spatial inertia about the origin in its frame and R6 = diag(R_g, R_g). With L_g L_gᵀ = M⁻¹
    (``body_inverse_factor[g]``), row r of contact i on its side s is B_isr = √δt X[i, s, r] R6 L_g, in the column
    block of g (its multibody's place among the group's members), and two contacts sharing the side g couple
    through δt X_is Ω_g X_jtᵀ = B_is B_jtᵀ (seed 000 eq. 3.45 with one body per multibody)."""
    static = body_R.shape[0] - 1
    for k in range(group_rigid.shape[0]):
        B_width[k] = 6 * (member_start[k + 1] - member_start[k]) if group_rigid[k] else 0
        if not group_rigid[k]:
            continue
        for a in range(contact_start[k], contact_start[k + 1]):
            i = contacts[a]
            for s in range(2):
                block = -1
                for j in range(member_start[k], member_start[k + 1]):
                    if side[i, s] == offset[members[j]]:
                        block = j - member_start[k]
                for r in range(3):
                    B_col[contact_row[i] + r, s] = block
                    if block >= 0:
                        _factor_row(X[i, s, r], body_R[side[i, s]], body_inverse_factor[side[i, s]], math.sqrt(dt),
                                    B_val[contact_row[i] + r, s])
        n, r0, w0 = row_start[k + 1] - row_start[k], row_start[k], w_start[k]
        for a in range(contact_start[k], contact_start[k + 1]):
            i = contacts[a]
            for s in range(2):
                if side[i, s] == static:
                    continue
                for b in range(a, contact_start[k + 1]):      # the upper blocks, mirrored: W is symmetric
                    j = contacts[b]
                    for t in range(2):
                        if side[j, t] == side[i, s]:
                            _add_coupling(B_val, contact_row[i], s, contact_row[j], t, W, w0, r0, n, b > a)


@inline
def _factor_row(x, R, L, scale, out):
    """out = scale · x diag(R, R) L for a row x (6,) and L lower triangular."""
    for c in range(6):
        out[c] = 0.0
    for h in range(2):
        for j in range(3):
            y = 0.0
            for q in range(3):
                y += x[3 * h + q] * R[q, j]
            for c in range(3 * h + j + 1):
                out[c] += scale * y * L[3 * h + j, c]


@inline
def _add_coupling(B_val, row_i, s, row_j, t, W, w0, r0, n, mirror):
    """W[rows of i, rows of j] += B_is B_jtᵀ (3 × 3), and the same products to W[rows of j, rows of i] if ``mirror``;
    W flat with row stride n from w0, its first row r0. Each entry sums at most two products (the sides two
    contacts share), which commute, so the mirrored block is bit for bit the one B_jt B_isᵀ gives."""
    ij, ji = w0 + (row_i - r0) * n + row_j - r0, w0 + (row_j - r0) * n + row_i - r0
    for r in range(3):
        for c in range(3):
            acc = 0.0
            for p in range(6):
                acc += B_val[row_i + r, s, p] * B_val[row_j + c, t, p]
            W[ij + r * n + c] += acc
            if mirror:
                W[ji + c * n + r] += acc


@kernel
def multibody_terms(lo, hi, R_m, group_contacts, side, X, contact_row, closures, closure_side, closure_X,
                    closure_nrows, closure_row, mark, term_block, term_body, term_X, block_row, block_term, bodies,
                    term_contact, row_map):
    """The blocks of a group acting on the multibody with bodies lo..hi−1, as ``delassus.BlockMaps`` arrays:
    term t = (block, local body, map in the base axes X diag(R_m, R_m), padded to 6 rows); ``row_map`` gives the
    global row of each row of Λ_m.  Returns (terms, blocks, bodies)."""
    nt = nb = nrow = 0
    block_row[0] = block_term[0] = 0
    for k in range(group_contacts.shape[0]):
        i = group_contacts[k]
        added = _add_terms(lo, hi, R_m, side[i], X[i], 3, nt, nb, term_block, term_body, term_X)
        if added > 0:
            nt, nrow, nb = _close_block(nt + added, nrow, nb, contact_row[i], 3, block_row, block_term, row_map)
    for c in closures:
        added = _add_terms(lo, hi, R_m, closure_side[c], closure_X[c], closure_nrows[c], nt, nb, term_block,
                           term_body, term_X)
        if added > 0:
            nt, nrow, nb = _close_block(nt + added, nrow, nb, closure_row[c], closure_nrows[c], block_row,
                                        block_term, row_map)
    for b in range(hi - lo):
        mark[b] = -1
    for t in range(nt):
        mark[term_body[t]] = 0
    nbodies = 0
    for b in range(hi - lo):                            # distinct bodies, sorted
        if mark[b] == 0:
            bodies[nbodies], mark[b], nbodies = b, nbodies, nbodies + 1
    for t in range(nt):
        term_contact[t] = mark[term_body[t]]
    return nt, nb, nbodies


@inline
def _add_terms(lo, hi, R_m, sides, maps, rows, nt, nb, term_block, term_body, term_X):
    """The sides of one block that are bodies of this multibody become terms nt, nt + 1 of block nb."""
    added = 0
    for s in range(2):
        g = sides[s]
        if lo <= g < hi:
            t = nt + added
            term_block[t], term_body[t] = nb, g - lo
            for e in range(6):
                for h in range(2):                      # x_base = x_world R_m on each 3-block
                    for j in range(3):
                        x = 0.0
                        if e < rows:
                            for k in range(3):
                                x += maps[s, e, 3 * h + k] * R_m[k, j]
                        term_X[t, e, 3 * h + j] = x
            added += 1
    return added


@inline
def _close_block(nt, nrow, nb, row, rows, block_row, block_term, row_map):
    for r in range(rows):
        row_map[nrow + r] = row + r
    block_row[nb + 1], block_term[nb + 1] = nrow + rows, nt
    return nt, nrow + rows, nb + 1


@kernel
def add_delassus(W, w0, n, r0, row_map, Lam, dt):
    """W[rows, rows] += δt Λ_m: the rows of Λ_m are the group's rows ``row_map`` (global; the group starts at
    row r0, its W (n × n) at W[w0])."""
    for i in range(Lam.shape[0]):
        a = w0 + (row_map[i] - r0) * n - r0
        for j in range(Lam.shape[0]):
            W[a + row_map[j]] += dt * Lam[i, j]
