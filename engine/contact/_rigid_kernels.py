"""The contact stage of a universe of free rigid bodies alone (cubes, boxes, balls: issue 16 (e)) in one compiled
call, driven by ``stepping.ContactStage._rigid_step``.

It chains the kernels ``stepping.py`` calls one by one for any universe — contact rows, collision groups, their
layout, warm start, W = B Bᵀ (``rigid_delassus``), the solve (``solve_and_retry``: ``solve_groups``, with the
retry of a failed group without its positive targets), Gᵀf (``scatter``) and the body-frame wrenches of the batch
(``free_body_wrenches``) — with the same arguments in the same order, so the forces are the same to the last bit.
A step then crosses from Python to numba once instead of ten times (each crossing costs ≈ 0.15–0.3 µs per array
argument) and allocates its work arrays inside the call.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine._borrowed import borrowed
from engine.contact._linalg_kernels import REUSE_ROWS
from engine.contact._rigid_arrays import RigidArrays
from engine.contact._group_delassus_kernels import rigid_delassus
from engine.contact._stepping_kernels import (contact_rows, free_body_wrenches, gather, scatter, self_contacts,
                                              solve_and_retry, warm_start)
from engine.contact.groups import contact_groups, group_layout


@njit(cache=True)
def rigid_arrays(pair_object, object_multibody, object_body, pair_mu, pair_restitution, offset, body_R, body_p, V,
                 V_free, wrench, body_inverse_factor, parent, group_of, member_start, members, contact_start, row_start,
                 batch_row, batch_mb, f_body, in_contact, erp, slop, radius, solver, tol, max_iter, stats):
    """The arrays and settings of ``rigid_contacts`` that are the same every step as one ``RigidArrays``."""
    return RigidArrays(pair_object, object_multibody, object_body, pair_mu, pair_restitution, offset, body_R, body_p,
                       V, V_free, wrench, body_inverse_factor, parent, group_of, member_start, members, contact_start,
                       row_start, batch_row, batch_mb, f_body, in_contact, erp, slop, radius, solver, tol, max_iter,
                       stats)


@njit(cache=True, nogil=True)
def rigid_contacts(s, point, normal, depth, pair, prev_pair, prev_point, prev_force, dt, keep, f_local, forces):
    """On the arrays of the ``RigidArrays`` s (read here, borrowed): the detected contacts (point … depth, ``pair``
    into the tables pair_object … pair_restitution) between the bodies of ``offset`` … V_free, the previous step's
    (prev_pair, prev_point, prev_force) as warm start: the groups (``parent`` … ``members``, ``contact_start``,
    ``row_start`` as ``contact_groups``, ``group_layout``), each contact's local force ``f_local`` and world force
    ``forces``, the world wrenches ``wrench``, the batch's body-frame wrenches ``f_body`` and ``in_contact`` flags
    (its rows ``batch_row`` of multibodies ``batch_mb``), the groups' ``stats`` (``solve_groups``).

    Returns (groups, rows, self-contacts, unconverged groups). rows > 0: the largest group has this many rows and
    ``keep`` has no room for its factor (``stepping.ContactStage._solve_range``): nothing is solved, the caller
    makes room and calls again."""
    (pair_object, object_multibody, object_body, pair_mu, pair_restitution, offset, body_R, body_p, V, V_free, wrench,
     body_inverse_factor, parent, group_of, member_start, members, contact_start, row_start, batch_row, batch_mb,
     f_body, in_contact, erp, slop, radius, solver, tol, max_iter, stats) = borrowed((
        s.pair_object, s.object_multibody, s.object_body, s.pair_mu, s.pair_restitution, s.offset, s.body_R,
        s.body_p, s.V, s.V_free, s.wrench, s.body_inverse_factor, s.parent, s.group_of, s.member_start, s.members,
        s.contact_start, s.row_start, s.batch_row, s.batch_mb, s.f_body, s.in_contact, s.erp, s.slop, s.radius,
        s.solver, s.tol, s.max_iter, s.stats))
    nc, n = depth.shape[0], parent.shape[0]
    side, side_mb = np.empty((nc, 2), np.int64), np.empty((nc, 2), np.int64)
    C, X, u, target, mu = np.empty((nc, 3, 3)), np.empty((nc, 2, 3, 6)), np.empty((nc, 3)), np.empty(nc), np.empty(nc)
    contact_rows(point, normal, depth, pair, pair_object, object_multibody, object_body, pair_mu, pair_restitution,
                 offset, body_p, V, V_free, dt, erp, slop, side, side_mb, C, X, u, target, mu)
    none, none_f, none_start = np.zeros(0, np.int64), np.zeros((0, 6)), np.zeros(n + 1, np.int64)   # no closure
    contacts = np.empty(nc, np.int64)
    ng = contact_groups(side_mb, none, parent, group_of, member_start, members, contact_start, contacts)
    if ng == 0:
        return 0, 0, 0, 0
    contact_row, block_offset, w_start = np.empty(nc, np.int64), np.empty(ng + 1, np.int64), np.empty(ng + 1, np.int64)
    block_start, block_kind, block_mu = np.empty(nc + ng, np.int64), np.empty(nc, np.int64), np.empty(nc)
    group_layout(ng, member_start, members, contact_start, contacts, mu, none_start, none_start, none_start, none,
                 none, np.zeros(0), contact_row, none, row_start, block_offset, block_start, block_kind, block_mu,
                 w_start)
    rows = 0
    for g in range(ng):
        rows = max(rows, row_start[g + 1] - row_start[g])
    if rows >= REUSE_ROWS and rows * rows > keep[2].shape[0]:
        return ng, rows, 0, 0
    nrows = row_start[ng]
    f0, u_all, f = np.empty((nc, 3)), np.empty(nrows), np.empty(nrows)
    warm_start(pair, point, prev_pair, prev_point, prev_force, radius, f0)
    gather(contact_row, u, f0, none, none, none_f, none_f, u_all, f)
    W, B_col, B_val = np.zeros(w_start[ng]), np.empty((nrows, 2), np.int64), np.empty((nrows, 2, 6))
    B_width = np.zeros(ng, np.int64)
    rigid_delassus(np.ones(ng, np.bool_), member_start, members, offset, contact_start, contacts, side, X, contact_row,
                   row_start, w_start, body_R, body_inverse_factor, W, dt, B_col, B_val, B_width)
    solve_and_retry(W, w_start, u_all, f, row_start, block_offset, block_start, block_kind, block_mu, solver, tol,
                    max_iter, stats[:ng], keep, B_col, B_val, B_width, contacts, contact_start, contact_row, target)
    scatter(f, contact_row, C, side, X, none, none, np.zeros((0, 2), np.int64), np.zeros((0, 2, 6, 6)), f_local, forces,
            none_f, wrench)
    free_body_wrenches(wrench, body_R, batch_row, batch_mb, group_of, ng, f_body, in_contact)
    unconverged = 0
    for g in range(ng):
        unconverged += stats[g, 3] == 0.0
    return ng, 0, self_contacts(pair, pair_object, object_multibody), unconverged
