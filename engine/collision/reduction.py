"""Contact manifold reduction: at most N points per pair that keep the support polygon (thesis L1469: the
triangle-triangle points of PQP are "heavily redundant and need sorting").

For the raw points of one pair (positions, normals, depths) and the tolerances (merge_distance, face_tolerance):

1. at most N points: **merge** those closer than ``merge_distance`` (keeping the deepest), keep the rest;
2. more than N: project them on the plane orthogonal to the mean normal and pick greedily (as Bullet's
   persistent manifold does for N = 4), then replace each chosen point by the deepest point within
   ``merge_distance`` of it and drop repeats:
   * the deepest point (it carries the penetration to correct); points within ``TIE * face_tolerance`` of it
     tie, and the first wins, so that a sole rocking by micrometres keeps the same points from step to step
     (the solver's warm start follows them),
   * the point of the **face** farthest from it, the face being the points whose depth is within
     ``face_tolerance`` of the deepest (the ones that bear the load),
   * then, while fewer than N are chosen, the face point that grows the area of the convex hull of the chosen
     points the most — a cube resting on a plane keeps its 4 corners, a foot sole its 4 extreme corners;
   * only when the face gives fewer than N points that add area (a point or a line contact) do the other
     points, proximity contacts up to the margin, compete by the same rule.
   Points that add no area are not taken.  Without the face rule a sole that is flat to 0.2 mm but whose
   hull rises 1-2 mm at its rim (Talos's) keeps one touching vertex and three rim points in the air: the foot
   stands on one point and creeps.

Ties are broken by the lower index, so the result is deterministic.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from engine.collision import _vec as v

TIE = 0.01  # points within TIE * face_tolerance of the deepest tie for "deepest": the first one wins


@njit(cache=True, nogil=True)
def merge_duplicates(raw, k, merge_distance):
    """Collapse points closer than ``merge_distance`` into the deepest one, in place in rows of ``raw``
    (point, normal, depth); returns the new count."""
    d2 = merge_distance * merge_distance
    m = 0
    for j in range(k):
        merged = False
        for i in range(m):
            e = v.sub(v.row(raw, j), v.row(raw, i))
            if v.dot(e, e) < d2:
                if raw[j, 6] > raw[i, 6]:
                    raw[i] = raw[j]
                merged = True
                break
        if not merged:
            if m != j:
                raw[m] = raw[j]
            m += 1
    return m


@njit(cache=True, nogil=True, inline="always")
def reduce_manifold(raw, k, n_max, tol, uv, selected, work):
    """Indices of at most ``n_max`` of the ``k`` contacts in rows of ``raw`` (K, 7) = (point, normal, depth),
    written to ``selected``; returns their count.  ``tol`` = (merge_distance, face_tolerance).

    Few points: duplicates merged (in place), all kept.  Many: greedy choice in O(k N), face points first,
    then the chosen points merged.  ``uv`` (>= k, 2), ``selected`` (>= k,) and ``work`` (>= 2 n_max + 2,) are
    workspaces.
    """
    merge_distance, face_tolerance = tol
    if k <= n_max:
        m = merge_duplicates(raw, k, merge_distance)
        for i in range(m):
            selected[i] = i
        return m
    deepest = 0
    n = (0.0, 0.0, 0.0)
    for i in range(k):
        n = v.add(n, (raw[i, 3], raw[i, 4], raw[i, 5]))
        if raw[i, 6] > raw[deepest, 6]:
            deepest = i
    deepest = _first_within(raw, k, raw[deepest, 6] - TIE * face_tolerance)
    if v.norm(n) < 1e-9:
        n = (raw[deepest, 3], raw[deepest, 4], raw[deepest, 5])
    t1, t2 = v.tangent_basis(v.scale(n, 1.0 / v.norm(n)))
    for i in range(k):  # coordinates in the tangent plane
        x = v.row(raw, i)
        uv[i, 0] = v.dot(x, t1)
        uv[i, 1] = v.dot(x, t2)
    face = raw[deepest, 6] - face_tolerance
    selected[0] = deepest
    far = _farthest(raw, uv, k, deepest, face, merge_distance)
    if far < 0:
        far = _farthest(raw, uv, k, deepest, -np.inf, merge_distance)
    if far < 0 or n_max == 1:
        return _merge_selected(raw, k, selected, 1, merge_distance)
    selected[1] = far
    hull, scratch = work[:n_max + 1], work[n_max + 1:]
    hull[0], hull[1] = deepest, far
    min_gain = 1e-9 * ((uv[far, 0] - uv[deepest, 0]) ** 2 + (uv[far, 1] - uv[deepest, 1]) ** 2)
    m, h = _grow(raw, uv, k, face, selected, 2, n_max, min_gain, hull, 2, scratch)
    m, _ = _grow(raw, uv, k, -np.inf, selected, m, n_max, min_gain, hull, h, scratch)
    return _merge_selected(raw, k, selected, m, merge_distance)


@njit(cache=True, nogil=True)
def _first_within(raw, k, min_depth):
    """The first point of depth >= min_depth."""
    for i in range(k):
        if raw[i, 6] >= min_depth:
            return i
    return 0


@njit(cache=True, nogil=True)
def _farthest(raw, uv, k, origin, min_depth, merge_distance):
    """The point of depth >= min_depth farthest in the tangent plane from ``origin`` and beyond
    ``merge_distance``, or -1."""
    far, best = -1, merge_distance * merge_distance
    for i in range(k):
        d2 = (uv[i, 0] - uv[origin, 0]) ** 2 + (uv[i, 1] - uv[origin, 1]) ** 2
        if raw[i, 6] >= min_depth and d2 > best:
            far, best = i, d2
    return far


@njit(cache=True, nogil=True)
def _grow(raw, uv, k, min_depth, selected, m, n_max, min_gain, hull, h, scratch):
    """Add to ``selected[:m]`` the points of depth >= min_depth that grow the hull area the most, while the
    gain exceeds min_gain; returns (m, h), the new counts of chosen points and hull vertices.

    Gain of a point x outside the counter-clockwise hull h: the sum over the edges (h_e, h_e+1) that see x
    of the triangle areas -1/2 (h_e+1 - h_e) x (x - h_e).  A 2-vertex hull is a segment: edges 0 -> 1 and
    1 -> 0.  ``hull`` (>= n_max + 1) and ``scratch`` (>= n_max + 1) are workspaces.
    """
    while m < n_max:
        pick, best = -1, min_gain
        for i in range(k):
            if raw[i, 6] < min_depth:
                continue
            gain = 0.0
            for e in range(h):
                t = _turn(uv, hull[e], hull[(e + 1) % h], i)
                if t < 0.0:
                    gain -= 0.5 * t
            if gain > best:
                pick, best = i, gain
        if pick < 0:
            break
        selected[m] = pick
        m += 1
        h = _insert(uv, hull, h, pick, scratch)
    return m, h


@njit(cache=True, nogil=True)
def _insert(uv, hull, h, x, scratch):
    """Insert point x, outside the counter-clockwise hull[:h], into it: the vertices between two edges that
    see x are dropped and x takes their place; returns the new size."""
    m = 0
    for e in range(h):
        sees_before = _turn(uv, hull[(e - 1) % h], hull[e], x) < 0.0
        sees_after = _turn(uv, hull[e], hull[(e + 1) % h], x) < 0.0
        if not (sees_before and sees_after):
            scratch[m] = hull[e]
            m += 1
        if sees_after and not sees_before:
            scratch[m] = x
            m += 1
    hull[:m] = scratch[:m]
    return m


@njit(cache=True, nogil=True)
def _merge_selected(raw, k, selected, m, merge_distance):
    """Replace each chosen point by the deepest of the ``k`` points within ``merge_distance`` of it, and drop
    those that then repeat an earlier one; returns the new count."""
    d2 = merge_distance * merge_distance
    kept = 0
    for j in range(m):
        x, best = v.row(raw, selected[j]), selected[j]
        for i in range(k):
            e = v.sub(v.row(raw, i), x)
            if v.dot(e, e) < d2 and raw[i, 6] > raw[best, 6]:
                best = i
        repeated = False
        for i in range(kept):
            e = v.sub(v.row(raw, best), v.row(raw, selected[i]))
            if v.dot(e, e) < d2:
                repeated = True
                break
        if not repeated:
            selected[kept] = best
            kept += 1
    return kept


@njit(cache=True, nogil=True, inline="always")
def _turn(uv, a, b, c):
    """z of (b - a) x (c - a): > 0 for a left turn."""
    return (uv[b, 0] - uv[a, 0]) * (uv[c, 1] - uv[a, 1]) - (uv[b, 1] - uv[a, 1]) * (uv[c, 0] - uv[a, 0])
