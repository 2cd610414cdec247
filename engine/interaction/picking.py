"""Which body is under a point or a ray: the grasp of a device (``BodyPicker``) and the mouse's double-click
(``ray_triangles``).

A device grasps the body its proxy is in (attach mode, seed 000 §2: "the attach point can be inside or on the
surface").  ``BodyPicker`` answers that on the simulation's current placements from the bodies' collision
geometries, with touch mode's distance fields (scene_proximity.py: exact for primitives, a mesh's hull).
The mouse instead casts a ray through the clicked pixel against the triangles drawn (Moller & Trumbore 1997).
"""
from __future__ import annotations

import numpy as np

from engine.interaction.scene_proximity import SceneProximity


def ray_triangles(origin, direction, vertices, faces, eps: float = 1e-12):
    """Nearest hit of the ray x(s) = o + s d, s > 0, on triangles (``vertices`` (n, 3), ``faces`` (m, 3)):
    (s, face index), or (inf, -1) when it misses.  Moller-Trumbore: with e1 = b - a, e2 = c - a, P = d x e2,
    det = e1 . P, T = o - a, Q = T x e1: u = T . P / det, v = d . Q / det, s = e2 . Q / det, hit when
    u >= 0, v >= 0, u + v <= 1."""
    o, d = np.asarray(origin, float), np.asarray(direction, float)
    tri = np.asarray(vertices, float)[np.asarray(faces, np.int64)]
    a, e1, e2 = tri[:, 0], tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    P = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, P)
    ok = np.abs(det) > eps
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    T = o - a
    u = np.einsum("ij,ij->i", T, P) * inv
    Q = np.cross(T, e1)
    v = (Q @ d) * inv
    s = np.einsum("ij,ij->i", e2, Q) * inv
    hit = ok & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (s > eps)
    if not hit.any():
        return np.inf, -1
    k = int(np.flatnonzero(hit)[np.argmin(s[hit])])
    return float(s[k]), k


class BodyPicker:
    """``picker(x) -> (multibody, body) | None``: the mobile body whose collision geometry is nearest to the world
    point ``x``, if ``x`` is inside it or within ``tolerance`` (m), on the simulation's current placements
    (``SceneProximity`` over the multibodies). Call on the physics thread (it reads ``sim``)."""

    def __init__(self, sim, tolerance: float = 0.01):
        self.sim, self.tolerance = sim, float(tolerance)
        self.scene = SceneProximity(sim.universe, sim.placements, statics=False)

    def __call__(self, x):
        if not self.scene.keys:
            return None
        nearest = self.scene(x)
        return nearest.body if nearest.distance <= self.tolerance else None
