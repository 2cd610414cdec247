"""The ground under the wheels: gaps from a disk to static planes and triangle soups (seed 001 §2.8; Mauny 2018
§4.2.2, L2637–L2671, App. D L3358–L3407).

A wheel is a disk: centre O, unit spin axis a, radius h. Its lowest point along a unit normal N (eqs. 2.20/2.22
without the angles; the thesis's L2661 normalised, §6 item 7 of the digest) is

    u = N − (N·a) a,   C = O − h u / |u|,   gap Φ = N·(C − P)        (P a point of the face's plane, eq. 3.6)

* a plane: always a face;
* a triangle (P1, P2, P3), N = (P2 − P1) × (P3 − P2) normalised (L2649): a face gap when the projection of C lies
  inside the triangle and O is in front of it; inside means every edge distance n_e·(C − P_i) ≥ 0, with
  n_e = N × (P_j − P_i) / |P_j − P_i| the edge's inward normal in the plane;
* no face: the edges (vertices included), normal from the edge's closest point Q to O: N = (O − Q)/|O − Q|.

Face gaps are preferred over edge gaps (L3401–L3405): the gap then jumps when a wheel leaves a ramp's edge, which
is the event of a hard lift-off. The broad phase is FCL's (a BVH of the triangles, collided with a sphere of
radius h + ``REACH`` about O): only the triangles it returns are tested, vectorised; with none (and no plane)
the gap is ``REACH``, a lower bound (a face farther than that is not preferred to a nearer edge). Coplanar triangles of one geometry form one **face** (a box's side is two
triangles); a wheel rolls on a face's plane and leaves it when its contact point leaves the face: ``margin`` is the
largest edge-distance minimum over the face's triangles, positive inside, negative outside.
"""
from __future__ import annotations

from dataclasses import dataclass

import fcl
import numpy as np
import trimesh

from engine.errors import UniverseError
from engine.model.meshes import load_mesh

PLANE_DIGITS = 9      # normals and offsets rounded to 1e-9 group coplanar triangles into faces
REACH = 1.0           # m: the broad phase keeps the triangles within h + REACH of a wheel's centre


@dataclass(frozen=True)
class Support:
    """The plane a wheel touches: unit ``normal``, a ``point`` of it, its ``face`` (index into the ground's faces;
    −1 for an infinite plane, −2 for an edge or vertex) and the ``name`` of the static body."""

    normal: np.ndarray
    point: np.ndarray
    face: int
    name: str


def lowest_point(O, a, h, N):
    """C = O − h u/|u|, u = N − (N·a) a: the disk's lowest point along N; a disk parallel to the plane (u = 0)
    is all at one height, and its centre O is taken."""
    u = N - (N @ a)[..., None] * a if N.ndim > 1 else N - (N @ a) * a
    norm = np.linalg.norm(u, axis=-1, keepdims=N.ndim > 1)
    return O - h * u / np.where(norm > 1e-12, norm, np.inf)


