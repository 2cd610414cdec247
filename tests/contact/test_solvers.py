"""Contact solvers on problems with closed-form or published answers (seed 000 §3.4, §4; issue 5).

Problems are built here from rigid bodies: W = δt J M⁻¹ Jᵀ, v_free = J (v + δt M⁻¹ F) (seed 000 eq. 3.26),
with J the contact-frame rows (n, t1, t2) of the point velocities v + ω × r.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from engine.contact import (ConstraintBlocks, add_compliance, gauss_seidel, solve, solver_name)
from engine.contact._linalg_kernels import (REUSE_ROWS, kept_solve, least_norm_solve, memo_definite, memo_solve,
                                           no_keep, no_memo)
from engine.contact._linalg_kernels import _lu_factor, _lu_solve, least_norm_rows, lu_factor, lu_solve
from engine.contact.cone import project_coulomb
from engine.model.universe import SolverSettings

G, DT = 9.81, 1e-3
RNG = np.random.default_rng(3)
ROOT = Path(__file__).resolve().parents[2]
GS_SOLVERS = ("gauss-seidel-newton", "gauss-seidel", "nonsmooth-newton")    # the iterative, exact-cone solvers
TIGHT = SolverSettings(tolerance=1e-13, max_iterations=20000)


def contact_frame(n):
    """Rows (n, t1, t2) of a right-handed frame with normal n."""
    n = np.asarray(n, float) / np.linalg.norm(n)
    a = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(n, a)
    t1 /= np.linalg.norm(t1)
    return np.array([n, t1, np.cross(n, t1)])


def skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def rigid_body_problem(mass, inertia, points, normals, v0=np.zeros(6), force=np.zeros(6)):
    """(W, v_free) for a free rigid body (twist (v, ω) at the CoM, world axes) on static supports at points
    (k, 3) relative to the CoM, with contact normals (k, 3) pointing into the body, under gravity + force."""
    Minv = np.zeros((6, 6))
    Minv[:3, :3], Minv[3:, 3:] = np.eye(3) / mass, np.linalg.inv(inertia)
    J = np.vstack([contact_frame(n) @ np.hstack([np.eye(3), -skew(r)]) for r, n in zip(points, normals)])
    F = np.r_[0.0, 0.0, -mass * G, 0.0, 0.0, 0.0] + force
    return DT * J @ Minv @ J.T, J @ (v0 + DT * Minv @ F)


def random_problem(m, nv, scale_v=1.0):
    """W = δt J M⁻¹ Jᵀ of a random system with nv ≥ 3m (W positive definite) and a random free velocity."""
    J = RNG.normal(size=(3 * m, nv))
    A = RNG.normal(size=(nv, nv))
    M = A @ A.T + nv * np.eye(nv)
    v_free = RNG.normal(size=3 * m) * scale_v
    v_free[0::3] -= 0.5 * scale_v                                    # most contacts pushed together
    return DT * J @ np.linalg.solve(M, J.T), v_free


def box_corners(a, b, h, extra=()):
    return np.array([[sx * a, sy * b, -h] for sx in (-1, 1) for sy in (-1, 1)] + list(extra))


def numpy_residual(W, v_free, f, mu):
    """‖f − proj_K(f − ρ ũ)‖ with ũ = (v_n + μ‖v_t‖, v_t), ρ = 1/W_nn (the documented natural map)."""
    v = (W @ f + v_free).reshape(-1, 3)
    fc = f.reshape(-1, 3)
    mu = np.broadcast_to(mu, len(fc))
    u = v + np.column_stack([mu * np.linalg.norm(v[:, 1:], axis=1), np.zeros((len(fc), 2))])
    rho = 1.0 / np.diag(W)[0::3]
    return float(np.linalg.norm(fc - project_coulomb(fc - rho[:, None] * u, mu)))


def assert_coulomb(W, v_free, f, mu, rtol=1e-7):
    """Signorini and Coulomb's law per contact, from the velocities v = W f + v_free."""
    v, fc = (W @ f + v_free).reshape(-1, 3), f.reshape(-1, 3)
    mu = np.broadcast_to(mu, len(fc))
    tol_f, tol_v = rtol * max(np.abs(fc).max(), 1e-300), rtol * np.abs(v_free).max()
    assert np.all(fc[:, 0] >= 0.0)
    assert np.all(np.linalg.norm(fc[:, 1:], axis=1) <= mu * fc[:, 0] * (1 + 1e-9))
    assert np.all(v[:, 0] >= -tol_v)
    assert np.all(np.minimum(fc[:, 0] / tol_f, v[:, 0] / tol_v) <= 1.0)      # f_n = 0 or v_n = 0
    for fi, vi, m in zip(fc, v, mu):
        vt = np.linalg.norm(vi[1:])
        if fi[0] > tol_f and vt > tol_v:                                     # slip: f_t = −μ f_n v̂_t
            np.testing.assert_allclose(fi[1:], -m * fi[0] * vi[1:] / vt, atol=tol_f + 1e-6 * m * fi[0])


