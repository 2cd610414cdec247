"""Shared helpers of the deformable-sole tests: loads and full-model solves, computed without the condensation."""
import numpy as np

from engine.deformable.assembly import stiffness
from engine.deformable.condensation import factorize


def face_triangles(mesh, axis, value, tol=1e-9):
    """Boundary triangles lying in the plane x[axis] = value."""
    faces = mesh.boundary
    return faces[(np.abs(mesh.node_position[faces][:, :, axis] - value) < tol).all(axis=1)]


def traction_load(mesh, triangles, traction):
    """(N, 3) consistent nodal forces of a uniform traction (N/m²) on ``triangles``: ∫φ_j dA = A/3 per corner
    of a linear triangle."""
    x = mesh.node_position
    area = 0.5 * np.linalg.norm(np.cross(x[triangles[:, 1]] - x[triangles[:, 0]],
                                         x[triangles[:, 2]] - x[triangles[:, 0]]), axis=1)
    F = np.zeros((len(x), 3))
    np.add.at(F, triangles.ravel(), np.repeat(area / 3.0, 3)[:, None] * np.asarray(traction, float))
    return F


def solve_full(mesh, materials, fixed_dof, F, prescribed=None):
    """(N, 3) displacements of the full model K U = F with the DOFs ``fixed_dof`` (3j + k) held at
    ``prescribed`` (default 0); also returns the reactions K U − F (N, 3)."""
    K = stiffness(mesh, materials)
    n = K.shape[0]
    fixed = np.zeros(n, bool)
    fixed[fixed_dof] = True
    free = np.flatnonzero(~fixed)
    U = np.zeros(n)
    if prescribed is not None:
        U[fixed_dof] = prescribed
    rhs = np.ravel(F)[free] - K[free][:, fixed] @ U[fixed]
    U[free] = factorize(K[free][:, free]).solve(rhs)
    return U.reshape(-1, 3), (K @ U - np.ravel(F)).reshape(-1, 3)


def node_dofs(nodes, components=(0, 1, 2)):
    """DOF indices 3j + k of ``nodes`` for the given components."""
    return (3 * np.asarray(nodes)[:, None] + np.asarray(components)).ravel()
