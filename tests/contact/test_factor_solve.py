"""The Newton step's linear solve in body space (``_factor_kernels.factor_solve``): W_AA⁺ b through a factor
W = B Bᵀ equals the dense least-norm solve (``_linalg_kernels.least_norm_solve``) and numpy's pseudo-inverse, on the
recorded hard problems (B from numpy's eigendecomposition of W) and on a random pile of rigid bodies whose C is
singular; with slipping contacts, the body-space solve is J⁺ b: the dense QR's solution of a consistent system,
the least-squares one of an inconsistent system; the Newton solver gives the same forces and residuals with or
without the factor on the recorded problems, and the contact stage's factor of a group of touching cubes is that
of its W and moves the cubes alike."""
from pathlib import Path

import numpy as np
import pytest

from engine.contact._factor_kernels import factor_slip_solve, factor_solve
from engine.contact._linalg_kernels import least_norm_rows, least_norm_solve
from engine.contact.conic import load_problem
from engine.contact.newton import nonsmooth_newton
from engine.model.universe_xml import load_universe
from engine.simulation import Simulation

DATA = Path(__file__).resolve().parent / "data"
PROBLEMS = ("talos_lying", "talos_falling", "stack10", "sole4")
RNG = np.random.default_rng(16)


def eigen_factor(W):
    """(B_col, B_val, width) of W = B Bᵀ as one dense block: B = V √Λ on the eigenvalues above 1e-12 λmax."""
    lam, V = np.linalg.eigh(W)
    keep = lam > 1e-12 * lam.max()
    B = V[:, keep] * np.sqrt(lam[keep])
    return np.zeros((len(W), 1), np.int64), B[:, None, :].copy(), int(keep.sum())


def dense(factor):
    """B (n, width) of a factor in the layout of ``_factor_kernels``."""
    B_col, B_val, width = factor
    w = B_val.shape[2]
    B = np.zeros((len(B_col), width))
    for i, s in zip(*np.nonzero(B_col >= 0)):
        B[i, w * B_col[i, s]:w * B_col[i, s] + w] += B_val[i, s]
    return B


@pytest.mark.parametrize("name", PROBLEMS)
def test_body_space_solve_is_the_dense_least_norm_solve_on_the_recorded_problems(name):
    W, u, blocks, _ = load_problem(DATA / f"{name}.npz")
    factor = eigen_factor(W)
    f, _ = nonsmooth_newton(W, u, blocks)
    loaded = np.flatnonzero(np.repeat(f.reshape(-1, 3)[:, 0] > 0.0, 3))       # the rows Newton's last step solved
    for rows in (np.arange(len(u)), loaded):
        W_AA = W[np.ix_(rows, rows)]
        b = W_AA @ RNG.standard_normal(len(rows))                             # consistent …
        c = RNG.standard_normal(len(rows))                                    # … or not: W_AA⁺ c, least squares
        for rhs in (b, c):
            x = factor_solve(*factor, rows, rhs)
            reference = least_norm_solve(W_AA.copy(), rhs)
            np.testing.assert_allclose(x, reference, rtol=0, atol=1e-10 * np.abs(reference).max())
            oracle = np.linalg.pinv(W_AA, rcond=1e-10, hermitian=True) @ rhs
            np.testing.assert_allclose(x, oracle, rtol=0, atol=1e-9 * np.abs(oracle).max())


def test_body_space_solve_of_a_singular_C_takes_the_pivoted_path():
    # 4 free bodies, 3 of them on 4 contacts, the last on one contact: C = B_AᵀB_A (24 × 24) has rank 21
    sides = [(b, -1) for b in range(3) for _ in range(4)] + [(3, 0), (1, 2), (0, 2)]
    B_col = np.repeat(np.array(sides, np.int64), 3, axis=0)
    B_val = RNG.standard_normal((len(B_col), 2, 6)) * (B_col >= 0)[:, :, None]
    factor = (B_col, B_val, 24)
    B = dense(factor)
    W = B @ B.T
    assert np.linalg.matrix_rank(B.T @ B) == 21
    rows = np.arange(len(W))
    rhs = RNG.standard_normal(len(W))
    x = factor_solve(*factor, rows, rhs)
    np.testing.assert_allclose(x, least_norm_solve(W.copy(), rhs), rtol=0, atol=1e-10 * np.abs(x).max())
    np.testing.assert_allclose(x, np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ rhs, rtol=0,
                               atol=1e-9 * np.abs(x).max())


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
@pytest.mark.parametrize("name", PROBLEMS)
def test_nonsmooth_newton_with_a_factor_gives_the_same_forces(name, warm):
    W, u, blocks, f0 = load_problem(DATA / f"{name}.npz")
    start = f0 if warm else None
    f, stats = nonsmooth_newton(W, u, blocks, f0=start)
    g, body = nonsmooth_newton(W, u, blocks, f0=start, factor=eigen_factor(W))
    assert body.converged and body.iterations == stats.iterations
    np.testing.assert_allclose(g, f, rtol=0, atol=1e-10 * np.abs(f).max())
    assert body.residual == pytest.approx(stats.residual, rel=1e-6, abs=1e-10 * np.abs(f).max())


