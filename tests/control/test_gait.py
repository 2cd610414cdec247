"""Gait playback (issue 14 part 4; seed 003 §5.D-E): the double-support torque distribution against the closed
form of a weighted minimum norm and its KKT conditions, the single-support solve against aba, the leg swap as a
symmetry of RABBIT, the closed-form gait against the digest's boundary states, and RABBIT walking in
scenes/rabbit_walk.xml."""
import warnings
from pathlib import Path

import numpy as np
import pytest

import engine
import engine.control.gait.controller as C
from engine.control.gait.controller import GaitPlayback
from engine.control.gait.distribution import cone_rows, distribute, hybrid_contact
from engine.control.gait.gaitfile import GaitFile
from engine.control.gait.reindex import LegSwap
from engine.control.gait.spline_gait import rabbit_step, write_csv
from engine.dynamics import crba, forward_kinematics, frame_jacobian, frame_jacobian_dot_v, frame_placement, rnea
from engine.errors import UniverseError

ROOT = Path(__file__).resolve().parents[2]
RABBIT = ROOT / "assets/robots/rabbit.xml"
GAIT = ROOT / "assets/trajectories/rabbit_gait.csv"
FEET = ("left_foot", "right_foot")


@pytest.fixture(scope="module")
def rabbit():
    model = engine.load_model(RABBIT)
    return model, model.create_data(), GaitFile(model, GAIT)


def double_support(model, data, gait, s):
    """M, h, the actuated rows S, the feet's contact rows J (normal z, tangent x) and q̈ of the gait at time s
    (both feet held: J q̈ = −J̇ v with the base's q̈ from the gait)."""
    q, v, a = gait(s), gait(s, 1), gait(s, 2)
    M = crba(model, data, q)
    h = rnea(model, data, q, v, np.zeros(model.nv))
    J = np.vstack([frame_jacobian(model, data, q, model.frame_index(f), "local_world_aligned")[[2, 0]]
                   for f in FEET])
    dJv = np.concatenate([frame_jacobian_dot_v(model, data, q, v, model.frame_index(f),
                                               "local_world_aligned")[[2, 0]] for f in FEET])
    qdd = np.linalg.solve(np.vstack([J, np.eye(7)[:3]]), np.concatenate([-dJv, a[:3]]))
    return M, h, np.eye(7)[3:], J, qdd


WEIGHTS = np.array([1.0, 2.0, 0.5, 3.0, 1e-3, 2e-3, 1e-3, 2e-3])      # ξγ² on 4 torques, then on (N, T) per foot


def test_the_distribution_is_the_weighted_minimum_norm(rabbit):
    """Cones inactive (μ = 2): the QP's (τ, f) is argmin ½uᵀWu s.t. A u = b, A = [Sᵀ Jᵀ], b = M q̈ + h, whose
    closed form is u = W⁻¹Aᵀ(AW⁻¹Aᵀ)⁻¹b; also the minimum-norm least-squares solution of (A W^-1/2) y = b,
    u = W^-1/2 y (numpy's lstsq, an SVD). The dynamics hold to 1e-8 N."""
    model, data, gait = rabbit
    for s in (0.0, 0.05, 0.1):
        M, h, S, J, qdd = double_support(model, data, gait, s)
        result = distribute(M, h, qdd, S, J, WEIGHTS, mu=2.0)
        A, b = np.hstack([S.T, J.T]), M @ qdd + h
        closed = np.diag(1 / WEIGHTS) @ A.T @ np.linalg.solve(A @ np.diag(1 / WEIGHTS) @ A.T, b)
        y = np.linalg.lstsq(A / np.sqrt(WEIGHTS), b, rcond=None)[0]
        u = np.concatenate([result.tau, result.f])
        assert result.solved and result.residual <= 1e-8
        assert np.abs(A @ u - b).max() <= 1e-8
        np.testing.assert_allclose(u, closed, rtol=0, atol=1e-8 * np.abs(closed).max())
        np.testing.assert_allclose(u, y / np.sqrt(WEIGHTS), rtol=0, atol=1e-8 * np.abs(closed).max())
        assert np.all(cone_rows(2, 2, 2.0) @ result.f > 0)              # the cones are indeed inactive


