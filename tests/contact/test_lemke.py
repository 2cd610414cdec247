"""Lemke's method against brute-force enumeration of complementary bases and scipy's NNLS; LCP builders."""
import itertools

import numpy as np
import pytest
from scipy.optimize import nnls

from engine.contact.cone import ConstraintBlocks
from engine.contact.lemke import facet_directions, faceted_lcp, frictionless_lcp, lemke

RNG = np.random.default_rng(11)


def brute_force_lcp(M, q, tol=1e-9):
    """All solutions found by enumerating the 2^n complementary index sets (z_S = −M_SS⁺ q_S)."""
    n, sols = len(q), []
    for S in itertools.product([False, True], repeat=n):
        S = np.array(S)
        z = np.zeros(n)
        if S.any():
            z[S] = np.linalg.lstsq(M[np.ix_(S, S)], -q[S], rcond=None)[0]
        w = M @ z + q
        if np.all(z >= -tol) and np.all(w >= -tol) and np.allclose(w[S], 0.0, atol=tol):
            sols.append(z)
    return sols


def assert_solves(M, q, z, tol):
    w = M @ z + q
    assert np.all(z >= 0.0) and np.all(w >= -tol)
    assert np.abs(z * w).max() <= tol


@pytest.mark.parametrize("trial", range(60))
def test_positive_definite_lcp_matches_enumeration(trial):
    n = int(RNG.integers(1, 8))
    A = RNG.normal(size=(n, n))
    M, q = A @ A.T + 0.05 * np.eye(n), RNG.normal(size=n)
    z, stats = lemke(M, q)
    (unique,) = brute_force_lcp(M, q)
    assert stats.status == "solution" and stats.residual <= 1e-12
    np.testing.assert_allclose(z, unique, atol=1e-10)


@pytest.mark.parametrize("trial", range(30))
def test_nonsymmetric_p_matrix_lcp_matches_enumeration(trial):
    # strictly diagonally dominant with a positive diagonal → P-matrix → unique solution
    n = int(RNG.integers(2, 8))
    M = RNG.normal(size=(n, n))
    M[np.diag_indices(n)] = np.abs(M).sum(axis=1) + 0.1
    q = RNG.normal(size=n)
    z, stats = lemke(M, q)
    (unique,) = brute_force_lcp(M, q)
    assert stats.status == "solution"
    np.testing.assert_allclose(z, unique, atol=1e-10)


@pytest.mark.parametrize("trial", range(30))
def test_feasible_semidefinite_lcp_is_solved_with_the_unique_w(trial):
    # M = A Aᵀ of rank r < n; q = −M x + y with x, y ≥ 0 is feasible, so Lemke must end on a solution, and
    # w = M z + q is the same for every solution of a symmetric PSD LCP
    n, r = int(RNG.integers(2, 8)), int(RNG.integers(1, 3))
    A = RNG.normal(size=(n, r))
    M = A @ A.T
    q = -M @ np.maximum(RNG.normal(size=n), 0.0) + np.maximum(RNG.normal(size=n), 0.0)
    z, stats = lemke(M, q)
    assert stats.status == "solution"
    assert_solves(M, q, z, 1e-10)
    sols = brute_force_lcp(M, q)
    assert sols
    np.testing.assert_allclose(M @ z + q, M @ sols[0] + q, atol=1e-9)


@pytest.mark.parametrize("n", [20, 60])
def test_large_positive_definite_lcp_matches_scipy_nnls(n):
    # LCP(AᵀA, q) ⇔ min ½‖Az‖² + qᵀz, z ≥ 0 ⇔ NNLS min ‖Az − b‖ with Aᵀb = −q
    A = RNG.normal(size=(n, n)) + 3.0 * np.eye(n)
    q = RNG.normal(size=n)
    z, stats = lemke(A.T @ A, q)
    z_ref, _ = nnls(A, np.linalg.solve(A.T, -q))
    assert stats.status == "solution"
    np.testing.assert_allclose(z, z_ref, atol=1e-9)


