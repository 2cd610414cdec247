"""The ideal rolling-disk contact and the constrained dynamics of the benchmark bicycle (issue 12, parts 1-2;
seed 001 §2.4-2.6, acceptance tests A4, A5, A7 of its §5.2)."""
import math
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.dynamics.integrators import step_rk4
from engine.dynamics.rolling import (AdamsBashforthMoulton4, RollingDisks, consistent_velocity, null_space_dynamics,
                                     project, rolling_dynamics, step_rolling)
from engine.spatial import rotation_to_quaternion

BIKE = Path(__file__).parents[2] / "assets" / "robots" / "benchmark_bicycle.urdf"
H2, H3, G = 0.35, 0.3, 9.81


@pytest.fixture(scope="module")
def bike():
    model = engine.load_model(BIKE, floating_base=True)
    body = {name: b for b, name in enumerate(model.body_name)}
    dof = {j.name: j.idx_v for j in model.joints}
    return model, model.create_data(), body, dof


def upright(bike, slope=0.0):
    """(q, disks): the bicycle upright on a plane rising by ``slope`` (rad) forward, both wheels touching; R0 =
    (up, forward, left) of the plane, the rear hub h3 above the origin."""
    model, _, body, _ = bike
    up = np.array([-math.sin(slope), 0.0, math.cos(slope)])
    forward = np.array([math.cos(slope), 0.0, math.sin(slope)])
    q = engine.neutral(model)
    q[3:7] = rotation_to_quaternion(np.column_stack([up, forward, np.cross(up, forward)]))
    q[:3] = H3 * up
    disks = RollingDisks(bodies=(body["front_wheel"], body["rear_wheel"]), radii=(H2, H3),
                         axes=((0, 1, 0), (0, 0, 1)), up=up)
    return q, disks


def energy(model, data, q, v):
    return engine.kinetic_energy(model, data, q, v) + engine.potential_energy(model, data, q)


def test_the_upright_kernel_is_meijaard_s_linear_kinematics(bike):
    """A7: at the nominal upright pose the constraints give Ω1 = (c cos μ / w) ṙ1 = 0.074635 ṙ1, V2 = h3 ṙ3,
    ṙ2 = (h3/h2) ṙ3 = 0.857143 ṙ3 and V3 = −h3 Ω2 (V, Ω: the frame's velocity, R0 axes up, forward, left)."""
    model, data, _, dof = bike
    q, disks = upright(bike)
    assert np.abs(disks.altitudes(model, data, q)).max() < 1e-15
    steer, rear, roll = dof["steer"], dof["rear_spin"], 4
    v = consistent_velocity(model, data, q, disks, {roll: 0.0, steer: 1.0, rear: 0.0})
    assert v[3] == pytest.approx(0.074635, abs=5e-7)
    v = consistent_velocity(model, data, q, disks, {roll: 0.0, steer: 0.0, rear: 1.0})
    assert v[1] == pytest.approx(H3, abs=1e-12) and v[dof["front_spin"]] == pytest.approx(H3 / H2, abs=1e-12)
    v = consistent_velocity(model, data, q, disks, {roll: 1.0, steer: 0.0, rear: 0.0})
    assert v[2] == pytest.approx(-H3, abs=1e-12)
    assert np.abs(disks.jacobian(model, data, q) @ v).max() < 1e-12


def test_the_contact_point_is_the_lowest_rim_point(bike):
    """Leaned, steered, pitched: each contact point lies on its rim and no rim point is lower (to 1e-12 m)."""
    model, data, body, _ = bike
    rng = np.random.default_rng(1)
    q, disks = upright(bike)
    for _ in range(5):
        q = engine.integrate(model, q, rng.normal(scale=0.4, size=model.nv))
        engine.forward_kinematics(model, data, q)
        C, _ = disks.contact_points(model, data)
        for k, (b, h, axis) in enumerate(zip(disks.bodies, disks.radii, disks.axes)):
            R, p = data.oMi_R[b], data.oMi_p[b]
            a = R @ np.asarray(axis, float)
            assert abs(np.linalg.norm(C[k] - p) - h) < 1e-12 and abs((C[k] - p) @ a) < 1e-12
            e1 = np.cross(a, [1.0, 0.3, 0.2])
            e1 /= np.linalg.norm(e1)
            e2 = np.cross(a, e1)
            angles = np.linspace(0, 2 * np.pi, 20001)
            rim = p + h * (np.outer(np.cos(angles), e1) + np.outer(np.sin(angles), e2))
            assert C[k] @ disks.up <= (rim @ disks.up).min() + 1e-12