def test_an_active_friction_cone_meets_the_kkt_conditions(rabbit):
    """μ = 0.05, below what the free optimum needs: the solution stays in the cones (N ≥ 0, |T| ≤ μN), solves
    the dynamics to 1e-8, and is optimal: W u = Aᵀλ + Cᵀν with ν ≥ 0 on the active cone rows only."""
    model, data, gait = rabbit
    M, h, S, J, qdd = double_support(model, data, gait, 0.05)
    free = distribute(M, h, qdd, S, J, WEIGHTS, mu=2.0)
    mu = 0.05
    assert np.abs(free.f[1::2]).max() > mu * free.f[0::2].min()          # the free optimum would slip
    result = distribute(M, h, qdd, S, J, WEIGHTS, mu=mu)
    A, b = np.hstack([S.T, J.T]), M @ qdd + h
    u = np.concatenate([result.tau, result.f])
    C = np.hstack([np.zeros((6, 4)), cone_rows(2, 2, mu)])
    assert result.solved and np.abs(A @ u - b).max() <= 1e-8
    assert (C @ u).min() >= -1e-8 * np.abs(b).max()
    active = C @ u <= 1e-7 * np.abs(b).max()
    assert active.any()
    G = np.vstack([A, C[active]]).T
    multipliers = np.linalg.lstsq(G, WEIGHTS * u, rcond=None)[0]
    assert np.abs(G @ multipliers - WEIGHTS * u).max() <= 1e-8 * np.abs(WEIGHTS * u).max()
    assert multipliers[A.shape[0]:].min() >= -1e-8


def test_a_relaxed_progression_is_the_nearest_one_the_cones_allow(rabbit):
    """A braking of 20 m/s² more than the gait's: no force in the cones (μ = 0.8) produces it.  Relaxed along
    ∂q̈/∂ẍ (weight 1e4 on s²), the QP lands on the boundary of the feasible ẍ, found independently by bisecting
    on the unrelaxed QP's feasibility; there the forces are in the cones and the dynamics hold to 1e-8 N."""
    model, data, gait = rabbit
    M, h, S, J, qdd = double_support(model, data, gait, 0.0)
    K = np.vstack([J, np.eye(7)[:3]])
    along = np.linalg.solve(K, np.eye(7)[J.shape[0]])                # ∂q̈/∂ẍ, the other rows held
    braked = qdd - 20.0 * along
    assert not distribute(M, h, braked, S, J, WEIGHTS, mu=0.8).solved
    result = distribute(M, h, braked, S, J, WEIGHTS, mu=0.8, relax=(along, 1e4))
    lo, hi = 0.0, 20.0                                                # infeasible at lo, feasible at hi
    assert distribute(M, h, braked + hi * along, S, J, WEIGHTS, mu=0.8).solved
    while hi - lo > 1e-9:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if distribute(M, h, braked + mid * along, S, J, WEIGHTS, mu=0.8).solved else (mid, hi)
    assert result.solved and result.s == pytest.approx(hi, abs=1e-6)
    u = np.concatenate([result.tau, result.f])
    b = M @ (braked + result.s * along) + h
    assert np.abs(np.hstack([S.T, J.T]) @ u - b).max() <= 1e-8 * np.abs(b).max()
    assert (cone_rows(2, 2, 0.8) @ result.f).min() >= -1e-8 * np.abs(b).max()


def test_single_support_solve_agrees_with_aba(rabbit):
    """hybrid_contact's (q̈, τ, f) with the left foot held and 4 coordinates prescribed: aba under the joint
    forces Sᵀτ + Jᵀf gives the same q̈ (1e-9), the foot does not accelerate, the prescribed rows hold."""
    model, data, gait = rabbit
    s = 0.3
    q, v = gait(s), gait(s, 1)
    M = crba(model, data, q)
    h = rnea(model, data, q, v, np.zeros(model.nv))
    f = model.frame_index("right_foot")
    J = frame_jacobian(model, data, q, f, "local_world_aligned")[[2, 0]]
    dJv = frame_jacobian_dot_v(model, data, q, v, f, "local_world_aligned")[[2, 0]]
    E = np.eye(7)[[1, 2, 3, 4]]
    e = np.array([0.3, -0.2, 1.5, -2.0])
    qdd, tau, force = hybrid_contact(M, h, np.eye(7)[3:], J, dJv, E, e)
    joint_forces = np.concatenate([np.zeros(3), tau]) + J.T @ force
    np.testing.assert_allclose(engine.aba(model, data, q, v, joint_forces), qdd, rtol=0, atol=1e-9)
    np.testing.assert_allclose(J @ qdd + dJv, 0.0, atol=1e-9)
    np.testing.assert_allclose(E @ qdd, e, atol=1e-12)


