"""Geared motor rotors (seed 002 §2.3, §3, §4) checked against independent references: Pinocchio with the
rotor moved onto the driven link (alpha = 1 along the joint axis), Pinocchio's armature plus the closed-form
carrier coupling, Lagrange's equations by finite differences of the kinetic energy, the 1-DOF closed form.

Convention under test: ``model.body_inertia`` counts the rotors a link carries as frozen (seed 002 J_i);
the rotor of joint k spins at omega_carrier + alpha qdot_k eps."""
from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from engine.dynamics import aba, crba, kinetic_energy, rnea
from engine.errors import ModelError
from engine.model.description import JointSpec, LinkSpec, RobotDescription, compile_model
from engine.model.model import JointType
from tests.dynamics.test_pinocchio import random_q, robot

ARMS = [("ur_description/urdf/ur5_robot.urdf", False), ("talos_data/robots/talos_reduced.urdf", True)]


def close(a, b, tol=1e-9):
    scale = max(1.0, float(np.abs(b).max(initial=0.0)))
    assert float(np.abs(np.asarray(a) - b).max(initial=0.0)) <= tol * scale


def rotor_inertia(j_m, i_m, eps):
    """J_m = j_m eps eps^T + i_m (1 - eps eps^T) (seed 002 L126-L132)."""
    E = np.outer(eps, eps)
    return j_m * E + i_m * (np.eye(3) - E)


def safe_rotors(model, rng, revolute_only=True):
    """j_m per dof: a fifth of the smallest principal inertia of its carrier, shared among the carrier's
    children, so that J' = J - sum J_m stays positive definite."""
    j_m = np.zeros(model.nv)
    children = np.bincount(model.body_parent[model.body_parent >= 0], minlength=model.nbodies)
    for j in model.joints:
        if j.nv != 1 or (revolute_only and j.type != JointType.REVOLUTE):
            continue
        c = model.body_parent[j.body]
        smallest = 1.0 if c < 0 else np.linalg.eigvalsh(model.body_inertia_com[c]).min() / children[c]
        j_m[j.idx_v] = 0.2 * smallest * rng.uniform(0.5, 1.0)
    return j_m


def with_rotors(model, j_m, i_m, eps, alpha):
    return dataclasses.replace(model, dof_rotor_inertia=j_m, dof_rotor_transverse=i_m, dof_rotor_axis=eps,
                               dof_gear_ratio=alpha)


def states(model, seed):
    rng = np.random.default_rng(seed)
    return random_q(model, rng), *rng.normal(size=(3, model.nv))


def same_as_pinocchio(geared, twin, model, seed, mass_matrix=True, energy=False):
    """rnea, crba, aba (and T) of ``geared`` equal Pinocchio's on ``twin`` at random states; Pinocchio leaves
    out the URDF joint damping and dry friction, so they are taken off here."""
    data, pd = geared.create_data(), twin.createData()
    q, v, a, tau = states(model, seed)
    passive = model.dof_damping * v + model.dof_friction * np.sign(v)
    close(rnea(geared, data, q, v, a) - passive, pin.rnea(twin, pd, q, v, a))
    if mass_matrix:
        close(crba(geared, data, q), pin.crba(twin, pd, q))
    close(aba(geared, data, q, v, tau), pin.aba(twin, pd, q, v, tau - passive))
    if energy:
        close(kinetic_energy(geared, data, q, v), pin.computeKineticEnergy(twin, pd, q, v))


@pytest.mark.parametrize("path,floating", ARMS)
def test_unit_gear_along_the_axis_is_the_rotor_moved_onto_the_driven_link(path, floating):
    """alpha = 1, eps = joint axis: the rotor turns exactly with the driven link, so the geared model equals a
    rigid Pinocchio model whose carrier loses J_m and whose driven link gains it (gyroscopic terms and all)."""
    model, pm = robot(path, floating)
    rng = np.random.default_rng(0)
    j_m = safe_rotors(model, rng)
    i_m = j_m * rng.uniform(0.5, 1.0, model.nv)
    geared = with_rotors(model, j_m, i_m, model.dof_rotor_axis, np.ones(model.nv))
    twin = pin.Model(pm)
    for j in model.joints:
        k = j.idx_v
        if j_m[k] == 0.0:
            continue
        J_parent = rotor_inertia(j_m[k], i_m[k], model.dof_rotor_axis[k])        # carrier frame
        J_child = rotor_inertia(j_m[k], i_m[k], model.joint_axis[j.body])         # driven-link frame
        c = int(model.body_parent[j.body])
        for body, J in ((c, -J_parent), (j.body, J_child)):
            if body >= 0:
                Y = twin.inertias[body + 1]
                twin.inertias[body + 1] = pin.Inertia(Y.mass, Y.lever, Y.inertia + J)
    same_as_pinocchio(geared, twin, model, 1, energy=True)


