"""Closed chains as constrained dynamics (engine/dynamics/closures.py): the closure rows J and J̇v against finite
differences of the anchors' motion, the accelerations against the KKT system of Lagrange's equations with
multipliers (Chessé 2002 eq. I.7, I.15), the velocity projection; on the 5-bar with its point closure and a hinge
closure added."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.dynamics import crba, forward_kinematics
from engine.dynamics.closures import closed_chain_acceleration, closure_rows, project_velocity
from engine.dynamics.integrators import integrate, random_configuration
from engine.model import Closure
from engine.spatial import rotation_axis_angle

ROOT = Path(__file__).resolve().parents[2]
EPS = 1e-6


@pytest.fixture(scope="module")
def five_bar():
    return engine.load_model(ROOT / "assets/robots/five_bar.xml")


@pytest.fixture(scope="module")
def with_hinge(five_bar):
    """The 5-bar with its point closure O5 and a hinge closure between S3 and S1 (anywhere: it need not hold)."""
    hinge = Closure("H", "hinge", 2, rotation_axis_angle([0.2, 1.0, 0.3], 0.4), np.array([0.3, 0.01, 0.0]), 0,
                    rotation_axis_angle([1.0, 0.0, 0.2], -0.3), np.array([0.1, 0.0, 0.05]))
    return replace(five_bar, closures=five_bar.closures + (hinge,))


@pytest.fixture(scope="module")
def hinged_at_O5(five_bar):
    """The 5-bar closed at O5 by a hinge about the joints' axis -y instead of a point: it can move."""
    (c,) = five_bar.closures
    axis = rotation_axis_angle([1.0, 0.0, 0.0], np.pi / 2)              # z -> -y
    return replace(five_bar, closures=(replace(c, kind="hinge", R_a=axis, R_b=axis),))


def anchors(model, data, q):
    """World positions of both anchors of each closure and the rotations of the hinge's two ends."""
    forward_kinematics(model, data, q)
    out = []
    for c in model.closures:
        for body, R, p in ((c.body_a, c.R_a, c.p_a), (c.body_b, c.R_b, c.p_b)):
            BR, Bp = (data.oMi_R[body], data.oMi_p[body]) if body >= 0 else (np.eye(3), np.zeros(3))
            out.append((BR @ p + Bp, BR @ R))
    return out


def row_velocities(model, data, q, v):
    """u = v_a(x_a) − v_b(x_b) and, for a hinge, (ω_a − ω_b)·e_k (e_k the first two axes of a's anchor), by
    central differences of the anchors along q ⊕ t v."""
    plus = anchors(model, data, integrate(model, q, EPS * v))
    minus = anchors(model, data, integrate(model, q, -EPS * v))
    now = anchors(model, data, q)
    u = []
    for k, c in enumerate(model.closures):
        (xa_p, Ra_p), (xb_p, Rb_p) = plus[2 * k], plus[2 * k + 1]
        (xa_m, Ra_m), (xb_m, Rb_m) = minus[2 * k], minus[2 * k + 1]
        u.append(((xa_p - xb_p) - (xa_m - xb_m)) / (2 * EPS))
        if c.kind == "hinge":
            def omega(Rp, Rm, R):
                W = (Rp - Rm) / (2 * EPS) @ R.T
                return np.array([W[2, 1], W[0, 2], W[1, 0]])
            (_, Ra), (_, Rb) = now[2 * k], now[2 * k + 1]
            u.append(Ra[:, :2].T @ (omega(Ra_p, Ra_m, Ra) - omega(Rb_p, Rb_m, Rb)))
    return np.concatenate(u)


def test_rows_are_the_anchor_motion(with_hinge):
    """J v = the rows' velocity at random (q, v), J̇ v = its rate along q ⊕ t v (v fixed); 8 rows: 3 + 5."""
    model = with_hinge
    data, rng = model.create_data(), np.random.default_rng(6)
    for _ in range(5):
        q, v = random_configuration(model, rng), rng.normal(size=model.nv)
        J, Jdot_v = closure_rows(model, data, q, v)
        assert J.shape == (8, model.nv)
        np.testing.assert_allclose(J @ v, row_velocities(model, data, q, v), atol=1e-8)
        Jp, _ = closure_rows(model, data, integrate(model, q, EPS * v), v)
        Jm, _ = closure_rows(model, data, integrate(model, q, -EPS * v), v)
        np.testing.assert_allclose(Jdot_v, (Jp - Jm) @ v / (2 * EPS), atol=1e-7)


@pytest.mark.parametrize("closure", ["point", "hinge"])
def test_acceleration_solves_lagrange_with_multipliers(five_bar, hinged_at_O5, closure):
    """a from (I.16) solves the KKT system M a − Jᵀλ = τ − h, J a = −J̇v (I.7, I.15), built from our crba and rnea
    (h = rnea(q, v, 0)) with the rows' redundancy removed (the planar loop's out-of-plane rows are zero)."""
    five_bar = five_bar if closure == "point" else hinged_at_O5
    data, rng = five_bar.create_data(), np.random.default_rng(7)
    for _ in range(5):
        q, v, tau = random_configuration(five_bar, rng), rng.normal(size=4), rng.normal(size=4)
        a = closed_chain_acceleration(five_bar, data, q, v, tau)
        J, Jdot_v = closure_rows(five_bar, data, q, v)
        np.testing.assert_allclose(J @ a, -Jdot_v, atol=1e-9)
        M, h = crba(five_bar, data, q).copy(), engine.rnea(five_bar, data, q, v, np.zeros(4))
        U, s, Vt = np.linalg.svd(J)
        rows = Vt[:np.count_nonzero(s > 1e-10 * s[0])]             # an orthonormal basis of J's row space
        rhs = rows @ np.linalg.pinv(J) @ -Jdot_v
        K = np.block([[M, -rows.T], [rows, np.zeros((len(rows), len(rows)))]])
        expected = np.linalg.solve(K, np.r_[tau - h, rhs])[:4]
        np.testing.assert_allclose(a, expected, rtol=1e-10, atol=1e-10)


def test_velocity_projection_is_the_nearest_admissible_velocity(five_bar):
    """J v⁺ = 0, and v − v⁺ is M-orthogonal to every admissible velocity (the null space of J)."""
    data, rng = five_bar.create_data(), np.random.default_rng(8)
    q, v = random_configuration(five_bar, rng), rng.normal(size=4)
    w = project_velocity(five_bar, data, q, v)
    J, _ = closure_rows(five_bar, data, q, v)
    np.testing.assert_allclose(J @ w, 0.0, atol=1e-12)
    _, s, Vt = np.linalg.svd(J)
    null = Vt[np.count_nonzero(s > 1e-10 * s[0]):]
    np.testing.assert_allclose(null @ crba(five_bar, data, q) @ (v - w), 0.0, atol=1e-12)