TOUCHING = """<Universe>
  <Body name="ground"><Plane/><Mass>0</Mass></Body>
  {cubes}
</Universe>"""
CUBE = ('<Body name="cube{i}"><Box size="0.1 0.1 0.1"/><Mass>{mass}</Mass><Translation x="{x}" y="0" z="0.05"/>'
        '</Body>')


def touching_cubes(tmp_path, k):
    path = tmp_path / "touching.xml"
    path.write_text(TOUCHING.format(cubes="".join(CUBE.format(i=i, mass=1 + 0.5 * i, x=0.1 * i) for i in range(k))))
    return Simulation(load_universe(path))


def laid_out(sim, steps):
    """After ``steps`` steps, the contact stage's layout of the contacts detected and its W: (stage, a, W, ng, the
    Delassus methods)."""
    sim.step(steps)
    stage = sim.contact_stage
    stage.world.update()
    a, ng = stage._layout(stage.world.detect(), sim.dt)
    W = np.zeros(a["w_start"][ng])
    return stage, a, W, ng, stage._delassus(a, W, ng, sim.dt)


def test_the_stage_factor_of_touching_cubes_is_that_of_their_W_and_solves_alike(tmp_path):
    """Six touching cubes of different masses, one group: rigid_delassus's B (6 · 6 columns) gives B Bᵀ = W, and a
    cold Newton solve of the group's problem moves the bodies alike with and without it: the same body impulses
    Bᵀf and contact velocities to the solve's tolerance. (Not the same forces: the set is hyperstatic, its
    internal forces are not determined, and Newton's slip steps here are nearly inconsistent systems with
    singular values of 1e-5, which amplify the rounding of either path's first steps, 1e-11, to 1e-7 of the
    force.)"""
    stage, a, W, ng, methods = laid_out(touching_cubes(tmp_path, 6), 20)
    assert ng == 1 and methods == ["rigid"]
    W_g, u, blocks, _ = stage._problem(a, W, 0)
    n = len(u)
    factor = a["B_col"][:n], a["B_val"][:n], int(a["B_width"][0])
    assert factor[2] == 36 and n > 36
    B = dense(factor)
    np.testing.assert_allclose(B @ B.T, W_g, rtol=0, atol=1e-13 * np.abs(W_g).max())
    f, stats = nonsmooth_newton(W_g, u, blocks, tol=1e-9)
    g, body = nonsmooth_newton(W_g, u, blocks, tol=1e-9, factor=factor)
    assert stats.converged and body.converged
    np.testing.assert_allclose(B.T @ g, B.T @ f, rtol=0, atol=1e-8 * np.abs(B.T @ f).max())
    np.testing.assert_allclose(W_g @ g + u, W_g @ f + u, rtol=0, atol=1e-8 * np.abs(u).max())


def test_a_bad_factor_is_refused():
    W, u, blocks, _ = load_problem(DATA / "sole4.npz")
    B_col, B_val, width = eigen_factor(W)
    with pytest.raises(ValueError, match="must be"):
        nonsmooth_newton(W, u, blocks, factor=(B_col[1:], B_val, width))
    with pytest.raises(ValueError, match="width 3"):
        nonsmooth_newton(W, u, blocks, factor=(B_col + 1, B_val, 3))
    with pytest.raises(ValueError, match="not finite"):
        nonsmooth_newton(W, u, blocks, factor=(B_col, np.full_like(B_val, np.nan), width))


