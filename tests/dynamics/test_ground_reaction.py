"""Ground reaction of a floating robot from its motion (seed 004 §5.5) and its ZMP / centre of pressure:
free fall (no external wrench), Pinocchio's centroidal momentum rate, known contact forces recovered
through aba and rnea, quiet stance (ZMP under the centre of mass)."""
import numpy as np
import pinocchio as pin
import pytest

import engine
from engine.dynamics import aba, com, forward_kinematics, rnea
from engine.dynamics.ground_reaction import (centre_of_pressure, external_wrench, friction_ratio, ground_wrench,
                                             momentum_rate, zmp)
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
