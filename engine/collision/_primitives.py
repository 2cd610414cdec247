"""Closed-form narrowphase kernels: any shape against a half-space, sphere/capsule pairs, sphere against box.

Every kernel writes the raw contacts of one pair (A, B) into rows 0.. of ``raw`` (K, 7) = (point, normal,
depth) and returns their count.  Conventions (the whole package's): the normal is the unit vector from B to
A; the depth is the penetration (> 0) or minus the gap (< 0, kept when the gap is within ``margin``); the
point is the midpoint of the two surface points, so the point of A is ``point - depth/2 normal`` and the
point of B ``point + depth/2 normal``.  Shapes come as their world rotation R (tuple of rows) and position p.
"""
from __future__ import annotations

from numba import njit

from engine.collision import _vec as v
from engine.collision.geometry import CYLINDER


@njit(cache=True, nogil=True, inline="always")
def halfspace_contacts(kind, size, r, verts, R, p, n, offset, margin, raw):
    """Shape A (support points ``verts`` in its frame, swept radius r) against the half-space n.x <= offset.

    Every support point x with gap s = n.x - r - offset <= margin is a contact: the deepest features of a
    convex set against a plane are its vertices, so this is exact for polytopes, spheres and capsules.  A
    cylinder adds the exact lowest point of each rim: c -/+ h a - r w/|w| with w = n - (n.a) a.

    A hull has hundreds of points and few of them are contacts: each is first screened in A's frame,
    s ≈ (Rᵀn).y − (offset + r − n.p), 3 products instead of 12, and only those within a slack of the margin
    get the world-frame gap above, so the contacts are the same to the bit. The two forms differ by rounding,
    a few ε (|offset| + |p| + |y|) (ε = 2.2e-16); the slack, 1e-9 (1 + |offset| + |p|₁) m, covers shapes up to
    100 km across and costs only the exact test of the points within 1 nm of the margin.
    """
    k = 0
    m = v.rotate_t(R, n)
    level = offset + r - v.dot(n, p) + margin + 1e-9 * (1.0 + abs(offset) + abs(p[0]) + abs(p[1]) + abs(p[2]))
    for i in range(verts.shape[0]):
        if m[0] * verts[i, 0] + m[1] * verts[i, 1] + m[2] * verts[i, 2] > level:
            continue
        x = v.transform(R, p, v.row(verts, i))
        s = v.dot(n, x) - r - offset
        if s <= margin:
            k = v.emit(raw, k, v.axpy(-(r + 0.5 * s), n, x), n, s)
    if kind == CYLINDER:
        axis = v.column(R, 2)
        w = v.axpy(-v.dot(n, axis), axis, n)
        lw = v.norm(w)
        if lw > 1e-9:
            for sign in (-1.0, 1.0):
                x = v.axpy(-size[0] / lw, w, v.axpy(sign * size[1], axis, p))
                s = v.dot(n, x) - offset
                if s <= margin:
                    k = v.emit(raw, k, v.axpy(-0.5 * s, n, x), n, s)
    return k


@njit(cache=True, nogil=True)
def closest_on_segment(x, a0, a1):
    """The point of segment [a0, a1] closest to x."""
    d = v.sub(a1, a0)
    dd = v.dot(d, d)
    t = 0.0 if dd <= 0.0 else min(1.0, max(0.0, v.dot(v.sub(x, a0), d) / dd))
    return v.axpy(t, d, a0)


