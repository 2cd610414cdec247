"""Triangles to draw for each geometry of a universe, in the frame of the body that carries it.

Visual meshes are loaded once through ``engine.model.meshes.load_mesh`` (cached by path, scale and modification
time, ``mesh_key``) and, when they are huge, decimated once here (quadric decimation) so that a whole humanoid
stays within a budget that a software OpenGL renderer draws at interactive rates. Primitives (box, sphere, cylinder, capsule, plane) are
tessellated by trimesh. Shading is smooth inside smooth regions and sharp across creases (trimesh's
``smooth_shade``: vertices are split where the dihedral angle exceeds ``CREASE_ANGLE``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cache

import numpy as np

from engine.errors import ModelError
from engine.model.meshes import load_mesh, located, mesh_key

MAX_FACES_PER_MESH = 600    # visual meshes above this are decimated once at load
PLANE_DEFAULT_SIZE = 20.0   # metres, for an infinite plane without a drawn size
CREASE_ANGLE = np.radians(60.0)   # sharper edges keep split normals (fewer vertices than trimesh's 30 deg)


@dataclass(frozen=True)
class Triangles:
    """An indexed triangle set: ``vertices`` (n, 3) and ``normals`` (n, 3) float32, ``faces`` (m, 3) uint32."""

    vertices: np.ndarray
    normals: np.ndarray
    faces: np.ndarray

    def placed(self, R, p) -> "Triangles":
        """The same triangles moved by the placement (R, p): x -> R x + p, n -> R n."""
        R = np.asarray(R, dtype=np.float32)
        return Triangles(self.vertices @ R.T + np.asarray(p, dtype=np.float32), self.normals @ R.T, self.faces)


def geometry_triangles(geom) -> Triangles:
    """The triangles of a ``Geometry`` in the frame of its body (its placement (R, p) applied)."""
    try:
        key = mesh_key(geom.mesh_path, geom.mesh_scale) if geom.kind == "mesh" else None
        return _shape_triangles(geom.kind, tuple(float(s) for s in geom.size), key).placed(geom.R, geom.p)
    except ModelError as exc:
        raise located(geom, f"{geom.role} geometry '{geom.name}'", exc) from exc


@cache
def _shape_triangles(kind, size, mesh) -> Triangles:
    return _triangles(_trimesh(kind, size, mesh))


def _trimesh(kind, size, mesh):
    """A trimesh of a primitive, or of the mesh file of ``mesh`` = ``mesh_key(path, scale)``."""
    import trimesh
    if kind == "mesh":
        return decimated(load_mesh(*mesh[:2]), MAX_FACES_PER_MESH)
    if kind == "box":
        return trimesh.creation.box(extents=size)
    if kind == "sphere":
        return trimesh.creation.icosphere(subdivisions=3, radius=size[0])
    if kind == "cylinder":
        return trimesh.creation.cylinder(radius=size[0], height=size[1], sections=32)
    if kind == "capsule":
        capsule = trimesh.creation.capsule(height=size[1], radius=size[0], count=(16, 32))
        capsule.apply_translation(-capsule.bounds.mean(axis=0))
        return capsule
    if kind == "plane":
        sx, sy = plane_extent(size)
        corners = np.array([[-sx / 2, -sy / 2, 0.0], [sx / 2, -sy / 2, 0.0], [sx / 2, sy / 2, 0.0],
                            [-sx / 2, sy / 2, 0.0]])
        return trimesh.Trimesh(corners, [[0, 1, 2], [0, 2, 3]], process=False)
    raise ValueError(f"cannot draw a geometry of kind {kind!r}")


def plane_extent(size) -> tuple:
    """Drawn (x, y) extent of a plane geometry: its size, or ``PLANE_DEFAULT_SIZE`` for an infinite one."""
    return tuple(float(s) for s in size) if len(size) == 2 else (PLANE_DEFAULT_SIZE, PLANE_DEFAULT_SIZE)


def decimated(mesh, max_faces: int):
    """``mesh`` itself when it has at most ``max_faces`` triangles, else a quadric decimation of it."""
    if len(mesh.faces) <= max_faces:
        return mesh
    try:
        return mesh.simplify_quadric_decimation(face_count=max_faces)
    except ImportError:  # fast-simplification absent: draw the full mesh, only slower
        warnings.warn(f"mesh of {len(mesh.faces)} triangles drawn undecimated (install fast-simplification)",
                      stacklevel=2)
        return mesh


def _triangles(mesh) -> Triangles:
    import trimesh
    shaded = trimesh.graph.smooth_shade(mesh, angle=CREASE_ANGLE)
    return Triangles(np.asarray(shaded.vertices, dtype=np.float32),
                     np.asarray(shaded.vertex_normals, dtype=np.float32),
                     np.asarray(shaded.faces, dtype=np.uint32))
