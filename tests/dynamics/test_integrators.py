"""Lie-group integration (q ⊕ v, q1 ⊖ q0) against Pinocchio, and the steppers: seed 004's pendulum
benchmark (error ordering and magnitudes), convergence orders on a free-floating tree, bad input."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from scipy.special import ellipj, ellipk

from engine.dynamics import integrators
from engine.dynamics.integrators import difference, integrate, random_configuration
from engine.model.description import JointSpec, LinkSpec, RobotDescription, compile_model
from tests.dynamics.random_trees import random_model, to_pinocchio

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tree():
    """Free-flyer root, then revolute, prismatic, spherical and planar joints (several of each)."""
    model = random_model(7, nbodies=14, floating=True, rotors=False)
    assert set(model.joint_type.tolist()) == {0, 1, 2, 3, 4}
    return model, to_pinocchio(model)


def _velocity(rng, model, scale):
    """A random velocity with largest component ``scale``: for scale < π/√3 every rotation part is shorter
    than a half turn, where log(exp(ξ)) = ξ."""
    v = rng.normal(size=model.nv)
    return v * scale / np.abs(v).max()


@pytest.mark.parametrize("scale", [1e-9, 1e-5, 1e-3, 0.5, 1.8])
def test_integrate_matches_pinocchio_and_difference_inverts_it(tree, scale):
    model, pmodel = tree
    rng = np.random.default_rng(int(scale * 1e9) % 2**31)
    for _ in range(20):
        q = random_configuration(model, rng)
        v = _velocity(rng, model, scale)
        q1 = integrate(model, q, v)
        np.testing.assert_allclose(q1, pin.integrate(pmodel, q, v), rtol=0, atol=1e-13)
        # round trip: our log inverts our exp to machine precision at every scale (Taylor branches included)
        np.testing.assert_allclose(difference(model, q, q1), v, rtol=1e-12, atol=1e-15)


def test_difference_matches_pinocchio(tree):
    """Between independent random configurations (relative angles anywhere in [0, π))."""
    model, pmodel = tree
    rng = np.random.default_rng(3)
    for _ in range(50):
        q0, q1 = random_configuration(model, rng), random_configuration(model, rng)
        d = difference(model, q0, q1)
        np.testing.assert_allclose(d, pin.difference(pmodel, q0, q1), rtol=0, atol=1e-10)
        # the same configuration (a quaternion may come back as its opposite, the same rotation)
        np.testing.assert_allclose(difference(model, q1, integrate(model, q0, d)), 0.0, rtol=0, atol=1e-12)


def test_integrate_follows_pinocchio_beyond_half_turn(tree):
    """Rotations beyond π: the same group element as Pinocchio, with Pinocchio's quaternion sign (the
    free flyer's stays in q0's hemisphere, the spherical joint's is the plain product quat0 ⊗ exp(ω))."""
    model, pmodel = tree
    rng = np.random.default_rng(4)
    for _ in range(20):
        q, v = random_configuration(model, rng), 6.0 * rng.normal(size=model.nv)
        np.testing.assert_allclose(integrate(model, q, v), pin.integrate(pmodel, q, v), rtol=0, atol=1e-12)


def test_random_configuration(tree):
    model, _ = tree
    q = random_configuration(model, 11)
    np.testing.assert_array_equal(q, random_configuration(model, 11))
    for j in model.joints:
        if j.type in (2, 3, 4):
            k = j.idx_q + {2: 0, 3: 3, 4: 2}[int(j.type)]
            assert abs(np.linalg.norm(q[k:k + (2 if j.type == 4 else 4)]) - 1.0) < 1e-15
    bounded = _pendulum(lower=-0.2, upper=0.3)
    samples = [random_configuration(bounded, s)[0] for s in range(200)]
    assert -0.2 <= min(samples) and max(samples) <= 0.3


def test_bad_input_is_rejected(tree):
    model, _ = tree
    q = random_configuration(model, 0)
    v = np.zeros(model.nv)
    with pytest.raises(ValueError, match="shape"):
        integrate(model, q[:-1], v)
    with pytest.raises(ValueError, match="non-finite"):
        integrate(model, q, np.full(model.nv, np.nan))
    bad = q.copy()
    bad[3:7] *= 1.1  # the free flyer's quaternion
    with pytest.raises(ValueError, match="root_joint"):
        difference(model, bad, q)
    with pytest.raises(ValueError, match="dt"):
        integrators.step_rk4(model, model.create_data(), q, v, v, 0.0)


def test_slightly_denormalised_quaternion_is_normalised_with_a_warning(tree):
    model, _ = tree
    q = random_configuration(model, 0)
    q[3:7] *= 1.0 + 1e-4
    with pytest.warns(RuntimeWarning, match="renormalised"):
        q1 = integrate(model, q, np.zeros(model.nv))
    assert abs(np.linalg.norm(q1[3:7]) - 1.0) < 1e-15


