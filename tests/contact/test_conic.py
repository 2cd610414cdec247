"""The external-solver interface (engine/contact/conic.py): the problem file, its export from a run, and the
Clarabel solver of the conic relaxation, checked against Lemke (frictionless: the relaxation is then exact), the
exact problem where every contact sticks, and the relaxation's own optimality conditions computed here."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.contact import ConstraintBlocks, contact_residual, solve
from engine.contact.conic import ClarabelSolver, load_problem, save_problem
from engine.model.universe import SolverSettings

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
CLARABEL = ClarabelSolver(SolverSettings())


def test_frictionless_the_relaxation_is_the_lcp_and_clarabel_agrees_with_lemke():
    """μ = 0 on the stack of ten boxes (40 contacts, W of rank 60): the conic program is the frictionless LCP;
    Clarabel's velocities v = W f + u and total force agree with Lemke's to 1e-6 (f itself is not unique)."""
    W, u, blocks, _ = load_problem(DATA / "stack10.npz")
    blocks = ConstraintBlocks(blocks.block_start, blocks.block_kind, np.zeros_like(blocks.block_mu))
    f_lemke, stats = solve("lemke", W, u, blocks)
    f, own = CLARABEL.solve(W, u, blocks, None)
    assert own.converged and stats.residual <= 1e-6 * np.linalg.norm(f_lemke)   # Lemke: "inaccurate", degenerate
    np.testing.assert_allclose(W @ f + u, W @ f_lemke + u, atol=1e-6 * np.abs(W @ f_lemke).max())
    assert f[0::3].sum() == pytest.approx(f_lemke[0::3].sum(), rel=1e-6)
    assert contact_residual(W, u, f, blocks)[0] <= 1e-6 * np.linalg.norm(f)


@pytest.mark.parametrize("name", ["sole4", "stack10"])
def test_where_every_contact_sticks_the_relaxation_solves_the_exact_problem(name):
    W, u, blocks, _ = load_problem(DATA / f"{name}.npz")
    f, own = CLARABEL.solve(W, u, blocks, None)
    residual, violation = contact_residual(W, u, f, blocks)
    assert own.converged and residual <= 1e-6 * np.linalg.norm(f) and violation <= 1e-9 * np.linalg.norm(f)


def test_on_talos_lying_clarabel_meets_the_relaxations_optimality_conditions():
    """65 contacts, some sliding: f ∈ K_μ, v = W f + u in the dual cone (μ‖v_t‖ ≤ v_n... scaled: ‖v_t‖ ≤ v_n / μ)
    and f · v = 0, to 1e-6 of the scales; the exact problem's residual is larger (the relaxation lets a sliding
    contact separate), which the engine reports."""
    W, u, blocks, _ = load_problem(DATA / "talos_lying.npz")
    f, own = CLARABEL.solve(W, u, blocks, None)
    mu = blocks.block_mu
    fc, v = f.reshape(-1, 3), (W @ f + u).reshape(-1, 3)
    fscale, vscale = np.abs(f).max(), np.abs(v).max()
    assert own.converged
    assert np.all(np.linalg.norm(fc[:, 1:], axis=1) - mu * fc[:, 0] <= 1e-6 * fscale)
    assert np.all(mu * np.linalg.norm(v[:, 1:], axis=1) - v[:, 0] <= 1e-6 * vscale)
    assert abs(f @ (W @ f + u)) <= 1e-6 * fscale * vscale * len(mu)
    assert contact_residual(W, u, f, blocks)[0] > 1e-3 * fscale


@pytest.mark.parametrize("seed", range(6))
def test_on_random_frictional_problems_clarabel_meets_the_cone_and_the_complementarity(seed):
    """Random W = J Jᵀ (positive definite: a rank-deficient one with u off its range can leave the relaxation
    unbounded, which a simulated u never is) of 8–20 contacts, random μ in [0, 1.2] (some frictionless), free
    velocities pushing in: f ∈ K_μ, v = W f + u ∈ K_μ*, f · v = 0, each to 1e-6 of its scale."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(8, 21))
    J = rng.normal(size=(3 * k, int(rng.integers(3 * k, 4 * k))))
    W, u = 1e-3 * J @ J.T, rng.normal(size=3 * k) - np.tile([1.0, 0.0, 0.0], k)
    mu = np.where(rng.random(k) < 0.2, 0.0, rng.uniform(0.1, 1.2, k))
    f, own = CLARABEL.solve(W, u, ConstraintBlocks.contacts(mu), None)
    fc, v = f.reshape(-1, 3), (W @ f + u).reshape(-1, 3)
    fscale, vscale = max(np.abs(f).max(), 1.0), np.abs(v).max()
    assert own.converged
    assert np.all(np.linalg.norm(fc[:, 1:], axis=1) - mu * fc[:, 0] <= 1e-6 * fscale) and np.all(fc[:, 0] >= -1e-9)
    sliding = mu > 0
    assert np.all(mu[sliding] * np.linalg.norm(v[sliding, 1:], axis=1) - v[sliding, 0] <= 1e-6 * vscale)
    assert np.all(v[~sliding, 0] >= -1e-6 * vscale) and np.all(np.abs(fc[~sliding, 1:]) <= 1e-9 * fscale)
    assert abs(f @ (W @ f + u)) <= 1e-6 * fscale * vscale * k


def test_a_run_exports_its_problems_and_a_solver_reproduces_its_forces_from_the_file(tmp_path):
    """``articula run --export-problems``: one file per group and step; solving a file again with the scene's
    solver from its warm start gives the forces the run applied (the same solver on the same problem)."""
    out = subprocess.run([sys.executable, str(ROOT / "main.py"), "-q", "run", str(ROOT / "scenes" / "default.xml"),
                          "--duration", "0.02", "--export-problems", str(tmp_path / "problems")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr
    files = sorted((tmp_path / "problems").glob("step*_group*.npz"))
    assert f"contact problems: {len(files)} written" in out.stdout and len(files) == 40   # Talos and the box
    W, u, blocks, f0 = load_problem(files[-2])
    f, stats = solve("gauss-seidel-newton", W, u, blocks, SolverSettings(), f0=f0)
    assert stats.converged and contact_residual(W, u, f, blocks)[0] <= 1e-6 * np.linalg.norm(f)
    save_problem(tmp_path / "again.npz", W, u, blocks, f0)
    again = load_problem(tmp_path / "again.npz")
    assert all(np.array_equal(a, b) for a, b in zip(again[:2] + again[3:], (W, u, f0)))


def test_a_universe_can_use_clarabel_and_a_box_rests_on_its_forces(tmp_path):
    (tmp_path / "scene.xml").write_text(
        '<Universe><Settings><Solver name="clarabel"/></Settings>'
        '<Body name="box"><Box size="0.3 0.2 0.1"/><Mass>2</Mass><Translation z="0.05"/></Body>'
        '<Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>')
    sim = engine.Simulation(engine.load_universe(tmp_path / "scene.xml"))
    sim.step(200)
    assert sim.contacts.force[:, 2].sum() == pytest.approx(2 * 9.81, rel=1e-6)
    assert all(g.converged for g in sim.contact_stage.reports)


def test_a_file_that_is_not_a_problem_is_named(tmp_path):
    np.savez(tmp_path / "other.npz", W=np.eye(3))
    with pytest.raises(ValueError, match=r"other.npz: not a contact problem file, missing \['u'"):
        load_problem(tmp_path / "other.npz")
