"""One-row blocks in every solver: FRICTION (a joint's dry friction: |f| ≤ b, v = 0 inside, f = −b sign(v) at the
bound) and LIMIT (a joint limit: 0 ≤ f ⟂ v ≥ 0). Against the complementarity solved by enumeration, and, with
frictionless contacts in the same problem, against Clarabel (the convex program is then exact); the cone
helpers; Lemke's refusal."""
import itertools

import numpy as np
import pytest

from engine.contact import ConstraintBlocks, contact_residual, solve
from engine.contact.conic import ClarabelSolver
from engine.model.universe import SolverSettings

SOLVERS = ("nonsmooth-newton", "gauss-seidel-newton", "gauss-seidel")
TIGHT = SolverSettings(tolerance=1e-12, max_iterations=500)


def box_problem(seed, n):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    return A @ A.T + 0.1 * np.eye(n), rng.normal(size=n) * 3.0, rng.uniform(0.2, 2.0, n)


def enumerated(W, u, b, limits=0):
    """The unique f with, on the first len(b) rows, |f_i| ≤ b_i, v_i = 0 where |f_i| < b_i, f_i = −b_i sign(v_i)
    otherwise, and on the last ``limits`` rows 0 ≤ f_i ⟂ v_i ≥ 0 (v = W f + u): each row's cases enumerated
    (0: v_i = 0 with f_i free inside its set; ±1: f_i = ∓b_i; 2: a limit with f_i = 0)."""
    n, k = len(u), len(b)
    for case in itertools.product(*[(0, 1, -1)] * k, *[(0, 2)] * limits):
        f = np.array([-c * b[i] if i < k else 0.0 for i, c in enumerate(case)], float)
        S = [i for i in range(n) if case[i] == 0]
        if S:
            f[S] = np.linalg.solve(W[np.ix_(S, S)], -(u + W @ f)[S])
        v = W @ f + u
        inside = [(abs(f[i]) <= b[i] + 1e-12 if i < k else f[i] >= -1e-12) if case[i] == 0 else
                  (v[i] >= -1e-12 if case[i] == 2 else case[i] * v[i] >= -1e-12) for i in range(n)]
        if all(inside):
            return f
    raise AssertionError("no case holds")


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(6))
def test_every_solver_finds_the_box_complementarity_solution(solver, seed):
    W, u, b = box_problem(seed, 5)
    blocks = ConstraintBlocks.with_rows(ConstraintBlocks.contacts([]), b)
    f, stats = solve(solver, W, u, blocks, TIGHT)
    np.testing.assert_allclose(f, enumerated(W, u, b), atol=1e-9)
    assert stats.converged and stats.cone_violation <= 1e-12
    assert contact_residual(W, u, f, blocks)[0] <= 1e-9


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(6))
def test_every_solver_finds_the_complementarity_solution_of_friction_and_limit_rows(solver, seed):
    W, u, b = box_problem(50 + seed, 6)
    blocks = ConstraintBlocks.with_rows(ConstraintBlocks.contacts([]), b[:3], limits=3)
    f, stats = solve(solver, W, u, blocks, TIGHT)
    np.testing.assert_allclose(f, enumerated(W, u, b[:3], limits=3), atol=1e-9)
    assert stats.converged and stats.cone_violation <= 1e-12
    assert contact_residual(W, u, f, blocks)[0] <= 1e-9


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(4))
def test_with_frictionless_contacts_in_the_same_problem_every_solver_finds_the_exact_solution(solver, seed):
    """Three frictionless contacts (3 rows each), two friction rows and two limit rows, coupled through W. With
    μ = 0 a contact's tangential force is 0 and its normal row is Signorini's, like a limit row: the problem
    reduced to the normal, friction and limit rows is enumerated exactly. Clarabel (the convex QP, exact here)
    agrees to its interior-point accuracy, 1e-5."""
    rng = np.random.default_rng(100 + seed)
    W, u, b = box_problem(100 + seed, 13)
    u[:9:3] = rng.uniform(-2.0, -0.5, 3)                  # the contacts approach: most push
    blocks = ConstraintBlocks.with_rows(ConstraintBlocks.contacts(np.zeros(3)), b[:2], limits=2)
    rows = [9, 10, 0, 3, 6, 11, 12]                       # friction rows, then the Signorini rows
    exact = np.zeros(13)
    exact[rows] = enumerated(W[np.ix_(rows, rows)], u[rows], b[:2], limits=5)
    f, stats = solve(solver, W, u, blocks, TIGHT)
    assert stats.converged
    np.testing.assert_allclose(f, exact, atol=1e-9)
    f_ref, stats_ref = ClarabelSolver(SolverSettings(tolerance=1e-10)).solve(W, u, blocks, None)
    assert stats_ref.converged
    np.testing.assert_allclose(f_ref, exact, atol=1e-5)


def test_the_one_row_blocks_projection_and_violation():
    blocks = ConstraintBlocks.with_rows(ConstraintBlocks.contacts([0.5]), [1.0, 2.0], limits=1)
    f = np.array([1.0, 2.0, 0.0, -3.0, 1.5, -0.5])
    np.testing.assert_allclose(blocks.project(f), [(1.0 + 1.0) / 1.25, 0.5 * 1.6, 0.0, -1.0, 1.5, 0.0])
    assert blocks.violation(f) == pytest.approx(2.0)         # |−3| − 1 beats the cone's 2 − 0.5 and the limit's 0.5
    assert not blocks.contacts_only
    with pytest.raises(ValueError, match="FRICTION"):
        ConstraintBlocks(np.array([0, 2]), np.array([2]), np.array([1.0]))
    with pytest.raises(ValueError, match="unilateral contacts only"):
        solve("lemke", np.eye(6), np.zeros(6), blocks)
