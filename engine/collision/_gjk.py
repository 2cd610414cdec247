"""GJK distance between two convex shapes (Gilbert, Johnson & Keerthi 1988; Ericson, Real-Time Collision
Detection §9.5), in numba, on the support functions of the shape *cores* (a sphere's centre, a capsule's
segment, a box, a cylinder, a convex hull; a triangle mesh is bounded by its hull).

The distance between A and B is the distance from the origin to the Minkowski difference A - B.  Each
iteration adds the support point w = s_A(-v) - s_B(v) to a simplex (<= 4 points) and replaces v by the point
of the simplex closest to the origin (barycentric weights lambda, so the witness points are
x_A = sum lambda_i a_i and x_B = sum lambda_i b_i).  The distance lies between the lower bound v.w / |v| and
the upper bound |v|; GJK stops when they meet: |v|^2 - v.w <= 1e-12 |v|^2, or |v| - v.w / |v| <= ``RESOLUTION``
(the distance known to 0.1 nm: without it, two shapes a few um apart face to face cycle between near-flat
simplices until the cap, or end in a flat "tetrahedron" taken for an intersection), when v.w / |v| > bound
(separated by more than ``bound``: early out), or when the origin is inside a tetrahedron (ENCLOSED: the
cores overlap, EPA (_epa.py) takes the tetrahedron on to their penetration depth).  A step that does not shorten
v (rounding on a degenerate simplex; exact GJK shortens it every step) ends it without a distance: on a triangle
(shapes touching to a few nm) it is ENCLOSED too, EPA deciding from the triangle; else, and at the iteration cap,
INTERSECTING, so the caller leaves the pair to FCL.

A convex hull's support point is found by hill climbing on its edge graph (``climb``; van den Bergen, Collision
Detection in Interactive 3D Environments §4.3.4; Cameron 1997, "Enhancing GJK"), from the vertex the previous
iteration found: GJK's directions change little from one iteration to the next, so a few vertices are visited
instead of all of them (hulls of robot links have 50 to 950 vertices).  The other kinds, and a hull without its
graph (``NO_GRAPH``), take every vertex.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.collision import _vec as v
from engine.collision.geometry import BOX, CAPSULE, CYLINDER, SPHERE

SEPARATED, BEYOND, INTERSECTING, ENCLOSED = 0, 1, 2, 3
MAX_ITERATIONS = 64
RESOLUTION = 1e-10  # m: distance bounds this close are converged
NO_GRAPH = (np.zeros(1, np.int64), np.zeros(0, np.int64))   # a shape's edge graph (first, neighbour) when it has none


@njit(cache=True, nogil=True)
def climb(verts, first, neighbour, dl, start):
    """The vertex of a convex polytope furthest along dl (its frame), by steepest ascent on its edge graph
    (vertex i's neighbours ``neighbour[first[i]:first[i + 1]]``) from vertex ``start``.  A vertex none of whose
    neighbours is further is the furthest: a linear function on a convex polytope that is not at its maximum at a
    vertex increases along one of its edges (the simplex method's argument)."""
    i, best = start, v.dot(v.row(verts, start), dl)
    while True:
        top = i
        for e in range(first[i], first[i + 1]):
            j = neighbour[e]
            c = v.dot(v.row(verts, j), dl)
            if c > best:
                best, top = c, j
        if top == i:
            return i
        i = top


@njit(cache=True, nogil=True, inline="always")
def support_from(shape, graph, d, start):
    """(``support`` of ``shape`` in direction d, its vertex): a hull with its edge ``graph`` (first, neighbour)
    climbs from vertex ``start`` (``climb``); other shapes give vertex 0."""
    kind, size, verts, R, p = shape
    first, neighbour = graph
    if first.shape[0] == verts.shape[0] + 1 and first[verts.shape[0]] > first[0]:
        i = climb(verts, first, neighbour, v.rotate_t(R, d), start)
        return v.transform(R, p, v.row(verts, i)), i
    return support(kind, size, verts, R, p, d), 0


@njit(cache=True, nogil=True)
def support(kind, size, verts, R, p, d):
    """The point of a shape's core furthest in world direction d (world frame): the shape is its kind, size,
    support points ``verts`` (shape frame) and world placement (R, p)."""
    dl = v.rotate_t(R, d)
    if kind == SPHERE:
        x = (0.0, 0.0, 0.0)
    elif kind == CAPSULE:
        x = (0.0, 0.0, size[1] if dl[2] >= 0.0 else -size[1])
    elif kind == BOX:
        x = (size[0] if dl[0] >= 0.0 else -size[0], size[1] if dl[1] >= 0.0 else -size[1],
             size[2] if dl[2] >= 0.0 else -size[2])
    elif kind == CYLINDER:
        rho = math.sqrt(dl[0] * dl[0] + dl[1] * dl[1])
        k = size[0] / rho if rho > 1e-12 else 0.0
        x = (k * dl[0], k * dl[1], size[1] if dl[2] >= 0.0 else -size[1])
    else:  # hull vertices (convex shapes and triangle meshes)
        best, x = -math.inf, (0.0, 0.0, 0.0)
        for i in range(verts.shape[0]):
            c = v.dot(v.row(verts, i), dl)
            if c > best:
                best, x = c, v.row(verts, i)
    return v.transform(R, p, x)


@njit(cache=True, nogil=True)
def gap_along(A, B, axis, graph_a=NO_GRAPH, graph_b=NO_GRAPH):
    """The gap between the cores of A and B along ``axis`` (a separating axis kept from an earlier step: testing
    it costs two support points instead of a GJK run), -inf for a zero axis.  A shape is the tuple
    (kind, size, verts, R, p) of ``support``; ``graph_a``, ``graph_b``: the hulls' edge graphs (``climb``)."""
    ll = v.dot(axis, axis)
    if ll == 0.0:
        return -math.inf
    xa, _ = support_from(A, graph_a, v.scale(axis, -1.0), 0)
    xb, _ = support_from(B, graph_b, axis, 0)
    return v.dot(axis, v.sub(xa, xb)) / math.sqrt(ll)


@njit(cache=True, nogil=True)
def gjk(A, B, bound, simplex, graph_a=NO_GRAPH, graph_b=NO_GRAPH):
    """(status, distance, x_A, x_B) between the cores of shapes A and B, each the tuple
    (kind, size, verts, R, p) of ``support``, with the edge graphs of hulls (``climb``).

    status SEPARATED: distance and witness points are exact; BEYOND: the distance is > ``bound`` (the
    returned distance is then a lower bound of it, the gap along the separating axis x_A = x_B);
    INTERSECTING: the cores overlap, or GJK could not tell (a step without progress, the iteration cap);
    ENCLOSED: the cores overlap and ``simplex`` holds a tetrahedron around the origin, or they touch to rounding
    (no progress on a triangle, or v = 0 on it) and it holds that triangle, row 3 repeating row 0 (``_epa.epa``
    starts from either).
    ``simplex``: (3, >= 4, 3) workspace (w, a, b points).
    """
    w, wa, wb = simplex[0], simplex[1], simplex[2]
    d = v.sub(A[4], B[4])
    if v.dot(d, d) < 1e-24:
        d = (1.0, 0.0, 0.0)
    xa, ia = support_from(A, graph_a, v.scale(d, -1.0), 0)
    xb, ib = support_from(B, graph_b, d, 0)
    x = v.sub(xa, xb)
    n = 0
    lam = (1.0, 0.0, 0.0, 0.0)
    for k in range(MAX_ITERATIONS):
        xa, ia = support_from(A, graph_a, v.scale(x, -1.0), ia)
        xb, ib = support_from(B, graph_b, x, ib)
        y = v.sub(xa, xb)
        xx, xy = v.dot(x, x), v.dot(x, y)
        if xy > 0.0 and xy * xy > xx * bound * bound:
            return BEYOND, xy / math.sqrt(xx), x, x
        if n > 0 and (xx - xy <= 1e-12 * xx or xx - xy <= RESOLUTION * math.sqrt(xx)):  # v on the simplex
            break
        v.store(w, n, y)
        v.store(wa, n, xa)
        v.store(wb, n, xb)
        n += 1
        lam = _closest_in_simplex(w, n)
        n = _keep(simplex, lam, n)
        lam = _compact(lam)
        x = (0.0, 0.0, 0.0)
        for i in range(n):
            x = v.axpy(lam[i], v.row(w, i), x)
        stalled = v.dot(x, x) < 1e-24 or (k > 0 and v.dot(x, x) >= xx)  # v_0 is not on the simplex
        if n == 4 or (stalled and n == 3):
            for r in range(3 * (4 - n)):                 # a triangle: row 3 repeats row 0
                simplex[r // 3, 3, r % 3] = simplex[r // 3, 0, r % 3]
            return ENCLOSED, 0.0, x, x
        if stalled:
            return INTERSECTING, 0.0, x, x
    else:
        return INTERSECTING, 0.0, x, x
    pa, pb = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    for i in range(n):
        pa = v.axpy(lam[i], v.row(wa, i), pa)
        pb = v.axpy(lam[i], v.row(wb, i), pb)
    return SEPARATED, math.sqrt(v.dot(x, x)), pa, pb


@njit(cache=True, nogil=True)
def _closest_in_simplex(w, n):
    """Barycentric weights (4,) of the point of simplex w[:n] closest to the origin (0 = vertex dropped);
    all four weights 0 and n = 4 means the origin is inside the tetrahedron."""
    if n == 1:
        return (1.0, 0.0, 0.0, 0.0)
    if n == 2:
        e = v.sub(v.row(w, 1), v.row(w, 0))
        ee = v.dot(e, e)
        t = 0.0 if ee <= 0.0 else min(1.0, max(0.0, -v.dot(v.row(w, 0), e) / ee))
        return (1.0 - t, t, 0.0, 0.0)
    if n == 3:
        la, lb, lc = _closest_in_triangle(v.row(w, 0), v.row(w, 1), v.row(w, 2))
        return (la, lb, lc, 0.0)
    return _closest_in_tetrahedron(w)


@njit(cache=True, nogil=True)
def _closest_in_triangle(a, b, c):
    """Barycentric weights of the point of triangle abc closest to the origin (Ericson 5.1.5)."""
    ab, ac = v.sub(b, a), v.sub(c, a)
    d1, d2 = -v.dot(ab, a), -v.dot(ac, a)
    if d1 <= 0.0 and d2 <= 0.0:
        return 1.0, 0.0, 0.0
    d3, d4 = -v.dot(ab, b), -v.dot(ac, b)
    if d3 >= 0.0 and d4 <= d3:
        return 0.0, 1.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        t = d1 / (d1 - d3)
        return 1.0 - t, t, 0.0
    d5, d6 = -v.dot(ab, c), -v.dot(ac, c)
    if d6 >= 0.0 and d5 <= d6:
        return 0.0, 0.0, 1.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        t = d2 / (d2 - d6)
        return 1.0 - t, 0.0, t
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 0.0, 1.0 - t, t
    den = 1.0 / (va + vb + vc)
    return 1.0 - (vb + vc) * den, vb * den, vc * den


@njit(cache=True, nogil=True)
def _closest_in_tetrahedron(w):
    """Closest point of tetrahedron w[0..3] to the origin: the best of the faces the origin is outside of."""
    best, lam = math.inf, (0.0, 0.0, 0.0, 0.0)
    for f in range(4):  # face (i, j, k) opposite vertex f
        i, j, k = (f + 1) % 4, (f + 2) % 4, (f + 3) % 4
        nrm = v.cross(v.sub(v.row(w, j), v.row(w, i)), v.sub(v.row(w, k), v.row(w, i)))
        side_origin, side_opposite = -v.dot(nrm, v.row(w, i)), v.dot(nrm, v.sub(v.row(w, f), v.row(w, i)))
        if side_origin * side_opposite >= 0.0:
            continue
        li, lj, lk = _closest_in_triangle(v.row(w, i), v.row(w, j), v.row(w, k))
        x = v.axpy(li, v.row(w, i), v.axpy(lj, v.row(w, j), v.scale(v.row(w, k), lk)))
        dd = v.dot(x, x)
        if dd < best:
            best = dd
            lam = (li if i == 0 else (lj if j == 0 else (lk if k == 0 else 0.0)),
                   li if i == 1 else (lj if j == 1 else (lk if k == 1 else 0.0)),
                   li if i == 2 else (lj if j == 2 else (lk if k == 2 else 0.0)),
                   li if i == 3 else (lj if j == 3 else (lk if k == 3 else 0.0)))
    return lam


@njit(cache=True, nogil=True)
def _keep(simplex, lam, n):
    """Drop the simplex vertices of zero weight (in place); returns the new size (4 if the origin is inside)."""
    if n == 4 and lam[0] + lam[1] + lam[2] + lam[3] == 0.0:
        return 4
    m = 0
    for i in range(n):
        if lam[i] > 0.0:
            if m != i:
                for r in range(3):
                    for c in range(3):
                        simplex[r, m, c] = simplex[r, i, c]
            m += 1
    return m


@njit(cache=True, nogil=True)
def _compact(lam):
    """The non-zero weights moved to the front, in order (matching ``_keep``)."""
    out = (0.0, 0.0, 0.0, 0.0)
    for i in range(3, -1, -1):  # shift each non-zero weight in from the back
        if lam[i] > 0.0:
            out = (lam[i], out[0], out[1], out[2])
    return out