def all_solvers(W, v_free, mu, settings=TIGHT, **kw):
    return {name: solve(name, W, v_free, mu, settings, **kw) for name in GS_SOLVERS + ("lemke",)}


# ---------------------------------------------------------------- block on an incline (point mass, W = δt/m I3)

def incline(theta, mass=2.0, u0=(0.0, 0.0, 0.0)):
    """Contact frame (n, t1 down the slope, t2 across): v_free = u0 + δt g (−cos θ, sin θ, 0)."""
    return DT / mass * np.eye(3), np.asarray(u0) + DT * G * np.array([-np.cos(theta), np.sin(theta), 0.0])


@pytest.mark.parametrize("name", GS_SOLVERS + ("lemke",))
def test_block_sticks_when_tan_theta_below_mu(name):
    mass, theta, mu = 2.0, 0.3, 0.4                                  # tan 0.3 = 0.309 < 0.4
    f, stats = solve(name, *incline(theta, mass), mu, TIGHT)
    # static equilibrium: f_n = m g cos θ, f_t = −m g sin θ; the block does not move (v = 0)
    np.testing.assert_allclose(f, [mass * G * np.cos(theta), -mass * G * np.sin(theta), 0.0], rtol=1e-12,
                               atol=1e-12)
    assert stats.converged and stats.residual <= 1e-10 and stats.cone_violation == 0.0


@pytest.mark.parametrize("name", GS_SOLVERS)
def test_block_slides_with_a_equal_g_sin_minus_mu_cos(name):
    mass, theta, mu = 2.0, 0.6, 0.3                                  # tan 0.6 = 0.684 > 0.3
    W, v_free = incline(theta, mass)
    f, stats = solve(name, W, v_free, mu, TIGHT)
    fn = mass * G * np.cos(theta)
    np.testing.assert_allclose(f, [fn, -mu * fn, 0.0], rtol=1e-12)
    a = (W @ f + v_free)[1] / DT                                     # acceleration down the slope
    assert a == pytest.approx(G * (np.sin(theta) - mu * np.cos(theta)), rel=1e-10)


@pytest.mark.parametrize("name", GS_SOLVERS)
def test_sliding_block_friction_opposes_its_velocity(name):
    # already sliding across the slope: v_t = u0 + δt g sin θ e1, f_t = −μ f_n v̂_t (W = δt/m I keeps v̂_t)
    mass, theta, mu = 1.5, 0.2, 0.5
    W, v_free = incline(theta, mass, u0=(0.0, 0.05, -0.2))
    f, _ = solve(name, W, v_free, mu, TIGHT)
    fn = mass * G * np.cos(theta)
    vt = v_free[1:]
    np.testing.assert_allclose(f, np.r_[fn, -mu * fn * vt / np.linalg.norm(vt)], rtol=1e-12)


# ----------------------------------------------------------------------- hyperstatic sets: the four-legged table

TABLE_INERTIA = np.diag([0.02, 0.03, 0.04])


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_four_legged_table_normal_forces_sum_to_mg(mu):
    # 1 kg table on 4 legs (seed 000 §4: the split is not unique, the sum is m g)
    W, v_free = rigid_body_problem(1.0, TABLE_INERTIA, box_corners(0.4, 0.3, 0.35), [[0, 0, 1]] * 4)
    assert np.linalg.matrix_rank(W) == 6                             # 12 rows, rank 6: hyperstatic
    for name, (f, stats) in all_solvers(W, v_free, mu).items():
        assert f[0::3].sum() == pytest.approx(1.0 * G, abs=1e-6), name
        np.testing.assert_allclose(W @ f + v_free, 0.0, atol=1e-9)   # the table stays at rest
        assert stats.cone_violation <= 1e-12


@pytest.mark.parametrize("rank", [1, 5, 12, 18])
def test_least_norm_solve_is_the_pseudo_inverse(rank):
    # A = J Jᵀ of rank r (18 x 18), b with a part outside the range: y = A⁺ b as numpy's pinv gives it
    J = RNG.normal(size=(18, rank)) * np.logspace(0, -3, rank)
    A, b = J @ J.T, RNG.normal(size=18)
    np.testing.assert_allclose(least_norm_solve(A.copy(), b), np.linalg.pinv(A, rcond=1e-10, hermitian=True) @ b,
                               rtol=1e-7, atol=1e-7 * np.abs(np.linalg.pinv(A, hermitian=True) @ b).max())


