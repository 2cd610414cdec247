"""Touch mode on a whole universe: the signed distance to its collision geometry at the latest placements.

``SceneProximity(universe, placements)`` is a ``ProximityQuery`` (proximity.py) over every collision geometry of
the universe (``statics=False``: of its multibodies only) — the statics where they stand, the multibodies' at ``placements()``: a callable returning the
world placements of their bodies, ``(body_R, body_p)`` per multibody, as a ``Snapshot`` carries them (immutable,
so the haptic thread reads them while the physics steps).  ``Proximity.body`` is ``(multibody, body)`` for a
mobile body, None for a static one.

Each piece is a field in its own frame:

* box, sphere, plane (proximity.py), capsule (a segment swept by a sphere) and cylinder: exact signed distances;
* a mesh: its convex hull as the intersection of the face planes, d = max_i (n_i . y - o_i).  Exact inside and
  in front of a face; elsewhere outside a lower bound of the distance, with the point projected on the face
  plane — the god-object's sphere tracing only needs d never to exceed the distance, so it never crosses.

Pieces are tried nearest bounding sphere first and skipped once their bounding sphere is farther than the
best distance found, so a query on a humanoid evaluates a few pieces, not all; the loop is a numba kernel
(_proximity_kernels.py): a few microseconds a query, so the god-object's sphere tracing fits a 1 kHz tick.
"""
from __future__ import annotations

import numpy as np

from engine.interaction import _proximity_kernels as K
from engine.interaction.proximity import Proximity
from engine.model import meshes


class SceneProximity:
    def __init__(self, universe, placements, statics: bool = True):
        self.placements = placements
        pieces = [(None, g) for s in universe.statics for g in s.geometries if g.role == "collision" and statics]
        pieces += [((m, g.body), g) for m, mb in enumerate(universe.multibodies) for g in mb.model.geometries
                   if g.role == "collision"]
        self.keys = [key for key, _ in pieces]
        self.counts = [mb.model.nbodies for mb in universe.multibodies]
        fields = [_piece(g) for _, g in pieces]
        planes = [f[4] for f in fields]
        self.arrays = (np.array([f[0] for f in fields], dtype=np.int64),
                       np.array([f[1] for f in fields]).reshape(-1, 3),
                       np.array([-1 if key is None else _row(universe, *key) for key in self.keys], dtype=np.int64),
                       np.array([g.R for _, g in pieces], dtype=float).reshape(-1, 3, 3),
                       np.array([g.p for _, g in pieces], dtype=float).reshape(-1, 3),
                       np.array([f[2] for f in fields]).reshape(-1, 3), np.array([f[3] for f in fields]),
                       np.cumsum([0] + [len(n) for n, _ in planes]).astype(np.int64),
                       np.concatenate([n for n, _ in planes] + [np.zeros((0, 3))]),
                       np.concatenate([o for _, o in planes] + [np.zeros(0)]))
        n = sum(self.counts) + 1
        self.body_R, self.body_p = np.tile(np.eye(3), (n, 1, 1)), np.zeros((n, 3))   # row 0: the identity
        self.work, self.out = np.zeros(len(pieces) + 22), np.zeros(7)

    def __call__(self, x) -> Proximity:
        body_R, body_p = self.placements()
        row = 1
        for R, p in zip(body_R, body_p):
            n = len(p)
            self.body_R[row:row + n], self.body_p[row:row + n] = R, p
            row += n
        k = K.nearest_surface(np.asarray(x, dtype=float), *self.arrays, self.body_R, self.body_p, self.work,
                              self.out)
        if k < 0:
            raise ValueError("the universe has no collision geometry to touch")
        out = self.out
        return Proximity(float(out[0]), out[1:4].copy(), out[4:7].copy(), self.keys[k])


def _row(universe, m, body):
    """Row of (multibody m, body) in the concatenated body placements."""
    return sum(mb.model.nbodies for mb in universe.multibodies[:m]) + body


def _piece(g) -> tuple:
    """(kind, size (3,), bounding-sphere centre (3,) and radius in the piece's frame, face planes (n, o))."""
    size = np.zeros(3)
    size[:len(g.size)] = g.size
    none = (np.zeros((0, 3)), np.zeros(0))
    if g.kind == "box":
        return K.BOX, 0.5 * size, np.zeros(3), 0.5 * float(np.linalg.norm(size)), none
    if g.kind == "sphere":
        return K.SPHERE, size, np.zeros(3), size[0], none
    if g.kind == "plane":
        return K.PLANE, size, np.zeros(3), np.inf, none
    if g.kind in ("capsule", "cylinder"):
        r, h = size[0], 0.5 * size[1]
        kind, reach = (K.CAPSULE, r + h) if g.kind == "capsule" else (K.CYLINDER, float(np.hypot(r, h)))
        return kind, np.array([r, h, 0.0]), np.zeros(3), reach, none
    if g.kind == "mesh":
        hull = meshes.convex_hull(g.mesh_path, g.mesh_scale)
        n = np.array(hull.face_normals, dtype=float)
        centre = 0.5 * (hull.vertices.min(axis=0) + hull.vertices.max(axis=0))
        radius = float(np.linalg.norm(hull.vertices - centre, axis=1).max())
        return K.HULL, size, centre, radius, (n, np.einsum("ij,ij->i", n, hull.triangles[:, 0]))
    raise ValueError(f"touch mode cannot use collision geometry '{g.name}' of kind '{g.kind}'")
