"""Ground reaction of a floating robot from its motion (seed 004 §5.5) and its ZMP / centre of pressure:
free fall (no external wrench), Pinocchio's centroidal momentum rate, known contact forces recovered
through aba and rnea, quiet stance (ZMP under the centre of mass)."""
import numpy as np
import pinocchio as pin
import pytest

import engine
from engine.dynamics import aba, com, forward_kinematics, rnea
from engine.dynamics.ground_reaction import (centre_of_pressure, external_wrench, friction_ratio, ground_wrench,
                                             joint_reactions, momentum_rate, step_residual, zmp)
from engine.dynamics.integrators import random_configuration
from engine.model.paths import example_robot_data_dir
from tests.dynamics.random_trees import random_model

G = np.array([0.0, 0.0, -9.81])


def point_forces(model, data, bodies, points, forces):
    """World forces at world points on the given bodies as rnea's f_ext: body-frame (f, moment about the
    body origin), f_b = R^T F, n_b = R^T ((p - o) x F).  Needs the placements of q."""
    f_ext = np.zeros((model.nbodies, 6))
    for b, p, F in zip(bodies, points, forces):
        R, o = data.oMi_R[b], data.oMi_p[b]
        f_ext[b, :3] += R.T @ F
        f_ext[b, 3:] += R.T @ np.cross(p - o, F)
    return f_ext


def world_wrench(points, forces):
    forces = np.asarray(forces)
    return np.concatenate([forces.sum(axis=0), np.cross(points, forces).sum(axis=0)])


@pytest.fixture(scope="module")
def robot():
    """A floating random tree of every joint type, with geared rotors."""
    model = random_model(21, nbodies=12, floating=True, rotors=True)
    assert np.count_nonzero(model.dof_rotor_inertia) >= 2
    return model, model.create_data()


def test_free_fall_has_no_external_wrench(robot):
    """Any joint torques, no contact: a = aba(q, v, tau) and dh/dt - weight = 0 (rotor spin included)."""
    model, data = robot
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v = random_configuration(model, rng), rng.normal(size=model.nv)
        tau = np.r_[np.zeros(6), rng.normal(size=model.nv - 6)]
        a = aba(model, data, q, v, tau)
        scale = model.total_mass * 9.81 + np.abs(momentum_rate(model, data, q, v, a)).max()
        np.testing.assert_allclose(external_wrench(model, data, q, v, a), 0.0, rtol=0, atol=1e-10 * scale)


def test_momentum_rate_matches_pinocchio():
    """Solo-12 on a free flyer at random (q, v, a): the wrench about the CoM equals Pinocchio's centroidal
    momentum rate minus the weight (computeCentroidalMomentumTimeVariation)."""
    urdf = str(example_robot_data_dir() / "solo_description" / "robots" / "solo12.urdf")
    model = engine.load_model(urdf, floating_base=True)
    data = model.create_data()
    pmodel = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    pdata = pmodel.createData()
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, v, a = random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
        w = external_wrench(model, data, q, v, a, gravity=G)
        dhg = pin.computeCentroidalMomentumTimeVariation(pmodel, pdata, q, v, a)
        c = pdata.com[0]
        expected = np.r_[dhg.linear - model.total_mass * G, dhg.angular]
        got = np.r_[w[:3], w[3:] - np.cross(c, w[:3])]  # moment moved from the base origin to the CoM
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def test_contact_forces_are_recovered_from_the_motion(robot):
    """Four ground forces at points of the plane z = 0.1 on random bodies plus a known user force; the
    robot moves as aba says.  The estimate minus the user force is the contact wrench, and its ZMP is the
    centre of pressure of the four forces."""
    model, data = robot
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, v = random_configuration(model, rng), rng.normal(size=model.nv)
        tau = np.r_[np.zeros(6), rng.normal(size=model.nv - 6)]
        forward_kinematics(model, data, q)
        bodies = rng.integers(0, model.nbodies, 4)
        points = np.c_[rng.uniform(-1, 1, (4, 2)), np.full(4, 0.1)]
        forces = np.c_[rng.uniform(-20, 20, (4, 2)), rng.uniform(10, 100, 4)]
        user = point_forces(model, data, [3], [rng.normal(size=3)], [rng.normal(size=3) * 10])
        f_ext = point_forces(model, data, bodies, points, forces) + user
        a = aba(model, data, q, v, tau, f_ext=f_ext)
        w = ground_wrench(model, data, q, v, a, f_known=user)
        np.testing.assert_allclose(w, world_wrench(points, forces), rtol=0, atol=1e-9)
        np.testing.assert_allclose(zmp(w, height=0.1), centre_of_pressure(points, forces), rtol=0, atol=1e-10)


