"""The hybrid contact block (thesis eqs. 4.15–4.32): barycentric distribution, P K_c⁻¹ Pᵀ/δt and −P U_cᵗ/δt
against the full FEM model."""
import numpy as np
import pytest
from fem_helpers import node_dofs, solve_full

from engine.deformable import (Material, barycentric, box_mesh, build_sole, compliance, contact_weights,
                               distribution_matrix, node_forces)

RNG = np.random.default_rng(5)
DT = 1e-3


@pytest.fixture(scope="module")
def sole(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARTICULA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return build_sole(box_mesh((0.12, 0.08, 0.02), h=0.01), [Material(3e6, 0.4)])


def _random_points(sole, k):
    """k random points inside random contact triangles, with their true barycentric weights."""
    triangle = RNG.choice(len(sole.contact_triangle), size=k, replace=False)
    w = RNG.dirichlet(np.ones(3), size=k)
    corners = sole.mesh.node_position[sole.contact_node][sole.contact_triangle[triangle]]
    return triangle, np.einsum("kj,kjx->kx", w, corners), w


def _rotation():
    q, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
    return q * np.sign(np.linalg.det(q))


def test_barycentric_weights_sum_to_one_and_rebuild_the_point():
    corners = RNG.normal(size=(50, 3, 3))
    w = RNG.dirichlet(np.ones(3), size=50)
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    point = np.einsum("kj,kjx->kx", w, corners) + 0.3 * normal     # off the plane: its projection counts
    d = barycentric(corners, point)
    np.testing.assert_allclose(d, w, atol=1e-12)
    np.testing.assert_allclose(d.sum(axis=1), 1.0, atol=1e-14)


def test_thesis_inverse_of_node_coordinates_agrees_in_the_plane_off_the_origin():
    """Eq. 4.25, d = [n₁ n₂ n₃]⁻¹ p, is the barycentric solution for p in the triangle's plane when that
    plane misses the origin; it fails (singular matrix) when the plane holds the origin."""
    corners = RNG.normal(size=(3, 3)) + [0.0, 0.0, 5.0]
    p = np.array([0.2, 0.5, 0.3]) @ corners
    np.testing.assert_allclose(np.linalg.solve(corners.T, p), barycentric(corners[None], p[None])[0], atol=1e-12)
    through_origin = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, -1.0, 0.0]])
    assert abs(np.linalg.det(through_origin.T)) < 1e-12
    np.testing.assert_allclose(barycentric(through_origin[None], np.zeros((1, 3)))[0], [1 / 3] * 3, atol=1e-15)


def test_compliance_block_equals_the_full_model_at_the_contact_points(sole):
    """(δt · block) f = P U: the full FEM model under the node forces Pᵀ f, interpolated at the points."""
    triangle, points, _ = _random_points(sole, 6)
    weights = contact_weights(sole, triangle, points)
    f = RNG.normal(size=18) * 5.0
    block, shift = compliance(sole, weights, DT, np.zeros(len(sole.K_c)))
    F = np.zeros((len(sole.mesh.node_position), 3))
    F[sole.contact_node] = node_forces(weights, f, len(sole.contact_node)).reshape(-1, 3)
    U = solve_full(sole.mesh, sole.materials, node_dofs(sole.dirichlet_node), F)[0]
    at_points = np.einsum("kj,kjx->kx", weights.d, U[sole.contact_node][weights.slot]).ravel()
    np.testing.assert_allclose(DT * block @ f, at_points, rtol=0, atol=1e-9 * np.abs(at_points).max())
    np.testing.assert_array_equal(shift, 0.0)


def test_compliance_matches_the_dense_distribution_matrix_and_the_free_velocity_shift(sole):
    triangle, points, _ = _random_points(sole, 5)
    weights = contact_weights(sole, triangle, points)
    U_c = RNG.normal(size=len(sole.K_c)) * 1e-4
    block, shift = compliance(sole, weights, DT, U_c)
    P = distribution_matrix(weights, len(sole.contact_node))
    np.testing.assert_allclose(block, P @ sole.K_c_inv @ P.T / DT, rtol=1e-12, atol=0)
    np.testing.assert_allclose(shift, -P @ U_c / DT, rtol=1e-12, atol=0)
    np.testing.assert_allclose(node_forces(weights, np.arange(15.0), len(sole.contact_node)), P.T @ np.arange(15.0))


def test_contact_frames_rotate_the_block_and_the_shift(sole):
    triangle, points, _ = _random_points(sole, 4)
    weights = contact_weights(sole, triangle, points)
    frames = np.array([_rotation() for _ in range(4)])
    U_c = RNG.normal(size=len(sole.K_c)) * 1e-4
    block, shift = compliance(sole, weights, DT, U_c)
    rotated, rotated_shift = compliance(sole, weights, DT, U_c, frames)
    C = np.zeros((12, 12))
    for i, R in enumerate(frames):
        C[3 * i:3 * i + 3, 3 * i:3 * i + 3] = R
    np.testing.assert_allclose(rotated, C @ block @ C.T, rtol=1e-12, atol=0)
    np.testing.assert_allclose(rotated_shift, C @ shift, rtol=1e-12, atol=0)
    f = RNG.normal(size=12)
    n = len(sole.contact_node)
    np.testing.assert_allclose(node_forces(weights, f, n, frames), node_forces(weights, C.T @ f, n), atol=1e-14)


def test_node_forces_balance_the_contact_forces(sole):
    triangle, points, _ = _random_points(sole, 7)
    weights = contact_weights(sole, triangle, points)
    f = RNG.normal(size=21)
    F = node_forces(weights, f, len(sole.contact_node)).reshape(-1, 3)
    np.testing.assert_allclose(F.sum(axis=0), f.reshape(-1, 3).sum(axis=0), atol=1e-13)
    moment = np.cross(sole.mesh.node_position[sole.contact_node], F).sum(axis=0)
    np.testing.assert_allclose(moment, np.cross(points, f.reshape(-1, 3)).sum(axis=0), atol=1e-13)


def test_weights_follow_the_displaced_nodes(sole):
    triangle, _, w = _random_points(sole, 3)
    U_c = RNG.normal(size=len(sole.K_c)) * 1e-3
    moved = sole.mesh.node_position[sole.contact_node] + U_c.reshape(-1, 3)
    points = np.einsum("kj,kjx->kx", w, moved[sole.contact_triangle[triangle]])
    np.testing.assert_allclose(contact_weights(sole, triangle, points, U_c).d, w, atol=1e-10)


def test_a_point_outside_its_triangle_is_refused(sole):
    corners = sole.mesh.node_position[sole.contact_node][sole.contact_triangle[0]]
    outside = corners[0] + 0.5 * (corners[0] - corners[1])
    with pytest.raises(ValueError, match="outside its sole triangle 0"):
        contact_weights(sole, [0], outside[None])
