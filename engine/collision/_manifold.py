"""Contact manifolds of polytopes by face clipping, and the box-box separating axis test.

Given the contact normal n (from B to A), the **reference face** is the face of A or B best aligned with n
(its outward normal m points towards the other shape); the **incident feature** is the other shape's face
most opposed to m (or the core segment/point of a capsule or sphere).  The incident polygon is clipped by the
side planes of the reference face (Sutherland-Hodgman); each clipped point x keeps its own gap
s = m.(x - v0) - r to the reference plane (v0 on the face, r the incident swept radius) and is a contact when
s <= margin.  When no face is aligned with n within 1.8 degrees (edge-edge, vertex-edge contacts) the single
contact of the narrowphase is kept; it is also added when the clipping cut it off (a capsule crossing a face's
border), so the deepest contact is always there.  Boxes have their own closed form (``box_box_contacts``), as in ODE's
dBoxBox and Bullet's btBoxBoxDetector.

Same output conventions as ``_primitives`` (normal B -> A, depth > 0 in penetration, midpoint positions).
"""
from __future__ import annotations

import math

from numba import njit

from engine.collision import _vec as v
from engine.collision._primitives import closest_between_segments
from engine.collision.geometry import BOX, CAPSULE, CONVEX, CYLINDER, SPHERE

FACE_COS = 0.9995   # reference face when its normal is within acos(0.9995) = 1.8 deg of the contact normal
EDGE_BIAS = 0.95    # SAT: an edge-edge axis wins only if it separates clearly better than the best face axis


@njit(cache=True, nogil=True)
def sat(RA, pA, hA, RB, pB, hB, margin):
    """Separating axis test of two OBBs on their 15 axes (Gottschalk's formulation, with C = RA^T RB and
    t = RA^T (pA - pB), tB = RB^T (pA - pB)): the gap along a unit axis L is |L.(pA - pB)| minus the two
    projected half widths.

    Returns (separated, best face gap, its axis 0..5 (A's x y z, B's x y z), best edge gap, i, j) where
    ``separated`` means some axis has a gap > margin (the gap along the first such axis comes second, the rest
    is then unset) and edge axis (i, j) is A_i x B_j.
    """
    C = (v.rotate_t(RB, v.column(RA, 0)), v.rotate_t(RB, v.column(RA, 1)), v.rotate_t(RB, v.column(RA, 2)))
    A = ((abs(C[0][0]), abs(C[0][1]), abs(C[0][2])), (abs(C[1][0]), abs(C[1][1]), abs(C[1][2])),
         (abs(C[2][0]), abs(C[2][1]), abs(C[2][2])))
    d = v.sub(pA, pB)
    t, tB = v.rotate_t(RA, d), v.rotate_t(RB, d)
    face_sep, face_i = -math.inf, 0
    for i in range(3):  # A's faces: |t_i| - hA_i - sum_j hB_j |C_ij|
        s = abs(t[i]) - hA[i] - v.dot(hB, A[i])
        if s > margin:
            return True, s, 0, 0.0, 0, 0
        if s > face_sep:
            face_sep, face_i = s, i
    for j in range(3):  # B's faces: |tB_j| - hB_j - sum_i hA_i |C_ij|
        s = abs(tB[j]) - hB[j] - (hA[0] * A[0][j] + hA[1] * A[1][j] + hA[2] * A[2][j])
        if s > margin:
            return True, s, 0, 0.0, 0, 0
        if s > face_sep:
            face_sep, face_i = s, 3 + j
    edge_sep, ei, ej = -math.inf, 0, 0
    for i in range(3):  # edges A_i x B_j, |A_i x B_j| = sqrt(1 - C_ij^2)
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            length = math.sqrt(max(0.0, 1.0 - C[i][j] * C[i][j]))
            if length < 1e-6:
                continue
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            s = (abs(t[i2] * C[i1][j] - t[i1] * C[i2][j]) - hA[i1] * A[i2][j] - hA[i2] * A[i1][j]
                 - hB[j1] * A[i][j2] - hB[j2] * A[i][j1]) / length
            if s > margin:
                return True, s, 0, 0.0, 0, 0
            if s > edge_sep:
                edge_sep, ei, ej = s, i, j
    return False, face_sep, face_i, edge_sep, ei, ej


