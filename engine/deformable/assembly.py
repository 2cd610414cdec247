"""The stiffness matrix K of a sole, assembled by scikit-fem (seed 000 §3.8, thesis eqs. 4.7–4.9).

With linear tetrahedra (``ElementTetP1``, one vector basis) the strain is constant per element, so one
quadrature point integrates the weak form ∫ σ(u) : ε(v) dV exactly and each element matrix is

    K_i = V_i B_iᵀ C_i B_i                                  (4.9)

with the Lamé constants λ_i, μ_i of the element's own material (multi-material soles, §4.3.2). K U = F (4.8)
with U, F in node-major order: DOF 3j + k is component k (x, y, z) of node j — scikit-fem's ordering.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from skfem import Basis, BilinearForm, ElementTetP1, ElementVector, MeshTet, asm
from skfem.helpers import ddot, eye, sym_grad, trace

from engine.deformable.mesh import SoleMesh
from engine.errors import SoleError


@BilinearForm
def _elasticity(u, v, w):
    """σ(u) : ε(v) with σ = 2μ ε + λ tr(ε) I (eq. 4.5), λ and μ given per element."""
    strain = sym_grad(u)
    return ddot(2.0 * w.mu * strain + w.lam * eye(trace(strain), 3), sym_grad(v))


def vector_basis(mesh: SoleMesh) -> Basis:
    """scikit-fem's P1 vector basis of ``mesh`` with one quadrature point per tetrahedron."""
    skfem_mesh = MeshTet(np.ascontiguousarray(mesh.node_position.T), np.ascontiguousarray(mesh.tet_node.T))
    return Basis(skfem_mesh, ElementVector(ElementTetP1()), intorder=1)


def stiffness(mesh: SoleMesh, materials) -> sp.csc_matrix:
    """The (3N, 3N) stiffness matrix K of ``mesh`` (N/m), element i using ``materials[tet_material[i]]``."""
    if mesh.tet_material.max() >= len(materials):
        raise SoleError(f"{mesh.where} uses material {mesh.tet_material.max()} but {len(materials)} given",
                        mesh.source, None, int(mesh.tet_material.max()))
    basis = vector_basis(mesh)
    lam = np.array([m.lam for m in materials])[mesh.tet_material]
    mu = np.array([m.mu for m in materials])[mesh.tet_material]
    quad = basis.X.shape[-1]
    return asm(_elasticity, basis, lam=np.repeat(lam[:, None], quad, 1),
               mu=np.repeat(mu[:, None], quad, 1)).tocsc()
