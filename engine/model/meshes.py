"""Loading triangle meshes (STL, OBJ, DAE, PLY, ...) through trimesh, shared by collision and rendering.

``load_mesh(path, scale)`` returns one cleaned ``trimesh.Trimesh`` in metres, cached by ``mesh_key(path,
scale)`` = (resolved path, scale, modification time): opening a scene again reuses the meshes, and a file
edited on disk is read again:

* a file holding a scene (DAE, multi-object OBJ) becomes a single mesh, each node's transform applied;
* COLLADA ``<unit meter="...">`` is applied (as assimp, hence RViz and Pinocchio, do);
* ``scale`` (sx, sy, sz) may mirror (a negative factor, as Talos' right limbs): trimesh re-orients the faces;
* duplicate vertices are merged and zero-area faces dropped (with a ``MeshWarning`` naming the file);
* a file with no triangle left raises ``ModelError`` naming the file.

The returned mesh is shared by every caller: treat it as read-only.  Collision shapes derived from it
(``convex_hull``, ``convex_decomposition``) are cached the same way.
"""
from __future__ import annotations

import logging
import re
import time
import warnings
from functools import cache
from pathlib import Path

import numpy as np

from engine.errors import ModelError
from engine.model import diskcache

log = logging.getLogger("engine.model")


class MeshWarning(UserWarning):
    """A mesh was usable only after a repair or a fallback (the message names the file and what was done)."""


def load_mesh(path, scale=(1.0, 1.0, 1.0)):
    """The cleaned mesh of ``path`` scaled by ``scale`` (metres), shared and cached by ``mesh_key``."""
    return _load(*mesh_key(path, scale))


def convex_hull(path, scale=(1.0, 1.0, 1.0)):
    """The convex hull of ``load_mesh(path, scale)`` (cached); ``ModelError`` when the mesh is flat."""
    return _hull(*mesh_key(path, scale))


def convex_decomposition(path, scale=(1.0, 1.0, 1.0)) -> tuple:
    """Approximate convex decomposition (V-HACD through trimesh and ``vhacdx``) as a tuple of hulls (cached)."""
    return _decomposition(*mesh_key(path, scale))


def load_geometry_mesh(g, label: str):
    """``load_mesh`` of the mesh Geometry ``g``; a failure names the file and line that declared it, the
    geometry (``label``), the mesh, and the cause: "robot.urdf:69: visual 'x': mesh m.stl cannot be read (…)"."""
    try:
        return load_mesh(g.mesh_path, g.mesh_scale)
    except ModelError as exc:
        raise located(g, label, exc) from exc


def located(g, label: str, exc: ModelError) -> ModelError:
    """``exc`` about the mesh of Geometry ``g``, restated at the file and line that declared ``g``."""
    file, _, line = (g.source or "").rpartition(":")
    return ModelError(f"{label}: mesh {g.mesh_path} cannot be read ({exc.message})", file or exc.file,
                      int(line) if line.isdigit() else None, exc.value)


def _read_vrml(path):
    """AMELIF's VRML meshes (engine.model.vrml), as a trimesh with the file's diffuse colour."""
    import trimesh

    from engine.model.vrml import read_vrml
    vertices, faces, rgba = read_vrml(path)
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    mesh.visual.face_colors = np.array(rgba) * 255
    return mesh


def mesh_key(path, scale=(1.0, 1.0, 1.0)) -> tuple:
    """The cache key of a mesh: (resolved path, scale (sx, sy, sz), modification time in ns, or -1 when the
    file is missing); shapes derived from a mesh elsewhere are cached under the same key."""
    scale = tuple(float(s) for s in np.broadcast_to(np.asarray(scale, dtype=float), (3,)))
    if not all(np.isfinite(scale)) or any(s == 0.0 for s in scale):
        raise ModelError("mesh scale factors must be finite and non-zero", str(path), value=scale)
    path = Path(path).resolve()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = -1
    return str(path), scale, mtime


