"""numba kernel of ``SceneProximity`` (scene_proximity.py): the nearest surface of a set of pieces, each a signed
distance field in its own frame. Arrays in, no allocation (``work`` holds the bounds and the scratch)."""
from __future__ import annotations

import math

from numba import njit

BOX, SPHERE, PLANE, CAPSULE, CYLINDER, HULL = 0, 1, 2, 3, 4, 5


@njit(cache=True, nogil=True)
def nearest_surface(x, kind, size, rows, local_R, local_p, center, radius, plane_start, plane_n, plane_o,
                    body_R, body_p, work, out):
    """Index of the piece whose surface is nearest to the world point x, or -1 if there is none; ``out`` (7,) =
    (signed distance, surface point (3), outward normal (3)), world frame. ``body_R``/``body_p``: the world
    placements of the bodies, row 0 the identity (static pieces have ``rows`` = -1). ``work`` (k + 22,).

    A piece's bound |x - c| - r (its bounding sphere) never exceeds its distance: the nearest bound is tried
    first, then only the pieces whose bound is below the best distance found."""
    k = kind.shape[0]
    bound, candidate, frame, y = work[:k], work[k:k + 7], work[k + 7:k + 19].reshape((4, 3)), work[k + 19:k + 22]
    first = -1
    for i in range(k):
        _frame(i, rows, local_R, local_p, body_R, body_p, frame)
        d2 = 0.0
        for a in range(3):
            c = frame[3, a] + frame[a, 0] * center[i, 0] + frame[a, 1] * center[i, 1] + frame[a, 2] * center[i, 2]
            d2 += (x[a] - c) ** 2
        bound[i] = math.sqrt(d2) - radius[i]
        if first < 0 or bound[i] < bound[first]:
            first = i
    if first < 0:
        return -1
    best = first
    _piece(x, first, kind, size, rows, local_R, local_p, plane_start, plane_n, plane_o, body_R, body_p, frame, y,
           out)
    for i in range(k):
        if i != first and bound[i] < out[0]:
            _piece(x, i, kind, size, rows, local_R, local_p, plane_start, plane_n, plane_o, body_R, body_p, frame,
                   y, candidate)
            if candidate[0] < out[0]:
                out[:] = candidate
                best = i
    return best


@njit(cache=True, nogil=True)
def _frame(i, rows, local_R, local_p, body_R, body_p, frame):
    """frame[:3] = R, frame[3] = p: piece i in the world, the body's placement times the piece's."""
    Rb, pb = body_R[rows[i] + 1], body_p[rows[i] + 1]
    for a in range(3):
        for b in range(3):
            frame[a, b] = Rb[a, 0] * local_R[i, 0, b] + Rb[a, 1] * local_R[i, 1, b] + Rb[a, 2] * local_R[i, 2, b]
        frame[3, a] = Rb[a, 0] * local_p[i, 0] + Rb[a, 1] * local_p[i, 1] + Rb[a, 2] * local_p[i, 2] + pb[a]


@njit(cache=True, nogil=True)
def _piece(x, i, kind, size, rows, local_R, local_p, plane_start, plane_n, plane_o, body_R, body_p, frame, y, out):
    """``out`` = (distance, point, normal) of piece i, world frame: y = Rᵀ (x − p) in its frame, back by (R, p)."""
    _frame(i, rows, local_R, local_p, body_R, body_p, frame)
    for b in range(3):
        y[b] = (frame[0, b] * (x[0] - frame[3, 0]) + frame[1, b] * (x[1] - frame[3, 1])
                + frame[2, b] * (x[2] - frame[3, 2]))
    out[0] = _field(y, kind[i], size[i], plane_n[plane_start[i]:plane_start[i + 1]],
                    plane_o[plane_start[i]:plane_start[i + 1]], out[1:4], out[4:7])
    for v in (1, 4):                                  # point and normal back to the world
        y[0], y[1], y[2] = out[v], out[v + 1], out[v + 2]
        for a in range(3):
            shift = frame[3, a] if v == 1 else 0.0
            out[v + a] = frame[a, 0] * y[0] + frame[a, 1] * y[1] + frame[a, 2] * y[2] + shift