def test_base_carried_rotor_is_pinocchio_armature_whatever_its_axis():
    """A rotor carried by the fixed base only adds alpha^2 j_m (seed 002 §6.3 test 5): no carrier motion, no
    coupling, no gyroscopic term, whatever eps; Pinocchio's ``armature`` is exactly this."""
    model, pm = robot("ur_description/urdf/ur5_robot.urdf", False)
    j_m, alpha, eps = np.zeros(6), np.ones(6), model.dof_rotor_axis.copy()
    j_m[0], alpha[0], eps[0] = 3e-4, 80.0, np.array([0.6, 0.0, 0.8])
    geared = with_rotors(model, j_m, 0.7 * j_m, eps, alpha)
    twin = pin.Model(pm)
    twin.armature = alpha ** 2 * j_m
    same_as_pinocchio(geared, twin, model, 2)


@pytest.mark.parametrize("path,floating", ARMS)
def test_mass_matrix_is_armature_plus_carrier_coupling(path, floating):
    """Seed 002 §4.1: A = A_rigid + diag(alpha^2 j_m) + C + C^T where the rotor's spin momentum alpha j_m eps
    couples dof k with every dof j moving its carrier c: C[j, k] = alpha_k j_mk eps_k . (angular column j of
    the carrier's world Jacobian).  In particular a_nn gains alpha_n^2 j_mn (the term printed L243 omits)."""
    model, pm = robot(path, floating)
    rng = np.random.default_rng(3)
    j_m = safe_rotors(model, rng)
    eps = rng.normal(size=(model.nv, 3))
    eps /= np.linalg.norm(eps, axis=1)[:, None]
    alpha = rng.uniform(5.0, 100.0, model.nv)
    geared = with_rotors(model, j_m, j_m * rng.uniform(0.5, 1.0, model.nv), eps, alpha)
    twin = pin.Model(pm)
    twin.armature = alpha ** 2 * j_m
    pd = twin.createData()
    q = random_q(model, rng)
    expected = pin.crba(twin, pd, q).copy()
    pin.computeJointJacobians(twin, pd, q)
    for j in model.joints:
        k, c = j.idx_v, int(model.body_parent[j.body])
        if j_m[k] == 0.0 or c < 0:
            continue
        eps_world = pd.oMi[c + 1].rotation @ eps[k]
        coupling = alpha[k] * j_m[k] * (pin.getJointJacobian(twin, pd, c + 1, pin.WORLD)[3:].T @ eps_world)
        expected[:, k] += coupling
        expected[k, :] += coupling
    close(crba(geared, geared.create_data(), q), expected)
    last = model.nv - 1
    assert j_m[last] > 0.0
    close(crba(geared, geared.create_data(), q)[last, last] - pin.crba(pm, pm.createData(), q)[last, last],
          alpha[last] ** 2 * j_m[last])