@njit(cache=True, nogil=True)
def obb_gap(cA, RA, hA, cB, RB, hB, margin):
    """The gap between two OBBs along the first of the 15 SAT axes that separates them by more than ``margin``;
    <= margin when none does."""
    return sat(RA, cA, hA, RB, cB, hB, margin)[1]


@njit(cache=True, nogil=True, inline="always")
def box_box_contacts(RA, pA, hA, RB, pB, hB, margin, raw, polys):
    """Box A against box B: separating axis test on the 15 axes (an edge-edge axis wins only when it
    separates clearly better than the best face axis), then the clipped face contact or the edge-edge point."""
    separated, face_sep, face_i, edge_sep, ei, ej = sat(RA, pA, hA, RB, pB, hB, margin)
    if separated:
        return 0
    t = v.sub(pA, pB)
    if edge_sep > EDGE_BIAS * face_sep + 1e-6 * (hA[0] + hB[0]):
        L = v.cross(v.column(RA, ei), v.column(RB, ej))
        L = v.scale(L, 1.0 / v.norm(L))
        n = L if v.dot(L, t) >= 0.0 else v.scale(L, -1.0)
        a0, a1 = _support_edge(RA, pA, hA, ei, v.scale(n, -1.0))
        b0, b1 = _support_edge(RB, pB, hB, ej, n)
        c1, c2 = closest_between_segments(a0, a1, b0, b1)
        return v.emit(raw, 0, v.scale(v.add(c1, c2), 0.5), n, edge_sep)
    L = v.column(RA, face_i) if face_i < 3 else v.column(RB, face_i - 3)
    n = L if v.dot(L, t) >= 0.0 else v.scale(L, -1.0)
    if face_i < 3:  # reference face on A, outward normal m = -n
        k = _box_face_contacts(RA, pA, hA, face_i, v.scale(n, -1.0), RB, pB, hB, -1.0, margin, raw, polys)
    else:
        k = _box_face_contacts(RB, pB, hB, face_i - 3, n, RA, pA, hA, 1.0, margin, raw, polys)
    if k > 0:
        return k
    corner = _support_corner(RA, pA, hA, v.scale(n, -1.0))  # the deepest corner of A
    return v.emit(raw, 0, v.axpy(-0.5 * face_sep, n, corner), n, face_sep)


@njit(cache=True, nogil=True)
def _box_face_contacts(Rr, cr, hr, axis, m, Ri, ci, hi, sign, margin, raw, polys):
    """Face ``axis`` of the reference box (Rr, cr, hr), outward normal m, against the incident box (Ri, ci, hi).

    The incident face (the one most opposed to m) is written in the reference face's coordinates
    (u, w, height above the face), clipped by the rectangle |u| <= hr_a, |w| <= hr_b, and every clipped
    point with height <= margin is a contact.  ``sign``: +1 if the reference box is B (normal = m), -1 if A.
    """
    ua, ub = v.column(Rr, (axis + 1) % 3), v.column(Rr, (axis + 2) % 3)
    j = 0
    for k in range(1, 3):
        if abs(v.dot(v.column(Ri, k), m)) > abs(v.dot(v.column(Ri, j), m)):
            j = k
    nj = v.column(Ri, j)
    centre = v.axpy(-hi[j] if v.dot(nj, m) > 0.0 else hi[j], nj, ci)
    e1 = v.scale(v.column(Ri, (j + 1) % 3), hi[(j + 1) % 3])
    e2 = v.scale(v.column(Ri, (j + 2) % 3), hi[(j + 2) % 3])
    src, dst = polys[0], polys[1]
    for c in range(4):  # corners in order around the face: (+, +), (-, +), (-, -), (+, -)
        d = v.sub(v.add(centre, v.add(v.scale(e1, 1.0 if c == 0 or c == 3 else -1.0),
                                      v.scale(e2, 1.0 if c < 2 else -1.0))), cr)
        v.store(src, c, (v.dot(d, ua), v.dot(d, ub), v.dot(d, m) - hr[axis]))
    count = 4
    for side in range(4):  # the rectangle: +u <= ha, -u <= ha, +w <= hb, -w <= hb
        coord, s = side // 2, 1.0 if side % 2 == 0 else -1.0
        count = _clip_coordinate(src, count, coord, s, hr[(axis + 1 + coord) % 3], dst)
        src, dst = dst, src
    k = 0
    for i in range(count):
        h = src[i, 2]
        if h <= margin:
            x = v.axpy(hr[axis] + 0.5 * h, m, v.axpy(src[i, 0], ua, v.axpy(src[i, 1], ub, cr)))
            k = v.emit(raw, k, x, v.scale(m, sign), h)
    return k


