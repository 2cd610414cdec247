"""The dynamics algorithms against Pinocchio (test oracle) on real example-robot-data URDFs and on random
trees with every joint type, at random states: placements, rnea (with f_ext, joint wrenches), crba, aba,
Jacobians and their drift, centre of mass, centroidal momentum, energies; 1e-9 relative."""
from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import pinocchio as pin
import pytest

import engine
from engine.dynamics import (aba, centroidal_momentum, com, com_jacobian, crba, forward_kinematics, frame_jacobian,
                             frame_jacobian_dot_v, frame_placement, kinetic_energy, point_classical_acceleration,
                             point_jacobian, potential_energy, rnea)
from engine.model.model import JointType
from engine.model.paths import example_robot_data_dir
from engine.model.pinocchio_layout import pinocchio_q
from tests.dynamics.random_trees import random_model, to_pinocchio

RTOL = 1e-9
# (file under example-robot-data/robots, floating base): arms, quadrupeds, humanoids, a mobile manipulator
ROBOTS = [
    ("talos_data/robots/talos_reduced.urdf", True),
    ("ur_description/urdf/ur5_robot.urdf", False),
    ("panda_description/urdf/panda.urdf", False),
    ("kinova_description/robots/kinova.urdf", False),        # continuous joints
    ("baxter_description/urdf/baxter.urdf", False),
    ("solo_description/robots/solo12.urdf", True),
    ("anymal_b_simple_description/robots/anymal.urdf", True),
    ("hyq_description/robots/hyq_no_sensors.urdf", True),
    ("a1_description/urdf/a1.urdf", True),
    ("icub_description/robots/icub_reduced.urdf", True),
    ("tiago_description/robots/tiago.urdf", False),          # continuous joints (wheels)
]
REFERENCES = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


