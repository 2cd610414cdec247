"""Collision groups (seed 000 §3.2(d)): connected components of mobile multibodies linked by contacts.

Λ is block diagonal between groups, so each group gets its own Λ and its own solve: k separate cubes are k small
problems (cost linear in k) instead of one problem of size k (quadratic).  A multibody with loop closures is a
group even without contacts (its closures are rows of a solve).  ``contact_groups`` and ``group_layout`` are the
contact stage's numba kernels; ``collision_groups`` is their readable front.
"""
from __future__ import annotations

import numpy as np

from engine.contact._kernels import CONTACT
from engine.dynamics._kernels.algebra import inline, kernel


def collision_groups(n_multibodies: int, multibody_a, multibody_b, closure_multibodies=()) -> list:
    """Components of the graph whose nodes are multibodies and whose edges are contacts.

    ``multibody_a``/``multibody_b`` (nc,) give the two sides of each contact (-1 = a static body, which links
    nothing); ``closure_multibodies``: multibodies with loop closures. Returns a list of (multibody indices,
    contact indices), both sorted, one per group, in order of their smallest multibody.
    """
    side_mb = np.ascontiguousarray(np.stack([multibody_a, multibody_b], axis=-1), dtype=np.int64).reshape(-1, 2)
    n, nc = int(n_multibodies), len(side_mb)
    parent, group_of, members = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    member_start, contact_start, contacts = np.empty(n + 1, np.int64), np.empty(n + 1, np.int64), np.empty(nc, np.int64)
    ng = contact_groups(side_mb, np.asarray(closure_multibodies, np.int64).reshape(-1), parent, group_of,
                        member_start, members, contact_start, contacts)
    return [(members[member_start[g]:member_start[g + 1]].tolist(), contacts[contact_start[g]:contact_start[g + 1]])
            for g in range(ng)]