def test_rnea_satisfies_lagrange_equations_with_gyroscopic_rotors():
    """Q_a(q, v, 0) at g = 0 is d/dt(dT/dv) - dT/dq at a = 0, i.e. Mdot v - dT/dq, with T the direct sum of
    body and rotor energies (seed 002 L209) differentiated numerically: this checks the rotor transport
    and gyroscopic terms of Newton-Euler independently of how they are coded."""
    model = robot("ur_description/urdf/ur5_robot.urdf", False)[0]
    rng = np.random.default_rng(4)
    eps = rng.normal(size=(6, 3))
    eps /= np.linalg.norm(eps, axis=1)[:, None]
    j_m = np.full(6, 2e-4)
    geared = with_rotors(model, j_m, 0.6 * j_m, eps, rng.uniform(20.0, 100.0, 6))
    geared = dataclasses.replace(geared, dof_damping=np.zeros(6), dof_friction=np.zeros(6))
    data = geared.create_data()
    q, v, _, _ = states(model, 5)
    h = 1e-6

    def T(q_, v_):
        return kinetic_energy(geared, data, q_, v_)

    Mdot_v = (crba(geared, data, q + h * v).copy() - crba(geared, data, q - h * v)) @ v / (2 * h)
    dT_dq = np.array([(T(q + h * e, v) - T(q - h * e, v)) / (2 * h) for e in np.eye(6)])
    close(rnea(geared, data, q, v, np.zeros(6), gravity=np.zeros(3)), Mdot_v - dT_dq, 1e-6)


def one_joint(axis, rotor_axis, j_m, i_m, alpha, mass=2.0, com=(0.1, -0.2, 0.3)):
    desc = RobotDescription(name="one", source="<one>")
    inertia = np.array([[0.05, 0.01, 0.0], [0.01, 0.04, 0.002], [0.0, 0.002, 0.03]])
    desc.links["base"] = LinkSpec(name="base", mass=1.0, inertia=np.eye(3) * 0.1)
    desc.links["arm"] = LinkSpec(name="arm", mass=mass, com=np.array(com), inertia=inertia)
    desc.joints.append(JointSpec(name="j", kind="revolute", parent="base", child="arm", axis=np.array(axis),
                                 p=np.array([0.0, 0.0, 0.5]), rotor_inertia=j_m, rotor_transverse=i_m,
                                 rotor_axis=np.array(rotor_axis), gear_ratio=alpha))
    return compile_model(desc), mass, np.array(com), inertia


def test_single_joint_closed_form():
    """Seed 002 §6.3 test 5: a_11 = (inertia of the link about the joint axis through the joint origin)
    + alpha^2 j_m exactly, whatever the rotor axis, since its carrier is the fixed base."""
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    model, m, c, I_c = one_joint(axis, (0.0, 0.6, -0.8), j_m=1e-4, i_m=6e-5, alpha=120.0)
    about_axis = axis @ (I_c + m * (c @ c * np.eye(3) - np.outer(c, c))) @ axis
    data = model.create_data()
    for angle in (0.0, 0.7, -2.0):
        M = crba(model, data, np.array([angle]))
        close(M, [[about_axis + 120.0 ** 2 * 1e-4]], 1e-13)


def test_zero_gear_ratio_freezes_the_rotor_in_its_carrier():
    """alpha = 0: the rotor is part of its carrier, so the model is the rigid URDF model (bookkeeping
    J = J' + J_m, seed 002 L142)."""
    model, pm = robot("talos_data/robots/talos_reduced.urdf", True)
    rng = np.random.default_rng(6)
    j_m = safe_rotors(model, rng)
    eps = rng.normal(size=(model.nv, 3))
    frozen = with_rotors(model, j_m, 0.8 * j_m, eps / np.linalg.norm(eps, axis=1)[:, None], np.zeros(model.nv))
    same_as_pinocchio(frozen, pm, model, 7, mass_matrix=False)


def test_rotor_heavier_than_its_carrier_is_rejected():
    model = robot("ur_description/urdf/ur5_robot.urdf", False)[0]
    j_m = np.zeros(6)
    j_m[2] = 10.0  # carried by the upper arm, whose inertia is far smaller
    heavy = with_rotors(model, j_m, j_m, model.dof_rotor_axis, np.ones(6))
    with pytest.raises(ModelError, match="upper_arm_link.*rotors it carries"):
        heavy.create_data()


def test_rotor_on_a_multi_dof_joint_is_rejected():
    model = robot("solo_description/robots/solo12.urdf", True)[0]
    j_m = np.zeros(model.nv)
    j_m[3] = 1e-5  # an angular dof of the free flyer
    with pytest.raises(ModelError, match="root_joint.*1-DOF"):
        with_rotors(model, j_m, j_m, model.dof_rotor_axis, np.ones(model.nv)).create_data()
