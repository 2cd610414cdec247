"""Small-strain validity of a sole's deformation (thesis §4.3.2: "small deformations", eq. 4.4).

In a linear tetrahedron the displacement gradient is constant: with the edge matrices
X = [x₁ − x₀, x₂ − x₀, x₃ − x₀] and U = [u₁ − u₀, u₂ − u₀, u₃ − u₀], ∇u = U X⁻¹ and ε = ½(∇u + ∇uᵀ) (4.4).
``max_strain`` is the largest principal strain magnitude over the elements; past ``SMALL_STRAIN`` (10 %) the
linear model is outside its validity and ``check_small_strain`` warns with a ``SmallStrainWarning``.
"""
from __future__ import annotations

import warnings

import numpy as np

from engine.deformable.mesh import SoleMesh

SMALL_STRAIN = 0.10


class SmallStrainWarning(UserWarning):
    """A displacement field strains the sole beyond the small-strain limit of the linear model."""


def element_strain(mesh: SoleMesh, U) -> np.ndarray:
    """(T, 3, 3) small-strain tensor ε of each tetrahedron for node displacements ``U`` (N, 3) (eq. 4.4)."""
    U = np.reshape(U, (-1, 3))
    t = mesh.tet_node
    Xt = mesh.node_position[t[:, 1:]] - mesh.node_position[t[:, :1]]     # rows: edges, Xᵀ
    Ut = U[t[:, 1:]] - U[t[:, :1]]                                      # rows: their displacements, Uᵀ
    grad = np.linalg.solve(Xt, Ut).transpose(0, 2, 1)                   # ∇uᵀ = X⁻ᵀ Uᵀ
    return 0.5 * (grad + grad.transpose(0, 2, 1))


def max_strain(mesh: SoleMesh, U) -> float:
    """The largest |principal strain| over all tetrahedra for node displacements ``U`` (N, 3)."""
    return float(np.abs(np.linalg.eigvalsh(element_strain(mesh, U))).max())


def check_small_strain(mesh: SoleMesh, U, limit: float = SMALL_STRAIN) -> float:
    """``max_strain``, warning (``SmallStrainWarning`` naming the mesh) when it exceeds ``limit``."""
    strain = max_strain(mesh, U)
    if strain > limit:
        warnings.warn(f"{mesh.where}: strain {strain:.3g} exceeds the small-strain limit {limit:g} of the linear "
                      f"model; the deformation is not physical", SmallStrainWarning, stacklevel=2)
    return strain
