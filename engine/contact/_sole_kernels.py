"""numba kernels of ``sole_geometry.py`` and ``soles.py``: the displaced nodes in the world frame and the obstacles
near them, nodes against a plane, grains (spheres) against a sole's bottom triangles, nodes against the triangles
of a static mesh."""
from __future__ import annotations

import math

from engine.dynamics._kernels.algebra import kernel


@kernel
def place_nodes(rest, U, R_body, p_body, R_sole, p_sole, margin, R, p, x, box):
    """The sole frame in the world, (R, p) = (R_b R_s, R_b p_s + p_b) for its body at (R_b, p_b) and the sole at
    (R_s, p_s) on the body; x (c, 3) = (X + U_c) Rᵀ + p, the candidate contact nodes at rest X (``rest``, c × 3)
    displaced by U_c (``U``, 3c), sole frame, in the world frame; ``box`` (2, 3): their bounds (lo, hi) grown
    by ``margin``."""
    for r in range(3):
        p[r] = p_body[r]
        for c in range(3):
            p[r] += R_body[r, c] * p_sole[c]
            R[r, c] = R_body[r, 0] * R_sole[0, c] + R_body[r, 1] * R_sole[1, c] + R_body[r, 2] * R_sole[2, c]
        box[0, r], box[1, r] = math.inf, -math.inf
    for i in range(rest.shape[0]):
        for r in range(3):
            acc = p[r]
            for k in range(3):
                acc += R[r, k] * (rest[i, k] + U[3 * i + k])
            x[i, r] = acc
            box[0, r], box[1, r] = min(box[0, r], acc - margin), max(box[1, r], acc + margin)


@kernel
def near_obstacles(box, bounds, own, near):
    """The obstacles whose bounds (o, 2, 3; lo, hi) meet ``box`` (2, 3), those with ``own`` (o,) left out (a sole
    does not meet its own robot): their indices into ``near``; returns their count."""
    k = 0
    for j in range(bounds.shape[0]):
        if own[j]:
            continue
        apart = False
        for r in range(3):
            apart = apart or bounds[j, 1, r] < box[0, r] or bounds[j, 0, r] > box[1, r]
        if not apart:
            near[k] = j
            k += 1
    return k


@kernel
def nodes_under_plane(x, normal, offset, margin, node, point, depth):
    """The nodes ``x`` (c, 3) within ``margin`` of the half-space n · x ≤ offset: their indices, the points midway
    between node and plane, and the depths into ``node``, ``point``, ``depth`` (c rows at least); returns
    their count."""
    k = 0
    for i in range(x.shape[0]):
        gap = x[i, 0] * normal[0] + x[i, 1] * normal[1] + x[i, 2] * normal[2] - offset
        if gap <= margin:
            node[k], depth[k] = i, -gap
            for r in range(3):
                point[k, r] = x[i, r] - 0.5 * gap * normal[r]
            k += 1
    return k


@kernel
def nearest_on_triangle(a, b, c, p, out):
    """The point of triangle (a, b, c) nearest to p: its barycentric weights into ``out`` (3,) (Ericson,
    Real-Time Collision Detection, §5.1.5: the Voronoi regions of the vertices, then the edges, then the face)."""
    ab0, ab1, ab2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    ac0, ac1, ac2 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    ap0, ap1, ap2 = p[0] - a[0], p[1] - a[1], p[2] - a[2]
    d1, d2 = ab0 * ap0 + ab1 * ap1 + ab2 * ap2, ac0 * ap0 + ac1 * ap1 + ac2 * ap2
    out[0], out[1], out[2] = 1.0, 0.0, 0.0
    if d1 <= 0.0 and d2 <= 0.0:                                  # vertex a
        return
    bp0, bp1, bp2 = p[0] - b[0], p[1] - b[1], p[2] - b[2]
    d3, d4 = ab0 * bp0 + ab1 * bp1 + ab2 * bp2, ac0 * bp0 + ac1 * bp1 + ac2 * bp2
    if d3 >= 0.0 and d4 <= d3:                                   # vertex b
        out[0], out[1] = 0.0, 1.0
        return
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:                    # edge ab
        v = d1 / (d1 - d3)
        out[0], out[1] = 1.0 - v, v
        return
    cp0, cp1, cp2 = p[0] - c[0], p[1] - c[1], p[2] - c[2]
    d5, d6 = ab0 * cp0 + ab1 * cp1 + ab2 * cp2, ac0 * cp0 + ac1 * cp1 + ac2 * cp2
    if d6 >= 0.0 and d5 <= d6:                                   # vertex c
        out[0], out[2] = 0.0, 1.0
        return
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:                    # edge ac
        w = d2 / (d2 - d6)
        out[0], out[2] = 1.0 - w, w
        return
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:          # edge bc
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        out[0], out[1], out[2] = 0.0, 1.0 - w, w
        return
    denom = 1.0 / (va + vb + vc)                                 # the face
    out[0], out[1], out[2] = va * denom, vb * denom, vc * denom


@kernel
def spheres_on_triangles(x, triangle, center, radius, margin, weight, best, distance, work):
    """For each sphere s: the bottom triangle ``best[s]`` (rows of ``triangle`` (t, 3) into the node positions
    ``x``) holding the point nearest to its centre, that point's ``weight[s]`` (3,) and ``distance[s]`` to the
    centre; best[s] = -1 when it is further than radius + margin. ``work``: (3,) scratch."""
    for s in range(center.shape[0]):
        best[s], distance[s] = -1, radius[s] + margin
        p = center[s]
        for t in range(triangle.shape[0]):
            a, b, c = x[triangle[t, 0]], x[triangle[t, 1]], x[triangle[t, 2]]
            nearest_on_triangle(a, b, c, p, work)
            d2 = 0.0
            for k in range(3):
                q = work[0] * a[k] + work[1] * b[k] + work[2] * c[k] - p[k]
                d2 += q * q
            d = math.sqrt(d2)
            if d < distance[s] and d > 0.0:
                best[s], distance[s] = t, d
                weight[s, 0], weight[s, 1], weight[s, 2] = work[0], work[1], work[2]


@kernel
def points_on_triangles(x, vertices, faces, normals, candidates, margin, nearest, signed, direction, work):
    """For each point x[i]: the nearest of the triangles ``candidates`` (rows of ``faces`` into ``vertices``),
    the point's signed distance ``signed[i]`` to it (negative on the side its ``normals`` row points away from:
    below a terrain) and ``direction[i]``, the unit normal from the surface to the outside at the point (the
    face's normal where the point lies on it); nearest[i] = -1 when that distance exceeds ``margin``.
    ``work``: (3,) scratch."""
    for i in range(x.shape[0]):
        nearest[i], best = -1, math.inf
        p = x[i]
        for t in candidates:
            a, b, c = vertices[faces[t, 0]], vertices[faces[t, 1]], vertices[faces[t, 2]]
            nearest_on_triangle(a, b, c, p, work)
            d2, along = 0.0, 0.0
            for k in range(3):
                q = p[k] - (work[0] * a[k] + work[1] * b[k] + work[2] * c[k])
                d2 += q * q
                along += q * normals[t, k]
            if d2 >= best * best:
                continue
            best = math.sqrt(d2)
            gap = -best if along < 0.0 else best
            nearest[i], signed[i] = t, gap
            for k in range(3):
                q = p[k] - (work[0] * a[k] + work[1] * b[k] + work[2] * c[k])
                direction[i, k] = q / gap if best > 1e-12 else normals[t, k]
        if nearest[i] >= 0 and signed[i] > margin:
            nearest[i] = -1