def test_lagrange_multipliers_and_the_null_space_agree(bike):
    """Checklist item 3: the KKT and the null-space forms give the same accelerations and contact forces to
    1e-10, on a leaned, steered, moving bicycle (its state put on the constraints first)."""
    model, data, _, dof = bike
    q, disks = upright(bike)
    q = engine.integrate(model, q, np.array([0, 0, 0, 0, 0.2, 0, 0.3, 0.5, -1.0]))   # lean 0.2, steer 0.3
    v = np.random.default_rng(2).normal(size=model.nv)
    q, v = project(model, data, q, v, disks)
    tau = np.zeros(model.nv)
    tau[dof["steer"]], tau[dof["rear_spin"]] = 2.0, 5.0
    a, lam = rolling_dynamics(model, data, q, v, tau, disks)
    a_n, lam_n = null_space_dynamics(model, data, q, v, tau, disks)
    np.testing.assert_allclose(a, a_n, rtol=0, atol=1e-10)
    np.testing.assert_allclose(lam, lam_n, rtol=0, atol=1e-10)
    assert np.abs(disks.jacobian(model, data, q) @ a + disks.jacobian_rate(model, data, q, v)).max() < 1e-9


def test_the_benchmark_bicycle_rights_itself_at_4_6_m_s(bike):
    """A4 (thesis L1762): from V = 4.6 m/s with a roll rate of 0.5 rad/s and no torque, the weave decays and
    V → 4.622 m/s at 5 s, the energy constant (observed drift 1e-13 relative; bound 1e-9) and both wheels on
    the ground (|Φ| ≤ 1e-12 m with the projection; RK4, 1 ms)."""
    model, data, _, dof = bike
    q, disks = upright(bike)
    v = consistent_velocity(model, data, q, disks, {4: 0.5, dof["steer"]: 0.0, dof["rear_spin"]: 4.6 / H3})
    E0, peak_roll = energy(model, data, q, v), 0.0
    for k in range(5000):
        q, v = step_rolling(model, data, q, v, np.zeros(model.nv), 1e-3, disks)
        if k >= 4000:
            peak_roll = max(peak_roll, abs(v[4]))
    assert v[1] == pytest.approx(4.622, abs=0.005)
    assert abs(energy(model, data, q, v) - E0) < 1e-9 * E0
    assert np.abs(disks.altitudes(model, data, q)).max() < 1e-12
    assert peak_roll < 0.15                                 # the weave has decayed from 0.5 rad/s


def test_an_upright_run_up_a_10_degree_incline_stops_at_2_80_s(bike):
    """A5: 4.6 m/s up 10°, upright: it stays upright, E = T + U = 1870 J (T0 = 1032.8 J, U0 = 836.8 J from the
    rear contact: digest §3.5, 1869.6 J) stays constant, and it stops where its kinetic energy runs out:
    t = v0 / (g sin 10° · 94 / m_eff), m_eff = 94 + 0.12/h3² + 0.28/h2² = 97.619 kg: 2.80 s (the digest's
    correction of the thesis's printed 3.40 s)."""
    model, data, _, dof = bike
    q, disks = upright(bike, math.radians(10.0))
    v = consistent_velocity(model, data, q, disks, {4: 0.0, dof["steer"]: 0.0, dof["rear_spin"]: 4.6 / H3})
    E0 = energy(model, data, q, v)
    assert engine.kinetic_energy(model, data, q, v) == pytest.approx(1032.8, abs=0.05)
    assert E0 == pytest.approx(1869.6, abs=1.0)
    m_eff = 94 + 0.12 / H3 ** 2 + 0.28 / H2 ** 2
    t_stop = 4.6 / (G * math.sin(math.radians(10.0)) * 94 / m_eff)
    previous, stopped = v[1], None
    for k in range(3000):
        q, v = step_rolling(model, data, q, v, np.zeros(model.nv), 1e-3, disks)
        if stopped is None and previous > 0.0 >= v[1]:
            stopped = (k + 1) * 1e-3 - 1e-3 * v[1] / (v[1] - previous)
        previous = v[1]
    assert stopped == pytest.approx(t_stop, abs=1e-3) and t_stop == pytest.approx(2.80, abs=0.01)
    assert abs(v[4]) < 1e-9                                   # still upright, rolling back
    assert abs(energy(model, data, q, v) - E0) < 1e-9 * E0