# -- seed 004 §2.7 / §3.2: the pendulum benchmark --------------------------------------------------------

def _pendulum(lower=-np.inf, upper=np.inf):
    """Point mass 1 kg at l = 1 m below a hinge about y: theta'' = -(g/l) sin(theta), seed 004 eq. 5."""
    desc = RobotDescription("pendulum", "<pendulum>")
    desc.links["pivot"] = LinkSpec("pivot")
    desc.links["bob"] = LinkSpec("bob", mass=1.0, com=np.array([0.0, 0.0, -1.0]))
    desc.joints.append(JointSpec("hinge", "revolute", "pivot", "bob", axis=np.array([0.0, 1.0, 0.0]),
                                 lower=lower, upper=upper))
    return compile_model(desc)


def test_seed004_pendulum_error_ordering():
    """Seed 004 §3.2 (raw L1290, L1481; digest reproduction table, column 0-10 s): l = 1 m, g = 9.81,
    released from rest at 90 degrees, h = 1 ms, max |theta - exact| over 10 s:
    EE 3.5e-1, SIE 2.2e-3, RK2 3.6e-5, RK4 1.6e-11, hence RK4 < RK2 < SIE << EE.
    Exact solution (Jacobi): sin(theta/2) = k sn(K(k) - sqrt(g/l) t, k), k = sin(theta0/2)."""
    model = _pendulum()
    data = model.create_data()
    g, h, n = 9.81, 1e-3, 10_000
    m = np.sin(np.pi / 4) ** 2
    sn = ellipj(ellipk(m) - np.sqrt(g) * h * np.arange(1, n + 1), m)[0]
    exact = 2.0 * np.arcsin(np.sqrt(m) * sn)
    expected = {"rk4": 1.6e-11, "rk2": 3.6e-5, "semi_implicit_euler": 2.2e-3, "explicit_euler": 3.5e-1}
    errors = {}
    for name in expected:
        step, q, v, tau = integrators.STEPPERS[name], np.array([np.pi / 2]), np.zeros(1), np.zeros(1)
        theta = np.empty(n)
        for i in range(n):
            q, v = step(model, data, q, v, tau, h, gravity=(0.0, 0.0, -g))
            theta[i] = q[0]
        errors[name] = np.abs(theta - exact).max()
    assert errors["rk4"] < errors["rk2"] < errors["semi_implicit_euler"] < errors["explicit_euler"] / 100
    for name, e in expected.items():
        assert e / 1.5 < errors[name] < e * 1.5, (name, errors[name])


def test_convergence_orders_on_a_free_floating_tree(tree):
    """Orders 4 (RK4), 2 (RK2), 1 (both Eulers) with free-flyer, spherical and planar joints: RK4's group
    correction dexp⁻¹ matters (without it the order drops to 2).  Reference: RK4 at dt = T/512."""
    model, _ = tree
    data = model.create_data()
    rng = np.random.default_rng(5)
    q0, v0, tau = random_configuration(model, rng), rng.normal(size=model.nv), np.zeros(model.nv)
    T = 0.2

    def run(step, n):
        q, v = q0, v0
        for _ in range(n):
            q, v = step(model, data, q, v, tau, T / n)
        return q, v

    q_ref, v_ref = run(integrators.step_rk4, 512)
    for name, order in (("rk4", 4), ("rk2", 2), ("semi_implicit_euler", 1), ("explicit_euler", 1)):
        errors = []
        for n in (16, 32, 64):
            q, v = run(integrators.STEPPERS[name], n)
            errors.append(np.linalg.norm(difference(model, q_ref, q)) + np.linalg.norm(v - v_ref))
        observed = np.log2(np.array(errors[:-1]) / errors[1:])
        assert np.all(np.abs(observed - order) < 0.25), (name, observed)


def test_lie_kernels_without_jit():
    """The same kernels run as plain Python (NUMBA_DISABLE_JIT=1) give Pinocchio's integrate/difference."""
    script = """
import numpy as np, pinocchio as pin
from engine.dynamics.integrators import difference, integrate, random_configuration
from tests.dynamics.random_trees import random_model, to_pinocchio
model = random_model(7, nbodies=14, floating=True, rotors=False)
pmodel = to_pinocchio(model)
rng = np.random.default_rng(0)
for _ in range(5):
    q0, q1, v = random_configuration(model, rng), random_configuration(model, rng), rng.normal(size=model.nv)
    assert np.abs(integrate(model, q0, v) - pin.integrate(pmodel, q0, v)).max() < 1e-12
    assert np.abs(difference(model, q0, q1) - pin.difference(pmodel, q0, q1)).max() < 1e-10
"""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
