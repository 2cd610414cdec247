"""Conservation laws under our RK4 on the configuration group: a free-floating 30-DOF tree (free flyer,
spherical, planar, revolute and prismatic joints) without gravity keeps its momentum and its energy.

Momentum and energy are measured by Pinocchio, independent of our code, plus the closed-form spin of the
geared rotors in the rotor variant."""
import numpy as np
import pinocchio as pin
import pytest

from engine.dynamics.integrators import random_configuration, step_rk4
from tests.dynamics.random_trees import random_model, to_pinocchio

ZERO_G = (0.0, 0.0, 0.0)


def measured(model, pmodel, pdata, q, v):
    """(linear momentum, angular momentum about the world origin) in the world frame, and kinetic energy:
    Pinocchio's for the bodies (rotors frozen in their carriers), plus each rotor's spin relative to its
    carrier c (seed 002 §2.3): L += R_c j_m alpha qdot eps, T += j_m alpha qdot (omega_c . eps)
    + 1/2 j_m alpha^2 qdot^2."""
    h = pin.computeCentroidalMomentum(pmodel, pdata, q, v)
    L = h.angular + np.cross(pdata.com[0], h.linear)
    T = pin.computeKineticEnergy(pmodel, pdata, q, v)
    pin.forwardKinematics(pmodel, pdata, q, v)
    for k in np.flatnonzero(model.dof_rotor_inertia):
        jm, alpha, eps = model.dof_rotor_inertia[k], model.dof_gear_ratio[k], model.dof_rotor_axis[k]
        c = int(model.body_parent[model.dof_joint[k]])
        R, w = (pdata.oMi[c + 1].rotation, pdata.v[c + 1].angular) if c >= 0 else (np.eye(3), np.zeros(3))
        L = L + R @ (jm * alpha * v[k] * eps)
        T += jm * alpha * v[k] * (w @ eps) + 0.5 * jm * alpha**2 * v[k] ** 2
    return h.linear.copy(), L, T


@pytest.mark.parametrize("rotors", [False, True])
def test_free_floating_tree_conserves_momentum_and_energy(rotors):
    """2 s of RK4 at dt = 1 ms: |p - p0| <= 1e-9 |p0|, |L - L0| <= 1e-9 |L0|, |T - T0| <= 1e-8 T0, checked
    every 0.1 s."""
    model = random_model(30, nv=30, floating=True, rotors=rotors)
    assert model.nv == 30 and set(model.joint_type.tolist()) == {0, 1, 2, 3, 4}
    assert (np.count_nonzero(model.dof_rotor_inertia) >= 3) == rotors
    data = model.create_data()
    pmodel = to_pinocchio(model)
    pdata = pmodel.createData()
    rng = np.random.default_rng(0)
    q, v, tau = random_configuration(model, rng), rng.normal(size=model.nv), np.zeros(model.nv)
    p0, L0, T0 = measured(model, pmodel, pdata, q, v)
    for step in range(1, 2001):
        q, v = step_rk4(model, data, q, v, tau, 1e-3, gravity=ZERO_G)
        if step % 100 == 0:
            p, L, T = measured(model, pmodel, pdata, q, v)
            assert np.linalg.norm(p - p0) <= 1e-9 * np.linalg.norm(p0), step
            assert np.linalg.norm(L - L0) <= 1e-9 * np.linalg.norm(L0), step
            assert abs(T - T0) <= 1e-8 * T0, step