@njit(cache=True, nogil=True)
def _clip_coordinate(src, count, coord, s, limit, dst):
    """Sutherland-Hodgman in the face plane: keep the part of src[:count] where s * x[coord] <= limit."""
    m = 0
    for i in range(count):
        j = (i + 1) % count
        dx, dy = s * src[i, coord] - limit, s * src[j, coord] - limit
        if dx <= 0.0:
            dst[m, 0], dst[m, 1], dst[m, 2] = src[i, 0], src[i, 1], src[i, 2]
            m += 1
        if (dx <= 0.0) != (dy <= 0.0):
            t = dx / (dx - dy)
            for c in range(3):
                dst[m, c] = src[i, c] + t * (src[j, c] - src[i, c])
            m += 1
    return m


@njit(cache=True, nogil=True, inline="always")
def _support_corner(R, p, h, d):
    """The corner of box (R, p, h) furthest in direction d."""
    c = p
    for k in range(3):
        ax = v.column(R, k)
        c = v.axpy(h[k] if v.dot(ax, d) >= 0.0 else -h[k], ax, c)
    return c


@njit(cache=True, nogil=True)
def _support_edge(R, p, h, i, d):
    """End points of the edge along axis i of box (R, p, h) that lies furthest in direction d."""
    c = p
    for k in range(3):
        if k != i:
            ax = v.column(R, k)
            c = v.axpy(h[k] if v.dot(ax, d) >= 0.0 else -h[k], ax, c)
    ax = v.column(R, i)
    return v.axpy(-h[i], ax, c), v.axpy(h[i], ax, c)


@njit(cache=True, nogil=True)
def _best_face(sh, s, R, d):
    """Face of shape s whose outward normal is best aligned with world direction d, and that alignment."""
    if sh.kind[s] != BOX and sh.kind[s] != CONVEX:
        return -1, -2.0
    dl = v.rotate_t(R, d)
    best, align = -1, -2.0
    for f in range(sh.face_start[s], sh.face_start[s] + sh.face_count[s]):
        c = v.dot(v.row(sh.face_normal, f), dl)
        if c > align:
            best, align = f, c
    return best, align


@njit(cache=True, nogil=True)
def _face_polygon(sh, s, R, p, f, out):
    """World vertices of face f of shape s into ``out``; returns their count."""
    base, first = sh.vert_start[s], sh.face_vstart[f]
    for i in range(sh.face_vcount[f]):
        v.store(out, i, v.transform(R, p, v.row(sh.verts, base + sh.face_verts[first + i])))
    return sh.face_vcount[f]


