"""``stance-pd``'s torque (one compiled call, ``control/_kernels.stance_torque``) against its definition written with
numpy: τ = τ_s + kp (q0 ⊖ q) − kd v (``integrators.difference``), clipped to the effort limits, zero on the passive
(free-flyer) dofs — the same arithmetic, so the same bits, near q0 and far enough that the clip is active."""
import warnings

import numpy as np

import engine
from engine.control.stance import StancePD
from engine.dynamics.integrators import difference, integrate
from engine.model.paths import example_robot_data_dir


def test_stance_pd_torque_is_its_numpy_definition():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # <mimic> joints simulated as independent joints
        model = engine.load_model(str(example_robot_data_dir() / "talos_data/robots/talos_reduced.urdf"),
                                  floating_base=True)
    rng = np.random.default_rng(3)
    q0 = engine.neutral(model)
    q0[2] = 1.0
    ctrl = StancePD(model, q0, np.array([0.0, 0.0, -9.81]), kp=2000.0, kd=20.0)
    clipped = 0
    for scale in (1e-3, 1e-1, 1.0):
        for _ in range(5):
            q = integrate(model, q0, scale * rng.normal(size=model.nv))
            v = scale * rng.normal(size=model.nv)
            tau = ctrl.tau_s + ctrl.kp * difference(model, q, q0) - ctrl.kd * v
            expected = np.clip(tau, -model.dof_effort_limit, model.dof_effort_limit) * ctrl.mask
            np.testing.assert_array_equal(ctrl.control(0.0, q, v), expected)
            clipped += np.count_nonzero(np.abs(tau) > model.dof_effort_limit)
    assert clipped > 0 and np.all(ctrl.control(0.0, q0, np.zeros(model.nv))[~ctrl.mask] == 0.0)