@inline
def _root(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@kernel
def contact_groups(side_mb, closure_mb, parent, group_of, member_start, members, contact_start, contacts):
    """Connected components of the graph whose nodes are multibodies and whose edges are contacts (union-find;
    a root is its component's smallest multibody).  A component with a contact or a loop closure is a group;
    groups come in order of their smallest multibody, members and contacts sorted.  Fills ``group_of`` (−1: in
    no group) and the CSR lists ``member_start``/``members``, ``contact_start``/``contacts`` (a contact with no
    moving side is in no group).  Returns the number of groups."""
    n, nc = parent.shape[0], side_mb.shape[0]
    for m in range(n):
        parent[m], group_of[m] = m, -1
    for i in range(nc):
        a, b = side_mb[i, 0], side_mb[i, 1]
        if a >= 0 and b >= 0:
            ra, rb = _root(parent, a), _root(parent, b)
            parent[max(ra, rb)] = min(ra, rb)
    for i in range(nc):
        a = side_mb[i, 0] if side_mb[i, 0] >= 0 else side_mb[i, 1]
        if a >= 0:
            group_of[_root(parent, a)] = -2            # a root with contacts
    for c in range(closure_mb.shape[0]):
        if closure_mb[c] >= 0:                          # −1: a row not in use this step (an idle joint limit)
            group_of[_root(parent, closure_mb[c])] = -2
    ng = 0
    for m in range(n):                                  # a root precedes the rest of its component
        r = _root(parent, m)
        if r == m and group_of[m] == -2:
            group_of[m], ng = ng, ng + 1
        elif r != m:
            group_of[m] = group_of[r]
    for g in range(ng + 1):
        member_start[g] = contact_start[g] = 0
    for m in range(n):
        if group_of[m] >= 0:
            member_start[group_of[m] + 1] += 1
    for i in range(nc):
        g = _contact_group(side_mb, group_of, i)
        if g >= 0:
            contact_start[g + 1] += 1
    for g in range(ng):
        member_start[g + 1] += member_start[g]
        contact_start[g + 1] += contact_start[g]
    for g in range(ng):                                 # parent becomes the fill cursor of each group
        parent[g] = member_start[g]
    for m in range(n):
        if group_of[m] >= 0:
            members[parent[group_of[m]]], parent[group_of[m]] = m, parent[group_of[m]] + 1
    for g in range(ng):
        parent[g] = contact_start[g]
    for i in range(nc):
        g = _contact_group(side_mb, group_of, i)
        if g >= 0:
            contacts[parent[g]], parent[g] = i, parent[g] + 1
    return ng


@inline
def _contact_group(side_mb, group_of, i):
    a = side_mb[i, 0] if side_mb[i, 0] >= 0 else side_mb[i, 1]
    return group_of[a] if a >= 0 else -1


@kernel
def group_layout(ng, member_start, members, contact_start, contacts, mu, closure_start, joint_start, limit_start,
                 closure_nrows, closure_kind, closure_bound, contact_row, closure_row, row_start, block_offset,
                 block_start, block_kind, block_mu, w_start):
    """Rows, blocks and W entries of each group: its contacts (3 rows each, in order), then per member its
    closures (``closure_start``), its joints' friction rows (``joint_start``) and its active limit rows
    (``limit_start``; an idle one has 0 rows), entries of the same table (``closures.Closures``: kind and bound
    per entry).  ``contact_row``/``closure_row``: first global row of each
    (−1: in no group); group k's block starts (local rows) are
    ``block_start[block_offset[k] + k : block_offset[k + 1] + k + 1]``."""
    for i in range(contact_row.shape[0]):
        contact_row[i] = -1
    for c in range(closure_row.shape[0]):
        closure_row[c] = -1
    row_start[0] = block_offset[0] = w_start[0] = 0
    for g in range(ng):
        row, nb = row_start[g], block_offset[g]
        block_start[nb + g] = 0
        for k in range(contact_start[g], contact_start[g + 1]):
            i = contacts[k]
            contact_row[i] = row
            block_kind[nb], block_mu[nb] = CONTACT, mu[i]
            row, nb = row + 3, nb + 1
            block_start[nb + g] = row - row_start[g]
        for k in range(member_start[g], member_start[g + 1]):
            m = members[k]
            for c in range(closure_start[m], closure_start[m + 1]):
                row, nb = _entry(c, g, row, nb, row_start, closure_nrows, closure_kind, closure_bound, closure_row,
                                 block_start, block_kind, block_mu)
            for c in range(joint_start[m], joint_start[m + 1]):
                row, nb = _entry(c, g, row, nb, row_start, closure_nrows, closure_kind, closure_bound, closure_row,
                                 block_start, block_kind, block_mu)
            for c in range(limit_start[m], limit_start[m + 1]):
                if closure_nrows[c] > 0:
                    row, nb = _entry(c, g, row, nb, row_start, closure_nrows, closure_kind, closure_bound,
                                     closure_row, block_start, block_kind, block_mu)
        row_start[g + 1], block_offset[g + 1] = row, nb
        n = row - row_start[g]
        w_start[g + 1] = w_start[g] + n * n


@kernel
def unassembled(ng, row_start, solved, w_start):
    """``group_layout``'s W entries again, none for the groups ``solved`` (indices, increasing): those solved
    without W (``ContactStage._stick_first``)."""
    k = 0
    for g in range(ng):
        n = row_start[g + 1] - row_start[g]
        if k < solved.shape[0] and solved[k] == g:
            n, k = 0, k + 1
        w_start[g + 1] = w_start[g] + n * n


@inline
def _entry(c, g, row, nb, row_start, closure_nrows, closure_kind, closure_bound, closure_row, block_start, block_kind,
           block_mu):
    """Entry c of the closures' table as the next block of group g (from global row ``row``, block ``nb``)."""
    closure_row[c] = row
    block_kind[nb], block_mu[nb] = closure_kind[c], closure_bound[c]
    row, nb = row + closure_nrows[c], nb + 1
    block_start[nb + g] = row - row_start[g]
    return row, nb
