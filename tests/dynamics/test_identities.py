"""Identities of the dynamics algorithms with geared rotors on arbitrary axes, joint friction and springs
(seed 002 §6.3): crba from n rnea calls, aba(rnea(a)) == a, v^T M v = 2T, M symmetric positive definite,
linearity in a, the passive joint forces, and the same checks with numba's JIT disabled."""
from __future__ import annotations

import dataclasses
import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from engine.dynamics import aba, crba, forward_kinematics, kinetic_energy, kinetic_energy_of_motion, rnea
from engine.dynamics._kernels.aba import bias_passes
from engine.dynamics._kernels.algebra import split
from tests.dynamics.random_trees import random_model
from tests.dynamics.test_pinocchio import random_q, robot

TOL = 1e-9
ROOT = Path(__file__).resolve().parents[2]


def geared(model, seed, passive=True):
    """``model`` with a geared rotor on every 1-DOF joint (arbitrary unit axis, alpha in +-[5, 100], j_m
    small enough for every carrier) and, when ``passive``, random joint damping, dry friction and springs."""
    rng = np.random.default_rng(seed)
    nv = model.nv
    one = model.joint_nv[model.dof_joint] == 1
    eps = rng.normal(size=(nv, 3))
    j_m = np.where(one, rng.uniform(1e-6, 1e-5, nv), 0.0)
    changes = dict(dof_rotor_inertia=j_m, dof_rotor_transverse=j_m * rng.uniform(0.5, 1.0, nv),
                   dof_rotor_axis=eps / np.linalg.norm(eps, axis=1)[:, None],
                   dof_gear_ratio=rng.choice([-1.0, 1.0], nv) * rng.uniform(5.0, 100.0, nv))
    if passive:
        changes.update(dof_damping=rng.uniform(0, 2, nv), dof_friction=rng.uniform(0, 2, nv),
                       dof_stiffness=np.where(one, rng.uniform(0, 50, nv), 0.0),
                       dof_spring_reference=rng.normal(size=nv))
    return dataclasses.replace(model, **changes)


def models():
    yield "ur5", robot("ur_description/urdf/ur5_robot.urdf", False)[0]
    yield "talos_fb", robot("talos_data/robots/talos_reduced.urdf", True)[0]
    yield "random_tree", random_model(11, nbodies=10, floating=True, rotors=False)


MODELS = dict(models())


@pytest.fixture(params=sorted(MODELS))
def model(request):
    return geared(MODELS[request.param], seed=len(request.param))


def assert_close(a, b, tol=TOL):
    scale = max(1.0, float(np.abs(b).max(initial=0.0)))
    assert float(np.abs(np.asarray(a) - b).max(initial=0.0)) <= tol * scale


def test_crba_equals_n_rnea_calls_with_unit_accelerations(model):
    """Seed 002 §6.3 test 1: column j of A is Q_a(q, 0, e_j) - Q_a(q, 0, 0) with g = 0 (the difference removes
    the springs, which Q_a leaves out)."""
    data = model.create_data()
    q, zero, g0 = random_q(model, np.random.default_rng(1)), np.zeros(model.nv), np.zeros(3)
    base = rnea(model, data, q, zero, zero, gravity=g0)
    columns = [rnea(model, data, q, zero, e, gravity=g0) - base for e in np.eye(model.nv)]
    M = crba(model, data, q).copy()
    assert_close(M, np.array(columns).T)
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0.0
    j_m, alpha = model.dof_rotor_inertia, model.dof_gear_ratio
    assert np.all(np.diag(M) >= alpha ** 2 * j_m)  # seed 002 §6.3 test 3: a_kk >= alpha_k^2 j_mk


def test_aba_inverts_rnea(model):
    data = model.create_data()
    rng = np.random.default_rng(2)
    q, (v, a), f_ext = random_q(model, rng), rng.normal(size=(2, model.nv)), rng.normal(size=(model.nbodies, 6))
    g = np.array([0.5, -0.2, -9.81])
    tau = rnea(model, data, q, v, a, f_ext, gravity=g)
    assert_close(aba(model, data, q, v, tau, f_ext, gravity=g), a)


