"""A sole's tetrahedral mesh, checked once: ``SoleMesh`` and the node selections the sole is built from.

The thesis meshes its sole with Gmsh and keeps nodes, triangles and tetrahedra (§4.3.1). Here a mesh is three
flat arrays in the **sole frame** (metres; z up, the sole below its top face):

    node_position (N, 3)   node coordinates
    tet_node      (T, 4)   node indices of each linear tetrahedron, positively oriented
                           (det[x₁ − x₀, x₂ − x₀, x₃ − x₀] > 0)
    tet_material  (T,)     index of each tetrahedron's material in the sole's material list

``sole_mesh`` builds one from raw arrays and refuses what linear elasticity cannot use, naming the file and
the value: no tetrahedron (a surface mesh), a node index out of range, a non-finite coordinate, an inverted
tetrahedron (its orientation opposite to the others'; a mesh whose tetrahedra are *all* negative follows the
mirrored convention and is flipped), a degenerate one (6V / ℓ³_max < ``DEGENERATE``), or a solid that is not a
closed volume (a triangle shared by three tetrahedra, or two parts touching along an edge). Nodes no
tetrahedron uses (Gmsh's geometry points) are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from engine.errors import SoleError

DEGENERATE = 1e-8   # 6V / ℓ³_max below this: a flat (zero-volume) tetrahedron; a regular one has 1/√2
# the four faces of a positively oriented tetrahedron (a, b, c, d), each ordered with its normal pointing out
_OUTWARD_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


@dataclass(frozen=True, eq=False)
class SoleMesh:
    """A checked tetrahedral mesh (see the module docstring); ``source`` names its file for errors."""

    node_position: np.ndarray
    tet_node: np.ndarray
    tet_material: np.ndarray
    source: str | None = None

    @property
    def where(self) -> str:
        return f"sole mesh {self.source!r}" if self.source else "sole mesh"

    @cached_property
    def boundary(self) -> np.ndarray:
        """(F, 3) boundary triangles, normals out (``boundary_faces``), computed once."""
        return boundary_faces(self.tet_node, self.where)


def sole_mesh(node_position, tet_node, tet_material=None, source=None, file=None, line=None) -> SoleMesh:
    """The checked ``SoleMesh`` of raw arrays; ``source`` is the mesh file, ``file``/``line`` the universe
    element that asked for it (errors name both). Raises ``SoleError``."""
    where = f"sole mesh {source!r}" if source else "sole mesh"
    x = np.ascontiguousarray(node_position, dtype=np.float64)
    tets = np.asarray(tet_node)
    loc = (file or source, line)
    if tets.ndim != 2 or tets.shape[1] != 4 or len(tets) == 0:
        raise SoleError(f"{where} has no tetrahedron (a surface mesh? mesh its volume, e.g. gmsh -3)", *loc,
                        tets.shape)
    if x.ndim != 2 or x.shape[1] != 3:
        raise SoleError(f"{where}: node coordinates must be an (N, 3) array", *loc, x.shape)
    tets = tets.astype(np.int64)
    bad = np.flatnonzero((tets < 0).any(axis=1) | (tets >= len(x)).any(axis=1))
    if len(bad):
        raise SoleError(f"{where}: tetrahedron {bad[0]} uses a node that does not exist ({len(x)} nodes)", *loc,
                        tets[bad[0]].tolist())
    material = np.zeros(len(tets), np.int64) if tet_material is None else np.asarray(tet_material, np.int64)
    if material.shape != (len(tets),) or (material < 0).any():
        raise SoleError(f"{where}: one material index >= 0 per tetrahedron expected", *loc, material.shape)
    used, tets = np.unique(tets, return_inverse=True)
    tets, x = tets.reshape(-1, 4), x[used]
    if not np.isfinite(x).all():
        raise SoleError(f"{where}: node {np.flatnonzero(~np.isfinite(x).all(axis=1))[0]} has a non-finite "
                        f"coordinate", *loc)
    tets = _oriented(x, tets, where, loc)
    mesh = SoleMesh(x, tets, material, source)
    mesh.__dict__["boundary"] = boundary_faces(tets, where, loc)    # checks the closed volume once
    return mesh


def signed_volume6(x, tets) -> np.ndarray:
    """6 × the signed volume of each tetrahedron, det[x₁ − x₀, x₂ − x₀, x₃ − x₀]."""
    e = x[tets[:, 1:]] - x[tets[:, :1]]
    return np.linalg.det(e)


def _oriented(x, tets, where, loc):
    """``tets`` positively oriented: all-negative flipped; mixed signs or a flat tetrahedron raise."""
    v6 = signed_volume6(x, tets)
    edges = x[tets[:, [1, 2, 3, 2, 3, 3]]] - x[tets[:, [0, 0, 0, 1, 1, 2]]]
    scale = np.linalg.norm(edges, axis=2).max(axis=1) ** 3
    flat = np.flatnonzero(np.abs(v6) <= DEGENERATE * scale)
    if len(flat):
        t = flat[0]
        raise SoleError(f"{where}: tetrahedron {t} (nodes {tets[t].tolist()}) is degenerate "
                        f"({len(flat)} such), 6V/l_max^3", *loc, float(abs(v6[t]) / scale[t]))
    if (v6 < 0).all():
        return tets[:, [0, 2, 1, 3]]
    inverted = np.flatnonzero(v6 < 0)
    if len(inverted):
        t = inverted[0]
        raise SoleError(f"{where}: tetrahedron {t} (nodes {tets[t].tolist()}) is inverted ({len(inverted)} "
                        f"such), signed volume in m^3", *loc, float(v6[t] / 6.0))
    return tets


def _face_ids(tet_node):
    """(4T, 3) faces of the tetrahedra (normals out), and an integer id per face equal for the same three nodes:
    the sorted triple (a < b < c) read as the number a n² + b n + c (n nodes; exact in int64 below 2 million)."""
    faces = tet_node[:, _OUTWARD_FACES].reshape(-1, 3)
    a, b, c = np.sort(faces, axis=1).T
    n = _node_count(tet_node)
    return faces, (a * n + b) * n + c


def _node_count(tet_node) -> np.int64:
    n = np.int64(tet_node.max()) + 1
    if n >= 2**21:
        raise SoleError("sole mesh: more than 2 million nodes (far beyond what condensation can handle)", None,
                        None, int(n))
    return n


def boundary_faces(tet_node, where="sole mesh", loc=(None, None)) -> np.ndarray:
    """(F, 3) boundary triangles, normals out: the faces of exactly one tetrahedron. Raises ``SoleError``
    when the solid is not a closed volume (a face of three tetrahedra, a boundary edge of more than two
    boundary faces)."""
    faces, face_id = _face_ids(tet_node)
    _, first, count = np.unique(face_id, return_index=True, return_counts=True)
    if (count > 2).any():
        raise SoleError(f"{where} is not a closed volume: a triangle is shared by more than two tetrahedra", *loc,
                        faces[first[np.argmax(count)]].tolist())
    boundary = faces[np.sort(first[count == 1])]
    ends = np.sort(boundary[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    n = _node_count(tet_node)
    edge, edge_count = np.unique(ends[:, 0] * n + ends[:, 1], return_counts=True)
    if (edge_count != 2).any():
        bad = edge[np.argmax(edge_count != 2)]
        raise SoleError(f"{where} is not a closed volume: a boundary edge belongs to {edge_count.max()} "
                        f"boundary triangles (parts touching along an edge)", *loc, [int(bad // n), int(bad % n)])
    return boundary


def tet_components(tet_node) -> np.ndarray:
    """(T,) label of each tetrahedron's part: tetrahedra sharing a face belong to the same part."""
    _, face_id = _face_ids(tet_node)
    face = np.unique(face_id, return_inverse=True)[1].ravel()
    tet = np.repeat(np.arange(len(tet_node)), 4)
    incidence = sp.csr_matrix((np.ones(len(tet)), (tet, face)))
    return connected_components(incidence @ incidence.T, directed=False)[1]


def surface_nodes(mesh: SoleMesh) -> np.ndarray:
    """Sorted indices of the nodes on the boundary surface."""
    return np.unique(mesh.boundary)


def _tolerance(mesh: SoleMesh) -> float:
    return 1e-9 * float(np.ptp(mesh.node_position, axis=0).max())


def top_face(mesh: SoleMesh) -> np.ndarray:
    """Nodes on the plane z = z_max: the face glued to the foot (the Dirichlet nodes, thesis §4.3.3)."""
    z = mesh.node_position[:, 2]
    return np.flatnonzero(z >= z.max() - _tolerance(mesh))


def bottom_surface(mesh: SoleMesh, band: float = 0.0) -> np.ndarray:
    """Surface nodes with z ≤ z_min + ``band`` (m): the candidate contact nodes. ``band = 0`` keeps the flat
    bottom; a rounded or bevelled sole passes its edge height so that the rounded edge can touch."""
    nodes = surface_nodes(mesh)
    z = mesh.node_position[nodes, 2]
    return nodes[z <= z.min() + band + _tolerance(mesh)]
