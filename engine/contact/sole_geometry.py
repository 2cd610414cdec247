"""Where a deformable sole meets the static world (seed 000 §3.8–3.9, thesis §4.3.4 and §4.5), world frame.

Each function takes the sole's displaced geometry in world coordinates and returns the contacts within
``margin`` as arrays: the point on the sole, the unit normal from the obstacle to the sole, the depth (> 0:
penetration) and the distribution of the contact on the sole's nodes — ``slot`` (k, 3) candidate-node slots and
``weight`` (k, 3), Σ weight = 1, the rows of P (eqs. 4.23–4.29).

* ``plane_nodes``, ``box_nodes``: the thesis's node test — a node within the margin of the half-space or the box
  is a contact at the node, weight 1 on it (flat ground, steps, kerbs).
* ``sphere_triangles``: a sphere (a grain of granular ground, §4.5) against the sole's bottom triangles: the
  point of the sole nearest to the centre, on the nearest triangle, its force spread with that point's
  barycentric weights (4.24–4.25 as corrected in ``engine.deformable.hybrid``) — a grain between nodes is felt.
"""
from __future__ import annotations

import numpy as np


def plane_nodes(x, normal, offset, margin):
    """Nodes ``x`` (c, 3) within ``margin`` of the half-space n · x ≤ offset."""
    gap = x @ normal - offset
    near = np.flatnonzero(gap <= margin)
    depth = -gap[near]
    return _node_contacts(near, x[near] + 0.5 * depth[:, None] * normal, np.tile(normal, (len(near), 1)), depth)


def box_nodes(x, R, p, half, margin):
    """Nodes ``x`` (c, 3) within ``margin`` of the box of half extents ``half`` placed at (R, p): the signed
    distance to the box and its outward normal at the nearest face (inside: the face of least depth)."""
    local = (x - p) @ R
    outside = np.abs(local) - half                            # per axis, > 0 beyond the face
    gap = np.where(outside.max(axis=1) > 0, np.linalg.norm(np.maximum(outside, 0.0), axis=1), outside.max(axis=1))
    near = np.flatnonzero(gap <= margin)
    if not len(near):
        return _node_contacts(near, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0))
    o, loc = outside[near], local[near]
    n_local = np.where(o.max(axis=1, keepdims=True) > 0, np.maximum(o, 0.0) * np.sign(loc), 0.0)
    inside = ~(o.max(axis=1) > 0)
    axis = o[inside].argmax(axis=1)
    n_local[np.flatnonzero(inside), axis] = np.sign(loc[inside, axis])
    normal = n_local / np.linalg.norm(n_local, axis=1, keepdims=True)
    depth = -gap[near]
    normal = normal @ R.T
    return _node_contacts(near, x[near] + 0.5 * depth[:, None] * normal, normal, depth)


def sphere_triangles(corners, center, radius, margin):
    """Contacts of the spheres (``center`` (s, 3), ``radius`` (s,)) with the triangles ``corners`` (t, 3, 3;
    their slots are the caller's): for each sphere within ``margin`` of a triangle, one contact at the nearest
    point of the nearest triangle. Returns (triangle index (k,), point (k, 3), normal (k, 3), depth (k,),
    weight (k, 3)), point midway between the surfaces."""
    lo, hi = corners.min(axis=(0, 1)) - margin, corners.max(axis=(0, 1)) + margin
    near = np.flatnonzero(np.all((center + radius[:, None] >= lo) & (center - radius[:, None] <= hi), axis=1))
    if not len(near):
        return np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3))
    c = center[near]
    closest, weight = closest_on_triangles(corners[None], c[:, None])         # (s, t, 3), (s, t, 3)
    distance = np.linalg.norm(closest - c[:, None], axis=2)
    best = distance.argmin(axis=1)
    rows = np.arange(len(near))
    d = distance[rows, best]
    keep = np.flatnonzero((d - radius[near] <= margin) & (d > 0.0))
    rows, best, d = rows[keep], best[keep], d[keep]
    point = closest[rows, best]
    normal = (point - c[rows]) / d[:, None]
    depth = radius[near][keep] - d
    return best, point - 0.5 * depth[:, None] * normal, normal, depth, weight[rows, best]


def closest_on_triangles(corners, p):
    """The point of each triangle ``corners`` (..., 3, 3) nearest to ``p`` (..., 3) (broadcast), and its
    barycentric weights (Ericson, Real-Time Collision Detection, §5.1.5, by regions)."""
    a, b, c = corners[..., 0, :], corners[..., 1, :], corners[..., 2, :]
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = (ab * ap).sum(-1), (ac * ap).sum(-1)
    bp, cp = p - b, p - c
    d3, d4 = (ab * bp).sum(-1), (ac * bp).sum(-1)
    d5, d6 = (ab * cp).sum(-1), (ac * cp).sum(-1)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        face = 1.0 / (va + vb + vc)
        v_face, w_face = vb * face, vc * face
        w_ab, w_ac = d1 / (d1 - d3), d2 / (d2 - d6)
        w_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    v, w = v_face, w_face          # inside the face; then the regions in Ericson's order, the first test last
    edge_bc = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)
    v, w = np.where(edge_bc, 1.0 - w_bc, v), np.where(edge_bc, w_bc, w)
    edge_ac = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
    v, w = np.where(edge_ac, 0.0, v), np.where(edge_ac, w_ac, w)
    vertex_c = (d6 >= 0) & (d5 <= d6)
    v, w = np.where(vertex_c, 0.0, v), np.where(vertex_c, 1.0, w)
    edge_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
    v, w = np.where(edge_ab, w_ab, v), np.where(edge_ab, 0.0, w)
    vertex_b = (d3 >= 0) & (d4 <= d3)
    v, w = np.where(vertex_b, 1.0, v), np.where(vertex_b, 0.0, w)
    vertex_a = (d1 <= 0) & (d2 <= 0)
    v, w = np.where(vertex_a, 0.0, v), np.where(vertex_a, 0.0, w)
    weight = np.stack([1.0 - v - w, v, w], axis=-1)
    return a + v[..., None] * ab + w[..., None] * ac, weight


def _node_contacts(nodes, point, normal, depth):
    """Node contacts as (node index, point, normal, depth, weight (k, 3) = (1, 0, 0))."""
    weight = np.zeros((len(nodes), 3))
    weight[:, 0] = 1.0
    return nodes, point, normal, depth, weight
