"""Where a deformable sole meets the static world (seed 000 §3.8–3.9, thesis §4.3.4 and §4.5), world frame.

Each function takes the sole's displaced geometry in world coordinates and returns the contacts within
``margin`` as arrays: the point on the sole, the unit normal from the obstacle to the sole, the depth (> 0:
penetration) and the distribution of the contact on the sole's nodes — ``slot`` (k, 3) candidate-node slots and
``weight`` (k, 3), Σ weight = 1, the rows of P (eqs. 4.23–4.29).

* ``plane_nodes``, ``box_nodes``, ``mesh_nodes``: the thesis's node test — a node within the margin of the
  half-space, the box or a static triangle mesh (uneven terrain) is a contact at the node, weight 1 on it.
* ``sphere_triangles``: a sphere (a grain of granular ground, §4.5) against the sole's bottom triangles: the
  point of the sole nearest to the centre, on the nearest triangle, its force spread with that point's
  barycentric weights (4.24–4.25 as corrected in ``engine.deformable.hybrid``) — a grain between nodes is felt.
"""
from __future__ import annotations

import numpy as np

from engine.contact._sole_kernels import (nearest_on_triangle, nodes_under_plane, points_on_triangles,
                                          spheres_on_triangles)


def plane_nodes(x, normal, offset, margin):
    """Nodes ``x`` (c, 3) within ``margin`` of the half-space n · x ≤ offset."""
    node, point, depth = np.empty(len(x), np.int64), np.empty((len(x), 3)), np.empty(len(x))
    k = nodes_under_plane(x, normal, float(offset), float(margin), node, point, depth)
    return _node_contacts(node[:k], point[:k], np.repeat(np.reshape(normal, (1, 3)), k, axis=0), depth[:k])


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


def sphere_triangles(x, triangle, center, radius, margin):
    """Contacts of the spheres (``center`` (s, 3), ``radius`` (s,)) with the triangles ``triangle`` (t, 3) of the
    node positions ``x`` (c, 3): for each sphere within ``margin`` of a triangle, one contact at the nearest point
    of the nearest triangle (``_sole_kernels.spheres_on_triangles``). Returns (triangle index (k,), point
    (k, 3), normal (k, 3), depth (k,), weight (k, 3)), the point midway between the surfaces."""
    corners = x[triangle.ravel()]
    lo, hi = corners.min(axis=0) - margin, corners.max(axis=0) + margin
    near = np.flatnonzero(np.all((center + radius[:, None] >= lo) & (center - radius[:, None] <= hi), axis=1))
    c, r = np.ascontiguousarray(center[near]), np.ascontiguousarray(radius[near])
    weight, best, distance = np.empty((len(near), 3)), np.empty(len(near), np.int64), np.empty(len(near))
    spheres_on_triangles(x, triangle, c, r, float(margin), weight, best, distance, np.empty(3))
    keep = np.flatnonzero(best >= 0)
    best, weight, d = best[keep], weight[keep], distance[keep]
    point = np.einsum("kj,kjx->kx", weight, x[triangle[best]])
    normal = (point - c[keep]) / d[:, None]
    depth = r[keep] - d
    return best, point - 0.5 * depth[:, None] * normal, normal, depth, weight


def closest_on_triangles(corners, points):
    """The point of each triangle ``corners`` (k, 3, 3) nearest to ``points`` (k, 3), and its barycentric weights
    (``_sole_kernels.nearest_on_triangle``, triangle by triangle)."""
    weight = np.empty((len(points), 3))
    for k, (T, p) in enumerate(zip(corners, points)):
        nearest_on_triangle(T[0], T[1], T[2], p, weight[k])
    return np.einsum("kj,kjx->kx", weight, corners), weight


def mesh_nodes(x, vertices, faces, normals, lo, hi, margin):
    """Nodes ``x`` (c, 3) within ``margin`` of a static triangle mesh (``vertices``, ``faces``, unit face
    ``normals`` pointing out; per-triangle bounds ``lo``, ``hi``): the node test against the nearest triangle
    among those whose bounds meet the nodes' (``_sole_kernels.points_on_triangles``), the side given by its
    normal — a terrain, a ramp, stairs from a mesh file."""
    box_lo, box_hi = x.min(axis=0) - margin, x.max(axis=0) + margin
    candidates = np.flatnonzero(np.all((hi >= box_lo) & (lo <= box_hi), axis=1))
    nearest, signed, direction = np.empty(len(x), np.int64), np.empty(len(x)), np.empty((len(x), 3))
    points_on_triangles(x, vertices, faces, normals, candidates, float(margin), nearest, signed, direction,
                        np.empty(3))
    near = np.flatnonzero(nearest >= 0)
    depth = -signed[near]
    normal = direction[near]
    return _node_contacts(near, x[near] + 0.5 * depth[:, None] * normal, normal, depth)


def _node_contacts(nodes, point, normal, depth):
    """Node contacts as (node index, point, normal, depth, weight (k, 3) = (1, 0, 0))."""
    weight = np.zeros((len(nodes), 3))
    weight[:, 0] = 1.0
    return nodes, point, normal, depth, weight
