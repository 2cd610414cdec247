"""Which body is under a point or a ray: the grasp of a device (``BodyPicker``) and the mouse's double-click
(``ray_triangles``).

A device grasps the body its proxy is in (attach mode, seed 000 §2: "the attach point can be inside or on the
surface").  ``BodyPicker`` answers that on the simulation's current placements (``sim.body_placement``) from the
bodies' collision geometries: exact signed distances for boxes, spheres, cylinders and capsules; a mesh is
represented by its bounding box in the body frame (cheap, and generous: a grasp near a mesh is a grasp).
The mouse instead casts a ray through the clicked pixel against the triangles drawn (Moller & Trumbore 1997).
"""
from __future__ import annotations

from functools import cache

import numpy as np


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


def signed_distance(kind: str, size, y) -> float:
    """Signed distance of the point ``y`` (shape frame) to a primitive (< 0 inside); sizes as in ``Geometry``."""
    if kind == "box":
        q = np.abs(y) - 0.5 * np.asarray(size, float)
        return float(np.linalg.norm(np.maximum(q, 0.0)) + min(q.max(), 0.0))
    if kind == "sphere":
        return float(np.linalg.norm(y) - size[0])
    if kind == "capsule":                                   # distance to the segment |z| <= l/2, minus r
        return float(np.linalg.norm([y[0], y[1], max(abs(y[2]) - 0.5 * size[1], 0.0)]) - size[0])
    if kind == "cylinder":                                  # 2D box in (radial, axial)
        q = np.array([np.hypot(y[0], y[1]) - size[0], abs(y[2]) - 0.5 * size[1]])
        return float(np.linalg.norm(np.maximum(q, 0.0)) + min(q.max(), 0.0))
    raise ValueError(f"no signed distance for a geometry of kind {kind!r}")


@cache
def _mesh_box(mesh_path: str, mesh_scale: tuple):
    """(centre, full extents) of a mesh's bounding box in its own frame."""
    from engine.model.meshes import load_mesh
    lower, upper = load_mesh(mesh_path, mesh_scale).bounds
    return 0.5 * (lower + upper), upper - lower


def geometry_distance(geom, y) -> float:
    """Signed distance of ``y`` (body frame) to a ``Geometry``: its primitive, or a mesh's bounding box."""
    local = geom.R.T @ (y - geom.p)
    if geom.kind == "mesh":
        centre, extents = _mesh_box(geom.mesh_path, tuple(geom.mesh_scale))
        return signed_distance("box", extents, local - centre)
    return signed_distance(geom.kind, geom.size, local)


class BodyPicker:
    """``picker(x) -> (multibody, body) | None``: the mobile body whose collision geometry is nearest to the world
    point ``x``, if ``x`` is inside it or within ``tolerance`` (m).  Call on the physics thread (it reads ``sim``).
    """

    def __init__(self, sim, tolerance: float = 0.01):
        self.sim, self.tolerance = sim, float(tolerance)
        self.bodies = [((m, b), geoms) for m, mb in enumerate(sim.universe.multibodies)
                       for b in range(mb.model.nbodies)
                       if (geoms := [g for g in mb.model.geometries if g.body == b and g.role == "collision"
                                     and g.kind != "plane"])]

    def __call__(self, x):
        best, key = self.tolerance, None
        for body_key, geoms in self.bodies:
            R, p = self.sim.body_placement(*body_key)
            y = R.T @ (np.asarray(x, float) - p)
            d = min(geometry_distance(g, y) for g in geoms)
            if d <= best:
                best, key = d, body_key
        return key
