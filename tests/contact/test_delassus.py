"""The Delassus operator Λ = J M⁻¹ Jᵀ by the thesis's three methods (seed 000 §3.2, Algs. 3–5; issue 5).

The reference is independent of the code under test: Pinocchio's joint Jacobians (LOCAL_WORLD_ALIGNED, at the
joint frames = our body origins) and its CRBA mass matrix, Λ = J M⁻¹ Jᵀ by a linear solve.  Models with geared
rotors (which Pinocchio does not carry) are checked against the engine's CRBA-based "dense" method, itself
checked against Pinocchio here on rotor-free models.  Tolerance: 1e-10 relative to the largest entry.
"""
import warnings

import numpy as np
import pinocchio as pin
import pytest

import engine
from engine.contact.delassus import BlockMaps, block_maps, choose_method, delassus, omega, workspace
from engine.dynamics import aba
from engine.dynamics.integrators import random_configuration
from engine.model.paths import example_robot_data_dir
from engine.spatial import skew
from tests.dynamics.random_trees import random_model, to_pinocchio

FAST = ("test-force", "chang-khatib", "thesis")
ALL = FAST + ("dense",)
ROBOTS = example_robot_data_dir()


def load(path, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Talos's <mimic> joints are simulated as independent joints
        model = engine.load_model(str(ROBOTS / path), floating_base=floating)
        pm = pin.buildModelFromUrdf(str(ROBOTS / path), *([pin.JointModelFreeFlyer()] if floating else []))
    assert list(pm.names)[2:] == list(model.joint_name)[1:]  # body i is Pinocchio's joint i + 1
    return model, pm


@pytest.fixture(scope="module")
def talos():
    return load("talos_data/robots/talos_reduced.urdf", True)


def point_map(C, r):
    """C [1, −[r]×]: rows (n, t1, t2) of the velocity of the point at offset r from the body origin."""
    return C @ np.hstack([np.eye(3), -skew(r)])


def random_frame(rng):
    return np.linalg.qr(rng.normal(size=(3, 3)))[0]


def foot_blocks(model, rng, body):
    """4 contact points at the corners of a 20 × 10 cm sole 10 cm below the body origin (seed 000 L1757)."""
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    C = np.array([n, *np.linalg.svd(n[None])[2][1:]])
    return [(body, point_map(C, np.array([x, y, -0.1]))) for x in (-0.1, 0.1) for y in (-0.05, 0.05)]


def pin_reference(pm, q, blocks):
    """Λ from Pinocchio's Jacobians and mass matrix, blocks as in ``delassus``."""
    pd = pin.Data(pm)
    pin.computeJointJacobians(pm, pd, q)
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    rows = []
    for block in blocks:
        pairs = [block] if isinstance(block, tuple) else block
        rows.append(sum(X @ pin.getJointJacobian(pm, pd, body + 1, pin.LOCAL_WORLD_ALIGNED) for body, X in pairs))
    J = np.vstack(rows)
    return J @ np.linalg.solve(M, J.T)


def assert_delassus(model, q, blocks, reference, methods=ALL):
    data = model.create_data()
    for method in methods:
        L = delassus(model, data, q, blocks, method)
        scale = np.abs(reference).max()
        np.testing.assert_allclose(L, reference, rtol=0, atol=1e-10 * scale, err_msg=method)
        np.testing.assert_array_equal(L, L.T)  # upper triangle computed, mirrored
        assert np.linalg.eigvalsh(L).min() >= -1e-12 * scale


def test_talos_two_feet_and_hands_match_pinocchio(talos):
    model, pm = talos
    rng = np.random.default_rng(1)
    q = random_configuration(model, rng)
    feet = [model.body_index(f"leg_{side}_6_link") for side in ("left", "right")]
    hands = [model.body_index(f"arm_{side}_7_link") for side in ("left", "right")]
    blocks = foot_blocks(model, rng, feet[0]) + foot_blocks(model, rng, feet[1])
    blocks += [(h, point_map(random_frame(rng), rng.normal(size=3) * 0.1)) for h in hands]
    assert choose_method(model, feet) == "thesis"
    assert_delassus(model, q, blocks, pin_reference(pm, q, blocks), ALL + ("auto",))
    data = model.create_data()
    delassus(model, data, q, foot_blocks(model, rng, feet[0]) + foot_blocks(model, rng, feet[1]))
    assert workspace(model, data).method == "thesis"


def test_talos_hand_and_forearm_share_a_branch(talos):
    model, pm = talos
    rng = np.random.default_rng(2)
    q = random_configuration(model, rng)
    hand, forearm = model.body_index("arm_right_7_link"), model.body_index("arm_right_5_link")
    assert choose_method(model, [hand, forearm]) == "chang-khatib"
    blocks = [(b, point_map(random_frame(rng), rng.normal(size=3) * 0.1)) for b in (hand, forearm, hand)]
    assert_delassus(model, q, blocks, pin_reference(pm, q, blocks), ALL + ("auto",))
    data = model.create_data()
    delassus(model, data, q, blocks)
    assert workspace(model, data).method == "chang-khatib"


def test_reuse_of_the_free_dynamics_articulated_inertias(talos):
    """After aba(q, v, tau) on data (any v and tau: IA, D and U depend on q only), reuse_aba=True gives the
    same Λ and Ω as computing them afresh."""
    model, _ = talos
    rng = np.random.default_rng(7)
    q = random_configuration(model, rng)
    blocks = foot_blocks(model, rng, 6) + [(20, point_map(random_frame(rng), np.zeros(3)))]
    fresh = {m: delassus(model, model.create_data(), q, blocks, m) for m in FAST}
    data = model.create_data()
    aba(model, data, q, rng.normal(size=model.nv), rng.normal(size=model.nv))
    for m in FAST:
        np.testing.assert_allclose(delassus(model, data, q, blocks, m, reuse_aba=True), fresh[m], rtol=1e-13,
                                   atol=1e-13 * np.abs(fresh[m]).max(), err_msg=m)
    np.testing.assert_allclose(omega(model, data, q, [6, 20], reuse_aba=True), omega(model, data, q, [6, 20]),
                               rtol=1e-13, atol=1e-13)


def test_talos_self_contact_and_closure_blocks(talos):
    """Blocks on two bodies of the same multibody: the hand touching the thigh (X_a = C[1, −[r_a]×],
    X_b = −C[1, −[r_b]×]) and a 5-row hinge-like closure between the two grippers."""
    model, pm = talos
    rng = np.random.default_rng(3)
    q = random_configuration(model, rng)
    hand, thigh = model.body_index("arm_left_7_link"), model.body_index("leg_left_3_link")
    grippers = [model.body_index(f"gripper_{side}_motor_double_link") for side in ("left", "right")]
    C = random_frame(rng)
    hinge = rng.normal(size=(5, 6))
    blocks = [[(hand, point_map(C, rng.normal(size=3) * 0.1)), (thigh, -point_map(C, rng.normal(size=3) * 0.1))],
              [(grippers[0], hinge), (grippers[1], -hinge)], (thigh, point_map(random_frame(rng), np.zeros(3)))]
    assert_delassus(model, q, blocks, pin_reference(pm, q, blocks))


@pytest.mark.parametrize("path, bodies", [("ur_description/urdf/ur5_robot.urdf", (5, 2)),
                                          ("panda_description/urdf/panda.urdf", (6, 3, 4))])
def test_fixed_base_arms_match_pinocchio(path, bodies):
    model, pm = load(path, False)
    rng = np.random.default_rng(4)
    q = random_configuration(model, rng)
    blocks = [(b, point_map(random_frame(rng), rng.normal(size=3) * 0.1)) for b in bodies for _ in range(2)]
    assert_delassus(model, q, blocks, pin_reference(pm, q, blocks))


def random_blocks(model, rng, count):
    """One- and two-body blocks of 1 to 6 rows on random bodies (self-contacts and closures included)."""
    blocks = []
    for _ in range(count):
        rows = int(rng.integers(1, 7))
        bodies = rng.choice(model.nbodies, size=min(model.nbodies, int(rng.integers(1, 3))), replace=False)
        pairs = [(int(b), rng.normal(size=(rows, 6))) for b in bodies]
        blocks.append(pairs[0] if len(pairs) == 1 else pairs)
    return blocks


@pytest.mark.parametrize("seed", range(12))
def test_random_trees_match_pinocchio(seed):
    """Random topologies with revolute, prismatic, spherical and planar joints, free-flyer root or fixed base."""
    rng = np.random.default_rng(seed)
    model = random_model(rng, nbodies=int(rng.integers(1, 12)), floating=bool(seed % 2), rotors=False)
    q = random_configuration(model, rng)
    blocks = random_blocks(model, rng, int(rng.integers(1, 6)))
    assert_delassus(model, q, blocks, pin_reference(to_pinocchio(model), q, blocks))


@pytest.mark.parametrize("seed", range(6))
def test_random_trees_with_rotors_match_the_crba(seed):
    """Geared rotors (seed 002 §2.3): the methods reuse the core ABA's rotor clusters; the reference is the
    core's CRBA (its rotor terms are tested against rnea in tests/dynamics).  Rotors must change Λ."""
    rng = np.random.default_rng(100 + seed)
    model = random_model(rng, nbodies=int(rng.integers(3, 12)), floating=bool(seed % 2), rotors=True)
    while not np.any(model.dof_rotor_inertia > 0):  # rotors are drawn with probability 1/2 per 1-DOF joint
        model = random_model(rng, nbodies=int(rng.integers(3, 12)), floating=bool(seed % 2), rotors=True)
    q = random_configuration(model, rng)
    blocks = random_blocks(model, rng, 4)
    reference = delassus(model, model.create_data(), q, blocks, "dense")
    assert_delassus(model, q, blocks, reference, FAST)
    without_rotors = pin_reference(to_pinocchio(model), q, blocks)
    assert np.abs(reference - without_rotors).max() > 1e-6 * np.abs(reference).max()


def test_omega_blocks_in_the_given_order(talos):
    model, pm = talos
    rng = np.random.default_rng(5)
    q = random_configuration(model, rng)
    bodies = [model.body_index(n) for n in ("arm_right_7_link", "leg_left_6_link", "arm_right_4_link", "torso_2_link")]
    pd = pin.Data(pm)
    pin.computeJointJacobians(pm, pd, q)
    M = pin.crba(pm, pd, q)
    J = [pin.getJointJacobian(pm, pd, b + 1, pin.LOCAL_WORLD_ALIGNED) for b in bodies]
    Minv_JT = np.linalg.solve(np.triu(M) + np.triu(M, 1).T, np.vstack(J).T)
    reference = np.array([[Js @ Minv_JT[:, 6 * t:6 * t + 6] for t in range(len(bodies))] for Js in J])
    data = model.create_data()
    for method in ("chang-khatib", "thesis", "dense", "auto"):
        np.testing.assert_allclose(omega(model, data, q, bodies, method), reference, rtol=0,
                                   atol=1e-10 * np.abs(reference).max(), err_msg=method)


def test_packed_blocks_and_untouched_data(talos):
    """``BlockMaps.from_arrays`` (the vectorised input) equals the list form, and the caller's Data is not
    used as scratch."""
    model, _ = talos
    rng = np.random.default_rng(6)
    q = random_configuration(model, rng)
    bodies, X = np.array([6, 6, 12, 20]), rng.normal(size=(4, 3, 6))
    listed = [[(6, X[0]), (6, X[1])], (12, X[2]), (20, X[3])]
    packed = BlockMaps.from_arrays([0, 0, 1, 2], bodies, X)
    data = model.create_data()
    before = data.ws.copy()
    np.testing.assert_array_equal(delassus(model, data, q, packed, "thesis"),
                                  delassus(model, data, q, listed, "thesis"))
    np.testing.assert_array_equal(data.ws, before)
    assert delassus(model, data, q, [], "auto").shape == (0, 0)


@pytest.mark.parametrize("blocks, message", [
    ([(33, np.ones((3, 6)))], r"blocks\[0\]: body must be in \[0, 33\)"),
    ([(1, np.ones((3, 5)))], r"blocks\[0\]: X must have shape \(rows, 6\)"),
    ([[(1, np.ones((3, 6))), (2, np.ones((2, 6)))]], r"the same for each body"),
    ([(1, np.full((3, 6), np.nan))], r"constraint term 0 \(block 0\).*finite"),
    ([[]], r"blocks\[0\] must be \(body, X\)"),
])
def test_bad_blocks_are_named(talos, blocks, message):
    model, _ = talos
    with pytest.raises(ValueError, match=message):
        delassus(model, model.create_data(), engine.neutral(model), blocks)


def test_bad_method_q_and_data_are_named(talos):
    model, _ = talos
    data, q, blocks = model.create_data(), engine.neutral(model), [(1, np.eye(3, 6))]
    with pytest.raises(ValueError, match="unknown Delassus method 'fast'"):
        delassus(model, data, q, blocks, "fast")
    with pytest.raises(ValueError, match="unknown Delassus method 'test-force'"):
        omega(model, data, q, [1], "test-force")
    with pytest.raises(ValueError, match=r"body must be an integer in \[0, 33\)"):
        omega(model, data, q, [-1])
    bad = q.copy()
    bad[3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion of joint"):
        delassus(model, data, bad, blocks, "thesis")
    with pytest.raises(ValueError, match="data was created for"):
        delassus(model, random_model(0, nbodies=2).create_data(), q, blocks)
    with pytest.raises(ValueError, match="BlockMaps|bodies"):
        delassus(model, data, q, BlockMaps.from_arrays([0], [40], np.ones((1, 3, 6))))
    assert block_maps([(1, np.eye(3, 6))]).nrows == 3