@pytest.mark.parametrize("rank", [18, 12, 5])
def test_least_norm_rows_is_the_pseudo_inverse_of_a_consistent_system(rank):
    # the Newton step's solve on a non-symmetric J (18 x 18) of rank r, singular values down to 1e-8, b = J x₀:
    # x = J⁺ b as numpy's SVD-based pinv gives it, to 1e-6 or, where J's own conditioning allows no better, to
    # the forward-error bound 10 κ ε of both solves (κ = σ_1/σ_r reaches 1e11 for some draws: the random factors
    # add to the 1e-8); the residual J x = b is checked to 1e-10 regardless
    J = RNG.normal(size=(18, rank)) @ np.diag(np.logspace(0, -8, rank)) @ RNG.normal(size=(rank, 18))
    b = J @ RNG.normal(size=18)
    x = least_norm_rows(J.copy(), b)
    sigma = np.linalg.svd(J, compute_uv=False)
    tol = max(1e-6, 10 * sigma[0] / sigma[rank - 1] * np.finfo(float).eps)
    np.testing.assert_allclose(x, np.linalg.pinv(J, rcond=1e-13) @ b, rtol=tol, atol=tol * np.abs(x).max())
    np.testing.assert_allclose(J @ x, b, atol=1e-10 * np.abs(b).max())


@njit(cache=False)
def numba_solve(A, b):
    return np.linalg.solve(A, b)