@pytest.mark.parametrize("trial", range(40))
def test_degenerate_integer_lcp_is_solved(trial):
    # many ties in the ratio test: q ∈ {−1, 0, 1}, small integer M (PD), repeated rows of q
    n = int(RNG.integers(2, 7))
    B = RNG.integers(-1, 2, size=(n, n)).astype(float)
    M = B @ B.T + np.eye(n)
    q = RNG.integers(-1, 2, size=n).astype(float)
    z, stats = lemke(M, q)
    assert stats.status == "solution"
    assert_solves(M, q, z, 1e-12)
    np.testing.assert_allclose(z, brute_force_lcp(M, q)[0], atol=1e-10)


def test_all_ties_in_the_first_ratio_test():
    M, q = 2.0 * np.eye(4) + 1.0, -np.ones(4)          # by symmetry z_i = z with (2 + 4) z − 1 = 0
    z, stats = lemke(M, q)
    assert stats.status == "solution"
    np.testing.assert_allclose(z, np.full(4, 1.0 / 6.0), atol=1e-14)


def test_nonnegative_q_needs_no_pivot():
    z, stats = lemke(np.eye(3), np.array([0.0, 1.0, 2.0]))
    assert (stats.pivots, stats.status) == (0, "solution") and np.all(z == 0.0)


def test_infeasible_lcps_end_on_a_ray():
    # M = 0, q < 0: w = q can never be ≥ 0;  PSD M = [[1, −1], [−1, 1]], q = (−1, −1): z1 − z2 ≥ 1 and z2 − z1 ≥ 1
    for M, q in ((np.zeros((2, 2)), np.array([-1.0, 0.5])),
                 (np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([-1.0, -1.0]))):
        _, stats = lemke(M, q)
        assert stats.status == "ray"


def test_pivot_cap_is_reported():
    A = RNG.normal(size=(12, 12))
    _, stats = lemke(A @ A.T + np.eye(12), -np.ones(12) - RNG.uniform(size=12), max_iter=1)
    assert (stats.status, stats.pivots) == ("max_iter", 1)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match=r"M \(n, n\)"):
        lemke(np.eye(3), np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        lemke(np.eye(2), np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="facets"):
        facet_directions(2)


def test_faceted_lcp_has_the_structure_of_eq_2_35():
    k, mu = 4, 0.7
    W = np.diag([2.0, 3.0, 5.0])
    M, q, G = faceted_lcp(W, np.array([-1.0, 0.5, 0.25]), ConstraintBlocks.contacts([mu]), facets=k)
    D, w = facet_directions(k), 10.0 / 3.0                                       # W enters as W / mean diag
    assert M.shape == ((k + 2), (k + 2))
    np.testing.assert_allclose(M[0], [2.0 / w, 0, 0, 0, 0, 0])                   # W_nn row, no λ
    np.testing.assert_allclose(M[1:k + 1, 1:k + 1], D.T @ np.diag([3.0, 5.0]) @ D / w, atol=1e-15)
    np.testing.assert_array_equal(M[1:k + 1, k + 1], np.ones(k))                  # + λ
    np.testing.assert_array_equal(M[k + 1], [mu, -1, -1, -1, -1, 0])              # μ f_n − Σ β
    np.testing.assert_allclose(q, [-1.0, *(D.T @ [0.5, 0.25]), 0.0], atol=1e-15)
    np.testing.assert_allclose(G[1:, 1:k + 1], D / w)


def test_frictionless_lcp_takes_the_normal_rows():
    A = RNG.normal(size=(6, 9))
    W, v = A @ A.T, RNG.normal(size=6)
    M, q, G = frictionless_lcp(W, v, ConstraintBlocks.contacts([0.0, 0.0]))
    np.testing.assert_array_equal(M, W[np.ix_([0, 3], [0, 3])])
    np.testing.assert_array_equal(q, v[[0, 3]])
    np.testing.assert_array_equal(G @ np.array([1.0, 2.0]), [1, 0, 0, 2, 0, 0])


def test_faceted_lcp_without_friction_equals_the_frictionless_lcp():
    A = RNG.normal(size=(9, 12))
    W, v = A @ A.T, RNG.normal(size=9)
    blocks = ConstraintBlocks.contacts([0.0, 0.0, 0.0])
    z1, _ = lemke(*frictionless_lcp(W, v, blocks)[:2])
    M, q, G = faceted_lcp(W, v, blocks, facets=6)
    z2, stats = lemke(M, q)
    assert stats.status == "solution"
    np.testing.assert_allclose(G @ z2, frictionless_lcp(W, v, blocks)[2] @ z1, atol=1e-10)
