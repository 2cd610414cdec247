"""A deformable sole: its mesh, materials, Dirichlet nodes and the stiffness condensed onto its candidate contact
nodes, precomputed once and cached on disk (seed 000 §3.8, thesis §4.3).

``build_sole(mesh, materials, dirichlet, contact)``:

1. K from the mesh and the per-element materials (``assembly.stiffness``, eqs. 4.8–4.9);
2. the Dirichlet nodes (glued to the foot; default: the top face) are removed: K^r U^r = F^r (4.10–4.11);
3. K^r is condensed onto the candidate contact nodes c (default: the flat bottom face), every other node
   carrying no force: K_c = K_cc − K_cn K_nn⁻¹ K_nc (4.14, 4.20; ``condensation.condense``);
4. K_c⁻¹ (dense m × m, m = 3 × contact nodes) is formed once by Cholesky: the contact stage needs its blocks.

The matrices depend only on the mesh, the materials and the two node selections (small strain: they never
change, thesis L2080), so steps 1–4 are cached under their content hash (``engine.deformable.cache``).

Contact node k ("slot" k) owns rows 3k … 3k + 2 of K_c (x, y, z in the sole frame). Displacements and forces
are in the sole frame, metres and newtons.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.linalg as sl

from engine.deformable import cache
from engine.deformable.condensation import Condensation, condense
from engine.deformable.material import Material
from engine.deformable.mesh import SoleMesh, bottom_surface, tet_components, top_face
from engine.errors import SoleError


@dataclass(frozen=True, eq=False)
class Sole:
    """The precomputed model of one sole (module docstring). Read-only."""

    mesh: SoleMesh
    materials: tuple
    dirichlet_node: np.ndarray     # (d,) nodes fixed to the foot
    contact_node: np.ndarray       # (c,) candidate contact nodes; slot k is contact_node[k]
    contact_triangle: np.ndarray   # (t, 3) boundary triangles whose three nodes are candidates, as slots
    K_c: np.ndarray                # (3c, 3c) condensed stiffness, N/m (4.20)
    K_c_inv: np.ndarray            # (3c, 3c) its inverse, the contact nodes' compliance, m/N

    @property
    def free_dof(self) -> np.ndarray:
        """DOFs (3j + k) of the nodes not fixed to the foot, ascending: the rows of K^r (4.10)."""
        return _free_dof(len(self.mesh.node_position), self.dirichlet_node)

    def contact_displacement(self, F_c) -> np.ndarray:
        """U_c = K_c⁻¹ F_c (4.22, first row): (3c,) displacements of the contact nodes under forces F_c."""
        return self.K_c_inv @ F_c

    def displacement(self, U_c) -> np.ndarray:
        """(N, 3) displacement of every node when the contact nodes are displaced by ``U_c`` (3c,) and no other
        node carries a force: U_n = −K_nn⁻¹ K_nc U_c (the node update 4.22, see ``condensation``)."""
        cond = self._condensation
        U = np.zeros(3 * len(self.mesh.node_position))
        free = self.free_dof
        U[free[cond.keep]] = U_c
        U[free[cond.rest]] = cond.recover(U_c)
        return U.reshape(-1, 3)

    @cached_property
    def compliance_blocks(self) -> np.ndarray:
        """(c, c, 3, 3) K_c⁻¹ as 3 × 3 blocks between contact nodes, "arrays of 3 × 3 matrices" as in the thesis's
        implementation (L1517): the reference hybrid model (``hybrid.py``) gathers the blocks of the touched nodes;
        the contact stage reads rows of K_c⁻¹ instead (``_stepping_kernels.add_sole_compliance``)."""
        c = len(self.contact_node)
        return np.ascontiguousarray(self.K_c_inv.reshape(c, 3, c, 3).transpose(0, 2, 1, 3))

    @cached_property
    def _condensation(self) -> Condensation:
        """The condensation with its K_nn factorisation, recomputed on the first node update after a cache hit."""
        return _condense(self.mesh, self.materials, self.free_dof, self.contact_node)


def build_sole(mesh: SoleMesh, materials, dirichlet=None, contact=None, file=None, line=None,
               use_cache: bool = True) -> Sole:
    """The ``Sole`` of ``mesh`` with ``materials[i]`` for the tetrahedra of material i.

    ``dirichlet``: nodes fixed to the foot (default ``top_face(mesh)``); ``contact``: candidate contact nodes
    (default ``bottom_surface(mesh)``; Dirichlet nodes are left out). ``file``/``line`` locate the request
    (a universe element) in errors, which also name the mesh file. Raises ``SoleError``.
    """
    where, loc = mesh.where, (file or mesh.source, line)
    materials = tuple(materials)
    if not materials or not all(isinstance(m, Material) for m in materials):
        raise SoleError(f"{where}: materials must be a non-empty list of Material", *loc, materials)
    used = int(mesh.tet_material.max())
    if used >= len(materials):
        raise SoleError(f"{where}: tetrahedra use material index {used} but only {len(materials)} material(s) "
                        f"are given", *loc, used)
    dirichlet, contact = _selections(mesh, dirichlet, contact, where, loc)
    entry = cache.key(mesh.node_position, mesh.tet_node, mesh.tet_material,
                      [(m.E, m.nu) for m in materials], dirichlet, contact)
    stored = cache.get(entry) if use_cache else None
    condensation = None
    if stored is None:
        try:
            condensation = _condense(mesh, materials, _free_dof(len(mesh.node_position), dirichlet), contact)
        except np.linalg.LinAlgError as exc:
            raise SoleError(f"{where}: the stiffness is singular once the Dirichlet nodes are fixed ({exc})",
                            *loc, len(dirichlet)) from None
        K_c = condensation.stiffness
        K_c_inv = sl.cho_solve(sl.cho_factor(K_c), np.eye(len(K_c)))
        stored = {"K_c": K_c, "K_c_inv": 0.5 * (K_c_inv + K_c_inv.T)}
        if use_cache:
            cache.put(entry, stored)
    slot = np.full(len(mesh.node_position), -1)
    slot[contact] = np.arange(len(contact))
    on_contact = (slot[mesh.boundary] >= 0).all(axis=1)
    sole = Sole(mesh, materials, dirichlet, contact, slot[mesh.boundary[on_contact]], stored["K_c"],
                stored["K_c_inv"])
    if condensation is not None:
        sole.__dict__["_condensation"] = condensation   # keep the factorisation of the cold build
    return sole


def _selections(mesh, dirichlet, contact, where, loc):
    """The sorted Dirichlet and contact nodes, checked: in range, a Dirichlet node in every part of the mesh,
    at least one contact node outside the Dirichlet face."""
    n = len(mesh.node_position)
    chosen = []
    for name, nodes, default in (("Dirichlet", dirichlet, top_face), ("contact", contact, bottom_surface)):
        nodes = default(mesh) if nodes is None else np.unique(np.asarray(nodes, dtype=np.int64))
        if len(nodes) and (nodes[0] < 0 or nodes[-1] >= n):
            raise SoleError(f"{where}: {name} node index out of range ({n} nodes)", *loc,
                            int(nodes[0] if nodes[0] < 0 else nodes[-1]))
        chosen.append(nodes)
    dirichlet, contact = chosen
    if len(dirichlet) == 0:
        raise SoleError(f"{where}: no node on its Dirichlet face (the face glued to the foot)", *loc, 0)
    _check_anchored(mesh, dirichlet, where, loc)
    contact = np.setdiff1d(contact, dirichlet)
    if len(contact) == 0:
        raise SoleError(f"{where}: no candidate contact node outside the Dirichlet face", *loc, 0)
    return dirichlet, contact


def _free_dof(n_nodes, dirichlet) -> np.ndarray:
    fixed = np.zeros(n_nodes, bool)
    fixed[dirichlet] = True
    return np.flatnonzero(np.repeat(~fixed, 3))


def _condense(mesh, materials, free, contact) -> Condensation:
    """K^r (4.10) condensed onto the contact nodes' DOFs (4.20), in slot order."""
    from engine.deformable.assembly import stiffness   # scikit-fem: imported only when a sole is not cached

    K_r = stiffness(mesh, materials)[free][:, free]
    position = np.searchsorted(free, 3 * contact[:, None] + np.arange(3)).ravel()
    return condense(K_r, position)


def _check_anchored(mesh, dirichlet, where, loc):
    """Every part of the mesh (face-connected tetrahedra) must hold a Dirichlet node, else it floats."""
    part = tet_components(mesh.tet_node)
    anchored = np.zeros(part.max() + 1, bool)
    holds = np.isin(mesh.tet_node, dirichlet).any(axis=1)
    anchored[part[holds]] = True
    if not anchored.all():
        loose = int(np.argmin(anchored))
        tets = np.flatnonzero(part == loose)
        raise SoleError(f"{where}: a part of {len(tets)} tetrahedra (first: {tets[0]}) touches no Dirichlet node "
                        f"and would float free", *loc, int(tets[0]))