def test_static_pose_from_rnea_contact_forces(robot):
    """v = 0, a = 0 with vertical forces at four points around the CoM that carry the weight
    (sum f = m g, sum f (p - c)_xy = 0): rnea leaves nothing for the free flyer, and the estimate gives
    back the forces, a ZMP under the CoM (quiet stance) and a required friction of 0."""
    model, data = robot
    rng = np.random.default_rng(3)
    q, zero = random_configuration(model, rng), np.zeros(model.nv)
    c = com(model, data, q)
    points = np.c_[c[:2] + np.array([[0.3, 0.2], [-0.25, 0.2], [-0.3, -0.2], [0.2, -0.3]]), np.zeros(4)]
    A = np.vstack([np.ones(4), (points - c)[:, :2].T])
    fz = np.linalg.lstsq(A, [model.total_mass * 9.81, 0.0, 0.0], rcond=None)[0]
    assert np.all(fz > 0.0)
    forces = np.c_[np.zeros((4, 2)), fz]
    bodies = rng.integers(0, model.nbodies, 4)
    tau = rnea(model, data, q, zero, zero, f_ext=point_forces(model, data, bodies, points, forces))
    np.testing.assert_allclose(tau[:6], 0.0, rtol=0, atol=1e-10)
    w = ground_wrench(model, data, q, zero, zero)
    np.testing.assert_allclose(w, world_wrench(points, forces), rtol=0, atol=1e-10)
    np.testing.assert_allclose(zmp(w), [c[0], c[1], 0.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(centre_of_pressure(points, forces), [c[0], c[1], 0.0], rtol=0, atol=1e-12)
    assert friction_ratio(w) == pytest.approx(0.0, abs=1e-12)


def test_no_support_gives_no_zmp():
    assert zmp(np.zeros(6)) is None and friction_ratio(np.array([1.0, 0, -1.0, 0, 0, 0])) is None
    assert centre_of_pressure(np.zeros((2, 3)), np.zeros((2, 3))) is None
    w = np.array([3.0, -4.0, 10.0, 0.0, 0.0, 0.0])
    assert friction_ratio(w) == pytest.approx(0.5)


# ---- the Newton–Euler check of simulated steps, joint reactions, required friction (issue 13, part 4) ------------

SCENES = engine.__path__[0].rsplit("/", 1)[0] + "/scenes"


@pytest.mark.parametrize("scene, skip", [("default", 0), ("drop_soles", 0), ("drop_flexible_ankles", 0),
                                         ("talos_walk", 1300)])
def test_every_simulated_step_passes_the_newton_euler_check(scene, skip):
    """Talos standing (rigid feet, the box and table around), dropped on FEM soles, dropped on flexible
    ankles, walking (its first step, after 1.3 s: issue 13's check on the walking run): for 150 steps each, the
    wrench estimated from the motion (momentum rate less the weight) equals the contact wrenches the step
    applied, to 1e-6 N (the weight is 886 N)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = engine.Simulation(engine.load_universe(f"{SCENES}/{scene}.xml"))
        sim.step(skip)
    run = sim.runs[0]
    data = run.model.create_data()
    worst, touching = 0.0, 0
    for _ in range(150):
        q, v = run.q.copy(), run.v.copy()
        sim.step()
        touching += run.in_contact
        worst = max(worst, step_residual(run.model, data, q, v, run.v, sim.dt, run.f_contact + run.f_ext,
                                         run.gravity))
    assert touching >= 50 and worst <= 1e-6


def test_a_pendulums_joint_reaction_is_its_mass_times_the_acceleration_of_its_centre_less_its_weight(tmp_path):
    """A rigid pendulum on a revolute joint (axis y, centre of mass l = 0.25 m below it), at random angles,
    rates and accelerations: the joint's reaction f = m (a_G − g) with a_G = α × r + ω × (ω × r), and a moment
    about the axis equal to the joint torque, in the child frame (closed form, to 1e-12)."""
    urdf = tmp_path / "p.urdf"
    urdf.write_text("""<robot name="p"><link name="base"/><link name="bob"><inertial><origin xyz="0 0 -0.25"/>
      <mass value="2"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>
      <joint name="pivot" type="revolute"><parent link="base"/><child link="bob"/><axis xyz="0 1 0"/>
      <limit lower="-9" upper="9" effort="1" velocity="1"/></joint></robot>""")
    model = engine.load_model(urdf)
    data = model.create_data()
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, w, alpha = rng.uniform(-3, 3, 3)
        f = joint_reactions(model, data, np.array([q]), np.array([w]), np.array([alpha]), gravity=G)[0]
        R = np.array([[np.cos(q), 0, np.sin(q)], [0, 1, 0], [-np.sin(q), 0, np.cos(q)]])   # child in base
        r = np.array([0.0, 0.0, -0.25])                                                        # child frame
        W, A = np.array([0.0, w, 0.0]), np.array([0.0, alpha, 0.0])
        a_G = np.cross(A, r) + np.cross(W, np.cross(W, r))
        np.testing.assert_allclose(f[:3], 2.0 * (a_G - R.T @ G), rtol=0, atol=1e-12)
        tau = rnea(model, data, np.array([q]), np.array([w]), np.array([alpha]), gravity=G)[0]
        assert f[4] == pytest.approx(tau, abs=1e-12)


def test_a_box_held_on_an_incline_requires_the_tangent_of_the_slope(tmp_path):
    """A box sticking on a 20° incline (μ = 0.9 > tan 20°): its contacts need |Σ f_t| / Σ f_n = tan 20°."""
    from app.signals import required_friction
    (tmp_path / "scene.xml").write_text(
        '<Universe><Material name="m" friction="0.9"/>'
        '<Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass><Rotation angle="20" x="1" y="0" z="0"/>'
        '<Translation x="0" y="-0.0342" z="0.094"/><Material>m</Material></Body>'
        '<Body name="slope"><Plane/><Mass>0</Mass><Rotation angle="20" x="1" y="0" z="0"/><Material>m</Material>'
        '</Body></Universe>')
    sim = engine.Simulation(engine.load_universe(tmp_path / "scene.xml"))
    sim.step(500)
    assert len(sim.contacts) == 4
    assert required_friction(sim.contacts, "box/box") == pytest.approx(np.tan(np.radians(20.0)), rel=1e-6)
