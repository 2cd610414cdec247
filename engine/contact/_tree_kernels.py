"""The contact stage of a universe with one articulated multibody (a robot on the ground: issue 16 (b)) in one
compiled call, driven by ``stepping.ContactStage._tree_step``.

It chains the kernels ``stepping.py`` calls one by one for any universe — contact rows, collision groups, their
layout, warm start, W = δt Λ (``multibody_delassus_factor``: the thesis's methods from the free dynamics'
articulated inertias, or for a large group W = B Bᵀ from the joint-space factor, which the solver takes too), the
solve (``solve_and_retry``: ``solve_groups``, with the retry of a failed group without its positive targets), Gᵀf
(``scatter``) and the body-frame wrenches (``body_wrenches``) — with the same arguments in the same order, so the
forces are the same to the last bit (as ``_rigid_kernels.rigid_contacts`` does for free rigid bodies). The rows of
the multibody's closures, joint friction and limits come in as ``closures.Closures.update`` leaves them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine._borrowed import borrowed
from engine.contact._linalg_kernels import REUSE_ROWS
from engine.contact._tree_arrays import TreeArrays
from engine.contact._group_delassus_kernels import TREE_FACTOR_ROWS, multibody_delassus_factor
from engine.contact._stepping_kernels import (body_wrenches, contact_rows, gather, scatter, self_contacts,
                                              solve_and_retry, warm_start)
from engine.contact.groups import contact_groups, group_layout


@njit(cache=True, nogil=True)
def tree_contacts(s, point, normal, depth, pair, prev_pair, prev_point, prev_force, dt, keep, f_local, forces):
    """On the arrays of the ``TreeArrays`` s (read here, borrowed, as ``_free_body_kernels.free_step`` reads its
    own): the detected contacts (point … depth, ``pair`` into the tables pair_object … pair_restitution) on the
    bodies of ``offset`` … V_free, multibody 0 the articulated one (its base placement R_m, its ABA workspace
    ``bi`` … ``wd`` and Delassus workspace ``Sw`` … ``union``: ``stepping.ContactStage._group_delassus``), the
    rows of ``closures.Closures`` (``closure_mb`` its ``active_mb``), the previous step's (prev_pair, prev_point,
    prev_force) as warm start: the groups (``parent`` … ``row_start`` as ``contact_groups``, ``group_layout``),
    each contact's local force ``f_local`` and world force ``forces``, the closures' forces ``closure_f``, the
    world wrenches ``wrench``, the multibody's body-frame wrenches ``f_body`` and ``in_contact[0]``, the groups'
    ``stats`` (``solve_groups``).

    Returns (groups, rows, Delassus method code, self-contacts, unconverged groups). rows > 0: the largest group
    has this many rows and ``keep`` has no room for its factor (``stepping.ContactStage._solve_range``): nothing is
    solved, the caller makes room and calls again."""
    (pair_object, object_multibody, object_body, pair_mu, pair_restitution, offset, body_R, body_p, V, V_free, wrench,
     parent, group_of, member_start, members, contact_start, row_start, closure_mb, closure_start, joint_start,
     limit_start, closure_nrows, closure_kind, closure_bound, closure_side, closure_X, closure_u, closure_f, R_m, bi,
     df, ws, wd, Sw, Uw, y, F, A, Od, S6, path, mark, union, f_body, in_contact, erp, slop, radius, method, solver,
     tol, max_iter, stats) = borrowed((
        s.pair_object, s.object_multibody, s.object_body, s.pair_mu, s.pair_restitution, s.offset, s.body_R,
        s.body_p, s.V, s.V_free, s.wrench, s.parent, s.group_of, s.member_start, s.members, s.contact_start,
        s.row_start, s.closure_mb, s.closure_start, s.joint_start, s.limit_start, s.closure_nrows, s.closure_kind,
        s.closure_bound, s.closure_side, s.closure_X, s.closure_u, s.closure_f, s.R_m, s.bi, s.df, s.ws, s.wd, s.Sw,
        s.Uw, s.y, s.F, s.A, s.Od, s.S6, s.path, s.mark, s.union, s.f_body, s.in_contact, s.erp, s.slop, s.radius,
        s.method, s.solver, s.tol, s.max_iter, s.stats))
    nc = depth.shape[0]
    side, side_mb = np.empty((nc, 2), np.int64), np.empty((nc, 2), np.int64)
    C, X, u, target, mu = np.empty((nc, 3, 3)), np.empty((nc, 2, 3, 6)), np.empty((nc, 3)), np.empty(nc), np.empty(nc)
    contact_rows(point, normal, depth, pair, pair_object, object_multibody, object_body, pair_mu, pair_restitution,
                 offset, body_p, V, V_free, dt, erp, slop, side, side_mb, C, X, u, target, mu)
    contacts = np.empty(nc, np.int64)
    ng = contact_groups(side_mb, closure_mb, parent, group_of, member_start, members, contact_start, contacts)
    if ng == 0:
        return 0, 0, 0, 0, 0
    nrows = 3 * nc
    for c in range(closure_nrows.shape[0]):
        nrows += closure_nrows[c]
    nblocks = nc + closure_nrows.shape[0]
    contact_row, closure_row = np.empty(nc, np.int64), np.empty(closure_nrows.shape[0], np.int64)
    block_offset, w_start = np.empty(ng + 1, np.int64), np.empty(ng + 1, np.int64)
    block_start, block_kind, block_mu = np.empty(nblocks + ng, np.int64), np.empty(nblocks, np.int64), np.empty(nblocks)
    group_layout(ng, member_start, members, contact_start, contacts, mu, closure_start, joint_start, limit_start,
                 closure_nrows, closure_kind, closure_bound, contact_row, closure_row, row_start, block_offset,
                 block_start, block_kind, block_mu, w_start)
    rows = 0
    for g in range(ng):
        rows = max(rows, row_start[g + 1] - row_start[g])
    if rows >= REUSE_ROWS and rows * rows > keep[2].shape[0]:
        return ng, rows, 0, 0, 0
    f0, u_all, f = np.empty((nc, 3)), np.empty(nrows), np.empty(nrows)
    warm_start(pair, point, prev_pair, prev_point, prev_force, radius, f0)
    gather(contact_row, u, f0, closure_row, closure_nrows, closure_u, closure_f, u_all, f)
    W = np.zeros(w_start[ng])
    active = 0                                        # the multibody's active entries of the closures' table
    for c in range(closure_nrows.shape[0]):
        active += closure_nrows[c] > 0
    closures = np.empty(active, np.int64)
    active = 0
    for c in range(closure_nrows.shape[0]):
        if closure_nrows[c] > 0:
            closures[active], active = c, active + 1
    r0, n = row_start[0], row_start[1] - row_start[0]  # one multibody: one group
    code, B_col, B_val, width = multibody_delassus_factor(
        offset[0], offset[1], R_m, contacts[contact_start[0]:contact_start[1]], side, X, contact_row, closures,
        closure_side, closure_X, closure_nrows, closure_row, bi, df, ws, wd, Sw, Uw, y, F, A, Od, S6, path, mark,
        union, method, W, w_start[0], n, r0, dt, TREE_FACTOR_ROWS)
    B_width = np.full(ng, width, np.int64)
    solve_and_retry(W, w_start, u_all, f, row_start, block_offset, block_start, block_kind, block_mu, solver, tol,
                    max_iter, stats[:ng], keep, B_col, B_val, B_width, contacts, contact_start, contact_row, target)
    scatter(f, contact_row, C, side, X, closure_row, closure_nrows, closure_side, closure_X, f_local, forces,
            closure_f, wrench)
    in_contact[0] = body_wrenches(wrench, body_R, offset[0], f_body)
    unconverged = 0
    for g in range(ng):
        unconverged += stats[g, 3] == 0.0
    return ng, 0, code, self_contacts(pair, pair_object, object_multibody), unconverged


@njit(cache=True)
def tree_arrays(pair_object, object_multibody, object_body, pair_mu, pair_restitution, offset, body_R, body_p, V,
                V_free, wrench, parent, group_of, member_start, members, contact_start, row_start, closure_mb,
                closure_start, joint_start, limit_start, closure_nrows, closure_kind, closure_bound, closure_side,
                closure_X, closure_u, closure_f, R_m, bi, df, ws, wd, Sw, Uw, y, F, A, Od, S6, path, mark, union,
                f_body, in_contact, erp, slop, radius, method, solver, tol, max_iter, stats):
    """The arguments of ``tree_contacts`` that are the same every step as one ``TreeArrays``
    (``tree_contacts``)."""
    return TreeArrays(pair_object, object_multibody, object_body, pair_mu, pair_restitution, offset, body_R, body_p,
                      V, V_free, wrench, parent, group_of, member_start, members, contact_start, row_start,
                      closure_mb, closure_start, joint_start, limit_start, closure_nrows, closure_kind,
                      closure_bound, closure_side, closure_X, closure_u, closure_f, R_m, bi, df, ws, wd, Sw, Uw, y, F,
                      A, Od, S6, path, mark, union, f_body, in_contact, erp, slop, radius, method, solver, tol,
                      max_iter, stats)
