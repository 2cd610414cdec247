"""Linear elasticity of the sole FEM against closed forms and a converged reference (seed 000 §3.8, checklist 14).

Compliances are compared as δ = Fᵀ U / F_total, the work-conjugate mean displacement: a conforming FEM
(displacement method) is stiffer than the continuum, so δ_h ≤ δ, rising as the mesh is refined.
"""
import math

import numpy as np
from fem_helpers import face_triangles, node_dofs, solve_full, traction_load
from skfem import Basis, ElementTetP2, ElementVector, FacetBasis, LinearForm, MeshTet, asm
from skfem.models.elasticity import linear_elasticity

from engine.deformable import Material, box_mesh, build_sole, top_face
from engine.deformable.condensation import factorize

PRESSURE = 1e4           # Pa, on the bottom face, pushing up
E = 3e6                  # the thesis's sole rubber (§4.4.1)


def _pressure_on_sole(sole):
    """F_c (3c,) of the uniform pressure on the sole's bottom (its contact triangles)."""
    mesh = sole.mesh
    tri = sole.contact_node[sole.contact_triangle]
    return traction_load(mesh, tri, (0.0, 0.0, PRESSURE))[sole.contact_node].ravel()


def test_block_under_pressure_nu0_matches_F_h_over_EA():
    """ν = 0: uniaxial stress, δ = F h / (E A) whatever the lateral condition at the glued top face (no lateral
    strain to restrain). The strain is uniform, which linear tetrahedra represent exactly, so the FEM answer is
    the closed form to rounding, far inside the 2 % of the issue."""
    size = (0.22, 0.13, 0.02)
    sole = build_sole(box_mesh(size, h=0.02), [Material(E, 0.0)])
    F_c = _pressure_on_sole(sole)
    U = sole.contact_displacement(F_c).reshape(-1, 3)
    force, area, h = F_c.sum(), size[0] * size[1], size[2]
    assert math.isclose(force, PRESSURE * area, rel_tol=1e-12)
    expected = force * h / (E * area)
    np.testing.assert_allclose(U[:, 2], expected, rtol=1e-9)
    np.testing.assert_allclose(U[:, :2], 0.0, atol=1e-9 * expected)


def test_confined_block_nu_positive_matches_oedometric_modulus():
    """ν > 0, sides on rollers (laterally confined): ε_zz uniform, δ = p h / (λ + 2μ) (the oedometric modulus
    E(1 − ν)/((1 + ν)(1 − 2ν))), again exact for linear tetrahedra."""
    a, b, h = 0.04, 0.03, 0.02
    material = Material(E, 0.4)
    mesh = box_mesh((a, b, h), h=0.005)
    x = mesh.node_position
    fixed = np.concatenate([node_dofs(top_face(mesh)),
                            node_dofs(np.flatnonzero(np.isclose(np.abs(x[:, 0]), a / 2)), [0]),
                            node_dofs(np.flatnonzero(np.isclose(np.abs(x[:, 1]), b / 2)), [1])])
    F = traction_load(mesh, face_triangles(mesh, 2, -h), (0.0, 0.0, PRESSURE))
    U, _ = solve_full(mesh, [material], np.unique(fixed), F)
    bottom = np.isclose(x[:, 2], -h)
    expected = PRESSURE * h / (material.lam + 2.0 * material.mu)
    assert math.isclose(expected, PRESSURE * h * (1 + 0.4) * (1 - 0.8) / (E * (1 - 0.4)), rel_tol=1e-12)
    np.testing.assert_allclose(U[bottom, 2], expected, rtol=1e-9)


def _clamped_block_p1(n, size, material):
    mesh = box_mesh(size, h=size[2] / (2 * n))
    F = traction_load(mesh, face_triangles(mesh, 2, -size[2]), (0.0, 0.0, PRESSURE))
    U, _ = solve_full(mesh, [material], node_dofs(top_face(mesh)), F)
    return F.ravel() @ U.ravel() / F[:, 2].sum()


