"""engine.model.frames: modified DH (Khalil–Kleinfinger) and the 12 Euler / Tait–Bryan orders, against closed
forms built here from elementary rotations (engine.spatial, not scipy), and round trips (seed 004 §5.1)."""
import numpy as np
import pytest

from engine import spatial
from engine.model.frames import (EULER_ORDERS, PROPER_EULER_ORDERS, TAIT_BRYAN_ORDERS, dh_transform, euler_angles,
                                 euler_matrix)

AXES = {"x": [1.0, 0.0, 0.0], "y": [0.0, 1.0, 0.0], "z": [0.0, 0.0, 1.0]}
TOL = 1e-12


def rot(axis, angle):
    return spatial.rotation_axis_angle(AXES[axis], angle)


def homogeneous(R, p):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def test_twelve_orders():
    assert len(set(EULER_ORDERS)) == 12
    assert all(a != b and b != c for a, b, c in EULER_ORDERS)
    assert all(len(set(o)) == 3 for o in TAIT_BRYAN_ORDERS) and all(o[0] == o[2] for o in PROPER_EULER_ORDERS)


def test_dh_matches_khalil_dombre_matrix():
    """Khalil & Dombre 2002 §3.2, the printed matrix, and the product of the four elementary transforms."""
    rng = np.random.default_rng(4)
    for _ in range(50):
        alpha, d, theta, r = rng.uniform(-np.pi, np.pi), rng.normal(), rng.uniform(-np.pi, np.pi), rng.normal()
        ca, sa, ct, st = np.cos(alpha), np.sin(alpha), np.cos(theta), np.sin(theta)
        printed = np.array([[ct, -st, 0, d], [ca * st, ca * ct, -sa, -r * sa], [sa * st, sa * ct, ca, r * ca],
                            [0, 0, 0, 1]])
        product = (homogeneous(rot("x", alpha), [0, 0, 0]) @ homogeneous(np.eye(3), [d, 0, 0])
                   @ homogeneous(rot("z", theta), [0, 0, 0]) @ homogeneous(np.eye(3), [0, 0, r]))
        T = homogeneous(*dh_transform(alpha, d, theta, r))
        np.testing.assert_allclose(T, printed, atol=TOL)
        np.testing.assert_allclose(T, product, atol=TOL)


def test_dh_tree_parameters():
    """γ, b (Khalil & Dombre ch. 7): iTj = Rot(z, γ) Trans(z, b) Rot(x, α) Trans(x, d) Rot(z, θ) Trans(z, r)."""
    gamma, b, alpha, d, theta, r = 0.4, -0.3, 1.1, 0.25, -2.0, 0.7
    expected = (homogeneous(rot("z", gamma), [0, 0, 0]) @ homogeneous(np.eye(3), [0, 0, b])
                @ homogeneous(*dh_transform(alpha, d, theta, r)))
    np.testing.assert_allclose(homogeneous(*dh_transform(alpha, d, theta, r, gamma, b)), expected, atol=TOL)


def test_dh_joint_variable_is_about_and_along_z():
    """θ + q and r + q equal the table at q = 0 followed by Rot(z, q) or Trans(z, q): the joint axis is z_j."""
    alpha, d, theta, r, q = 0.7, 0.3, -0.4, 0.2, 1.3
    base = homogeneous(*dh_transform(alpha, d, theta, r))
    np.testing.assert_allclose(homogeneous(*dh_transform(alpha, d, theta + q, r)),
                               base @ homogeneous(rot("z", q), [0, 0, 0]), atol=TOL)
    np.testing.assert_allclose(homogeneous(*dh_transform(alpha, d, theta, r + q)),
                               base @ homogeneous(np.eye(3), [0, 0, q]), atol=TOL)


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_matrix_closed_form(order):
    """Intrinsic: R = R_a1(β) R_a2(ρ) R_a3(φ); extrinsic: R = R_a3(φ) R_a2(ρ) R_a1(β)."""
    rng = np.random.default_rng(sum(map(ord, order)))
    for _ in range(20):
        a = rng.uniform(-np.pi, np.pi, 3)
        intrinsic = rot(order[0], a[0]) @ rot(order[1], a[1]) @ rot(order[2], a[2])
        extrinsic = rot(order[2], a[2]) @ rot(order[1], a[1]) @ rot(order[0], a[0])
        np.testing.assert_allclose(euler_matrix(a, order), intrinsic, atol=TOL)
        np.testing.assert_allclose(euler_matrix(a, order, intrinsic=False), extrinsic, atol=TOL)