class Ground:
    """Static planes and triangles in the frame of one multibody's base (where its wheels' centres are given)."""

    def __init__(self, planes, triangles, triangle_face, face_name, plane_name):
        self.planes = planes                          # [(N (3,), P (3,))]
        self.plane_name = plane_name
        self.triangles = np.asarray(triangles, float).reshape(-1, 3, 3)
        self.triangle_face = np.asarray(triangle_face, int)
        self.face_name = face_name
        P1, P2, P3 = self.triangles[:, 0], self.triangles[:, 1], self.triangles[:, 2]
        N = np.cross(P2 - P1, P3 - P2)
        self.normals = N / np.linalg.norm(N, axis=1, keepdims=True)
        edges = np.stack([P2 - P1, P3 - P2, P1 - P3], axis=1)                        # (T, 3, 3)
        inward = np.cross(self.normals[:, None, :], edges)
        self.edge_start = np.stack([P1, P2, P3], axis=1)
        self.edge_vector = edges
        self.edge_inward = inward / np.linalg.norm(inward, axis=2, keepdims=True)
        self.bvh = _bvh(self.triangles) if len(self.triangles) else None

    @classmethod
    def from_statics(cls, statics, R, p, source):
        """Every static plane, box and mesh of the universe, in the base frame (R, p) of a multibody."""
        planes, plane_name, triangles, face, face_name = [], [], [], [], []
        for st in statics:
            for g in st.geometries:
                if g.kind == "plane":
                    planes.append((R.T @ g.R[:, 2], R.T @ (g.p - p)))
                    plane_name.append(st.name)
                    continue
                mesh = _trimesh(g, source)
                if mesh is None:
                    continue
                world = mesh.vertices[mesh.faces] @ g.R.T + g.p                    # (T, 3, 3) world
                local = (world - p) @ R
                for tri in local:
                    face.append(_face_of(tri, face_name, st.name, len(face_name)))
                    triangles.append(tri)
        return cls(planes, triangles, face, [f[0] for f in face_name], plane_name)

    # ---- gaps ----------------------------------------------------------------------------------------------
    def gap(self, O, a, h, exclude: Support | None = None):
        """(Φ, Support): the gap of the disk to the ground, faces preferred over edges (module docstring);
        ``exclude``: a support whose plane or face (and that face's edges) is left out: what a wheel rolling on it
        may run into (a kerb)."""
        best = (np.inf, None)
        for i, (N, P) in enumerate(self.planes):
            if exclude is not None and exclude.face == -1 and np.array_equal(N, exclude.normal) \
                    and np.array_equal(P, exclude.point):
                continue
            phi = N @ (lowest_point(O, a, h, N) - P)
            if phi < best[0]:
                best = (phi, Support(N, P, -1, self.plane_name[i]))
        near = self._near(O, h)
        if exclude is not None and exclude.face >= 0:
            near = near[self.triangle_face[near] != exclude.face]
        if len(near):
            N, P1 = self.normals[near], self.triangles[near, 0]
            C = lowest_point(O, a, h, N)
            phi = np.einsum("ij,ij->i", N, C - P1)
            inside = self._edge_distances(C, near).min(axis=1) >= 0.0
            front = np.einsum("ij,ij->i", N, O - P1) > 0.0
            faces = np.flatnonzero(inside & front)
            if len(faces):
                t = faces[np.argmin(phi[faces])]
                if phi[t] < best[0]:
                    f = self.triangle_face[near[t]]
                    best = (phi[t], Support(N[t], P1[t], int(f), self.face_name[f]))
            if best[1] is None:
                best = self._edge_gap(O, a, h, near)
        return best if best[1] is not None else (REACH, None)

    def _near(self, O, h):
        """The triangles within h + REACH of O (FCL: the BVH against a sphere), sorted indices."""
        if self.bvh is None:
            return np.zeros(0, int)
        sphere = fcl.CollisionObject(fcl.Sphere(h + REACH), fcl.Transform(np.asarray(O, float)))
        result = fcl.CollisionResult()
        fcl.collide(self.bvh, sphere, fcl.CollisionRequest(num_max_contacts=len(self.triangles),
                                                           enable_contact=True), result)
        return np.array(sorted({c.b1 for c in result.contacts}), int)

    def margin(self, support: Support, O, a, h) -> float:
        """The disk's lowest point along the support's normal against its face: > 0 inside (the distance to the
        nearest edge of its triangle, the diagonals between the face's triangles included: it touches 0 there
        without changing sign), < 0 once it has left the face (the event of a hard lift-off); +∞ on a plane."""
        if support.face < 0:
            return np.inf
        C = lowest_point(O, a, h, support.normal)
        mine = self.triangle_face == support.face
        return float(self._edge_distances(C, mine).min(axis=1).max())

    def _edge_distances(self, C, rows=slice(None)):
        """(T, 3): n_e·(C − P_i) for every edge of the triangles ``rows`` (C one point or one per triangle)."""
        return np.einsum("tek,tek->te", self.edge_inward[rows], np.broadcast_to(
            (C[:, None, :] if C.ndim > 1 else C) - self.edge_start[rows], self.edge_start[rows].shape))

    def _edge_gap(self, O, a, h, rows):
        """The nearest edge or vertex of the triangles ``rows`` (no face under the disk): Q the closest point of
        each edge to O, N = (O − Q)/|O − Q|, Φ = N·(C − Q) with C the lowest point along N."""
        start, edge = self.edge_start[rows].reshape(-1, 3), self.edge_vector[rows].reshape(-1, 3)
        s = np.clip(np.einsum("ij,ij->i", O - start, edge) / np.einsum("ij,ij->i", edge, edge), 0.0, 1.0)
        Q = start + s[:, None] * edge
        d = O - Q
        N = d / np.linalg.norm(d, axis=1, keepdims=True)
        phi = np.einsum("ij,ij->i", N, lowest_point(O, a, h, N) - Q)
        k = int(np.argmin(phi))
        return phi[k], Support(N[k], Q[k], -2, self.face_name[self.triangle_face[rows[k // 3]]])


def _bvh(triangles):
    """An FCL collision object of the triangle soup (primitive i = triangle i)."""
    model = fcl.BVHModel()
    model.beginModel(3 * len(triangles), len(triangles))
    model.addSubModel(triangles.reshape(-1, 3), np.arange(3 * len(triangles)).reshape(-1, 3))
    model.endModel()
    return fcl.CollisionObject(model)


def _trimesh(g, source):
    """The triangles of a static box or mesh in its own frame (None for shapes that carry no wheel)."""
    if g.kind == "box":
        return trimesh.creation.box(extents=g.size)
    if g.kind == "mesh":
        return load_mesh(g.mesh_path, g.mesh_scale)
    if g.kind in ("sphere", "cylinder", "capsule"):
        raise UniverseError(f"a wheel's ground is made of planes, boxes and meshes, not a {g.kind}",
                            *(_file_line(g.source or source)), g.name)
    return None


def _face_of(tri, faces, name, new) -> int:
    """The index of the face (coplanar triangles of one static body) the triangle belongs to, added if new."""
    N = np.cross(tri[1] - tri[0], tri[2] - tri[1])
    N /= np.linalg.norm(N)
    key = (name, *np.round(N, PLANE_DIGITS), round(float(N @ tri[0]), PLANE_DIGITS))
    for i, (_, k) in enumerate(faces):
        if k == key:
            return i
    faces.append((name, key))
    return new


def _file_line(source):
    file, _, line = str(source).rpartition(":")
    return (file, int(line)) if line.isdigit() else (source, None)