@pytest.mark.parametrize("n", [1, 7, 60, 176])
def test_one_lu_factor_solves_several_right_sides_as_numpy_solve_to_the_last_bit(n):
    # the interior-point attempt factors its (W + D) once an iteration for up to four right sides (dgetrf, then
    # dgetrs per side), where it called np.linalg.solve for each: numba's is scipy's dgesv, the same two calls, so
    # each solution is the one it had, bit for bit (numpy's own solve links another LAPACK: to rounding only); a
    # singular or non-finite matrix and a non-finite right side are refused, as numba's LinAlgError was caught;
    # under NUMBA_DISABLE_JIT, scipy's lu_factor and lu_solve take their place (the same factors and solutions)
    A = RNG.normal(size=(n, n)) + np.diag(RNG.uniform(0, 3, n))
    lu, pivots, lu_py, pivots_py = np.empty((n, n)), np.empty(n, np.int32), np.empty((n, n)), np.empty(n, np.int32)
    assert lu_factor(A, lu, pivots) and _lu_factor(A, lu_py, pivots_py)
    np.testing.assert_allclose(lu_py, lu, rtol=1e-12, atol=1e-12 * np.abs(lu).max())
    assert np.array_equal(pivots_py, pivots)
    for b in RNG.normal(size=(4, n)):
        x = lu_solve(lu, pivots, b)
        assert np.array_equal(x, numba_solve(A, b))
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-9 * np.abs(x).max())
        np.testing.assert_allclose(_lu_solve(lu_py, pivots_py, b), x, rtol=1e-9, atol=1e-9 * np.abs(x).max())
    singular, infinite = A.copy(), A.copy()
    singular[:, -1] = singular[:, 0]
    infinite[n // 2, 0] = np.inf
    assert not lu_factor(np.zeros((n, n)), lu, pivots) and not lu_factor(infinite, lu, pivots)
    assert n == 1 or not lu_factor(singular, lu, pivots) or np.abs(np.diag(lu)).min() < 1e-12 * np.abs(lu).max()
    assert lu_factor(A, lu, pivots) and lu_solve(lu, pivots, np.full(n, np.nan)).shape == (0,)
    assert not _lu_factor(np.zeros((n, n)), lu_py, pivots_py) and not _lu_factor(infinite, lu_py, pivots_py)


def sole(mu, name):
    """A 40 kg foot on 4 sticking corners, CoM off-centre, pushed sideways: W (12 x 12) has rank 6, the forces
    are not unique. Returns (W, v_free, f, stats) of the solve at tolerance 1e-9."""
    points = box_corners(0.11, 0.07, 0.1) - [0.03, 0.01, 0.0]
    W, v_free = rigid_body_problem(40.0, np.diag([0.5, 1.2, 1.5]), points, [[0, 0, 1]] * 4,
                                   force=np.r_[30.0, -10.0, 0, 0, 0, 2.0])
    return (W, v_free) + solve(name, W, v_free, mu, SolverSettings(tolerance=1e-9, max_iterations=100))


@pytest.mark.parametrize("name", GS_SOLVERS)
def test_hyperstatic_sole_lands_on_the_least_norm_forces_in_a_few_sweeps(name):
    # the active-set step gives the solution of least norm, -W⁺ v_free (numpy's pinv here), with no internal
    # forces, and eq. 3.34 is met a sweep later; Gauss–Seidel alone creeps linearly
    W, v_free, f, stats = sole(0.8, name)
    assert stats.converged and stats.iterations <= 12
    np.testing.assert_allclose(f, -np.linalg.pinv(W, rcond=1e-12) @ v_free, rtol=1e-9, atol=1e-9 * 40 * G)
    assert f[0::3].sum() == pytest.approx(40.0 * G, rel=1e-12)
    np.testing.assert_allclose(W @ f + v_free, 0.0, atol=1e-12)


@pytest.mark.parametrize("name", GS_SOLVERS)
def test_frictionless_hyperstatic_sole_lands_on_the_least_norm_normal_forces(name):
    # without friction only the normal rows bear load: f_n = -(W_nn)⁺ v_free,n
    W, v_free, f, stats = sole(0.0, name)
    n = np.arange(0, 12, 3)
    assert stats.converged and stats.iterations <= 12
    np.testing.assert_allclose(f[n], -np.linalg.pinv(W[np.ix_(n, n)], rcond=1e-12) @ v_free[n], rtol=1e-9)
    assert not f[1::3].any() and not f[2::3].any()


@pytest.mark.parametrize("name", GS_SOLVERS)
def test_table_with_duplicated_and_extra_legs(name):
    # each leg twice (identical rows of W) plus mid-edge points: 12 contacts on one rigid body
    pts = box_corners(0.4, 0.3, 0.35, extra=[[0.0, 0.3, -0.35], [0.0, -0.3, -0.35], [0.4, 0.0, -0.35],
                                             [-0.4, 0.0, -0.35]])
    pts = np.vstack([pts, pts[:4]])
    W, v_free = rigid_body_problem(1.0, TABLE_INERTIA, pts, [[0, 0, 1]] * len(pts))
    f, stats = solve(name, W, v_free, 0.6, TIGHT)
    assert f[0::3].sum() == pytest.approx(G, abs=1e-6)
    np.testing.assert_allclose(W @ f + v_free, 0.0, atol=1e-9)
    assert stats.cone_violation == 0.0


@pytest.mark.parametrize("facets", [4, 8, 16])
@pytest.mark.parametrize("v0", [np.zeros(6), np.array([0.3, -0.1, 0.0, 0.0, 0.0, 0.5])])
def test_faceted_lcp_on_hyperstatic_tables(facets, v0):
    # the rank-deficient Delassus matrix of 8 legs makes many pivots degenerate; at rest or sliding and
    # spinning, the normal impulse must still balance gravity with v_n = 0 (m = 1 kg)
    pts = box_corners(0.4, 0.3, 0.35, extra=[[0.0, 0.3, -0.35], [0.0, -0.3, -0.35], [0.4, 0.0, -0.35],
                                             [-0.4, 0.0, -0.35]])
    W, v_free = rigid_body_problem(1.0, TABLE_INERTIA, pts, [[0, 0, 1]] * 8, v0=v0)
    for mu in (0.2, 0.8):
        f, stats = solve("lemke", W, v_free, mu, SolverSettings(facets=facets))
        assert stats.converged and stats.stopped_by == "solution"
        assert f[0::3].sum() == pytest.approx(G, abs=1e-6)
        np.testing.assert_allclose((W @ f + v_free)[0::3], 0.0, atol=1e-9)
        assert np.all(np.linalg.norm(f.reshape(-1, 3)[:, 1:], axis=1) <= mu * f[0::3] * (1 + 1e-9))


# ------------------------------------------------------------------------------ solvers agree without friction

@pytest.mark.parametrize("trial", range(5))
def test_frictionless_solvers_agree(trial):
    W, v_free = random_problem(6, 30, scale_v=0.01)
    results = all_solvers(W, v_free, 0.0)
    f_ref = results["lemke"][0]
    for name, (f, stats) in results.items():
        np.testing.assert_allclose(f, f_ref, atol=1e-6 * np.abs(f_ref).max())
        assert stats.converged, name
        assert_coulomb(W, v_free, f, 0.0)


# ---------------------------------------------------------------------- random frictional problems, exact cone

@pytest.mark.parametrize("trial", range(6))
def test_random_frictional_problems_satisfy_coulomb(trial):
    m = int(RNG.integers(2, 9))
    W, v_free = random_problem(m, 3 * m + 6, scale_v=0.01)
    mu = RNG.uniform(0.1, 0.6, size=m)
    forces = {}
    for name in GS_SOLVERS:
        f, stats = solve(name, W, v_free, mu, TIGHT)
        assert stats.converged
        assert_coulomb(W, v_free, f, mu)
        assert stats.residual == pytest.approx(numpy_residual(W, v_free, f, mu), rel=1e-6, abs=1e-12)
        assert stats.residual <= 1e-8 * np.abs(f).max()
        forces[name] = f
    for name in GS_SOLVERS[1:]:
        np.testing.assert_allclose(forces[name], forces["gauss-seidel-newton"],
                                   atol=1e-6 * np.abs(forces["gauss-seidel-newton"]).max())


def test_warm_start_from_the_solution_converges_in_one_sweep():
    W, v_free = random_problem(5, 21, scale_v=0.01)
    f, _ = gauss_seidel(W, v_free, 0.4, tol=1e-13, max_iter=5000)
    f2, stats = gauss_seidel(W, v_free, 0.4, tol=1e-9, max_iter=5000, f0=f)
    assert stats.iterations == 1 and stats.converged
    np.testing.assert_allclose(f2, f, atol=1e-9 * np.abs(f).max())


def test_faceted_lcp_approaches_the_exact_cone():
    # point mass sliding fast at 0.3 rad: with the inscribed k-gon, friction is μ f_n d_j at the vertex most
    # opposed to the slip (d_j = (cos 2πj/k, sin 2πj/k)); the exact cone gives −μ f_n v̂_t
    mass, mu = 1.0, 0.5
    W = DT / mass * np.eye(3)
    v_free = np.array([-DT * G, 0.3 * np.cos(0.3), 0.3 * np.sin(0.3)])
    fn = mass * G
    f_exact, _ = solve("gauss-seidel-newton", W, v_free, mu, TIGHT)
    np.testing.assert_allclose(f_exact, [fn, -mu * fn * np.cos(0.3), -mu * fn * np.sin(0.3)], rtol=1e-12)
    errors = []
    for k in (4, 8, 16, 32, 64):
        f, stats = solve("lemke", W, v_free, mu, SolverSettings(facets=k))
        angles = 2.0 * np.pi * np.arange(k) / k
        j = np.argmin(np.cos(angles) * v_free[1] + np.sin(angles) * v_free[2])
        np.testing.assert_allclose(f, [fn, mu * fn * np.cos(angles[j]), mu * fn * np.sin(angles[j])],
                                   rtol=1e-12, atol=1e-12)
        assert stats.converged and stats.cone_violation <= 1e-12 * fn
        errors.append(np.linalg.norm(f - f_exact))
        assert errors[-1] <= 2.0 * mu * fn * np.sin(np.pi / (2 * k))   # half a polygon side at most
    assert all(e1 >= e2 - 1e-12 for e1, e2 in zip(errors, errors[1:])) and errors[-1] < 0.02 * errors[0]


# --------------------------------------------------------------------------------- degenerate contact sets

@pytest.mark.parametrize("name", GS_SOLVERS)
def test_static_pair_with_zero_rows_returns_zero_force_and_reports_it(name):
    # contact 1 joins two static bodies: zero rows and columns in W, yet pushed together (v_n^free < 0)
    W1, v1 = incline(0.2)
    W = np.zeros((6, 6))
    W[:3, :3] = W1
    v_free = np.r_[v1, -0.01, 0.002, 0.0]
    f, stats = solve(name, W, v_free, 0.5, TIGHT)
    np.testing.assert_array_equal(f[3:], 0.0)
    np.testing.assert_allclose(f[:3], solve(name, W1, v1, 0.5, TIGHT)[0], rtol=1e-12)
    assert np.isfinite(stats.residual) and stats.residual > 0.0      # the static pair cannot be resolved
    # the documented residual, with ρ = 1/max diag W for the row that cannot move
    rho = 1.0 / W1[0, 0]
    assert stats.residual == pytest.approx(np.linalg.norm(project_coulomb(rho * np.r_[0.01, -0.002, 0.0]
                                                                          - rho * np.r_[0.5 * 0.002, 0, 0],
                                                                          0.5)), rel=1e-12)


def test_empty_problem():
    for name in GS_SOLVERS + ("lemke",):
        f, stats = solve(name, np.zeros((0, 0)), np.zeros(0), 0.5)
        assert f.shape == (0,) and stats.residual == 0.0 and stats.converged


def test_everything_static_gives_zero_force():
    for name in GS_SOLVERS + ("lemke",):
        f, stats = solve(name, np.zeros((6, 6)), np.r_[-0.01, 0.0, 0.0, 0.02, 0.0, 0.0], 0.5, TIGHT)
        assert np.all(f == 0.0) and np.isfinite(stats.residual) and stats.iterations <= TIGHT.max_iterations


@pytest.mark.parametrize("name", GS_SOLVERS)
def test_opposite_normals_pinching_a_point_mass(name):
    # floor (normal +z) and ceiling (normal −z) at the same point: the squeeze is not unique, the sum is
    W = DT * np.vstack([contact_frame([0, 0, 1]), contact_frame([0, 0, -1])]) @ np.vstack(
        [contact_frame([0, 0, 1]), contact_frame([0, 0, -1])]).T
    v_free = np.vstack([contact_frame([0, 0, 1]), contact_frame([0, 0, -1])]) @ np.array([0.01, 0.0, -DT * G])
    f, stats = solve(name, W, v_free, 0.3, SolverSettings(tolerance=1e-12, max_iterations=2000))
    assert np.all(np.isfinite(f)) and stats.cone_violation == 0.0
    assert f[0] - f[3] == pytest.approx(G, rel=1e-9)                 # net vertical force = m g (m = 1)
    assert_coulomb(W, v_free, f, 0.3, rtol=1e-6)


@pytest.mark.parametrize("name", GS_SOLVERS)
def test_singular_contact_block_on_a_two_dof_slider(name):
    # a 2 kg body that only translates in x and z: W_ii has a zero t2 row (singular, no stick solve)
    mass, mu = 2.0, 0.25
    J = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])             # rows n = z, t1 = x, t2 = y; dofs (x, z)
    W = DT / mass * J @ J.T
    v_free = J @ np.array([0.4, -DT * G])
    f, stats = solve(name, W, v_free, mu, TIGHT)
    np.testing.assert_allclose(f, [mass * G, -mu * mass * G, 0.0], rtol=1e-12)
    assert stats.converged