def test_energy_and_linearity(model):
    """v^T M v = 2T with T summed body by body and rotor by rotor (seed 002 §6.3 test 2); Q_a is affine in a:
    rnea(q, v, a) = M a + rnea(q, v, 0) (test 4)."""
    data = model.create_data()
    rng = np.random.default_rng(3)
    q, (v, a) = random_q(model, rng), rng.normal(size=(2, model.nv))
    M = crba(model, data, q).copy()
    assert_close(v @ M @ v, 2.0 * kinetic_energy(model, data, q, v))
    forward_kinematics(model, data, q, v)
    assert_close(v @ M @ v, 2.0 * kinetic_energy_of_motion(model, data, v))   # from the kinematics' velocities
    assert_close(rnea(model, data, q, v, a), M @ a + rnea(model, data, q, v, np.zeros(model.nv)))


def test_passive_joint_forces_follow_the_actuator_law(model):
    """Seed 002 eq. (3): tau = Q_a + xi_v qdot + q_s sign(qdot) + k (q - q_ref)."""
    data = model.create_data()
    rng = np.random.default_rng(4)
    q, (v, a) = random_q(model, rng), rng.normal(size=(2, model.nv))
    v[0] = 0.0  # sign(0) = 0
    rigid = dataclasses.replace(model, dof_damping=np.zeros(model.nv), dof_friction=np.zeros(model.nv),
                                dof_stiffness=np.zeros(model.nv))
    spring = np.zeros(model.nv)
    for j in model.joints:
        if j.nv == 1:
            spring[j.idx_v] = model.dof_stiffness[j.idx_v] * (q[j.idx_q] - model.dof_spring_reference[j.idx_v])
    expected = model.dof_damping * v + model.dof_friction * np.sign(v) + spring
    assert_close(rnea(model, data, q, v, a) - rnea(rigid, rigid.create_data(), q, v, a), expected)


def test_mass_matrix_does_not_depend_on_the_first_joint_of_a_fixed_base():
    """Seed 002 §6.3 test 3: turning the whole arm about its first axis changes no kinetic energy."""
    model = geared(MODELS["ur5"], seed=5)
    data = model.create_data()
    q = random_q(model, np.random.default_rng(5))
    M = crba(model, data, q).copy()
    q[0] += 1.234
    assert_close(crba(model, data, q), M, 1e-12)


def test_floating_root_wrench_is_its_generalized_force():
    """For a free-flyer root, S = 1: the wrench the world exerts through the root joint is tau[:6]."""
    model = MODELS["talos_fb"]
    data = model.create_data()
    rng = np.random.default_rng(6)
    q, (v, a) = random_q(model, rng), rng.normal(size=(2, model.nv))
    tau = rnea(model, data, q, v, a)
    assert_close(data.f[0], tau[:6])


SCRIPT = """
import numpy as np
from engine.dynamics import aba, crba, kinetic_energy, rnea, frame_jacobian, com_jacobian
from engine.dynamics import forward_kinematics, kinetic_energy_of_motion
from tests.dynamics.test_identities import geared, MODELS, random_q
from tests.dynamics.test_pinocchio import robot
from engine.model.pinocchio_layout import pinocchio_q
import pinocchio as pin
for name in ("ur5", "random_tree"):
    model = geared(MODELS[name], seed=9)
    data = model.create_data()
    rng = np.random.default_rng(0)
    q, (v, a) = random_q(model, rng), rng.normal(size=(2, model.nv))
    M = crba(model, data, q).copy()
    tau = rnea(model, data, q, v, a)
    assert np.array_equal(rnea(model, data, list(q), v, a), tau)  # the converting path, without the JIT
    assert np.abs(aba(model, data, q, v, tau) - a).max() < 1e-9
    assert abs(v @ M @ v - 2 * kinetic_energy(model, data, q, v)) < 1e-9 * max(1, abs(v @ M @ v))
    forward_kinematics(model, data, q, v)
    assert abs(v @ M @ v - 2 * kinetic_energy_of_motion(model, data, v)) < 1e-9 * max(1, abs(v @ M @ v))
    z = np.zeros(model.nv)
    cols = np.array([rnea(model, data, q, z, e, gravity=np.zeros(3)) - rnea(model, data, q, z, z, gravity=np.zeros(3))
                     for e in np.eye(model.nv)]).T
    assert np.abs(M - cols).max() < 1e-9 * max(1, np.abs(M).max())
model, pm = robot("ur_description/urdf/ur5_robot.urdf", False)
data, pd = model.create_data(), pm.createData()
q = random_q(model, np.random.default_rng(1)); pq = pinocchio_q(model, pm, q)
assert np.abs(crba(model, data, q) - pin.crba(pm, pd, pq)).max() < 1e-9
J = pin.computeFrameJacobian(pm, pd, pq, pm.getFrameId(model.frame_name[5]), pin.WORLD)
assert np.abs(frame_jacobian(model, data, q, 5, "world") - J).max() < 1e-9
assert np.abs(com_jacobian(model, data, q) - pin.jacobianCenterOfMass(pm, pd, pq)).max() < 1e-9
import numba
assert numba.config.DISABLE_JIT
print("nojit ok")
"""