@njit(cache=True, nogil=True)
def _incident(sh, s, R, p, m, out):
    """The incident feature of shape s against a reference face of outward normal m, into ``out``: the
    core point or segment of a sphere or capsule; for a cylinder its facing cap (rim samples) when its axis
    is along m, its lowest line when the axis is across m, else its lowest rim point; the face of a
    polytope most opposed to m."""
    kind = sh.kind[s]
    axis = v.column(R, 2)
    if kind == SPHERE or kind == CAPSULE:
        h = sh.size[s, 1] if kind == CAPSULE else 0.0
        v.store(out, 0, v.axpy(-h, axis, p))
        v.store(out, 1, v.axpy(h, axis, p))
        return 2 if kind == CAPSULE else 1
    if kind == CYLINDER:
        c = v.dot(axis, m)
        r, h = sh.size[s, 0], sh.size[s, 1]
        if abs(c) >= FACE_COS:  # standing on a cap: the rim samples of the cap nearer the reference face
            half = sh.vert_count[s] // 2
            first = sh.vert_start[s] + (half if c < 0.0 else 0)
            for i in range(half):
                v.store(out, i, v.transform(R, p, v.row(sh.verts, first + i)))
            return half
        w = v.axpy(-c, axis, m)  # m across the axis: the rim points furthest along -m
        low = v.axpy(-r / v.norm(w), w, p)
        if abs(c) <= 1.0 - FACE_COS:
            v.store(out, 0, v.axpy(-h, axis, low))
            v.store(out, 1, v.axpy(h, axis, low))
            return 2
        v.store(out, 0, v.axpy(-h if c > 0.0 else h, axis, low))
        return 1
    f, _ = _best_face(sh, s, R, v.scale(m, -1.0))
    return _face_polygon(sh, s, R, p, f, out)


@njit(cache=True, nogil=True)
def _clip(src, count, x0, o, dst):
    """Sutherland-Hodgman: the part of polygon src[:count] with (x - x0).o <= 0, into dst; returns the count."""
    m = 0
    for i in range(count):
        x, y = v.row(src, i), v.row(src, (i + 1) % count)
        dx, dy = v.dot(v.sub(x, x0), o), v.dot(v.sub(y, x0), o)
        if dx <= 0.0:
            v.store(dst, m, x)
            m += 1
        if (dx <= 0.0) != (dy <= 0.0):
            v.store(dst, m, v.axpy(dx / (dx - dy), v.sub(y, x), x))
            m += 1
    return m


@njit(cache=True, nogil=True)
def face_manifold(sh, a, Ra, pa, b, Rb, pb, n, margin, fallback, fallback_depth, raw, polys):
    """Contacts of shapes a and b (world placements (Ra, pa), (Rb, pb)) around the contact normal n by
    clipping the incident feature on the reference face.

    ``fallback`` (midpoint) and ``fallback_depth``: the narrowphase's (deepest) contact, kept alone when no
    face is aligned with n, and added when the clipped points are all shallower.  ``polys``: (3, K, 3)
    workspace (two clipping buffers, the reference face).
    """
    fa, align_a = _best_face(sh, a, Ra, v.scale(n, -1.0))
    fb, align_b = _best_face(sh, b, Rb, n)
    if max(align_a, align_b) < FACE_COS:
        return v.emit(raw, 0, fallback, n, -fallback_depth)
    if align_b >= align_a:
        ref, Rr, pr, inc, Ri, pi, face, sign = b, Rb, pb, a, Ra, pa, fb, 1.0
    else:
        ref, Rr, pr, inc, Ri, pi, face, sign = a, Ra, pa, b, Rb, pb, fa, -1.0
    m = v.rotate(Rr, v.row(sh.face_normal, face))
    count = _incident(sh, inc, Ri, pi, m, polys[0])
    ref_poly = polys[2]
    nref = _face_polygon(sh, ref, Rr, pr, face, ref_poly)
    src, dst = polys[0], polys[1]
    for i in range(nref):
        x0 = v.row(ref_poly, i)
        count = _clip(src, count, x0, v.cross(v.sub(v.row(ref_poly, (i + 1) % nref), x0), m), dst)
        src, dst = dst, src
    r = sh.radius[inc]
    k = 0
    deepest = -math.inf
    v0 = v.row(ref_poly, 0)
    for i in range(count):
        x = v.row(src, i)
        s = v.dot(v.sub(x, v0), m) - r
        if s <= margin:
            k = v.emit(raw, k, v.axpy(-(r + 0.5 * s), m, x), v.scale(m, sign), s)
            deepest = max(deepest, -s)
    if deepest < fallback_depth - 1e-9:  # the narrowphase's contact is deeper (clipped away): keep it too
        k = v.emit(raw, k, fallback, n, -fallback_depth)
    return k