def test_known_cases_per_family():
    """Tait–Bryan: intrinsic zyx (yaw, pitch, roll) is URDF's rpy, extrinsic xyz (roll, pitch, yaw) too.
    Proper Euler: the classical z-x-z matrix (Goldstein, Classical Mechanics)."""
    roll, pitch, yaw = 0.3, -1.1, 2.4
    urdf = spatial.rotation_rpy(roll, pitch, yaw)
    np.testing.assert_allclose(euler_matrix([yaw, pitch, roll], "zyx"), urdf, atol=TOL)
    np.testing.assert_allclose(euler_matrix([roll, pitch, yaw], "xyz", intrinsic=False), urdf, atol=TOL)
    b, r, f = 0.5, 1.2, -0.8
    cb, sb, cr, sr, cf, sf = np.cos(b), np.sin(b), np.cos(r), np.sin(r), np.cos(f), np.sin(f)
    zxz = np.array([[cb * cf - sb * cr * sf, -cb * sf - sb * cr * cf, sb * sr],
                    [sb * cf + cb * cr * sf, -sb * sf + cb * cr * cf, -cb * sr],
                    [sr * sf, sr * cf, cr]])
    np.testing.assert_allclose(euler_matrix([b, r, f], "zxz"), zxz, atol=TOL)
    # a quarter turn about x, read off by hand: the columns are the images of x, y, z: x, z, -y
    np.testing.assert_allclose(euler_matrix([np.pi / 2, 0, 0], "xyz"), [[1, 0, 0], [0, 0, -1], [0, 1, 0]],
                               atol=TOL)


@pytest.mark.parametrize("intrinsic", [True, False])
@pytest.mark.parametrize("order", EULER_ORDERS)
def test_round_trip_away_from_singularities(order, intrinsic):
    rng = np.random.default_rng(len(order) + sum(map(ord, order)) + intrinsic)
    proper = order in PROPER_EULER_ORDERS
    for _ in range(200):
        a = np.array([rng.uniform(-np.pi + 1e-3, np.pi - 1e-3),
                      rng.uniform(1e-3, np.pi - 1e-3) if proper else rng.uniform(-np.pi / 2 + 1e-3, np.pi / 2 - 1e-3),
                      rng.uniform(-np.pi + 1e-3, np.pi - 1e-3)])
        np.testing.assert_allclose(euler_angles(euler_matrix(a, order, intrinsic), order, intrinsic), a,
                                   rtol=0, atol=TOL)


@pytest.mark.parametrize("intrinsic", [True, False])
@pytest.mark.parametrize("order", EULER_ORDERS)
def test_gimbal_lock_reproduces_the_matrix(order, intrinsic):
    """At ρ on the edge of its range only β ± φ is determined: φ = 0 and the matrix is still reproduced."""
    locks = (0.0, np.pi) if order in PROPER_EULER_ORDERS else (np.pi / 2, -np.pi / 2)
    for rho in locks:
        R = euler_matrix([0.7, rho, -0.4], order, intrinsic)
        a = euler_angles(R, order, intrinsic)
        assert a[2] == 0.0
        np.testing.assert_allclose(euler_matrix(a, order, intrinsic), R, atol=TOL)
        assert abs(a[1] - rho) < 1e-7


@pytest.mark.parametrize("bad", ["xxy", "abc", "xy", "XYZ", "rpy"])
def test_unknown_order(bad):
    with pytest.raises(ValueError, match="unknown rotation order"):
        euler_matrix([0, 0, 0], bad)