@njit(cache=True, nogil=True)
def _field(y, kind, size, plane_n, plane_o, point, normal):
    """Signed distance of y to a piece in its frame; writes the surface point and the outward normal."""
    if kind == BOX:
        return _box(y, size, point, normal)
    if kind == SPHERE:
        return _ball(y, 0.0, size[0], point, normal)
    if kind == PLANE:
        point[:] = y
        point[2] = 0.0
        normal[:] = 0.0
        normal[2] = 1.0
        return y[2]
    if kind == CAPSULE:
        return _ball(y, min(max(y[2], -size[1]), size[1]), size[0], point, normal)
    if kind == CYLINDER:
        return _cylinder(y, size[0], size[1], point, normal)
    j, s = 0, -math.inf                               # HULL: max_i (n_i . y - o_i)
    for i in range(plane_n.shape[0]):
        si = plane_n[i, 0] * y[0] + plane_n[i, 1] * y[1] + plane_n[i, 2] * y[2] - plane_o[i]
        if si > s:
            j, s = i, si
    for a in range(3):
        normal[a] = plane_n[j, a]
        point[a] = y[a] - s * plane_n[j, a]
    return s


@njit(cache=True, nogil=True)
def _ball(y, z, r, point, normal):
    """Sphere of radius r centred at (0, 0, z) (a capsule: z clamped to its segment)."""
    e0, e1, e2 = y[0], y[1], y[2] - z
    n = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
    if n > 1e-12:
        normal[0], normal[1], normal[2] = e0 / n, e1 / n, e2 / n
    else:
        normal[0], normal[1], normal[2] = 0.0, 0.0, 1.0
    point[0], point[1], point[2] = r * normal[0], r * normal[1], z + r * normal[2]
    return n - r


@njit(cache=True, nogil=True)
def _box(y, h, point, normal):
    """Box of half extents h: outside, clamp onto it; inside, the nearest face."""
    outside = False
    for a in range(3):
        point[a] = min(max(y[a], -h[a]), h[a])
        outside = outside or abs(y[a]) > h[a]
    if outside:
        d = math.sqrt((y[0] - point[0]) ** 2 + (y[1] - point[1]) ** 2 + (y[2] - point[2]) ** 2)
        for a in range(3):
            normal[a] = (y[a] - point[a]) / d
        return d
    k = 0
    for a in range(1, 3):
        if abs(y[a]) - h[a] > abs(y[k]) - h[k]:
            k = a
    normal[:] = 0.0
    normal[k] = 1.0 if y[k] >= 0.0 else -1.0
    point[:] = y
    point[k] = normal[k] * h[k]
    return abs(y[k]) - h[k]


@njit(cache=True, nogil=True)
def _cylinder(y, r, h, point, normal):
    """|y_xy| <= r, |y_z| <= h: d = |max(q, 0)| + min(max q, 0) with q = (|y_xy| - r, |y_z| - h)."""
    rho = math.hypot(y[0], y[1])
    u0, u1 = (y[0] / rho, y[1] / rho) if rho > 1e-12 else (1.0, 0.0)
    q0, q1 = rho - r, abs(y[2]) - h
    side = 1.0 if y[2] >= 0.0 else -1.0
    if q0 <= 0.0 and q1 <= 0.0:                       # inside: the nearer of the side and the cap
        if q0 > q1:
            point[0], point[1], point[2] = r * u0, r * u1, y[2]
            normal[0], normal[1], normal[2] = u0, u1, 0.0
            return q0
        point[0], point[1], point[2] = y[0], y[1], side * h
        normal[0], normal[1], normal[2] = 0.0, 0.0, side
        return q1
    c = min(rho, r)
    point[0], point[1], point[2] = c * u0, c * u1, min(max(y[2], -h), h)
    e0, e1, e2 = y[0] - point[0], y[1] - point[1], y[2] - point[2]
    d = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
    normal[0], normal[1], normal[2] = e0 / d, e1 / d, e2 / d
    return d