def _clamped_block_p2(n, size, material):
    """The same problem with quadratic tetrahedra, assembled by scikit-fem on the same structured mesh: an
    independent element whose space contains the P1 space, hence δ_P2 ≥ δ_P1 on a mesh."""
    a, b, h = size
    k = 2 * n
    mesh = MeshTet.init_tensor(np.linspace(-a / 2, a / 2, round(a / h) * k + 1),
                               np.linspace(-b / 2, b / 2, round(b / h) * k + 1), np.linspace(-h, 0.0, k + 1))
    mesh = mesh.with_boundaries({"top": lambda x: x[2] > -1e-12, "bottom": lambda x: x[2] < -h + 1e-12})
    basis = Basis(mesh, ElementVector(ElementTetP2()))
    K = asm(linear_elasticity(material.lam, material.mu), basis)
    F = asm(LinearForm(lambda v, w: PRESSURE * v[2]),
            FacetBasis(mesh, ElementVector(ElementTetP2()), facets=mesh.boundaries["bottom"]))
    free = np.setdiff1d(np.arange(basis.N), basis.get_dofs("top").all())
    U = np.zeros(basis.N)
    U[free] = factorize(K[free][:, free]).solve(F[free])
    return F @ U / (PRESSURE * a * b)


def test_clamped_block_nu_positive_converges_to_a_reference_within_its_error_estimate():
    """ν = 0.4, top face glued (all DOFs fixed), sides free: no closed form. Reference: Richardson
    extrapolation of P1 on meshes h, h/2, h/4 with the observed order p. Derived tolerance: the finest P1's
    estimated error e = δ* − δ_{h/4}. Checks that can fail:

    * δ_h rises monotonically (a conforming FEM converges from below);
    * 1 ≤ p ≤ 2: quadratic for a smooth solution, reduced by the stress singularity where the glued face meets
      the free sides;
    * the closed-form bounds: δ_confined = p h/(λ + 2μ) < δ* < p h/E = δ_free (the glued block is stiffer than
      the free one, softer than the confined one: its admissible fields contain the confined solution);
    * an independent P2 solution (on the h/2 mesh, ≥ the P1 one there) lies within e of δ*.
    """
    size, material = (0.04, 0.04, 0.02), Material(E, 0.4)
    d1, d2, d4 = (_clamped_block_p1(n, size, material) for n in (1, 2, 4))
    assert d1 < d2 < d4
    order = math.log2((d2 - d1) / (d4 - d2))
    assert 1.0 <= order <= 2.0, order
    reference = d4 + (d4 - d2) / (2.0 ** order - 1.0)
    error = reference - d4
    h = size[2]
    assert PRESSURE * h / (material.lam + 2 * material.mu) < reference < PRESSURE * h / E
    assert error < 0.025 * reference          # the finest P1 mesh is within 2.5 % of the converged value
    d_p2 = _clamped_block_p2(2, size, material)
    assert d_p2 >= d2
    assert abs(d_p2 - reference) <= error, (d_p2, reference, error)


def _cantilever_tip(n, length, t, material, load):
    """Mean tip deflection (work-conjugate) of a t × t × ``length`` beam clamped at x = −length/2 under a
    uniform shear traction of total ``load`` on its tip face."""
    mesh = box_mesh((length, t, t), h=t / n)
    clamped = np.flatnonzero(np.isclose(mesh.node_position[:, 0], -length / 2))
    F = traction_load(mesh, face_triangles(mesh, 0, length / 2), (0.0, 0.0, load / t**2))
    U, _ = solve_full(mesh, [material], node_dofs(clamped), F)
    return F.ravel() @ U.ravel() / load


def test_cantilever_tip_load_matches_euler_bernoulli_and_converges():
    """L/h = 10, tip load P: Euler–Bernoulli δ = P L³/(3 E I), I = t⁴/12 (Timoshenko's shear term adds
    P L/(κ G A) = 0.6 % here with ν = 0, κ = 5/6). Linear tetrahedra lock in bending, so the error falls as
    (element size / thickness)²: within 5 % at 8 elements through the thickness, and each halving of the mesh
    divides the error by more than 2.5 (4 asymptotically)."""
    length, t, load, material = 0.2, 0.02, 1.0, Material(1e7, 0.0)
    beam = load * length**3 / (3.0 * material.E * t**4 / 12.0)
    errors = [abs(_cantilever_tip(n, length, t, material, load) / beam - 1.0) for n in (2, 4, 8)]
    assert errors[-1] < 0.05, errors
    assert errors[0] / errors[1] > 2.5 and errors[1] / errors[2] > 2.5, errors
