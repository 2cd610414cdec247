"""Collision shapes: a ``Geometry`` (engine.model.model) becomes one or more convex-or-mesh ``Shape`` pieces.

Each piece carries what the numba narrowphase needs (support vertices, polygonal faces, a local bounding box)
and the FCL object used for the pairs that go to FCL.  All arrays are in the shape frame, whose placement in
the body frame is the Geometry's (R, p).

Shape kinds and their data (``size`` is (3,), unused entries 0):

* ``SPHERE``   size = (r, 0, 0), one support point (the centre), swept radius r;
* ``CAPSULE``  size = (r, L/2, 0), segment from (0, 0, -L/2) to (0, 0, L/2), swept radius r;
* ``BOX``      size = half extents, 8 corners, 6 quadrilateral faces;
* ``CONVEX``   a convex hull: its vertices and its polygonal faces (coplanar triangles merged);
* ``CYLINDER`` size = (r, L/2, 0), 2 x 8 rim samples (the halfspace test adds the exact lowest rim points);
* ``MESH``     a non-convex triangle mesh (FCL BVH); support vertices are its hull's vertices;
* ``PLANE``    the half-space z <= 0 of its frame (normal +z).

Collision mode of meshes (``Geometry.collision_mode``): ``convex`` = the hull; ``decompose`` = V-HACD pieces;
``mesh`` = the mesh itself: on a static body its triangles (FCL BVH: terrains, open surfaces); on a moving
body its hull when the mesh fills it to 1 % (robot collision meshes are convex), else its V-HACD pieces —
FCL's triangle-triangle contacts between two meshes have unreliable normals and depths, so moving meshes are
made of convex pieces, as in Bullet and MuJoCo.  Fallbacks, each with a ``MeshWarning``: a moving mesh that
is not watertight uses its hull; a flat mesh (no hull) keeps its triangles; a failed decomposition uses the
hull.  Primitives with a negative or non-finite size raise ``ValueError``; zero-volume primitives (a zero
extent or radius) have nothing to collide: they are skipped with a ``GeometryWarning``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import fcl
import numpy as np

from engine.errors import ModelError
from engine.model import meshes
from engine.model.meshes import MeshWarning

SPHERE, CAPSULE, BOX, CONVEX, CYLINDER, MESH, PLANE = range(7)
POLYTOPES = (BOX, CONVEX)
SWEPT = (SPHERE, CAPSULE)
CONVEX_FILL = 0.99  # a mesh whose volume is >= 99 % of its hull's is treated as convex
RIM_SAMPLES = 8


class GeometryWarning(UserWarning):
    """A collision geometry was skipped or replaced (the message says which and why)."""


@dataclass(frozen=True, eq=False)
class Shape:
    """One convex (or triangle-mesh) piece of a collision geometry, in its own frame."""

    kind: int
    size: np.ndarray          # (3,)
    radius: float             # swept radius (sphere, capsule), else 0
    vertices: np.ndarray      # (nv, 3) support points
    faces: tuple              # ((outward normal (3,), vertex indices counter-clockwise about it), ...)
    box_center: np.ndarray    # (3,) local bounding box centre ...
    box_half: np.ndarray      # (3,) ... and half extents (inf for a plane)
    fcl_geometry: object
    edges: tuple = ()         # a hull's edge graph: (first (nv + 1,), neighbour (2 ne,)), vertex i's neighbours
                              # neighbour[first[i]:first[i + 1]] (``edge_graph``); () for the other kinds


def shapes_of(g, mobile: bool = True) -> list:
    """The collision pieces of Geometry ``g`` (empty when it is skipped); ``mobile``: carried by a moving body."""
    label = f"collision geometry '{g.name}'"
    if g.kind == "mesh":
        try:
            return _mesh_shapes(g, label, mobile)
        except ModelError as exc:
            raise meshes.located(g, label, exc) from exc
    size = np.asarray(g.size, dtype=float)
    if size.size != {"box": 3, "sphere": 1, "cylinder": 2, "capsule": 2, "plane": 0}.get(g.kind, -1):
        raise ValueError(f"{label}: unknown kind {g.kind!r} or wrong number of sizes {tuple(g.size)}")
    if not np.all(np.isfinite(size)) or np.any(size < 0.0):
        raise ValueError(f"{label}: {g.kind} sizes must be finite and >= 0, got {tuple(g.size)}")
    if g.kind == "plane":
        return [_plane()]
    zero = np.any(size == 0.0) if g.kind != "capsule" else size[0] == 0.0
    if zero:
        warnings.warn(f"{label}: {g.kind} of size {tuple(g.size)} has no volume; ignored for collision",
                      GeometryWarning, stacklevel=3)
        return []
    return [{"box": _box, "sphere": _sphere, "capsule": _capsule, "cylinder": _cylinder}[g.kind](*size)]


def _plane():
    inf = np.full(3, np.inf)
    return Shape(PLANE, np.zeros(3), 0.0, np.zeros((0, 3)), (), np.zeros(3), inf,
                 fcl.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0))


def _sphere(r):
    return Shape(SPHERE, np.array([r, 0.0, 0.0]), r, np.zeros((1, 3)), (), np.zeros(3), np.full(3, r),
                 fcl.Sphere(r))


def _capsule(r, length):
    h = 0.5 * length
    ends = np.array([[0.0, 0.0, -h], [0.0, 0.0, h]])
    return Shape(CAPSULE, np.array([r, h, 0.0]), r, ends, (), np.zeros(3), np.array([r, r, h + r]),
                 fcl.Capsule(r, length))


def _cylinder(r, length):
    h = 0.5 * length
    t = 2.0 * np.pi * np.arange(RIM_SAMPLES) / RIM_SAMPLES
    rim = np.column_stack([r * np.cos(t), r * np.sin(t), np.zeros(RIM_SAMPLES)])
    vertices = np.vstack([rim + [0.0, 0.0, -h], rim + [0.0, 0.0, h]])
    return Shape(CYLINDER, np.array([r, h, 0.0]), 0.0, vertices, (), np.zeros(3), np.array([r, r, h]),
                 fcl.Cylinder(r, length))


def _box(sx, sy, sz):
    h = 0.5 * np.array([sx, sy, sz])
    corners = np.array([[2 * (i & 1) - 1, (i & 2) - 1, (i & 4) // 2 - 1] for i in range(8)], dtype=float) * h
    faces = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            normal = np.zeros(3)
            normal[axis] = sign
            on_face = [i for i in range(8) if corners[i, axis] * sign > 0.0]
            faces.append((normal, _counter_clockwise(corners, on_face, normal)))
    return Shape(BOX, h, 0.0, corners, tuple(faces), np.zeros(3), h, fcl.Box(sx, sy, sz))


def _counter_clockwise(vertices, indices, normal):
    """``indices`` of a planar convex polygon sorted counter-clockwise about ``normal``."""
    pts = vertices[indices]
    centre = pts.mean(axis=0)
    t1 = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
    t1 /= np.linalg.norm(t1)
    t2 = np.cross(normal, t1)
    angle = np.arctan2((pts - centre) @ t2, (pts - centre) @ t1)
    return np.asarray(indices, dtype=np.int64)[np.argsort(angle, kind="stable")]


def convex_shape(hull) -> Shape:
    """A CONVEX shape from a trimesh convex hull: vertices, merged polygonal faces, FCL ``Convex``."""
    return _polytope_shape(*_polytope(hull))


def _polytope(hull) -> tuple:
    """(vertices (nv, 3), ((outward normal, polygon counter-clockwise), ...), triangles (nt, 3)) of a hull,
    read-only (they are cached and shared by the shapes built from them)."""
    vertices = np.array(hull.vertices, dtype=float)
    in_facet = np.zeros(len(hull.faces), dtype=bool)
    faces = []
    for tris in hull.facets:                         # coplanar triangles: one polygon
        in_facet[tris] = True
        polygon = _counter_clockwise(vertices, np.unique(hull.faces[tris]), hull.face_normals[tris[0]])
        faces.append((_read_only(_newell_normal(vertices[polygon])), _read_only(polygon)))
    single = np.flatnonzero(~in_facet)               # the other triangles, all at once (most of a mesh hull)
    triangles = np.array(hull.faces[single], dtype=np.int64)
    a, b, c = (vertices[triangles[:, i]] for i in range(3))
    normals = np.cross(b - a, c - a)
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    flip = np.einsum("ij,ij->i", normals, hull.face_normals[single]) < 0.0
    triangles[flip] = triangles[flip][:, ::-1]       # counter-clockwise about the outward normal
    normals[flip] *= -1.0
    faces += zip(_read_only(normals), _read_only(triangles))
    return _read_only(vertices), tuple(faces), _read_only(np.array(hull.faces, dtype=np.int64))


def _polytope_shape(vertices, faces, triangles) -> Shape:
    """A CONVEX shape from ``_polytope``'s arrays, with its own FCL ``Convex`` (the narrowphase tells the two
    sides of a contact apart by their FCL geometry, so shapes never share one)."""
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    fcl_faces = np.hstack([np.full((len(triangles), 1), 3), triangles]).ravel()
    return Shape(CONVEX, 0.5 * (hi - lo), 0.0, vertices, faces, 0.5 * (lo + hi), 0.5 * (hi - lo),
                 fcl.Convex(vertices, len(triangles), fcl_faces), edge_graph(len(vertices), triangles))


def edge_graph(nv, triangles) -> tuple:
    """The edges of a triangulated surface as adjacency lists in CSR form: (first (nv + 1,), neighbour (2 ne,)),
    vertex i's neighbours ``neighbour[first[i]:first[i + 1]]`` in increasing order (read-only arrays)."""
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    ends = np.vstack([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]])
    ends = np.unique(np.vstack([ends, ends[:, ::-1]]), axis=0)       # both directions, sorted by (i, j)
    first = np.searchsorted(ends[:, 0], np.arange(nv + 1)).astype(np.int64)
    return _read_only(first), _read_only(np.ascontiguousarray(ends[:, 1]))