def test_kernels_run_as_plain_python_with_the_jit_disabled():
    """The kernels are plain Python under NUMBA_DISABLE_JIT=1 (debuggable, coverage-visible) and agree."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "nojit ok" in result.stdout


def test_kernel_cache_follows_the_helpers_it_inlines():
    """numba stamps a cache with the function's own file only; the engine's locator also covers the modules
    the kernel imports, so editing an inlined helper recompiles its callers instead of running stale code."""
    from engine.dynamics._kernels import cache, rnea as rnea_kernels

    locator = rnea_kernels.rnea._cache._impl.locator
    assert isinstance(locator, cache.EngineCacheLocator)
    kernel_file = Path(rnea_kernels.__file__).resolve()
    covered = {p.name for p in cache._imports(kernel_file)}
    assert {"algebra.py", "kinematics.py", "rotors.py", "pack.py"} <= covered
    assert locator.get_source_stamp()[1] == cache.dependency_digest(kernel_file)


def test_a_cache_index_naming_a_module_since_removed_is_a_miss(tmp_path, monkeypatch):
    """An index whose signatures name a type of a module that is gone (switching commits) is a cache miss, then
    rewritten, instead of ModuleNotFoundError at every import (numba unpickles the index before its stamp check)."""
    from numba.core.caching import IndexDataCacheFile

    import engine.dynamics._kernels.cache  # noqa: F401  (installs the reading of an unreadable index as a miss)
    (tmp_path / "gone_module.py").write_text("class Gone:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    gone_module = importlib.import_module("gone_module")     # a module of the test's own, written above

    def index():
        return IndexDataCacheFile(cache_path=str(tmp_path), filename_base="kernel-1.py311", source_stamp="stamp")
    index().save(("signature", "plain"), b"machine code")
    index().save(("signature", gone_module.Gone()), b"other machine code")
    assert index().load(("signature", "plain")) == b"machine code"
    del sys.modules["gone_module"]
    (tmp_path / "gone_module.py").unlink()
    importlib.invalidate_caches()
    assert index().load(("signature", "plain")) is None              # unreadable: a miss, not an ImportError
    index().save(("signature", "kept"), b"new machine code")
    assert index().load(("signature", "kept")) == b"new machine code"


@njit(cache=True)
def _bias_passes(mi, mf, ws, wd, q, v, tau, fext, g, ddq):
    bi, bf, di, df = split(mi, mf, ws.shape[0])
    bias_passes(bi, bf, di, df, ws, wd, q, v, tau, fext, g, ddq)


@pytest.mark.parametrize("seed", range(4))
def test_aba_under_other_forces_at_the_same_state_redoes_only_its_bias_passes_bit_for_bit(seed):
    """``aba.bias_passes`` after ``aba`` at the same (q, v) (the integration stage after the free dynamics: other
    external wrenches, other torques) gives the ddq of a whole ``aba`` on fresh data to the last bit, on random
    trees with geared rotors, passive joint forces, spherical, planar and free joints — IA, U and D^-1 depend on
    (q, v) only — and that ddq satisfies rnea(q, v, ddq) = τ + Σ J_iᵀ f_i (TOL)."""
    rng = np.random.default_rng(seed)
    model = geared(random_model(seed, nbodies=9, floating=seed % 2 == 0), seed)
    q, v = random_q(model, rng), rng.normal(size=model.nv)
    tau1, tau2 = rng.normal(size=model.nv), rng.normal(size=model.nv)
    f1, f2 = rng.normal(size=(model.nbodies, 6)), rng.normal(size=(model.nbodies, 6))
    data = model.create_data()
    aba(model, data, q, v, tau1, f1)
    pack = data.model_pack
    ddq = np.empty(model.nv)
    _bias_passes(pack.mi, pack.mf, data.ws, data.wd, q, v, tau2, f2, np.array([0.0, 0.0, -9.81]), ddq)
    assert np.array_equal(ddq, aba(model, model.create_data(), q, v, tau2, f2))
    tau_of_f = rnea(model, model.create_data(), q, v, ddq, f_ext=f2)
    np.testing.assert_allclose(tau_of_f, tau2, atol=TOL * max(1.0, np.abs(tau2).max()))