@cache
def _load(path: str, scale: tuple, mtime: int):
    import trimesh
    if not Path(path).is_file():
        raise ModelError("mesh file not found", path)
    try:
        loaded = _read_vrml(path) if path.lower().endswith(".wrl") else trimesh.load(path)
    except ModelError:
        raise
    except Exception as exc:  # trimesh raises many types for unreadable files; report them all the same way
        raise ModelError(f"cannot read mesh ({type(exc).__name__}: {exc})", path) from exc
    mesh = _single_mesh(loaded, path)
    mesh.apply_scale(_unit_scale(loaded))
    mesh.apply_transform(np.diag(scale + (1.0,)))
    mesh.merge_vertices()
    keep = mesh.nondegenerate_faces()
    if not keep.all():
        warnings.warn(f"{path}: {int((~keep).sum())} degenerate (zero-area) triangle(s) dropped", MeshWarning,
                      stacklevel=3)
        mesh.update_faces(keep)
        mesh.remove_unreferenced_vertices()
    if len(mesh.faces) == 0:
        raise ModelError("mesh has no non-degenerate triangle", path)
    return mesh


def _single_mesh(loaded, path):
    import trimesh
    if isinstance(loaded, trimesh.Scene):
        meshes = [g for g in loaded.dump() if isinstance(g, trimesh.Trimesh)]
        if not meshes:
            raise ModelError("the file holds no triangle: empty, truncated, or not a mesh of this format", path)
        return trimesh.util.concatenate(meshes)
    if not isinstance(loaded, trimesh.Trimesh):
        raise ModelError(f"mesh file holds a {type(loaded).__name__}, not triangles", path)
    return loaded.copy()


def _unit_scale(loaded) -> float:
    """COLLADA ``<unit meter="u">``: trimesh records it as units "u * meters" without applying it."""
    units = str(getattr(loaded, "units", None) or "")
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*\*\s*meters\s*", units)
    return float(match.group(1)) if match else 1.0


@cache
def _hull(path, scale, mtime):
    mesh = _load(path, scale, mtime)
    spread = np.linalg.svd(mesh.vertices - mesh.vertices.mean(axis=0), compute_uv=False)
    if mesh.vertices.shape[0] < 4 or spread[2] <= 1e-9 * spread[0]:
        raise ModelError("mesh is flat (all vertices in a plane or on a line): it has no convex hull", path)
    try:
        return mesh.convex_hull
    except Exception as exc:  # qhull precision errors on near-flat point sets
        raise ModelError(f"cannot compute the convex hull ({type(exc).__name__})", path) from exc


DECOMPOSITION = dict(maxConvexHulls=16)   # V-HACD's parameters (through trimesh and vhacdx)


@cache
def _decomposition(path, scale, mtime):
    """V-HACD's convex pieces of the mesh, from the disk cache when this file content was decomposed before.

    V-HACD rather than CoACD: on UR5's seven collision meshes V-HACD took 1.1–7.4 s a mesh (27 s in all) and
    CoACD 2–321 s (465 s), for similar fits (bench numbers in docs/architecture.md)."""
    import trimesh
    k = diskcache.key("vhacd", diskcache.file_digest(path), scale, sorted(DECOMPOSITION.items()))
    cached = diskcache.load("decomposition", k, required=("vertices", "vertex_count", "faces", "face_count"))
    if cached is None:
        mesh = _load(path, scale, mtime)
        log.info("convex decomposition of %s (%d triangles; computed once, then read from the cache)…",
                 Path(path).name, len(mesh.faces))
        start = time.perf_counter()
        try:
            parts = mesh.convex_decomposition(**DECOMPOSITION)
        except Exception as exc:  # vhacdx missing or failing: the caller falls back to the hull
            raise ModelError(f"convex decomposition failed ({type(exc).__name__}: {exc})", path) from exc
        parts = parts if isinstance(parts, list) else [parts]
        pieces = [p if isinstance(p, trimesh.Trimesh) else trimesh.Trimesh(**p) for p in parts]
        pieces = [p.convex_hull for p in pieces if len(p.faces) > 0]
        cached = {"vertices": np.concatenate([p.vertices for p in pieces]),
                  "vertex_count": np.array([len(p.vertices) for p in pieces]),
                  "faces": np.concatenate([p.faces for p in pieces]),
                  "face_count": np.array([len(p.faces) for p in pieces])}
        diskcache.save("decomposition", k, cached)
        log.info("convex decomposition of %s: %d pieces in %.1f s", Path(path).name, len(pieces),
                 time.perf_counter() - start)
    vertices = np.split(cached["vertices"], np.cumsum(cached["vertex_count"])[:-1])
    faces = np.split(cached["faces"], np.cumsum(cached["face_count"])[:-1])
    return tuple(trimesh.Trimesh(v, f, process=False) for v, f in zip(vertices, faces))
