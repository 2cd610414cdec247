"""FRICTION blocks (a joint's dry friction: one row, |f| ≤ b, v = 0 inside, f = −b sign(v) at the bound) in every
solver: against the box complementarity solved by enumeration, and, with frictionless contacts in the same
problem, against Clarabel (the convex program is then exact); the cone helpers; Lemke's refusal."""
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


def enumerated(W, u, b):
    """The unique f with |f_i| ≤ b_i, v = W f + u, v_i = 0 where |f_i| < b_i, f_i = −b_i sign(v_i) otherwise."""
    n = len(u)
    for case in itertools.product((0, 1, -1), repeat=n):
        f = -np.array(case, float) * b
        S = [i for i in range(n) if case[i] == 0]
        if S:
            f[S] = np.linalg.solve(W[np.ix_(S, S)], -(u + W @ f)[S])
        v = W @ f + u
        if all(abs(f[i]) <= b[i] + 1e-12 if case[i] == 0 else case[i] * v[i] >= -1e-12 for i in range(n)):
            return f
    raise AssertionError("no case holds")


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(6))
def test_every_solver_finds_the_box_complementarity_solution(solver, seed):
    W, u, b = box_problem(seed, 5)
    blocks = ConstraintBlocks.with_friction(ConstraintBlocks.contacts([]), b)
    f, stats = solve(solver, W, u, blocks, TIGHT)
    np.testing.assert_allclose(f, enumerated(W, u, b), atol=1e-9)
    assert stats.converged and stats.cone_violation <= 1e-12
    assert contact_residual(W, u, f, blocks)[0] <= 1e-9


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(4))
def test_with_frictionless_contacts_in_the_same_problem_every_solver_agrees_with_clarabel(solver, seed):
    """Three frictionless contacts (3 rows each; their tangential rows carry no force) and four friction rows,
    coupled through W: the exact problem is then a convex QP, which Clarabel solves; forces agree to 1e-6."""
    rng = np.random.default_rng(100 + seed)
    W, u, b = box_problem(100 + seed, 13)
    u[:9:3] = rng.uniform(-2.0, -0.5, 3)                  # the contacts approach: most push
    blocks = ConstraintBlocks.with_friction(ConstraintBlocks.contacts(np.zeros(3)), b[:4])
    f_ref, stats_ref = ClarabelSolver(SolverSettings(tolerance=1e-10)).solve(W, u, blocks, None)
    f, stats = solve(solver, W, u, blocks, TIGHT)
    assert stats_ref.converged and stats.converged
    np.testing.assert_allclose(f, f_ref, atol=1e-6 * max(1.0, np.abs(f_ref).max()))
    assert contact_residual(W, u, f, blocks)[0] <= 1e-8 * max(1.0, np.linalg.norm(f))


def test_the_friction_rows_projection_and_violation():
    blocks = ConstraintBlocks.with_friction(ConstraintBlocks.contacts([0.5]), [1.0, 2.0])
    f = np.array([1.0, 2.0, 0.0, -3.0, 1.5])
    np.testing.assert_allclose(blocks.project(f), [(1.0 + 1.0) / 1.25, 0.5 * 1.6, 0.0, -1.0, 1.5])
    assert blocks.violation(f) == pytest.approx(2.0)         # |−3| − 1 beats the cone's 2 − 0.5
    assert not blocks.contacts_only
    with pytest.raises(ValueError, match="FRICTION"):
        ConstraintBlocks(np.array([0, 2]), np.array([2]), np.array([1.0]))
    with pytest.raises(ValueError, match="unilateral contacts only"):
        solve("lemke", np.eye(5), np.zeros(5), blocks)
