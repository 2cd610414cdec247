"""The joint-space factor of a multibody's Delassus operator, Λ = B Bᵀ (``delassus.delassus_factor``,
``_delassus_kernels.tree_factor``: B = J Aᵀ D^-1/2 from the ABA's inward pass), and the Newton solver's linear solves
through it (``_factor_kernels``).

References independent of the code under test: Pinocchio's joint Jacobians and CRBA mass matrix (Λ = J M⁻¹ Jᵀ by a
linear solve) on Talos (example-robot-data) and random trees; the engine's CRBA-based "dense" Λ for trees with geared
rotors (which Pinocchio does not carry; that method is itself checked against Pinocchio in test_delassus.py). B Bᵀ
is a sum of products of the same magnitudes as J M⁻¹ Jᵀ: 1e-12 of the largest entry allows ≈ 10⁴ roundings. The
solves are compared with the dense path (``least_norm_solve`` on W_AA) and numpy's pseudo-inverse, and the Newton
solver with and without the factor on a recorded problem of Talos lying (``talos_lying_factor.npz``, recorded with
its factor by ``data/record_hard_problems.py``) and on the contact stage's own group of a fallen Talos."""
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from engine.contact._factor_kernels import factor_solve
from engine.contact._linalg_kernels import least_norm_solve
from engine.contact.conic import load_problem
from engine.contact._group_delassus_kernels import TREE_FACTOR_ROWS
from engine.contact.delassus import delassus, delassus_factor
from engine.contact.newton import nonsmooth_newton
from engine.dynamics.integrators import random_configuration
from engine.model.universe_xml import load_universe
from engine.simulation import Simulation
from tests.contact.test_delassus import (foot_blocks, load, pin_reference, point_map, random_blocks,
                                         random_frame)
from tests.contact.test_factor_solve import dense
from tests.dynamics.random_trees import random_model, to_pinocchio
from tests.scenes import falling

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def talos():
    return load("talos_data/robots/talos_reduced.urdf", True)


def path_dofs(model, bodies):
    """The dofs of the joints from ``bodies`` to the base."""
    dofs = set()
    for b in bodies:
        while b >= 0:
            dofs.update(range(model.joint_idx_v[b], model.joint_idx_v[b] + model.joint_nv[b]))
            b = int(model.body_parent[b])
    return dofs


def assert_factor(model, q, blocks, reference):
    """B Bᵀ = reference to 1e-12 of its largest entry; each row's columns are the dofs on its bodies' paths, the
    columns of B those on all the blocks' paths, in dof order."""
    B_col, B_val, width = delassus_factor(model, model.create_data(), q, blocks)
    B = dense((B_col, B_val, width))
    np.testing.assert_allclose(B @ B.T, reference, rtol=0, atol=1e-12 * np.abs(reference).max())
    dofs = sorted(path_dofs(model, [b for block in blocks for b, _ in ([block] if isinstance(block, tuple)
                                                                         else block)]))
    assert width == len(dofs)
    row = 0
    for block in blocks:
        pairs = [block] if isinstance(block, tuple) else block
        on_path = {dofs.index(k) for k in path_dofs(model, [b for b, _ in pairs])}
        for _ in range(len(pairs[0][1])):
            assert set(B_col[row][B_col[row] >= 0]) == on_path
            row += 1


def test_talos_factor_of_feet_hands_self_contact_closure_and_joint_rows(talos):
    """Two feet on four points each, a hand, the hand touching the thigh (a self-contact: both paths), a 5-row
    closure between the grippers and a joint row (the torque of a knee: ±S on the shank and the thigh, as
    ``closures.Closures``' limit and friction rows)."""
    model, pm = talos
    rng = np.random.default_rng(18)
    q = random_configuration(model, rng)
    feet = [model.body_index(f"leg_{side}_6_link") for side in ("left", "right")]
    hand, thigh = model.body_index("arm_left_7_link"), model.body_index("leg_left_3_link")
    knee = model.body_index("leg_right_4_link")
    grippers = [model.body_index(f"gripper_{side}_motor_double_link") for side in ("left", "right")]
    pd = pin.Data(pm)
    pin.computeJointJacobians(pm, pd, q)
    k = model.joint_idx_v[knee]                         # the knee's axis, base axes
    axis = np.r_[np.zeros(3), pin.getJointJacobian(pm, pd, knee + 1, pin.LOCAL_WORLD_ALIGNED)[3:, k]][None]
    C, hinge = random_frame(rng), rng.normal(size=(5, 6))
    blocks = foot_blocks(model, rng, feet[0]) + foot_blocks(model, rng, feet[1])
    blocks += [(hand, point_map(random_frame(rng), rng.normal(size=3) * 0.1)),
               [(hand, point_map(C, rng.normal(size=3) * 0.1)), (thigh, -point_map(C, rng.normal(size=3) * 0.1))],
               [(grippers[0], hinge), (grippers[1], -hinge)],
               [(knee, axis), (int(model.body_parent[knee]), -axis)]]
    reference = pin_reference(pm, q, blocks)
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T                    # the joint row of J is e_k: its Λ entry is (M⁻¹)_kk
    assert reference[-1, -1] == pytest.approx(np.linalg.inv(M)[k, k], rel=1e-10)
    assert_factor(model, q, blocks, reference)