def test_a_steer_of_1e_8_rad_on_the_incline_falls_with_constant_energy(bike):
    """A6 (thesis L1811-L1827): as A5 with r1(0) = 1e-8 rad. The upright run is unstable at low speed: the
    bicycle climbs, stops (2.80 s), rolls back, and the steering's 1e-8 grows until it turns away and the frame
    falls (lean past 60° here at about 4.7 s; the thesis's contacts are bilateral, so do ours). Through the fall
    E = T + U stays 1869.6 J: within the digest's ±1 J of 1870 J, and to 1e-6 relative of its initial value."""
    model, data, body, dof = bike
    q, disks = upright(bike, math.radians(10.0))
    q[next(j.idx_q for j in model.joints if j.name == "steer")] = 1e-8
    q, _ = project(model, data, q, np.zeros(model.nv), disks)
    v = consistent_velocity(model, data, q, disks, {4: 0.0, dof["steer"]: 0.0, dof["rear_spin"]: 4.6 / H3})
    E0, fell = energy(model, data, q, v), None
    assert E0 == pytest.approx(1870.0, abs=1.0)
    for k in range(6000):
        q, v = step_rolling(model, data, q, v, np.zeros(model.nv), 1e-3, disks)
        engine.forward_kinematics(model, data, q)
        lean = np.degrees(np.arccos(min(1.0, data.oMi_R[body["frame"]][:, 0] @ disks.up)))   # s0 off the normal
        assert abs(energy(model, data, q, v) - E0) < 1e-6 * E0, k
        if lean > 60.0:
            fell = (k + 1) * 1e-3
            break
    assert fell is not None and fell > 2.8                    # after it has stopped and rolled back


def test_the_closed_form_jacobian_rate_is_the_limit_of_central_differences(bike):
    """J̇v in closed form (contact point moving over the rim) against (J(q ⊕ εv) − J(q ⊖ εv)) v / 2ε at random
    configurations and velocities off the constraints, on a tilted plane: the difference falls as ε² (by 100 ± 5 %
    from ε = 1e-4 to 1e-5) and is below 1e-8 of |J̇v| at ε = 1e-5."""
    model, data, body, _ = bike
    up = np.array([0.1, -0.2, 1.0]) / np.linalg.norm([0.1, -0.2, 1.0])
    disks = RollingDisks(bodies=(body["front_wheel"], body["rear_wheel"]), radii=(H2, H3),
                         axes=((0, 1, 0), (0, 0, 1)), up=up)
    rng = np.random.default_rng(3)
    for _ in range(4):
        q = engine.integrate(model, engine.neutral(model), rng.normal(scale=0.5, size=model.nv))
        v = 3.0 * rng.normal(size=model.nv)
        exact = disks.jacobian_rate(model, data, q, v)
        errors = []
        for eps in (1e-4, 1e-5):
            ahead = disks.jacobian(model, data, engine.integrate(model, q, eps * v)) @ v
            behind = disks.jacobian(model, data, engine.integrate(model, q, -eps * v)) @ v
            errors.append(np.abs((ahead - behind) / (2 * eps) - exact).max())
        assert errors[0] / errors[1] == pytest.approx(100.0, rel=0.05)
        assert errors[1] < 1e-8 * np.abs(exact).max()


# Table 2.2 (thesis L1795-L1802): mean vertical velocity of the front contact point without correction, ABM4, m/s
TABLE_2_2 = {0.01: 0.0655e-6, 0.005: 0.0030815e-6, 0.0025: 0.00015257e-6, 0.001: 0.00000321e-6}


def test_the_drift_without_correction_is_fourth_order_like_table_2_2(bike):
    """A9: the self-stabilisation run (A4) for 5 s without the projection (RK4 on the KKT dynamics, J̇v in closed
    form): the front contact point leaves the ground at a mean vertical velocity Φ(5 s)/5 s that falls as δt⁴
    (each halving of δt by 16 = 2⁴ within ±25 %, 0.0025 → 0.001 s by 2.5⁴ = 39), as the thesis's ABM4 drift does
    (its ratios 21, 20, 48); ours is smaller, between 1/100 and 1 of Table 2.2 at every δt (measured 1/24 to
    1/12: RK4's error constant is smaller than Adams-Bashforth-Moulton's here)."""
    model, data, _, dof = bike
    drift = {}
    for dt in TABLE_2_2:
        q, disks = upright(bike)
        v = consistent_velocity(model, data, q, disks, {4: 0.5, dof["steer"]: 0.0, dof["rear_spin"]: 4.6 / H3})

        def acceleration(model, data, q, v, tau, f_ext, gravity):
            return rolling_dynamics(model, data, q, v, tau, disks, gravity, f_ext)[0]
        for _ in range(int(round(5.0 / dt))):
            q, v = step_rk4(model, data, q, v, np.zeros(model.nv), dt, acceleration=acceleration)
        drift[dt] = abs(disks.altitudes(model, data, q)[0]) / 5.0
    steps = list(TABLE_2_2)
    for coarse, fine in zip(steps, steps[1:]):
        assert drift[coarse] / drift[fine] == pytest.approx((coarse / fine) ** 4, rel=0.25), (coarse, drift)
    for dt, published in TABLE_2_2.items():
        assert published / 100 < drift[dt] < published, (dt, drift[dt])