@cache
def _hull_polytope(key) -> tuple:
    """``_polytope`` of the convex hull of the mesh of ``key`` (``meshes.mesh_key``): computed once per file
    version, not at every Simulation built on it."""
    return _polytope(meshes.convex_hull(*key[:2]))


@cache
def _decomposition_polytopes(key) -> tuple:
    return tuple(_polytope(piece) for piece in meshes.convex_decomposition(*key[:2]))


def _read_only(a):
    a.setflags(write=False)
    return a


def _newell_normal(polygon):
    """Unit normal of a planar polygon, its vertices counter-clockwise: n ~ sum_i v_i x v_i+1 (Newell)."""
    n = np.cross(polygon, np.roll(polygon, -1, axis=0)).sum(axis=0)
    return n / np.linalg.norm(n)


def mesh_shape(mesh, support) -> Shape:
    """A MESH shape (FCL BVH of the triangles); ``support`` are the points the halfspace test uses."""
    bvh = fcl.BVHModel()
    bvh.beginModel(len(mesh.vertices), len(mesh.faces))
    bvh.addSubModel(np.asarray(mesh.vertices, dtype=float), np.asarray(mesh.faces, dtype=np.int64))
    bvh.endModel()
    lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    return Shape(MESH, 0.5 * (hi - lo), 0.0, np.asarray(support, dtype=float), (), 0.5 * (lo + hi),
                 0.5 * (hi - lo), bvh)