@pytest.mark.parametrize("seed", range(8))
def test_random_trees_factor(seed):
    """Random topologies (revolute, prismatic, spherical, planar joints; free-flyer root or fixed base), one- and
    two-body blocks of 1 to 6 rows: against Pinocchio without rotors, against the CRBA's Λ with geared rotors."""
    rng = np.random.default_rng(200 + seed)
    rotors = seed >= 4
    model = random_model(rng, nbodies=int(rng.integers(2, 12)), floating=bool(seed % 2), rotors=rotors)
    q = random_configuration(model, rng)
    blocks = random_blocks(model, rng, int(rng.integers(1, 6)))
    reference = delassus(model, model.create_data(), q, blocks, "dense") if rotors else \
        pin_reference(to_pinocchio(model), q, blocks)
    assert_factor(model, q, blocks, reference)


def lying_problem():
    """The recorded problem of Talos lying with its joint limits as rows and its factor (data/record_hard_problems.py:
    208 rows, W of rank 37 = the factor's width)."""
    W, u, blocks, f0 = load_problem(DATA / "talos_lying_factor.npz")
    with np.load(DATA / "talos_lying_factor.npz") as data:
        factor = data["B_col"], data["B_val"], int(data["width"])
    return W, u, blocks, f0, factor


def test_joint_space_solves_on_talos_lying_are_the_dense_least_norm_solves():
    """W_AA⁺ b through the factor (``factor_solve``, the Newton step's sticking solve where the m active rows
    outnumber the factor's columns) against the dense least-norm solve and numpy's pseudo-inverse: every row, the
    contacts' rows alone (no limit row) and random halves of the blocks, consistent and inconsistent right sides.
    Tolerance: x = B_A C⁻² B_Aᵀ b applies C⁻¹ = (B_Aᵀ B_A)⁻¹ twice, and C has the non-zero spectrum of W_AA, so
    rounding grows by up to κ(W_AA)² (κ over the non-zero eigenvalues; the dense solves: κ); measured ≤ 0.012 κ² ε
    over 300 draws of the blocks (κ 3e2 … 1e5)."""
    rng = np.random.default_rng(19)
    W, u, blocks, _, factor = lying_problem()
    assert factor[2] == np.linalg.matrix_rank(W) < len(u)
    block_rows = [np.arange(s, e) for s, e in zip(blocks.block_start[:-1], blocks.block_start[1:])]
    sets = [np.arange(len(u)), np.concatenate([r for r in block_rows if len(r) == 3])]
    sets += [np.concatenate([r for r, keep in zip(block_rows, rng.random(len(block_rows)) < 0.5) if keep])
             for _ in range(8)]
    for rows in sets:
        assert len(rows) > factor[2]
        W_AA = W[np.ix_(rows, rows)]
        eigenvalues = np.linalg.eigvalsh(W_AA)
        nonzero = eigenvalues[eigenvalues > 1e-12 * eigenvalues[-1]]
        rounding = (nonzero[-1] / nonzero[0]) ** 2 * np.finfo(float).eps
        for rhs in (W_AA @ rng.standard_normal(len(rows)), rng.standard_normal(len(rows))):
            x = factor_solve(*factor, rows, rhs)
            reference = least_norm_solve(W_AA.copy(), rhs)
            np.testing.assert_allclose(x, reference, rtol=0, atol=rounding * np.abs(reference).max())
            oracle = np.linalg.pinv(W_AA, rcond=1e-10, hermitian=True) @ rhs
            np.testing.assert_allclose(x, oracle, rtol=0, atol=rounding * np.abs(oracle).max())


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_nonsmooth_newton_with_the_joint_space_factor_gives_the_same_forces(warm):
    W, u, blocks, f0, factor = lying_problem()
    start = f0 if warm else None
    f, stats = nonsmooth_newton(W, u, blocks, f0=start)
    g, joint = nonsmooth_newton(W, u, blocks, f0=start, factor=factor)
    assert joint.iterations == stats.iterations and joint.converged == stats.converged
    np.testing.assert_allclose(g, f, rtol=0, atol=1e-10 * np.abs(f).max())


def test_the_stage_takes_the_joint_space_W_of_a_large_group_equal_to_the_thesis_methods(tmp_path):
    """Talos fallen on the floor (joint limits as rows): the stage's ``auto`` Delassus method builds the group's W
    as B Bᵀ (``joint-space``, more than ``TREE_FACTOR_ROWS`` rows) and hands B to the solver; equal to W by
    Chang–Khatib's method (Alg. 4, checked against Pinocchio in test_delassus.py) at the same state, to 1e-12."""
    path = tmp_path / "falling.xml"
    path.write_text(falling('joint_limits="constraint" delassus="auto"'))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # Talos's <mimic> joints simulated as independent joints
        sim = Simulation(load_universe(path))
    sim.step(1200)
    stage, dt = sim.contact_stage, sim.dt
    stage.world.update()
    a, ng = stage._layout(stage.world.detect(), dt)
    assert ng == 1 and a["row_start"][1] >= TREE_FACTOR_ROWS
    W = np.zeros(a["w_start"][ng])
    assert stage._delassus(a, W, ng, dt) == ["joint-space"]
    n = int(a["row_start"][1])
    B = dense((a["B_col"][:n], a["B_val"][:n], int(a["B_width"][0])))
    assert 0 < B.shape[1] <= sim.runs[0].model.nv
    stage.method = "chang-khatib"
    reference = np.zeros_like(W)
    assert stage._delassus(a, reference, ng, dt) == ["chang-khatib"] and not a["B_width"].any()
    np.testing.assert_allclose(W, reference, rtol=0, atol=1e-12 * np.abs(reference).max())
    np.testing.assert_allclose(B @ B.T, reference.reshape(n, n), rtol=0, atol=1e-12 * np.abs(reference).max())