def slip_system(k, slipping):
    """A Newton system J = P + Q W_AA of ``_factor_kernels.factor_slip_solve``'s form on k rigid bodies with 4
    ground contacts each plus one between each neighbour pair (W = B Bᵀ, B of 6k columns); the contacts
    ``slipping`` slip: their tangential rows have Q = μ u ρ_n e_n + ρ_t M e_t and P on their own 3 columns."""
    sides = [(b, -1) for b in range(k) for _ in range(4)] + [(b, b + 1) for b in range(k - 1)]
    B_col = np.repeat(np.array(sides, np.int64), 3, axis=0)
    B_val = RNG.standard_normal((len(B_col), 2, 6)) * (B_col >= 0)[:, :, None]
    factor = (B_col, B_val, 6 * k)
    W, m = dense(factor) @ dense(factor).T, len(B_col)
    rho = 1.0 / np.diag(W)
    row_rho, in_T = rho.copy(), np.zeros(m, bool)
    q_pos, q_coef = np.zeros((m, 3), np.int64), np.zeros((m, 3))
    P, Q = np.zeros((m, m)), np.diag(rho)
    for c in slipping:
        n = 3 * c
        in_T[n:n + 3] = True
        for a in (1, 2):
            row_rho[n + a] = 0.0
            q_pos[n + a] = (n, n + 1, n + 2)
            q_coef[n + a] = RNG.standard_normal(3) * rho[n:n + 3]
            Q[n + a] = 0.0
            Q[n + a, n:n + 3] = q_coef[n + a]
            P[n + a, n:n + 3] = RNG.standard_normal(3)
    return P + Q @ W, factor, (row_rho, in_T, q_pos, q_coef)


@pytest.mark.parametrize("slipping", [(0,), (1, 5, 12, 20)], ids=["one", "four"])
def test_body_space_slip_solve_is_the_dense_least_norm_solve_of_a_consistent_system(slipping):
    J, factor, slip_rows = slip_system(5, slipping)
    rows = np.arange(len(J))
    b = J @ RNG.standard_normal(len(J))
    x = factor_slip_solve(J, b, *factor, rows, *slip_rows)
    assert x.shape == (len(J),)
    reference = least_norm_rows(J.copy(), b)
    np.testing.assert_allclose(x, reference, rtol=0, atol=1e-10 * np.abs(reference).max())
    oracle = np.linalg.pinv(J, rcond=1e-12) @ b
    np.testing.assert_allclose(x, oracle, rtol=0, atol=1e-9 * np.abs(oracle).max())


def test_body_space_slip_solve_of_an_inconsistent_system_is_its_least_squares_solution_of_least_norm():
    # where the dense QR solves a maximal set of independent rows, the body-space solve is J⁺ b (Gauss–Newton)
    J, factor, slip_rows = slip_system(5, (1, 5))
    b = RNG.standard_normal(len(J))
    oracle = np.linalg.lstsq(J, b, rcond=1e-12)[0]                    # least squares, least norm
    assert np.linalg.norm(J @ oracle - b) > 0.1 * np.linalg.norm(b)
    x = factor_slip_solve(J, b, *factor, np.arange(len(J)), *slip_rows)
    np.testing.assert_allclose(x, oracle, rtol=0, atol=1e-9 * np.abs(oracle).max())


def test_body_space_slip_solve_declines_when_a_body_has_only_slipping_contacts():
    # body 0's four ground contacts and its contact with body 1 all slip: its columns of B_N̄ vanish, C_N is
    # singular, and the dense path takes the system
    J, factor, slip_rows = slip_system(5, (0, 1, 2, 3, 20))
    b = J @ RNG.standard_normal(len(J))
    assert factor_slip_solve(J, b, *factor, np.arange(len(J)), *slip_rows).shape == (0,)


def test_a_group_solved_alone_takes_its_own_factor(tmp_path):
    """A cube alone (factor width 6) and six touching cubes (width 36) in two groups: solving the second group on
    its own, as the retry of a failed group does (``_solve_range(a, W, 1, 2)``), gives its forces to the bit of the
    solve of both groups from the same warm start: the group's factor width is its own, not the first group's."""
    path = tmp_path / "two_groups.xml"
    cubes = CUBE.format(i=0, mass=2.0, x=-1.0) + "".join(CUBE.format(i=i, mass=1 + 0.5 * i, x=0.1 * i)
                                                          for i in range(1, 7))
    path.write_text(TOUCHING.format(cubes=cubes))
    stage, a, W, ng, methods = laid_out(Simulation(load_universe(path)), 20)
    assert ng == 2 and methods == ["rigid", "rigid"]
    widths = sorted(a["B_width"].tolist())
    assert widths == [6, 36]
    g = int(np.argmax(a["B_width"]))
    rows = slice(a["row_start"][g], a["row_start"][g + 1])
    warm = a["f"].copy()
    both = stage._solve_range(a, W, 0, 2)[g]
    f_both = a["f"][rows].copy()
    a["f"][:] = warm
    alone = stage._solve_range(a, W, g, g + 1)[0]
    np.testing.assert_array_equal(a["f"][rows], f_both)
    np.testing.assert_array_equal(alone, both)