def numpy_step(model, data, q, v, dt, disks):
    """One rolling step in plain numpy, the reference of the kernel ``rolling_step``: RK4 (``step_rk4``) on the
    KKT system [M Jᵀ; J 0] [a; −λ] = [τ − h; −J̇v] (np.linalg.solve), then Gauss–Newton on the altitudes and the
    velocity projection v − M⁻¹Jᵀ(J M⁻¹Jᵀ)⁻¹ J v."""
    def acceleration(model, data, q, v, tau, f_ext, gravity):
        M, J = engine.crba(model, data, q).copy(), disks.jacobian(model, data, q)
        h = engine.rnea(model, data, q, v, np.zeros(model.nv), gravity=gravity)
        K = np.block([[M, J.T], [J, np.zeros((len(J), len(J)))]])
        return np.linalg.solve(K, np.concatenate([tau - h, -disks.jacobian_rate(model, data, q, v)]))[:model.nv]
    q, v = step_rk4(model, data, q, v, np.zeros(model.nv), dt, acceleration=acceleration)
    for _ in range(10):
        phi = disks.altitudes(model, data, q)
        if np.abs(phi).max() <= 1e-13:
            break
        G = disks.up @ disks.jacobian(model, data, q).reshape(len(phi), 3, -1)
        q = engine.integrate(model, q, -G.T @ np.linalg.solve(G @ G.T, phi))
    M, J = engine.crba(model, data, q).copy(), disks.jacobian(model, data, q)
    Minv_JT = np.linalg.solve(M, J.T)
    return q, v - Minv_JT @ np.linalg.solve(J @ Minv_JT, J @ v)


def test_the_rolling_step_kernel_is_the_numpy_step(bike):
    """The one-call kernel (Schur complement on M's Cholesky factor, RK4 on the group, projection) against the
    numpy reference above, over 300 steps of a leaned, steered bicycle on a tilted plane: to 1e-11."""
    model, data, body, dof = bike
    up = np.array([0.05, -0.1, 1.0]) / np.linalg.norm([0.05, -0.1, 1.0])
    disks = RollingDisks(bodies=(body["front_wheel"], body["rear_wheel"]), radii=(H2, H3),
                         axes=((0, 1, 0), (0, 0, 1)), up=up, origin=np.array([0.0, 0.0, -0.02]))
    q, _ = upright(bike)
    q = engine.integrate(model, q, np.array([0, 0, 0, 0, 0.15, 0, 0.2, 0.5, -1.0]))
    q, v = project(model, data, q, np.zeros(model.nv), disks)
    v = consistent_velocity(model, data, q, disks, {4: 0.4, dof["steer"]: -0.3, dof["rear_spin"]: 4.0 / H3})
    q_ref, v_ref = q.copy(), v.copy()
    for _ in range(300):
        q, v = step_rolling(model, data, q, v, np.zeros(model.nv), 1e-3, disks)
        q_ref, v_ref = numpy_step(model, data, q_ref, v_ref, 1e-3, disks)
    assert np.abs(q - q_ref).max() < 1e-11 and np.abs(v - v_ref).max() < 1e-11
    assert np.abs(disks.altitudes(model, data, q)).max() < 1e-13


