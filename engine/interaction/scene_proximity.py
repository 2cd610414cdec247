"""Touch mode on a whole universe: the signed distance to its collision geometry at the latest placements.

``SceneProximity(universe, placements)`` is a ``ProximityQuery`` (proximity.py) over every collision geometry of
the universe — the statics where they stand, the multibodies' at ``placements()``: a callable returning the
world placements of their bodies, ``(body_R, body_p)`` per multibody, as a ``Snapshot`` carries them (immutable,
so the haptic thread reads them while the physics steps).  ``Proximity.body`` is ``(multibody, body)`` for a
mobile body, None for a static one.

Each piece is a field in its own frame:

* box, sphere, plane (proximity.py), capsule (a segment swept by a sphere) and cylinder: exact signed distances;
* a mesh: its convex hull as the intersection of the face planes, d = max_i (n_i . y - o_i).  Exact inside and
  in front of a face; elsewhere outside a lower bound of the distance, with the point projected on the face
  plane — the god-object's sphere tracing only needs d never to exceed the distance, so it never crosses.

Pieces are tried nearest bounding sphere first and skipped once their bounding sphere is farther than the
best distance found, so a query on a humanoid evaluates a few pieces, not all.
"""
from __future__ import annotations

import numpy as np

from engine.interaction.proximity import Box, Plane, Proximity, Sphere
from engine.model import meshes


class SceneProximity:
    def __init__(self, universe, placements):
        self.placements = placements
        pieces = [(None, g) for s in universe.statics for g in s.geometries if g.role == "collision"]
        pieces += [((m, g.body), g) for m, mb in enumerate(universe.multibodies) for g in mb.model.geometries
                   if g.role == "collision"]
        self.keys = [key for key, _ in pieces]
        self.fields = [_field(g) for _, g in pieces]
        self.local_R = np.array([g.R for _, g in pieces]).reshape(-1, 3, 3)
        self.local_p = np.array([g.p for _, g in pieces]).reshape(-1, 3)
        self.radius = np.array([f.radius for f in self.fields])
        self.center = np.array([f.center for f in self.fields]).reshape(-1, 3)     # bounding sphere, piece frame
        self.rows = np.array([-1 if key is None else _row(universe, *key) for key in self.keys], dtype=np.int64)

    def __call__(self, x) -> Proximity:
        x = np.asarray(x, dtype=float)
        R, p = self._world()
        centers = np.einsum("kij,kj->ki", R, self.center) + p
        bound = np.linalg.norm(centers - x, axis=1) - self.radius
        best = None
        for k in np.argsort(bound, kind="stable"):
            if best is not None and bound[k] >= best.distance:
                break
            y = R[k].T @ (x - p[k])
            local = self.fields[k](y)
            if best is None or local.distance < best.distance:
                best = Proximity(local.distance, R[k] @ local.point + p[k], R[k] @ local.normal, self.keys[k])
        if best is None:
            raise ValueError("the universe has no collision geometry to touch")
        return best

    def _world(self):
        """World placements (R (k, 3, 3), p (k, 3)) of every piece: the body's placement times the piece's."""
        body_R, body_p = self.placements()
        R_all = np.concatenate([np.eye(3)[None]] + [np.asarray(r).reshape(-1, 3, 3) for r in body_R])
        p_all = np.concatenate([np.zeros((1, 3))] + [np.asarray(q).reshape(-1, 3) for q in body_p])
        Rb, pb = R_all[self.rows + 1], p_all[self.rows + 1]          # row -1 (a static) -> the identity
        return Rb @ self.local_R, np.einsum("kij,kj->ki", Rb, self.local_p) + pb


def _row(universe, m, body):
    """Row of (multibody m, body) in the concatenated body placements."""
    return sum(mb.model.nbodies for mb in universe.multibodies[:m]) + body


class _Field:
    """A signed distance field in the piece's frame, with its bounding sphere (center, radius)."""
    center = np.zeros(3)
    radius = np.inf

    def __call__(self, y) -> Proximity: ...


class _Primitive(_Field):
    def __init__(self, query, radius):
        self.query, self.radius = query, radius

    def __call__(self, y):
        return self.query(y)


class _Capsule(_Field):
    """Segment [-h, h] along z swept by a sphere of radius r."""

    def __init__(self, r, h):
        self.r, self.h, self.radius = r, h, r + h

    def __call__(self, y):
        c = np.array([0.0, 0.0, np.clip(y[2], -self.h, self.h)])
        return Sphere(c, self.r)(y)


class _Cylinder(_Field):
    """|y_xy| <= r, |y_z| <= h: d = |max(q, 0)| + min(max q, 0) with q = (|y_xy| - r, |y_z| - h)."""

    def __init__(self, r, h):
        self.r, self.h, self.radius = r, h, float(np.hypot(r, h))

    def __call__(self, y):
        rho = float(np.hypot(y[0], y[1]))
        radial = y[:2] / rho if rho > 1e-12 else np.array([1.0, 0.0])
        q = np.array([rho - self.r, abs(y[2]) - self.h])
        side = 1.0 if y[2] >= 0.0 else -1.0
        if np.all(q <= 0.0):                                   # inside: the nearer of the side and the cap
            if q[0] > q[1]:
                return Proximity(float(q[0]), np.r_[self.r * radial, y[2]], np.r_[radial, 0.0])
            return Proximity(float(q[1]), np.r_[y[:2], side * self.h], np.array([0.0, 0.0, side]))
        c = np.r_[min(rho, self.r) * radial, np.clip(y[2], -self.h, self.h)]
        e = y - c
        return Proximity(float(np.linalg.norm(e)), c, e / np.linalg.norm(e))


class _Hull(_Field):
    """The convex hull of a mesh as the intersection of its face planes n_i . y <= o_i."""

    def __init__(self, g):
        hull = meshes.convex_hull(g.mesh_path, g.mesh_scale)
        self.n = np.array(hull.face_normals, dtype=float)
        self.o = np.einsum("ij,ij->i", self.n, hull.triangles[:, 0])
        lo, hi = hull.vertices.min(axis=0), hull.vertices.max(axis=0)
        self.center = 0.5 * (lo + hi)
        self.radius = float(np.linalg.norm(hull.vertices - self.center, axis=1).max())

    def __call__(self, y):
        s = self.n @ y - self.o
        k = int(np.argmax(s))
        return Proximity(float(s[k]), y - s[k] * self.n[k], self.n[k])


def _field(g) -> _Field:
    size = tuple(float(s) for s in g.size)
    if g.kind == "box":
        h = 0.5 * np.array(size)
        return _Primitive(Box(h), float(np.linalg.norm(h)))
    if g.kind == "sphere":
        return _Primitive(Sphere(np.zeros(3), size[0]), size[0])
    if g.kind == "plane":
        return _Primitive(Plane(np.array([0.0, 0.0, 1.0])), np.inf)
    if g.kind == "capsule":
        return _Capsule(size[0], 0.5 * size[1])
    if g.kind == "cylinder":
        return _Cylinder(size[0], 0.5 * size[1])
    if g.kind == "mesh":
        return _Hull(g)
    raise ValueError(f"touch mode cannot use collision geometry '{g.name}' of kind '{g.kind}'")
