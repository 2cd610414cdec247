"""EPA, the expanding polytope algorithm (van den Bergen, "Proximity Queries and Penetration Depth Computation
on 3D Game Objects", GDC 2001; Collision Detection in Interactive 3D Environments §4.3.8): the penetration depth
of two intersecting convex shapes, in numba, on the support functions of their cores (_gjk.py).

The penetration depth is the distance from the origin to the boundary of the Minkowski difference M = A - B,
which contains it.  Start from GJK's last simplex, a tetrahedron around the origin; repeat: take the polytope's
face closest to the origin (outward unit normal n, distance d = n.w for its vertices w), add the support point
w = s_A(n) - s_B(-n) of M; stop when w lies on the face's plane, n.w - d <= ``TOLERANCE`` (the face is then on
M's boundary: d is the depth to within the tolerance, since n.w bounds it from above); else replace the faces w
sees by the fan of triangles from w to their horizon.  At the end the projection d n of the origin on the face
(on the one of its coplanar triangles that holds it), with barycentric weights lambda on the triangle's vertices,
gives the witness points x_A = sum lambda_i a_i, x_B = sum lambda_i b_i (x_A - x_B = d n): translating A by -d n
separates the cores, so the contact normal from B to A is -n.  Shapes touching to a few nm leave GJK on a flat
simplex: EPA starts from a triangle of it (``_start``), and when that triangle lies on a face of M, that face alone
gives the result, its distance then the signed gap (negative: apart).  A degenerate face (no normal, the origin
outside its plane), a full polytope or the iteration cap return no result, and the caller leaves the pair to FCL.
"""
from __future__ import annotations

import math

from numba import njit

from engine.collision import _vec as v
from engine.collision._gjk import _closest_in_triangle, support_from

MAX_ITERATIONS = 64
MAX_FACES = 4 + 2 * MAX_ITERATIONS + 64  # each step adds at most 2 faces net (Euler), its fan at most h
TOLERANCE = 1e-10  # m: the depth is known to this when the support point lies this close to the face's plane
SEEN = -1.0        # the distance of a face marked seen from the new vertex (a face's is > -TOLERANCE)


@njit(cache=True, nogil=True)
def epa(A, B, simplex, faces, face_normal, face_distance, graph_a, graph_b):
    """(found, depth, normal from B to A, x_A, x_B) of the cores of shapes A and B, the tuples
    (kind, size, verts, R, p) of ``_gjk.support``, with their edge graphs; ``simplex``: (3, V, 3) workspace
    (points w, a, b of M, A and B) whose first 4 rows hold GJK's tetrahedron or triangle (``_gjk.ENCLOSED``);
    ``faces`` (F, 3) int, ``face_normal`` (F, 3), ``face_distance`` (F,): workspaces (F >= ``MAX_FACES``)."""
    w, wa, wb = simplex[0], simplex[1], simplex[2]
    n, nf = _start(A, B, w, wa, wb, graph_a, graph_b, faces, face_normal, face_distance)
    if nf < 0:
        return False, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    ia, ib = 0, 0
    for _ in range(MAX_ITERATIONS):
        f = 0
        for g in range(1, nf):
            if face_distance[g] < face_distance[f]:
                f = g
        m, d = v.row(face_normal, f), face_distance[f]
        xa, ia = support_from(A, graph_a, m, ia)
        xb, ib = support_from(B, graph_b, v.scale(m, -1.0), ib)
        y = v.sub(xa, xb)
        if v.dot(m, y) - d <= TOLERANCE:
            f, la, lb, lc = _holding(w, faces, face_distance, nf, v.scale(m, d), d + TOLERANCE)
            if nf < 4 and not (la > 0.0 and lb > 0.0 and lc > 0.0):
                break                                    # a lone face of M: d n on it, or no result
            pa = v.axpy(la, v.row(wa, faces[f, 0]), v.axpy(lb, v.row(wa, faces[f, 1]),
                                                           v.scale(v.row(wa, faces[f, 2]), lc)))
            pb = v.axpy(la, v.row(wb, faces[f, 0]), v.axpy(lb, v.row(wb, faces[f, 1]),
                                                           v.scale(v.row(wb, faces[f, 2]), lc)))
            return True, d, v.scale(m, -1.0), pa, pb
        if n == w.shape[0] or nf < 4:                    # no room for another vertex, or one face of M alone
            break
        v.store(w, n, y)
        v.store(wa, n, xa)
        v.store(wb, n, xb)
        nf = _expand(w, n, faces, face_normal, face_distance, nf)
        if nf <= 0:
            break
        n += 1
    return False, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)


