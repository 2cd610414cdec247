"""Bad input at the public boundary of the dynamics algorithms: a ValueError naming the argument, the index
and the value; quaternions slightly off unit are normalised with a warning, far-off ones rejected."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import engine
from engine.dynamics import (aba, centroidal_momentum, com, crba, forward_kinematics, frame_jacobian,
                             frame_jacobian_dot_v, frame_placement, point_jacobian, potential_energy, rnea)
from engine.dynamics._kernels import rnea as _kernels
from tests.dynamics.test_pinocchio import robot

SOLO = robot("solo_description/robots/solo12.urdf", True)[0]
UR5 = robot("ur_description/urdf/ur5_robot.urdf", False)[0]


@pytest.fixture
def solo():
    model = SOLO
    q = engine.neutral(model)
    return model, model.create_data(), q, np.zeros(model.nv)


@pytest.mark.parametrize("call,name,size", [
    (lambda m, d, q, v: rnea(m, d, q[:-1], v, v), "q", 19),
    (lambda m, d, q, v: rnea(m, d, q, v[:-1], v), "v", 18),
    (lambda m, d, q, v: rnea(m, d, q, v, np.zeros(19)), "a", 18),
    (lambda m, d, q, v: aba(m, d, q, v, np.zeros((18, 1))), "tau", 18),
    (lambda m, d, q, v: crba(m, d, np.zeros(18)), "q", 19),
    (lambda m, d, q, v: forward_kinematics(m, d, q, v[:3]), "v", 18),
    (lambda m, d, q, v: rnea(m, d, q, v, v, gravity=(0.0, -9.81)), "gravity", 3),
])
def test_wrong_sizes_name_the_argument(solo, call, name, size):
    model, data, q, v = solo
    with pytest.raises(ValueError, match=rf"^{name} must have shape \({size},\)"):
        call(model, data, q, v)


def test_wrong_f_ext_shape(solo):
    model, data, q, v = solo
    with pytest.raises(ValueError, match=r"f_ext must have shape \(13, 6\)"):
        rnea(model, data, q, v, v, f_ext=np.zeros((12, 6)))


@pytest.mark.parametrize("argument,index,bad", [("q", 9, np.nan), ("v", 4, np.inf), ("a", 17, -np.inf)])
def test_non_finite_rnea_input_is_named(solo, argument, index, bad):
    model, data, q, v = solo
    args = {"q": q.copy(), "v": v.copy(), "a": v.copy()}
    args[argument][index] = bad
    with pytest.raises(ValueError, match=rf"^{argument}\[{index}\] is {re.escape(str(bad))}: inputs must be finite"):
        rnea(model, data, args["q"], args["v"], args["a"])


def test_non_finite_aba_inputs_and_wrenches(solo):
    model, data, q, v = solo
    tau = v.copy()
    tau[5] = np.nan
    with pytest.raises(ValueError, match=r"^tau\[5\] is nan"):
        aba(model, data, q, v, tau)
    f_ext = np.zeros((model.nbodies, 6))
    f_ext[3, 2] = np.inf
    with pytest.raises(ValueError, match=rf"^f_ext\[\(3, 2\)\] \(body '{model.body_name[3]}'\) is inf"):
        aba(model, data, q, v, v, f_ext)
    with pytest.raises(ValueError, match=r"^gravity\[2\] is nan"):
        aba(model, data, q, v, v, gravity=(0.0, 0.0, np.nan))


@pytest.mark.parametrize("call", [crba, com, lambda m, d, q: frame_jacobian(m, d, q, 3, "world"),
                                  lambda m, d, q: forward_kinematics(m, d, q), potential_energy])
def test_every_algorithm_checks_q(solo, call):
    model, data, q, _ = solo
    q[12] = np.nan
    with pytest.raises(ValueError, match=r"^q\[12\] is nan"):
        call(model, data, q)


def test_slightly_off_unit_quaternion_is_normalised_with_a_warning(solo):
    model, data, q, v = solo
    q[3:7] = np.array([0.1, -0.2, 0.3, 0.9])
    q[3:7] /= np.linalg.norm(q[3:7])
    expected = crba(model, data, q).copy()
    with pytest.warns(RuntimeWarning, match=r"q\[3:7\] \(quaternion of joint 'root_joint'\) has norm 1.0005"):
        off = crba(model, data, q * np.r_[1, 1, 1, 1.0005, 1.0005, 1.0005, 1.0005, np.ones(12)])
    np.testing.assert_allclose(off, expected, rtol=1e-12, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # integration round-off (1e-9) is silent
        crba(model, data, q * np.r_[1, 1, 1, 1 + 1e-9, 1 + 1e-9, 1 + 1e-9, 1 + 1e-9, np.ones(12)])


@pytest.mark.parametrize("quat", [(0.0, 0.0, 0.0, 2.0), (0.0, 0.0, 0.0, 0.0), (0.1, 0.0, 0.0, 0.99)])
def test_far_off_quaternion_is_rejected(solo, quat):
    model, data, q, v = solo
    q[3:7] = quat
    with pytest.raises(ValueError, match=r"^q\[3:7\] \(quaternion of joint 'root_joint'\) has norm .*a unit vector"):
        aba(model, data, q, v, v)


def test_data_of_another_model_is_refused(solo):
    model, _, q, v = solo
    with pytest.raises(ValueError, match="data was created for"):
        rnea(model, UR5.create_data(), q, v, v)


def test_bad_indices_and_references(solo):
    model, data, q, v = solo
    nf = len(model.frame_name)
    for bad in (nf, -1, 2.0, "base_link", True):
        with pytest.raises(ValueError, match=rf"^frame_index must be an integer in \[0, {nf}\)"):
            frame_jacobian(model, data, q, bad)
    with pytest.raises(ValueError, match=r"^frame_index"):
        frame_placement(model, data, nf)
    with pytest.raises(ValueError, match=r"^reference must be one of"):
        frame_jacobian_dot_v(model, data, q, v, 0, "global")
    with pytest.raises(ValueError, match=r"^body must be an integer in \[0, 13\)"):
        point_jacobian(model, data, 13, np.zeros(3))
    with pytest.raises(ValueError, match=r"^point_body\[1\] is nan"):
        point_jacobian(model, data, 0, [0.0, np.nan, 0.0])


def test_sequences_and_other_dtypes_are_accepted():
    model = UR5
    data = model.create_data()
    q = [0.1, -0.2, 0.3, 0.4, -0.5, 0.6]
    expected = rnea(model, data, np.array(q), np.zeros(6), np.zeros(6))
    np.testing.assert_array_equal(rnea(model, data, q, [0] * 6, np.zeros(6, dtype=np.float32)), expected)
    read_only = np.array(q)
    read_only.setflags(write=False)
    np.testing.assert_array_equal(rnea(model, data, read_only, np.zeros(6), np.zeros(6)), expected)
    np.testing.assert_array_equal(rnea(model, data, np.array([q, q]).T[:, 0], np.zeros(6), np.zeros(6)), expected)
    assert len(_kernels.rnea.signatures) == 1  # converted, never compiled for another argument type


def test_results_are_copies(solo):
    model, data, q, v = solo
    first = rnea(model, data, q, v, v)
    rnea(model, data, q, v, np.ones(model.nv))
    assert not np.array_equal(first, data.tau)
    assert centroidal_momentum(model, data, q, v) is not data.out