# ------------------------------------------------------------------------------ bilateral blocks, compliance

def test_bilateral_block_with_a_frictionless_floor():
    # point mass on a frictionless floor, held in y by a 1-row bilateral constraint: f_b = −(m/δt) v_y^free
    mass = 3.0
    J = np.vstack([contact_frame([0, 0, 1]), [[0.0, 1.0, 0.0]]])
    W, v_free = DT / mass * J @ J.T, J @ np.array([0.2, -0.1, -DT * G])
    blocks = ConstraintBlocks.contacts([0.0], bilateral_sizes=(1,))
    for name in GS_SOLVERS:
        f, stats = solve(name, W, v_free, blocks, TIGHT)
        assert f[3] == pytest.approx(mass * 0.1 / DT, rel=1e-12)
        assert f[0] == pytest.approx(mass * G, rel=1e-12)
        assert (W @ f + v_free)[3] == pytest.approx(0.0, abs=1e-15) and stats.converged


def test_bilateral_hinge_block_among_contacts():
    W, v_free = random_problem(5, 24, scale_v=0.01)                 # 15 rows: 3 contacts + a 5-row closure + ...
    W, v_free = W[:14, :14], v_free[:14]                            # 3 contacts (9 rows) + a 5-row closure
    blocks = ConstraintBlocks.contacts([0.3, 0.5, 0.2], bilateral_sizes=(5,))
    for name in ("gauss-seidel-newton", "nonsmooth-newton"):
        f, stats = solve(name, W, v_free, blocks, TIGHT)
        v = W @ f + v_free
        np.testing.assert_allclose(v[9:], 0.0, atol=1e-10 * np.abs(v_free).max())
        assert_coulomb(W[:9, :9], v_free[:9] + W[:9, 9:] @ f[9:], f[:9], [0.3, 0.5, 0.2])
    with pytest.raises(ValueError, match="bilateral"):
        solve("lemke", W, v_free, blocks)