def _mesh_shapes(g, label, mobile) -> list:
    mode = g.collision_mode
    if mode not in ("mesh", "convex", "decompose"):
        raise ValueError(f"{label}: collision_mode must be 'mesh', 'convex' or 'decompose', got {mode!r}")
    key = meshes.mesh_key(g.mesh_path, g.mesh_scale)
    mesh = meshes.load_mesh(g.mesh_path, g.mesh_scale)
    if mode == "mesh" and not mobile:
        return [mesh_shape(mesh, _support(g, mesh))]
    try:
        hull = meshes.convex_hull(g.mesh_path, g.mesh_scale)
    except ModelError as exc:
        warnings.warn(f"{label}: {exc}; its triangles are used as they are", MeshWarning, stacklevel=4)
        return [mesh_shape(mesh, mesh.vertices)]
    if mode == "mesh" and not mesh.is_watertight:
        warnings.warn(f"{label}: mesh {g.mesh_path} is not watertight; its convex hull is used", MeshWarning,
                      stacklevel=4)
        return [_polytope_shape(*_hull_polytope(key))]
    if mode == "convex" or abs(mesh.volume) >= CONVEX_FILL * hull.volume:
        return [_polytope_shape(*_hull_polytope(key))]
    try:
        return [_polytope_shape(*piece) for piece in _decomposition_polytopes(key)]
    except ModelError as exc:
        warnings.warn(f"{label}: {exc}; the convex hull is used", MeshWarning, stacklevel=4)
        return [_polytope_shape(*_hull_polytope(key))]