@lru_cache(maxsize=None)
def robot(path, floating):
    full = str(example_robot_data_dir() / path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # <mimic> joints are simulated as independent joints, as Pinocchio does
        model = engine.load_model(full, floating_base=floating)
    pm = pin.buildModelFromUrdf(full, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(full)
    assert [pm.names[i] for i in range(1, pm.njoints)] == list(model.joint_name)
    return model, pm


def random_q(model, rng):
    """Random configuration: joint values in [-pi, pi], unit quaternions, planar angles, positions."""
    q = rng.uniform(-np.pi, np.pi, model.nq)
    for j in model.joints:
        k = j.idx_q
        if j.type == JointType.SPHERICAL:
            q[k:k + 4] = _unit(rng.normal(size=4))
        elif j.type == JointType.FREE:
            q[k:k + 3], q[k + 3:k + 7] = rng.uniform(-1, 1, 3), _unit(rng.normal(size=4))
        elif j.type == JointType.PLANAR:
            t = rng.uniform(-np.pi, np.pi)
            q[k:k + 4] = rng.uniform(-1, 1), rng.uniform(-1, 1), np.cos(t), np.sin(t)
    return q


def _unit(x):
    return x / np.linalg.norm(x)


def passive(model, q, v):
    """Joint damping and dry friction of the URDF <dynamics> tags (Pinocchio's rnea leaves them out)."""
    return model.dof_damping * v + model.dof_friction * np.sign(v)


def close(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape
    scale = max(1.0, float(np.abs(theirs).max(initial=0.0)))
    err = float(np.abs(ours - theirs).max(initial=0.0))
    assert err <= RTOL * scale, f"max error {err:.3e} for scale {scale:.3e}"


def state(model, seed):
    rng = np.random.default_rng(seed)
    q = random_q(model, rng)
    v, a, tau = rng.normal(size=(3, model.nv))
    f_ext = rng.normal(size=(model.nbodies, 6))
    return q, v, a, tau, f_ext


def pin_forces(f_ext):
    return [pin.Force.Zero()] + [pin.Force(f) for f in f_ext]


@pytest.fixture(params=ROBOTS, ids=lambda r: r[0].split("/")[-1].replace(".urdf", "") + ("_fb" if r[1] else ""))
def pair(request):
    return robot(*request.param)


def test_inverse_and_forward_dynamics_and_mass_matrix(pair):
    model, pm = pair
    data, pd = model.create_data(), pm.createData()
    for seed in range(2):
        q, v, a, tau, f_ext = state(model, seed)
        pq = pinocchio_q(model, pm, q)
        close(rnea(model, data, q, v, a, f_ext) - passive(model, q, v), pin.rnea(pm, pd, pq, v, a, pin_forces(f_ext)))
        close(data.f, np.array([pd.f[i + 1].vector for i in range(model.nbodies)]))
        close(crba(model, data, q), pin.crba(pm, pd, pq))
        close(aba(model, data, q, v, tau, f_ext), pin.aba(pm, pd, pq, v, tau - passive(model, q, v), pin_forces(f_ext)))


def test_placements_velocities_accelerations(pair):
    model, pm = pair
    data, pd = model.create_data(), pm.createData()
    q, v, a, _, _ = state(model, 7)
    pq = pinocchio_q(model, pm, q)
    forward_kinematics(model, data, q, v, a)
    pin.forwardKinematics(pm, pd, pq, v, a)
    pin.updateFramePlacements(pm, pd)
    close(data.oMi_R, np.array([pd.oMi[i + 1].rotation for i in range(model.nbodies)]))
    close(data.oMi_p, np.array([pd.oMi[i + 1].translation for i in range(model.nbodies)]))
    close(data.liMi_p, np.array([pd.liMi[i + 1].translation for i in range(model.nbodies)]))
    close(data.v, np.array([pd.v[i + 1].vector for i in range(model.nbodies)]))
    close(data.a, np.array([pd.a[i + 1].vector for i in range(model.nbodies)]))
    compared = 0
    for f, name in enumerate(model.frame_name):
        if pm.existFrame(name) and sum(fr.name == name for fr in pm.frames) == 1:
            R, p = frame_placement(model, data, f)
            oMf = pd.oMf[pm.getFrameId(name)]
            close(R, oMf.rotation)
            close(p, oMf.translation)
            compared += 1
    assert compared >= model.nbodies


def test_jacobians_and_drift(pair):
    model, pm = pair
    data, pd = model.create_data(), pm.createData()
    q, v, _, _, _ = state(model, 3)
    pq = pinocchio_q(model, pm, q)
    leaves = [b for b in range(model.nbodies) if b not in set(model.body_parent)]
    frames = [model.frame_name.index(model.body_name[b]) for b in leaves[:4]]
    pin.computeJointJacobiansTimeVariation(pm, pd, pq, v)
    pin.updateFramePlacements(pm, pd)
    for f in frames:
        fid = pm.getFrameId(model.frame_name[f])
        for reference, pref in REFERENCES.items():
            close(frame_jacobian(model, data, q, f, reference), pin.computeFrameJacobian(pm, pd, pq, fid, pref))
            close(frame_jacobian_dot_v(model, data, q, v, f, reference),
                  pin.getFrameJacobianTimeVariation(pm, pd, fid, pref) @ v)
        body, r = int(model.frame_body[f]), model.frame_p[f]
        J_lwa = pin.computeFrameJacobian(pm, pd, pq, fid, pin.LOCAL_WORLD_ALIGNED)
        forward_kinematics(model, data, q, v)
        close(point_jacobian(model, data, body, r), J_lwa[:3])
        close(point_classical_acceleration(model, data, body, r),
              pin.getFrameJacobianTimeVariation(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)[:3] @ v)


def test_centre_of_mass_momentum_energy(pair):
    model, pm = pair
    data, pd = model.create_data(), pm.createData()
    q, v, _, _, _ = state(model, 5)
    pq = pinocchio_q(model, pm, q)
    close(com(model, data, q), pin.centerOfMass(pm, pd, pq))
    close(com_jacobian(model, data, q), pin.jacobianCenterOfMass(pm, pd, pq))
    pin.computeCentroidalMomentum(pm, pd, pq, v)
    close(centroidal_momentum(model, data, q, v), pd.hg.vector)
    close(kinetic_energy(model, data, q, v), pin.computeKineticEnergy(pm, pd, pq, v))
    close(potential_energy(model, data, q), pin.computePotentialEnergy(pm, pd, pq))
    g = np.array([0.3, -1.0, -9.0])
    pm.gravity.linear = g
    close(potential_energy(model, data, q, gravity=g), pin.computePotentialEnergy(pm, pd, pq))
    close(rnea(model, data, q, v, v, gravity=g) - passive(model, q, v), pin.rnea(pm, pd, pq, v, v))
    pm.gravity.linear = np.array([0.0, 0.0, -9.81])


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_with_every_joint_type(seed):
    """Spherical, planar, prismatic and revolute joints on random axes, with and without a free root."""
    model = random_model(seed, nbodies=9, floating=seed % 2 == 0, rotors=False)
    pm = to_pinocchio(model)
    data, pd = model.create_data(), pm.createData()
    q, v, a, tau, f_ext = state(model, seed)
    close(rnea(model, data, q, v, a, f_ext), pin.rnea(pm, pd, q, v, a, pin_forces(f_ext)))
    close(crba(model, data, q), pin.crba(pm, pd, q))
    close(aba(model, data, q, v, tau, f_ext), pin.aba(pm, pd, q, v, tau, pin_forces(f_ext)))
    leaf = model.nbodies - 1
    close(frame_jacobian(model, data, q, model.frame_name.index(model.body_name[leaf]), "local"),
          pin.computeJointJacobian(pm, pd, q, leaf + 1))
    pin.computeCentroidalMomentum(pm, pd, q, v)
    close(centroidal_momentum(model, data, q, v), pd.hg.vector)