def test_bilateral_block_between_contacts_in_any_order():
    # the same frictionless-floor problem with the bilateral row first: same forces, permuted
    mass = 3.0
    J = np.vstack([[[0.0, 1.0, 0.0]], contact_frame([0, 0, 1])])
    W, v_free = DT / mass * J @ J.T, J @ np.array([0.2, -0.1, -DT * G])
    blocks = ConstraintBlocks.from_blocks(rows=[1, 3], bilateral=[True, False], mu=[0.7, 0.0])
    assert blocks.block_mu.tolist() == [0.0, 0.0]
    for name in ("gauss-seidel-newton", "nonsmooth-newton"):
        f, stats = solve(name, W, v_free, blocks, TIGHT)
        np.testing.assert_allclose(f, [mass * 0.1 / DT, mass * G, 0.0, 0.0], rtol=1e-12, atol=1e-9)


def test_compliance_block_adds_to_the_normal_row():
    # compliant ground under a point mass: W_nn = δt/m + c → f_n = −v_n^free / (δt/m + c)
    mass, c = 1.0, 2e-3
    W, v_free = incline(0.0, mass)
    f, _ = solve("gauss-seidel-newton", W, v_free, 0.5, TIGHT, compliance=[([0], [[c]])])
    assert f[0] == pytest.approx(DT * G / (DT / mass + c), rel=1e-12)
    np.testing.assert_array_equal(add_compliance(np.zeros((3, 3)), [([1, 2], np.eye(2))]), np.diag([0.0, 1, 1]))
    with pytest.raises(ValueError, match="compliance block"):
        add_compliance(W, [([0, 5], np.eye(2))])


# ------------------------------------------------------------------------------ budget, registry, bad input

def test_time_budget_returns_the_best_iterate_in_time():
    W, v_free = random_problem(150, 460, scale_v=0.01)
    one, one_stats = gauss_seidel(W, v_free, 0.5, tol=0.0, max_iter=1)
    budget = 0.03
    f, stats = gauss_seidel(W, v_free, 0.5, tol=0.0, max_iter=10 ** 9, time_budget=budget)
    assert stats.stopped_by == "time_budget" and not stats.converged
    assert stats.time <= budget + 2 * one_stats.time + 0.25          # a sweep late at most (+ slack for load)
    assert stats.iterations > 1 or one_stats.time > budget / 5       # (one sweep may exceed it without JIT)
    assert stats.residual == pytest.approx(numpy_residual(W, v_free, f, 0.5), rel=1e-9)
    assert stats.residual <= one_stats.residual
    assert stats.cone_violation <= 1e-12 * np.abs(f).max()


def test_iteration_cap_is_reported():
    W, v_free = random_problem(20, 70, scale_v=0.01)
    _, stats = gauss_seidel(W, v_free, 0.8, tol=0.0, max_iter=3)
    assert (stats.iterations, stats.stopped_by, stats.converged) == (3, "max_iter", False)


def test_registry_accepts_the_thesis_names():
    assert [solver_name(n) for n in ("AMELIFGSNEWTON", "amelifgs", "AMELIFLCP", "Gauss-Seidel")] == \
        ["gauss-seidel-newton", "gauss-seidel", "lemke", "gauss-seidel"]
    with pytest.raises(ValueError, match="did you mean 'gauss-seidel'"):
        solver_name("gauss-siedel")
    assert solve("AMELIFGS", *incline(0.1), 0.5)[1].solver == "gauss-seidel"