@njit(cache=True, nogil=True)
def closest_between_segments(p1, q1, p2, q2):
    """Closest points c1 on [p1, q1] and c2 on [p2, q2] (Ericson, Real-Time Collision Detection 5.1.9)."""
    d1, d2, r = v.sub(q1, p1), v.sub(q2, p2), v.sub(p1, p2)
    a, e, f = v.dot(d1, d1), v.dot(d2, d2), v.dot(d2, r)
    eps = 1e-18
    if a <= eps and e <= eps:
        return p1, p2
    if a <= eps:
        s, t = 0.0, min(1.0, max(0.0, f / e))
    else:
        c = v.dot(d1, r)
        if e <= eps:
            s, t = min(1.0, max(0.0, -c / a)), 0.0
        else:
            b = v.dot(d1, d2)
            den = a * e - b * b
            s = min(1.0, max(0.0, (b * f - c * e) / den)) if den > eps * a * e else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t, s = 0.0, min(1.0, max(0.0, -c / a))
            elif t > 1.0:
                t, s = 1.0, min(1.0, max(0.0, (b - c) / a))
    return v.axpy(s, d1, p1), v.axpy(t, d2, p2)


@njit(cache=True, nogil=True)
def sphere_pair(k, ca, ra, cb, rb, margin, raw):
    """Spheres (ca, ra) of A and (cb, rb) of B: n = (ca - cb)/|ca - cb|, gap s = |ca - cb| - ra - rb."""
    e = v.sub(ca, cb)
    d = v.norm(e)
    s = d - ra - rb
    if s > margin:
        return k
    n = v.scale(e, 1.0 / d) if d > 1e-12 else (0.0, 0.0, 1.0)
    return v.emit(raw, k, v.axpy(-(ra + 0.5 * s), n, ca), n, s)


@njit(cache=True, nogil=True)
def swept_contacts(a0, a1, ra, b0, b1, rb, margin, raw):
    """Sphere/capsule A (core segment [a0, a1], radius ra) against sphere/capsule B: spheres at the closest
    points of the core segments.  Parallel capsules touch along a line: both ends of the overlap are kept."""
    d1, d2 = v.sub(a1, a0), v.sub(b1, b0)
    l1, l2 = v.dot(d1, d1), v.dot(d2, d2)
    c = v.cross(d1, d2)
    if l1 > 0.0 and l2 > 0.0 and v.dot(c, c) <= 1e-8 * l1 * l2:
        t0 = v.dot(v.sub(b0, a0), d1) / l1
        t1 = v.dot(v.sub(b1, a0), d1) / l1
        lo, hi = max(0.0, min(t0, t1)), min(1.0, max(t0, t1))
        if hi - lo > 1e-6:
            k = 0
            for t in (lo, hi):
                ca = v.axpy(t, d1, a0)
                k = sphere_pair(k, ca, ra, closest_on_segment(ca, b0, b1), rb, margin, raw)
            return k
    ca, cb = closest_between_segments(a0, a1, b0, b1)
    return sphere_pair(0, ca, ra, cb, rb, margin, raw)


@njit(cache=True, nogil=True)
def sphere_box_contacts(c, r, R, p, h, flip, margin, raw):
    """Sphere (centre c, radius r) against box (R, p, half extents h); ``flip``: the sphere is B, so the
    normal points from the sphere to the box.

    With q = R^T (c - p) the centre in the box frame: outside the box, the closest box point is
    clamp(q, -h, h) and n points from it to c; inside, n is the axis of the nearest face.
    """
    q = v.rotate_t(R, v.sub(c, p))
    if abs(q[0]) <= h[0] and abs(q[1]) <= h[1] and abs(q[2]) <= h[2]:
        axis, best = 0, h[0] - abs(q[0])
        for i in range(1, 3):
            if h[i] - abs(q[i]) < best:
                axis, best = i, h[i] - abs(q[i])
        n = v.scale(v.column(R, axis), 1.0 if q[axis] >= 0.0 else -1.0)
        s = -best - r
    else:
        x = v.transform(R, p, (min(h[0], max(-h[0], q[0])), min(h[1], max(-h[1], q[1])),
                               min(h[2], max(-h[2], q[2]))))
        e = v.sub(c, x)
        d = v.norm(e)
        n = v.scale(e, 1.0 / d)
        s = d - r
    if s > margin:
        return 0
    return v.emit(raw, 0, v.axpy(-(r + 0.5 * s), n, c), v.scale(n, -1.0) if flip else n, s)