@njit(cache=True, nogil=True)
def _holding(w, faces, face_distance, nf, x, within):
    """(face, barycentric weights of its point closest to x) of the face nearest to x among those closer to the
    origin than ``within``: a face of M is often several coplanar triangles of the polytope, at the same distance
    to rounding, and only the one holding the origin's projection x gives witness points with x_A - x_B = x."""
    best, f, lam = math.inf, 0, (1.0, 0.0, 0.0)
    for g in range(nf):
        if face_distance[g] <= within:
            l0, l1, l2 = _closest_in_triangle(v.sub(v.row(w, faces[g, 0]), x), v.sub(v.row(w, faces[g, 1]), x),
                                              v.sub(v.row(w, faces[g, 2]), x))
            e = v.axpy(l0, v.row(w, faces[g, 0]), v.axpy(l1, v.row(w, faces[g, 1]),
                                                         v.scale(v.row(w, faces[g, 2]), l2)))
            gap = v.norm(v.sub(e, x))
            if gap < best:
                best, f, lam = gap, g, (l0, l1, l2)
    return f, lam[0], lam[1], lam[2]


@njit(cache=True, nogil=True)
def _start(A, B, w, wa, wb, graph_a, graph_b, faces, face_normal, face_distance):
    """The first polytope from GJK's simplex (rows 0-3 of w, wa, wb): its 4 faces when it is a tetrahedron; when
    a point repeats or the four are coplanar (the origin on M's boundary, to rounding: touching shapes), the
    bipyramid on a triangle of them with the support points along its two normals as apexes (van den Bergen
    §4.3.8's start from a lower-dimensional simplex). Faces face outward, away from the mean of the points.
    Returns (points, faces), faces -1 when no start is found."""
    base = v.row(w, 0)
    volume = v.dot(_normal(w, 0, 1, 2), v.sub(v.row(w, 3), base))
    scale = max(v.norm(v.sub(v.row(w, 1), base)), v.norm(v.sub(v.row(w, 2), base)), v.norm(v.sub(v.row(w, 3), base)))
    if abs(volume) > 1e-12 * scale ** 3:
        return 4, _faces(w, 4, ((0, 1, 2), (0, 3, 1), (0, 2, 3), (1, 3, 2)), faces, face_normal, face_distance,
                         (0.0, 0.0, 0.0))
    best, drop = 0.0, 0                       # the triangle of largest area among the four points
    for k in range(4):
        i, j, l = (k + 1) % 4, (k + 2) % 4, (k + 3) % 4
        area = v.norm(_normal(w, i, j, l))
        if area > best:
            best, drop = area, k
    if best <= 1e-12 * scale * scale:
        return 0, -1
    if drop != 3:                             # the triangle to rows 0-2
        for points in (w, wa, wb):
            for c in range(3):
                points[drop, c], points[3, c] = points[3, c], points[drop, c]
    m = _normal(w, 0, 1, 2)
    m = v.scale(m, 1.0 / v.norm(m))
    for row, direction in ((3, m), (4, v.scale(m, -1.0))):
        xa, _ = support_from(A, graph_a, direction, 0)
        xb, _ = support_from(B, graph_b, v.scale(direction, -1.0), 0)
        v.store(w, row, v.sub(xa, xb))
        v.store(wa, row, xa)
        v.store(wb, row, xb)
        if v.dot(direction, v.sub(v.row(w, row), base)) <= TOLERANCE:   # the triangle is on a face of M: that
            up = (0, 1, 2) if row == 3 else (1, 0, 2)                   # face alone, facing ``direction``
            return 3, _faces(w, 3, (up,), faces, face_normal, face_distance, direction)
    return 5, _faces(w, 5, ((0, 1, 3), (1, 2, 3), (2, 0, 3), (1, 0, 4), (2, 1, 4), (0, 2, 4)), faces, face_normal,
                     face_distance, (0.0, 0.0, 0.0))