def test_the_leg_swap_is_a_symmetry_of_rabbit(rabbit):
    """P² = I; M(Pq) = P M(q) Pᵀ and h(Pq, Pv) = P h(q, v) (the legs are alike); the left foot of Pq is where the
    right foot of q is (x, z; y mirrored); the gait's last state swapped and moved back by its step is its first."""
    model, data, gait = rabbit
    swap = LegSwap(model, progress="boom_x")
    assert swap.pairs == [("left_hip", "right_hip"), ("left_knee", "right_knee")]
    rng = np.random.default_rng(4)
    P = np.eye(7)[swap.perm_v]
    for _ in range(5):
        q, v = rng.uniform(-1, 1, 7), rng.uniform(-2, 2, 7)
        np.testing.assert_array_equal(swap.q(swap.q(q)), q)
        swapped = crba(model, data, swap.q(q)).copy()                   # crba returns its workspace
        np.testing.assert_allclose(swapped, P @ crba(model, data, q) @ P.T, atol=1e-12)
        np.testing.assert_allclose(np.array(rnea(model, data, swap.q(q), swap.v(v), np.zeros(7))),
                                   P @ rnea(model, data, q, v, np.zeros(7)), atol=1e-10)
        feet = []
        for x in (q, swap.q(q)):
            forward_kinematics(model, data, x)
            feet.append([frame_placement(model, data, model.frame_index(f))[1] for f in FEET])
        np.testing.assert_allclose(feet[1][0] * [1, -1, 1], feet[0][1], atol=1e-12)
        np.testing.assert_allclose(feet[1][1] * [1, -1, 1], feet[0][0], atol=1e-12)
    step = gait.q[-1, 0] - gait.q[0, 0]
    assert step == pytest.approx(0.45, abs=1e-12)
    np.testing.assert_allclose(swap.q(gait.q[-1], -step), gait.q[0], atol=1e-12)
    np.testing.assert_allclose(swap.v(gait.v[-1]), gait.v[0], atol=1e-12)


def test_the_gait_meets_the_thesis_boundary_states(rabbit, tmp_path):
    """Digest 003 §3.2's derived check values (absolute angles q1..q4: rear tibia, rear thigh, front thigh,
    front tibia; knees forward) at the start and end of double support, to their printed digits. Their angles
    are ours + 90° on the rear leg (parametrised foot to hip), − 90° on the front one; the rates are ours.
    The shipped file is the generator's output."""
    model, data, gait = rabbit
    for s, angles, rates in ((0.0, (51.255, 104.055, -48.902, -85.144), (-0.7546, -1.9447, 0.3544, -2.752)),
                             (0.103, (48.612, 91.270, -49.725, -99.233), (-0.0818, -2.4393, -0.5275, -2.1251))):
        q, v = gait(s), gait(s, 1)
        ours = np.array([q[3] + q[4], q[3], q[5], q[5] + q[6]])
        ours_dot = np.array([v[3] + v[4], v[3], v[5], v[5] + v[6]])
        np.testing.assert_allclose(np.degrees(ours) + [90, 90, -90, -90], angles, atol=6e-4)
        np.testing.assert_allclose(ours_dot, rates, atol=6e-5)
    write_csv(tmp_path / "gait.csv", *rabbit_step())
    assert (tmp_path / "gait.csv").read_text() == GAIT.read_text()


