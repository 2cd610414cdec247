"""Coulomb cone projection (closed forms, Moreau decomposition), constraint blocks and problem checks."""
import numpy as np
import pytest

from engine.contact import _kernels as K
from engine.contact.cone import ConstraintBlocks, CoulombCone, check_problem, project_coulomb

RNG = np.random.default_rng(7)


def _in_cone(f, mu, tol):
    return np.linalg.norm(f[..., 1:], axis=-1) <= mu * f[..., 0] + tol


def test_inside_point_is_unchanged():
    f = np.array([2.0, 0.3, -0.4])                     # ‖f_t‖ = 0.5 ≤ 0.5 · 2
    assert np.array_equal(CoulombCone(0.5).project(f), f)


def test_polar_cone_projects_to_zero():
    f = np.array([-3.0, 1.0, 0.0])                     # μ‖f_t‖ = 0.5 ≤ 3 = −f_n
    assert np.array_equal(CoulombCone(0.5).project(f), np.zeros(3))


def test_lateral_case_closed_form():
    # μ = 1, f = (0, 2, 0): nearest point of the line f_n = f_t in the plane is (1, 1)
    np.testing.assert_allclose(CoulombCone(1.0).project([0.0, 2.0, 0.0]), [1.0, 1.0, 0.0], atol=1e-15)
    # μ = 1/2, f = (1, 3, 4): f_n' = (1 + 2.5)/1.25 = 2.8, f_t' = 0.5 · 2.8 · (3, 4)/5 = (0.84, 1.12)
    np.testing.assert_allclose(CoulombCone(0.5).project([1.0, 3.0, 4.0]), [2.8, 0.84, 1.12], rtol=1e-15)


def test_frictionless_cone_is_the_normal_half_line():
    f = RNG.normal(size=(200, 3))
    expected = np.column_stack([np.maximum(f[:, 0], 0.0), np.zeros((200, 2))])
    np.testing.assert_array_equal(CoulombCone(0.0).project(f), expected)


@pytest.mark.parametrize("mu", [0.0, 0.1, 0.8, 3.0])
def test_moreau_decomposition_on_random_points(mu):
    # p = proj_K(f) iff p ∈ K, f − p ∈ K° (polar: μ‖x_t‖ ≤ −x_n) and ⟨f − p, p⟩ = 0
    f = RNG.normal(size=(2000, 3)) * RNG.uniform(0.01, 100.0, size=(2000, 1))
    p = project_coulomb(f, mu)
    d = f - p
    scale = np.linalg.norm(f, axis=1)
    assert np.all(_in_cone(p, mu, 1e-12 * scale))
    assert np.all(mu * np.linalg.norm(d[:, 1:], axis=1) <= -d[:, 0] + 1e-12 * scale)
    np.testing.assert_allclose(np.einsum("ij,ij->i", d, p), 0.0, atol=1e-12 * scale.max() ** 2)


def test_projection_is_idempotent_and_matches_the_numba_kernel():
    mu = RNG.uniform(0.0, 2.0, size=500)
    f = RNG.normal(size=(500, 3))
    p = project_coulomb(f, mu)
    np.testing.assert_allclose(project_coulomb(p, mu), p, rtol=1e-14, atol=1e-15)
    kernel = np.array([K.project_cone(*fi, m) for fi, m in zip(f, mu)])
    np.testing.assert_allclose(kernel, p, rtol=1e-15, atol=1e-15)


def test_projection_stays_in_the_cone_to_relative_rounding():
    mu = RNG.uniform(0.05, 2.0, size=5000)
    p = project_coulomb(RNG.normal(size=(5000, 3)) * 1e3, mu)
    assert np.all(np.linalg.norm(p[:, 1:], axis=1) <= mu * p[:, 0] * (1 + 1e-12))


def test_dual_projection_moreau():
    # K* = {μ‖u_t‖ ≤ u_n}; its polar is −K: u − p ∈ −K and ⟨u − p, p⟩ = 0
    mu = 0.6
    u = RNG.normal(size=(1000, 3))
    p = CoulombCone(mu).project_dual(u)
    d = p - u
    assert np.all(mu * np.linalg.norm(p[:, 1:], axis=1) <= p[:, 0] + 1e-12)
    assert np.all(_in_cone(d, mu, 1e-12))
    np.testing.assert_allclose(np.einsum("ij,ij->i", d, p), 0.0, atol=1e-12)


def test_contains_with_tolerance():
    cone = CoulombCone(0.5)
    assert cone.contains([1.0, 0.5, 0.0])
    assert not cone.contains([1.0, 0.5 + 1e-9, 0.0])
    assert cone.contains([1.0, 0.5 + 1e-9, 0.0], tol=1e-8)
    assert not cone.contains([-1e-6, 0.0, 0.0])


def test_negative_or_nan_mu_is_rejected():
    for mu in (-0.1, np.nan, np.inf):
        with pytest.raises(ValueError, match="mu"):
            CoulombCone(mu)


def test_constraint_blocks_layout_and_projection():
    blocks = ConstraintBlocks.contacts([0.5, 0.0], bilateral_sizes=(3, 5))
    assert blocks.block_start.tolist() == [0, 3, 6, 9, 14]
    assert blocks.n_rows == 14 and blocks.has_bilateral
    assert blocks.contact_blocks.tolist() == [0, 1]
    f = np.arange(14.0) - 7.0
    p = blocks.project(f)
    np.testing.assert_array_equal(p[6:], f[6:])                       # bilateral forces are free
    np.testing.assert_allclose(p[:3], project_coulomb(f[:3], 0.5))
    np.testing.assert_allclose(p[3:6], project_coulomb(f[3:6], 0.0))
    assert blocks.violation(p) == 0.0
    assert blocks.violation(np.r_[1.0, 1.0, 0.0, 0.0, 0.0, 0.0, np.zeros(8)]) == pytest.approx(0.5)


def test_constraint_blocks_reject_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        ConstraintBlocks.contacts([0.3, -1.0])
    with pytest.raises(ValueError, match="sizes"):
        ConstraintBlocks.contacts([0.3], bilateral_sizes=(0,))
    with pytest.raises(ValueError, match="3 rows per contact"):
        ConstraintBlocks.coerce(0.5, 7)
    with pytest.raises(ValueError, match="cover 6 rows but W has 9"):
        ConstraintBlocks.coerce(np.array([0.1, 0.2]), 9)
    with pytest.raises(ValueError, match="inconsistent constraint blocks"):             # a 2-row contact
        ConstraintBlocks(np.array([0, 2]), np.array([0]), np.array([0.5]))


def test_check_problem_names_the_fault():
    W = np.eye(3)
    with pytest.raises(ValueError, match="square"):
        check_problem(np.ones((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match=r"v_free must have shape \(3,\)"):
        check_problem(W, np.zeros(4))
    with pytest.raises(ValueError, match=r"W has a non-finite entry at \(1, 2\)"):
        check_problem(np.where(np.arange(9).reshape(3, 3) == 5, np.nan, W), np.zeros(3))
    with pytest.raises(ValueError, match="symmetric"):
        check_problem(W + np.triu(np.ones((3, 3)), 1), np.zeros(3))
    with pytest.raises(ValueError, match=r"W\[1,1\]"):
        check_problem(np.diag([1.0, -1.0, 1.0]), np.zeros(3))