def test_bad_input_is_rejected():
    W, v_free = incline(0.1)
    with pytest.raises(ValueError, match="non-finite"):
        gauss_seidel(W, np.r_[np.nan, 0.0, 0.0], 0.5)
    with pytest.raises(ValueError, match="tol"):
        gauss_seidel(W, v_free, 0.5, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        gauss_seidel(W, v_free, 0.5, max_iter=0)
    with pytest.raises(ValueError, match="time_budget"):
        gauss_seidel(W, v_free, 0.5, time_budget=0.0)
    with pytest.raises(ValueError, match="f0"):
        gauss_seidel(W, v_free, 0.5, f0=np.zeros(4))
    with pytest.raises(ValueError, match="non-negative"):
        gauss_seidel(W, v_free, -0.5)


def test_kernels_give_the_same_answer_without_jit():
    W, v_free = random_problem(4, 16, scale_v=0.01)
    script = (
        "import json, sys, numpy as np\n"
        "from engine.contact import solve, SolverStats\n"
        "from engine.model.universe import SolverSettings\n"
        "W, v = (np.array(a) for a in json.load(sys.stdin))\n"
        "s = SolverSettings(tolerance=1e-13, max_iterations=5000)\n"
        "print(json.dumps({n: solve(n, W, v, 0.4, s)[0].tolist() for n in\n"
        "                  ('gauss-seidel-newton', 'gauss-seidel', 'lemke', 'nonsmooth-newton')}))\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", script], input=json.dumps([W.tolist(), v_free.tolist()]),
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    for name, f in json.loads(out.stdout).items():
        np.testing.assert_allclose(f, solve(name, W, v_free, 0.4, SolverSettings(tolerance=1e-13,
                                                                                 max_iterations=5000))[0],
                                   rtol=1e-12, atol=1e-12)


def test_sweeps_allocate_nothing():
    # NRT counts one allocation per array argument per call; 1 sweep and 3 sweeps must count the same (the
    # active-set step, tried from the 4th sweep on, allocates its small dense eigen-solve)
    script = (
        "import numpy as np\n"
        "from numba.core.runtime import rtsys\n"
        "from engine.contact import _kernels as K\n"
        "from engine.contact._linalg_kernels import no_keep\n"
        "from engine.contact.cone import ConstraintBlocks\n"
        "from engine.contact.gauss_seidel import prepare\n"
        "rng = np.random.default_rng(0)\n"
        "J = rng.normal(size=(12, 20)); W = 1e-3 * J @ J.T; v = rng.normal(size=12) - 0.5\n"
        "b = ConstraintBlocks.coerce(0.4, 12)\n"
        "counts = []\n"
        "for newton in (True, False):\n"
        "    for sweeps in (1, 3):\n"
        "        f = np.zeros(12); vv = v.copy(); out = np.array([np.inf, 0.0, 0.0, 0.0])\n"
        "        args = (W, b.block_start, b.block_kind, b.block_mu, b.inv_start, *prepare(W, b), newton, sweeps,\n"
        "                0.0, f, vv, f.copy(), np.zeros(4), np.zeros(4), np.zeros(12), out, no_keep())\n"
        "        before = rtsys.get_allocation_stats().alloc\n"
        "        K.gauss_seidel_sweeps(*args)\n"
        "        counts.append(rtsys.get_allocation_stats().alloc - before)\n"
        "print(counts)\n")
    env = dict(os.environ, NUMBA_NRT_STATS="1", NUMBA_DISABLE_JIT="0", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                         check=True)
    counts = json.loads(out.stdout)
    assert counts[0] == counts[1] and counts[2] == counts[3]


def test_a_kept_factor_solves_the_next_step_to_the_direct_accuracy_without_refactoring():
    """``kept_solve``: the first solve of a definite 120-row W_SS factors it (the factor goes to the new slot);
    the next, on the same rows with W moved by 1e-4 relative (a configuration one step later), is solved by CG
    preconditioned with the kept factor to 1e-12 of the direct solution, and factors nothing; other rows, or a
    W moved by 30 %, are factored anew."""
    rng = np.random.default_rng(3)
    m = 120
    assert m >= REUSE_ROWS
    J = rng.normal(size=(m, m + 20))
    W0 = J @ J.T / m + np.eye(m)
    rows = np.arange(0, 2 * m, 2)
    L, meta, L_new, meta_new = (np.zeros(0), np.zeros(1, np.int64), np.empty(m * m), np.zeros(m + 1, np.int64))
    b = rng.normal(size=m)
    x = kept_solve(W0.copy(), b, rows, (L, meta, L_new, meta_new))
    np.testing.assert_allclose(x, np.linalg.solve(W0, b), rtol=1e-12, atol=1e-12)
    assert meta_new[0] == m and np.array_equal(meta_new[1:], rows)
    keep = (L_new.copy(), meta_new.copy(), np.empty(m * m), np.zeros(m + 1, np.int64))
    E = rng.normal(size=(m, m))
    W1 = W0 + 1e-4 * (E + E.T) / np.sqrt(m)
    x = kept_solve(W1.copy(), b, rows, keep)
    assert np.linalg.norm(x - np.linalg.solve(W1, b)) <= 1e-12 * np.linalg.norm(x) * np.linalg.cond(W1)
    assert keep[3][0] == 0                                                  # reused: nothing factored
    kept_solve(W1.copy(), b, rows + 1, keep)
    assert keep[3][0] == m                                                  # other rows: factored
    fresh = (keep[0], keep[1], np.empty(m * m), np.zeros(m + 1, np.int64))
    x = kept_solve(W0 + 0.3 * np.diag(rng.random(m)) * m, b, rows, fresh)
    assert fresh[3][0] == m                                                 # CG did not get there: factored
    assert kept_solve(W0.copy(), b, rows, no_keep()).shape == (m,)          # no room: the direct path


def test_a_remembered_factor_solves_the_same_rows_bit_for_bit_and_other_rows_afresh():
    """``memo_solve``, the Newton steps' solves of one problem: on a hyperstatic set (24 rows of rank 12, two feet
    on four points each) and on a definite one, each solve equals ``least_norm_solve`` on a copy, bit for bit
    (the direct solve it replaces), and the least-norm solution (numpy's pinv, to the bound of the squared
    conditioning on the range of A); the factor is computed once per set of rows (its rows in the memo) and
    reused while they stay — a solve on other rows factors them, a solve back on the first rows again; the
    definiteness ``memo_definite`` reports is ``definite_cholesky``'s."""
    rng = np.random.default_rng(5)
    n = 30
    J = rng.normal(size=(n, 12))
    W_semi = J @ J.T / n
    W_def = W_semi + np.eye(n)
    for W, definite in ((W_semi, False), (W_def, True)):
        memo = no_memo(n)
        sets = (np.arange(24), np.arange(2, 26), np.arange(24))
        for k, rows in enumerate(sets):
            A = W[np.ix_(rows, rows)]
            before = A.copy()
            for _ in range(2):                                              # factored, then remembered
                b = rng.normal(size=24)
                x = memo_solve(A, b, rows, no_keep(), memo)
                assert np.array_equal(A, before)
                assert np.array_equal(x, least_norm_solve(A.copy(), b))
                assert memo[0][0] == 24 and np.array_equal(memo[0][2:26], rows)
                assert (memo[0][1] == -1) == definite and (definite or memo[0][1] == 12)
                reference = np.linalg.pinv(A, rcond=1e-10) @ b
                eig = np.linalg.eigvalsh(A)
                cond = eig[-1] / eig[eig > 1e-10 * eig[-1]].min()
                assert np.linalg.norm(x - reference) <= 1e-13 * cond ** 2 * np.linalg.norm(reference)
            assert memo_definite(A, rows, memo) == definite
        assert memo_definite(W[:6, :6], np.arange(6), memo)                 # 6 rows of rank ≥ 6: definite
        assert memo[0][0] == 6


def test_kept_solve_leaves_its_matrix_unchanged_on_every_path():
    """The active-set step hands ``kept_solve`` W itself when every row sticks (no copy): a definite W_SS
    (factored, then reused by CG) and a semidefinite one (the pivoted path of a hyperstatic rigid set, on 60 rows
    and on 12) come back unchanged bit for bit, with the solution of least norm (numpy's pinv, to the bound its
    conditioning allows)."""
    rng = np.random.default_rng(11)
    for m, rank in ((60, 60), (60, 40), (12, 6)):
        J = rng.normal(size=(m, rank))
        A = J @ J.T / m + (np.eye(m) if rank == m else 0.0)
        A = 0.5 * (A + A.T)
        b = A @ rng.normal(size=m)                                          # consistent for the singular ones
        rows = np.arange(m)
        keep = (np.zeros(0), np.zeros(1, np.int64), np.empty(m * m), np.zeros(m + 1, np.int64))
        for _ in range(2):                                                  # factor, then reuse (definite)
            before = A.copy()
            x = kept_solve(A, b, rows, keep)
            assert np.array_equal(A, before)
            reference = np.linalg.pinv(A, rcond=1e-10) @ b
            eig = np.linalg.eigvalsh(A)
            cond = eig[-1] / eig[eig > 1e-10 * eig[-1]].min()                # on the range of A
            # CG stops at ‖A x − b‖ ≤ 1e-12 ‖b‖ (the direct solves are backward stable to less): forward error
            # ≤ cond × that; the pivoted Cholesky's least-norm solution through BᵀB squares the conditioning
            bound = 1e-12 * (cond if rank == m else cond ** 2)
            assert np.linalg.norm(x - reference) <= bound * np.linalg.norm(reference)
            keep = (keep[2].copy(), keep[3].copy(), np.empty(m * m), np.zeros(m + 1, np.int64))