@njit(cache=True, nogil=True)
def _faces(w, n, triangles, faces, face_normal, face_distance, outward):
    """The ``triangles`` of the points w[:n] as faces, each turned outward: along ``outward`` when it is not zero,
    else away from the points' mean; their count, or -1 when one is degenerate (``_add_face``). A lone face of M
    (n = 3) may have the origin outside: shapes apart by less than GJK resolves, its distance the gap."""
    centre = (0.0, 0.0, 0.0)
    for i in range(n):
        centre = v.axpy(1.0 / n, v.row(w, i), centre)
    f = 0
    for i, j, k in triangles:
        m = _normal(w, i, j, k)
        if (v.dot(m, outward) < 0.0) if v.dot(outward, outward) > 0.0 else (v.dot(m, v.sub(v.row(w, i), centre)) < 0.0):
            i, j = j, i
        if not _add_face(w, faces, face_normal, face_distance, f, i, j, k, -math.inf if n == 3 else -TOLERANCE):
            return -1
        f += 1
    return f


@njit(cache=True, nogil=True, inline="always")
def _normal(w, i, j, k):
    """(w_j - w_i) x (w_k - w_i): the normal of triangle (i, j, k), outward when it is counter-clockwise."""
    wi = v.row(w, i)
    return v.cross(v.sub(v.row(w, j), wi), v.sub(v.row(w, k), wi))


@njit(cache=True, nogil=True)
def _add_face(w, faces, face_normal, face_distance, f, i, j, k, lowest=-TOLERANCE):
    """Face f := triangle (i, j, k) with its unit normal and distance from the origin; False when degenerate (no
    normal) or when the distance is below ``lowest`` (the origin outside the plane by more than the tolerance;
    shallow overlaps put it on a face to rounding)."""
    nrm = _normal(w, i, j, k)
    length = v.norm(nrm)
    if length < 1e-30:
        return False
    nrm = v.scale(nrm, 1.0 / length)
    d = v.dot(nrm, v.row(w, i))
    if not d > lowest:
        return False
    faces[f, 0], faces[f, 1], faces[f, 2] = i, j, k
    v.store(face_normal, f, nrm)
    face_distance[f] = d
    return True


@njit(cache=True, nogil=True)
def _expand(w, n, faces, face_normal, face_distance, nf):
    """Add vertex n to the polytope faces[:nf]: mark the faces it sees (m.(w_n - w_face) > 0), join it to every
    horizon edge (an edge of a seen face whose twin, the reverse edge, is not on a seen face) with the seen face's
    orientation, then drop the seen faces. Returns the new face count, or -1 (degenerate, or no room)."""
    x = v.row(w, n)
    for f in range(nf):
        if v.dot(v.row(face_normal, f), v.sub(x, v.row(w, faces[f, 0]))) > 0.0:
            face_distance[f] = SEEN
    added = nf
    for f in range(nf):
        if face_distance[f] != SEEN:
            continue
        for e in range(3):
            i, j = faces[f, e], faces[f, (e + 1) % 3]
            if _edge_seen(faces, face_distance, nf, j, i):
                continue                                 # inside the seen region
            if added == faces.shape[0] or not _add_face(w, faces, face_normal, face_distance, added, i, j, n):
                return -1
            added += 1
    m = 0
    for f in range(added):                               # the faces kept, to the front
        if face_distance[f] != SEEN:
            if m != f:
                faces[m] = faces[f]
                face_normal[m] = face_normal[f]
                face_distance[m] = face_distance[f]
            m += 1
    return m


@njit(cache=True, nogil=True)
def _edge_seen(faces, face_distance, nf, i, j):
    """True when the directed edge (i, j) is on a face of faces[:nf] marked seen."""
    for f in range(nf):
        if face_distance[f] == SEEN:
            for e in range(3):
                if faces[f, e] == i and faces[f, (e + 1) % 3] == j:
                    return True
    return False
