"""Static condensation is exact (thesis eqs. 4.12–4.22): K_c reproduces the full model at the contact nodes, the
node update recovers every node, and the thesis's two condensations equal the single one used here."""
import numpy as np
import pytest
from fem_helpers import node_dofs, solve_full

from engine.deformable import Material, box_mesh, build_sole, condense, surface_nodes, two_layer_sole
from engine.deformable.assembly import stiffness

RNG = np.random.default_rng(11)
MATERIALS = [Material(3e6, 0.25), Material(1e6, 0.25)]   # the thesis's two-layer sole (§4.6)


@pytest.fixture(scope="module")
def sole(tmp_path_factory):
    """The two-layer sole with pads, coarse: two materials, an unstructured Gmsh mesh."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARTICULA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return build_sole(two_layer_sole(h=0.015), MATERIALS)


def _full_solution(sole, F_c):
    """The full model K U = F, Dirichlet nodes fixed, the forces F_c on the contact nodes only."""
    F = np.zeros((len(sole.mesh.node_position), 3))
    F[sole.contact_node] = F_c.reshape(-1, 3)
    return solve_full(sole.mesh, sole.materials, node_dofs(sole.dirichlet_node), F)[0]


def test_condensed_stiffness_reproduces_the_full_model_at_the_contact_nodes(sole):
    F_c = RNG.normal(size=(len(sole.K_c), 4)) * 10.0
    for F in F_c.T:
        U = _full_solution(sole, F)
        U_c = U[sole.contact_node].ravel()
        scale = np.abs(U_c).max()
        np.testing.assert_allclose(sole.contact_displacement(F), U_c, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(sole.K_c @ U_c, F, rtol=0, atol=1e-9 * np.abs(F).max())


def test_node_update_recovers_every_node_of_the_full_solution(sole):
    F = RNG.normal(size=len(sole.K_c))
    U = _full_solution(sole, F)
    np.testing.assert_allclose(sole.displacement(sole.contact_displacement(F)), U, rtol=0,
                               atol=1e-9 * np.abs(U).max())


def test_node_update_after_a_cache_hit_equals_the_cold_one(sole):
    """A second build reads K_c from the disk cache; its node update refactorises K_nn on first use."""
    build_sole(sole.mesh, sole.materials)
    again = build_sole(sole.mesh, sole.materials)
    assert "_condensation" not in again.__dict__
    U_c = sole.contact_displacement(RNG.normal(size=len(sole.K_c)))
    np.testing.assert_allclose(again.displacement(U_c), sole.displacement(U_c), rtol=0, atol=1e-15)


def test_two_condensations_surface_then_contact_equal_the_single_one():
    """Thesis: K_s = K_ss − K_si K_ii⁻¹ K_is (4.14), then K_c = K_cc − K_cn K_nn⁻¹ K_nc (4.20) on K_s; the
    quotient property of Schur complements makes it the direct condensation of K^r. Also the thesis's printed
    node update U_n = (K_nn − K_nc K_cc⁻¹ K_cn)⁻¹(−K_nc K_cc⁻¹ F_c) (4.22) on K_s equals −K_nn⁻¹ K_nc U_c."""
    mesh = box_mesh((0.06, 0.04, 0.02), h=0.01)     # has interior nodes
    materials = [Material(3e6, 0.4)]
    sole = build_sole(mesh, materials)
    free = sole.free_dof
    K_r = stiffness(mesh, materials)[free][:, free]
    position = {dof: i for i, dof in enumerate(free)}
    surface = [n for n in surface_nodes(mesh) if n not in set(sole.dirichlet_node)]
    assert len(surface) < len(mesh.node_position) - len(sole.dirichlet_node)     # interior nodes exist
    surface_dof = [position[d] for d in node_dofs(surface)]
    K_s = condense(K_r, surface_dof).stiffness
    slot = {n: i for i, n in enumerate(surface)}
    c = node_dofs([slot[n] for n in sole.contact_node])
    K_c = condense(K_s, c).stiffness
    np.testing.assert_allclose(K_c, sole.K_c, rtol=0, atol=1e-9 * np.abs(sole.K_c).max())

    n = np.setdiff1d(np.arange(len(K_s)), c)
    K_cc, K_cn, K_nc, K_nn = K_s[np.ix_(c, c)], K_s[np.ix_(c, n)], K_s[np.ix_(n, c)], K_s[np.ix_(n, n)]
    F_c = RNG.normal(size=len(c))
    U_n_thesis = np.linalg.solve(K_nn - K_nc @ np.linalg.solve(K_cc, K_cn), -K_nc @ np.linalg.solve(K_cc, F_c))
    U_all = sole.displacement(sole.contact_displacement(F_c))
    non_contact = [s for s in surface if s not in set(sole.contact_node)]
    np.testing.assert_allclose(U_n_thesis, U_all[non_contact].ravel(), rtol=0,
                               atol=1e-9 * np.abs(U_all).max())


def test_condense_of_a_dense_matrix_matches_the_schur_complement_formula():
    A = RNG.normal(size=(12, 12))
    K = A @ A.T + 12 * np.eye(12)
    keep = np.array([7, 2, 9])
    rest = np.setdiff1d(np.arange(12), keep)
    expected = K[np.ix_(keep, keep)] - K[np.ix_(keep, rest)] @ np.linalg.solve(K[np.ix_(rest, rest)],
                                                                               K[np.ix_(rest, keep)])
    cond = condense(K, keep)
    np.testing.assert_allclose(cond.stiffness, expected, rtol=1e-12)
    U_c = RNG.normal(size=3)
    np.testing.assert_allclose(cond.recover(U_c), -np.linalg.solve(K[np.ix_(rest, rest)], K[np.ix_(rest, keep)] @ U_c),
                               rtol=1e-12)


def test_compliance_is_the_inverse_of_the_condensed_stiffness(sole):
    m = len(sole.K_c)
    np.testing.assert_allclose(sole.K_c @ sole.K_c_inv, np.eye(m), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(sole.K_c_inv, sole.K_c_inv.T)
    np.linalg.cholesky(sole.K_c)       # positive definite: raises otherwise