def _support(g, mesh):
    """Support points of a mesh for the halfspace test: its hull's vertices, or all vertices when flat."""
    try:
        return meshes.convex_hull(g.mesh_path, g.mesh_scale).vertices
    except ModelError:
        return mesh.vertices


class ShapeArrays(NamedTuple):
    """The collision shapes as flat arrays (see geometry.Shape); faces index the shape's own vertices."""

    kind: np.ndarray          # (S,) geometry.SPHERE ... PLANE
    slot: np.ndarray          # (S,) row of the body placements that carries the shape, -1 = fixed in the world
    local_R: np.ndarray       # (S, 3, 3) shape frame in the body frame (in the world when slot = -1)
    local_p: np.ndarray       # (S, 3)
    size: np.ndarray          # (S, 3)
    radius: np.ndarray        # (S,)
    box_center: np.ndarray    # (S, 3) local bounding box
    box_half: np.ndarray      # (S, 3)
    vert_start: np.ndarray    # (S,)
    vert_count: np.ndarray    # (S,)
    verts: np.ndarray         # (NV, 3) support points, shape frame
    face_start: np.ndarray    # (S,)
    face_count: np.ndarray    # (S,)
    face_normal: np.ndarray   # (NF, 3) outward, shape frame
    face_vstart: np.ndarray   # (NF,)
    face_vcount: np.ndarray   # (NF,)
    face_verts: np.ndarray    # (NFV,) counter-clockwise about the normal
    edge_first: np.ndarray    # (NV + S,) rows vert_start[s] + s + (0 ... vert_count[s]): shape s's ``Shape.edges``
    edge_to: np.ndarray       # (NE,)     first (offset into edge_to); all its rows equal: no graph (not a hull)


def pack_shapes(shapes, slots, local_R, local_p) -> ShapeArrays:
    """Flatten ``shapes`` (with their body slot and placement in the body frame) into ShapeArrays."""
    verts = [s.vertices for s in shapes]
    faces = [f for s in shapes for f in s.faces]
    face_vcount = np.array([len(f[1]) for f in faces], dtype=np.int64)
    graphs = [s.edges or (np.zeros(len(s.vertices) + 1, np.int64), np.zeros(0, np.int64)) for s in shapes]
    edge_start = _starts([len(to) for _, to in graphs])
    return ShapeArrays(
        kind=np.array([s.kind for s in shapes], dtype=np.int64),
        slot=np.asarray(slots, dtype=np.int64),
        local_R=np.asarray(local_R, dtype=float).reshape(-1, 3, 3),
        local_p=np.asarray(local_p, dtype=float).reshape(-1, 3),
        size=np.array([s.size for s in shapes], dtype=float).reshape(-1, 3),
        radius=np.array([s.radius for s in shapes], dtype=float),
        box_center=np.array([s.box_center for s in shapes], dtype=float).reshape(-1, 3),
        box_half=np.array([s.box_half for s in shapes], dtype=float).reshape(-1, 3),
        vert_start=_starts([len(x) for x in verts]),
        vert_count=np.array([len(x) for x in verts], dtype=np.int64),
        verts=np.vstack(verts + [np.zeros((0, 3))]).astype(float),
        face_start=_starts([len(s.faces) for s in shapes]),
        face_count=np.array([len(s.faces) for s in shapes], dtype=np.int64),
        face_normal=np.array([f[0] for f in faces], dtype=float).reshape(-1, 3),
        face_vstart=_starts(face_vcount),
        face_vcount=face_vcount,
        face_verts=np.concatenate([f[1] for f in faces] + [np.zeros(0, dtype=np.int64)]).astype(np.int64),
        edge_first=np.concatenate([first + e for (first, _), e in zip(graphs, edge_start)]
                                  + [np.zeros(0, np.int64)]).astype(np.int64),
        edge_to=np.concatenate([to for _, to in graphs] + [np.zeros(0, np.int64)]).astype(np.int64),
    )


def _starts(counts):
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if len(counts) else np.zeros(0, np.int64)