def test_the_rolling_kernels_without_jit(bike):
    """The same kernels as plain Python (NUMBA_DISABLE_JIT=1): 20 steps equal the numpy reference to 1e-12."""
    import os
    import subprocess
    import sys
    root = Path(__file__).parents[2]
    script = """
import numpy as np
import engine
from tests.dynamics.test_rolling import BIKE, H3, consistent_velocity, numpy_step, step_rolling, upright
model = engine.load_model(BIKE, floating_base=True)
data, dof = model.create_data(), {j.name: j.idx_v for j in model.joints}
b = (model, data, {n: i for i, n in enumerate(model.body_name)}, dof)
q, disks = upright(b)
v = consistent_velocity(model, data, q, disks, {4: 0.5, dof["steer"]: 0.1, dof["rear_spin"]: 4.6 / H3})
q_ref, v_ref = q.copy(), v.copy()
for _ in range(20):
    q, v = step_rolling(model, data, q, v, np.zeros(model.nv), 1e-3, disks)
    q_ref, v_ref = numpy_step(model, data, q_ref, v_ref, 1e-3, disks)
assert np.abs(q - q_ref).max() < 1e-12 and np.abs(v - v_ref).max() < 1e-12, (q - q_ref, v - v_ref)
"""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(root))
    run = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_the_rolling_step_names_bad_inputs_and_a_flat_wheel(bike):
    """A NaN torque, a wrong-sized velocity and a wheel lying flat (its contact point undefined: J M⁻¹Jᵀ
    singular) are refused by name."""
    model, data, _, dof = bike
    q, disks = upright(bike)
    v, tau = np.zeros(model.nv), np.zeros(model.nv)
    tau[dof["steer"]] = np.nan
    with pytest.raises(ValueError, match=r"tau\[7\] is nan"):
        step_rolling(model, data, q, v, tau, 1e-3, disks)
    with pytest.raises(ValueError, match=r"v must have shape \(9,\)"):
        step_rolling(model, data, q, np.zeros(4), np.zeros(model.nv), 1e-3, disks)
    flat = engine.integrate(model, q, np.array([0, 0, 0, 0, math.pi / 2, 0, 0, 0, 0]))   # lean 90°
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        step_rolling(model, data, flat, v, np.zeros(model.nv), 1e-3, disks)


def test_adams_bashforth_moulton_4_converges_at_order_4_with_half_the_evaluations(bike):
    """ABM4 (PECE, RK4-started) on 1 s of the self-stable run (A4's start): its error against RK4 at δt/64 falls by
    2⁴ = 16 within ±25 % at each halving of δt = 4, 2, 1 ms (measured 15.9-16.5), as RK4's does; with two
    evaluations a step to RK4's four, ABM4 at δt/2 is more accurate than RK4 at δt for the same work (measured
    3.9×), which is why the thesis used it (Table 2.2). Its error constant is about 4× RK4's at the same δt."""
    model, data, _, dof = bike
    q0, disks = upright(bike)
    v0 = consistent_velocity(model, data, q0, disks, {4: 0.5, dof["steer"]: 0.0, dof["rear_spin"]: 4.6 / H3})

    def run(dt, stepper):
        q, v = q0.copy(), v0.copy()
        for _ in range(int(round(1.0 / dt))):
            q, v = stepper(model, data, q, v, np.zeros(model.nv), dt, disks)
        return q, v
    q_ref, v_ref = run(1.25e-4, step_rolling)

    def error(q, v):
        return max(np.abs(engine.difference(model, q_ref, q)).max(), np.abs(v - v_ref).max())
    abm = {dt: error(*run(dt, AdamsBashforthMoulton4().step)) for dt in (4e-3, 2e-3, 1e-3)}
    rk4 = {dt: error(*run(dt, step_rolling)) for dt in (4e-3, 2e-3)}
    for coarse, fine in ((4e-3, 2e-3), (2e-3, 1e-3)):
        assert abm[coarse] / abm[fine] == pytest.approx(16.0, rel=0.25), abm
    assert rk4[4e-3] / rk4[2e-3] == pytest.approx(16.0, rel=0.25)
    assert abm[2e-3] < rk4[4e-3] / 2 and abm[1e-3] < rk4[2e-3] / 2          # per evaluation: ABM4 wins
    assert abm[1e-3] < 2e-11


def test_abm4_starts_and_restarts_on_rk4(bike):
    """Its first three steps, and the three after ``restart()`` or a change of δt, are RK4's bit for bit."""
    model, data, _, dof = bike
    q, disks = upright(bike)
    v = consistent_velocity(model, data, q, disks, {4: 0.5, dof["steer"]: 0.0, dof["rear_spin"]: 4.6 / H3})
    abm, tau = AdamsBashforthMoulton4(), np.zeros(model.nv)
    for dt in (1e-3, 2e-3):                       # the change of δt restarts it
        for k in range(5):
            expected = step_rolling(model, data, q, v, tau, dt, disks)
            q, v = abm.step(model, data, q, v, tau, dt, disks)
            assert (np.array_equal(q, expected[0]) and np.array_equal(v, expected[1])) == (k < 3), (dt, k)
    abm.restart()
    expected = step_rolling(model, data, q, v, tau, 2e-3, disks)
    assert all(np.array_equal(x, y) for x, y in zip(abm.step(model, data, q, v, tau, 2e-3, disks), expected))