@pytest.fixture(scope="module")
def walk():
    universe = engine.load_universe(ROOT / "scenes/rabbit_walk.xml")
    sim = engine.Simulation(universe)
    gait = sim.runs[0].controllers[0]
    model, data = universe.multibodies[0].model, universe.multibodies[0].model.create_data()
    residuals, cones, heights, pitch = [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no touchdown warning, nothing else
        for _ in range(2400):
            sim.step(1)
            if gait.last["phase"] == "double":
                residuals.append(gait.last["residual"])
                cones.append((cone_rows(2, 2, gait.mu) @ gait.last["f"]).min())
            heights.append(sim.runs[0].q[1])
            pitch.append(sim.runs[0].q[2])
    return gait, residuals, cones, np.array(heights), np.array(pitch)


def test_rabbit_walks_four_steps(walk):
    """2.4 s of scenes/rabbit_walk.xml: the legs alternate at every touchdown, each landing below 0.1 m/s
    (impactless), the steps settle on a limit cycle (equal durations to 2 ms), the hip stays within 1 cm of its
    0.71 m and the trunk upright to 0.01 rad, and the double-support distribution solves the dynamics to 1e-8 at
    every step with its forces in the cones: after a landing the progression's acceleration is relaxed (the hip
    arrives faster than the gait, and its feedback asks a braking the feet cannot give) at most 5 steps."""
    gait, residuals, cones, heights, pitch = walk
    landings = gait.touchdowns
    assert len(landings) >= 4
    assert [name for _, name, _ in landings][:4] == ["left_foot", "right_foot", "left_foot", "right_foot"]
    assert max(speed for _, _, speed in landings) < 0.1
    durations = np.diff([t for t, _, _ in landings])
    assert np.ptp(durations) <= 0.002
    assert max(residuals) <= 1e-8
    assert gait.qp_failures == 0 and gait.relaxed <= 5 * len(landings) and min(cones) >= -1e-6
    assert np.abs(heights - 0.71).max() < 0.01 and np.abs(pitch).max() < 0.01


def test_bad_gait_files_are_refused(rabbit, tmp_path):
    model, _, gait = rabbit
    text = GAIT.read_text().splitlines()
    (tmp_path / "header.csv").write_text("\n".join(["t, q_1, q_2"] + text[1:]))
    with pytest.raises(UniverseError, match="header") as err:
        GaitFile(model, tmp_path / "header.csv")
    assert err.value.line == 1
    cells = text[5].split(",")
    cells[3] = " nan"
    (tmp_path / "nan.csv").write_text("\n".join(text[:5] + [",".join(cells)] + text[6:]))
    with pytest.raises(UniverseError, match="non-finite") as err:
        GaitFile(model, tmp_path / "nan.csv")
    assert err.value.line == 6
    np.savez(tmp_path / "short.npz", t=gait.t[:100], q=gait.q[:100])         # a third of a step: not periodic
    with pytest.raises(UniverseError, match="not periodic") as err:
        GaitPlayback(model, np.array([0, 0, -9.81]), tmp_path, gait="short.npz", double_support=0.05,
                     progress="boom_x")
    assert err.value.file.endswith("short.npz")


def test_an_optimiser_npz_is_read_like_the_csv(rabbit, tmp_path):
    """`articula optimise` writes t, q, v, tau, joint_names, status, energy: the same gait from that .npz and from
    the CSV; joint_names that are not the model's are refused, naming the first that differs."""
    model, _, gait = rabbit
    names = np.array(["boom_x", "boom_z", "boom_pitch", "left_hip", "left_knee", "right_hip", "right_knee"])
    np.savez(tmp_path / "opt.npz", t=gait.t, q=gait.q, v=gait.v, tau=np.zeros_like(gait.v), joint_names=names,
             status="Solve_Succeeded", energy=1.0)
    read = GaitFile(model, tmp_path / "opt.npz")
    for s in (0.0, 0.2, 0.4):
        for order in (0, 1, 2):
            np.testing.assert_array_equal(read(s, order), gait(s, order))
    np.savez(tmp_path / "other.npz", t=gait.t, q=gait.q, joint_names=names[[0, 1, 2, 5, 6, 3, 4]])
    with pytest.raises(UniverseError, match="joint_names") as err:
        GaitFile(model, tmp_path / "other.npz")
    assert err.value.value == "right_hip"


def test_a_landing_above_the_tolerance_is_reported(tmp_path):
    """The same walk with a touchdown tolerance of 1 cm/s, below the ~5 cm/s the first landing measures: a
    TouchdownWarning names the foot, the time and the speed, which ``touchdowns`` keeps."""
    scene = (ROOT / "scenes/rabbit_walk.xml").read_text().replace("../assets", str(ROOT / "assets"))
    (tmp_path / "walk.xml").write_text(scene.replace('mu="0.8"/>', 'mu="0.8" touchdown_tolerance="0.01"/>'))
    sim = engine.Simulation(engine.load_universe(tmp_path / "walk.xml"))
    with pytest.warns(C.TouchdownWarning, match=r"'left_foot' landed at t = 0\.5\d+ s at 0\.0\d+ m/s"):
        sim.step(620)
    (t, foot, speed), = sim.runs[0].controllers[0].touchdowns
    assert foot == "left_foot" and 0.01 < speed < 0.1
