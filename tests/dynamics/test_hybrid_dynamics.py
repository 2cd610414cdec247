"""Hybrid dynamics (engine/dynamics/hybrid.py, seed 004 §2.5-2.6): the slider + pivot of seed 004's Fig. 1 against
its closed-form inverse and direct models (Eq. 1, Eq. 4) and the digest's test vector, every split of driven and
free joints round-tripping, det(A) against the closed-form D, the singularity warning, and the ``driven``
controller in a simulation against an ODE solution of the closed form."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import engine
from engine.dynamics import rnea
from engine.dynamics.hybrid import SingularityWarning, hybrid_dynamics

M2, M3, L3, IZZ3, G = 1.0, 2.0, 0.5, 0.1, 9.81
GRAVITY = np.array([0.0, -G, 0.0])          # the seed's plane: x horizontal, y up
SLIDER_PIVOT = f"""<robot name="slider_pivot">
  <link name="ground"/>
  <link name="slider"><inertial><mass value="{M2}"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="arm"><inertial><origin xyz="{L3} 0 0"/><mass value="{M3}"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="{IZZ3}"/></inertial></link>
  <joint name="x" type="prismatic"><parent link="ground"/><child link="slider"/><axis xyz="1 0 0"/>
    <limit lower="-10" upper="10" effort="1000" velocity="100"/></joint>
  <joint name="theta" type="continuous"><parent link="slider"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>"""


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "slider_pivot.urdf"
    path.write_text(SLIDER_PIVOT)
    return engine.load_model(path)


def inverse_closed_form(theta, dtheta, ddx, ddtheta):
    """Seed 004 Eq. 1 (L689-L697)."""
    X = (M2 + M3) * ddx - L3 * M3 * np.sin(theta) * ddtheta - L3 * M3 * dtheta ** 2 * np.cos(theta)
    N = (IZZ3 + L3 ** 2 * M3) * ddtheta - L3 * M3 * np.sin(theta) * ddx + L3 * M3 * G * np.cos(theta)
    return X, N


def direct_closed_form(theta, dtheta, X, N):
    """Seed 004 Eq. 4 (L725-L729, exponents as restored by the digest)."""
    c, s = np.cos(theta), np.sin(theta)
    D = L3 ** 2 * M3 ** 2 * c ** 2 + (L3 ** 2 * M2 + IZZ3) * M3 + IZZ3 * M2
    ddx = (X * IZZ3 + L3 ** 2 * M3 * X + (dtheta ** 2 * L3 ** 3 * M3 + dtheta ** 2 * IZZ3 * L3) * M3 * c
           + (-G * L3 ** 2 * M3 ** 2 * c + N * L3 * M3) * s) / D
    ddtheta = (N * M2 + M3 * N + (-M2 * G * L3 - G * L3 * M3) * M3 * c + (dtheta ** 2 * L3 ** 2 * M3 ** 2 * c
                                                                        + X * L3 * M3) * s) / D
    return ddx, ddtheta, D


def test_the_seed_test_vector_round_trips_inverse_and_direct(model):
    """θ = 0.3, θ̇ = 1, ẍ = 0.5, θ̈ = −2: X = 1.1357039242 N, N = 8.0240908550 N m, D = 1.71266781."""
    data = model.create_data()
    q, v, a = np.array([0.2, 0.3]), np.array([0.7, 1.0]), np.array([0.5, -2.0])
    tau = rnea(model, data, q, v, a, gravity=GRAVITY)
    np.testing.assert_allclose(tau, [1.1357039242, 8.0240908550], atol=5e-11)
    free = hybrid_dynamics(model, data, q, v, np.zeros(2, bool), [], tau_free=tau, gravity=GRAVITY)
    np.testing.assert_allclose(free.qdd, a, atol=1e-12)
    assert free.det_A == pytest.approx(1.71266781, abs=5e-9)
    for driven in ([True, False], [False, True], [True, True]):
        mask = np.array(driven)
        mixed = hybrid_dynamics(model, data, q, v, mask, a[mask], tau_free=tau[~mask], gravity=GRAVITY)
        np.testing.assert_allclose(mixed.qdd, a, atol=1e-12)
        np.testing.assert_allclose(mixed.tau, tau, atol=1e-12)


def test_random_states_match_the_closed_form_inverse_and_direct_models(model):
    data, rng = model.create_data(), np.random.default_rng(4)
    for _ in range(20):
        theta, dtheta, ddx, ddtheta = rng.uniform(-3, 3, 4)
        q, v = np.array([rng.uniform(-1, 1), theta]), np.array([rng.uniform(-1, 1), dtheta])
        X, N = inverse_closed_form(theta, dtheta, ddx, ddtheta)
        np.testing.assert_allclose(rnea(model, data, q, v, np.array([ddx, ddtheta]), gravity=GRAVITY), [X, N],
                                   rtol=1e-12, atol=1e-12)
        tau = rng.uniform(-5, 5, 2)
        ddx_c, ddtheta_c, D = direct_closed_form(theta, dtheta, *tau)
        result = hybrid_dynamics(model, data, q, v, np.zeros(2, bool), [], tau_free=tau, gravity=GRAVITY)
        np.testing.assert_allclose(result.qdd, [ddx_c, ddtheta_c], rtol=1e-11, atol=1e-12)
        assert result.det_A == pytest.approx(D, rel=1e-12)


def test_nearly_parallel_free_joints_warn_of_a_singular_inertia(tmp_path):
    """Two prismatic joints 1e-6 rad apart move the body the same way: det(A)/Π diag(A) ≈ 1e-12."""
    path = tmp_path / "parallel.urdf"
    path.write_text("""<robot name="parallel"><link name="base"/>
  <link name="a"><inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="p1" type="prismatic"><parent link="base"/><child link="a"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="p2" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="1 1e-6 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>""")
    model = engine.load_model(path)
    with pytest.warns(SingularityWarning, match="nearly singular"):
        result = hybrid_dynamics(model, model.create_data(), np.zeros(2), np.zeros(2), np.zeros(2, bool), [])
    assert result.hadamard < 1e-9


def driven_run(tmp_path, dt):
    """The slider driven along x(t) = 0.1 (1 − cos 2π t) from rest (a CSV sampled at 5 ms, a cubic spline
    through it), the pivot free (N = 0) from θ = 0.3 at rest, 1 s with rk4 at ``dt``: the largest errors of x
    against the trajectory and of θ against the closed form's ODE (Eq. 1 with N = 0 solved for θ̈; scipy at
    1e-11)."""
    (tmp_path / "slider_pivot.urdf").write_text(SLIDER_PIVOT)
    t = np.arange(0, 1.2001, 0.005)
    np.savetxt(tmp_path / "x.csv", np.column_stack([t, 0.1 * (1 - np.cos(2 * np.pi * t))]), delimiter=",",
               header="t,x", comments="")
    (tmp_path / "scene.xml").write_text(f"""<Universe>
  <Settings><Gravity x="0" y="-9.81" z="0"/><TimeStep>{dt}</TimeStep><Integrator>rk4</Integrator></Settings>
  <MultiBody name="sp"><File>slider_pivot.urdf</File><Joint name="x" value="0"/><Joint name="theta" value="0.3"/>
  </MultiBody>
  <Controller plugin="driven" target="sp" trajectory="x.csv" kp="10000" kd="200"/>
</Universe>""")
    sim = engine.Simulation(engine.load_universe(tmp_path / "scene.xml"))
    w = 2 * np.pi

    def pivot(time, y):
        ddx = 0.1 * w ** 2 * np.cos(w * time)
        ddtheta = (L3 * M3 * np.sin(y[0]) * ddx - L3 * M3 * G * np.cos(y[0])) / (IZZ3 + L3 ** 2 * M3)
        return [y[1], ddtheta]

    times = np.arange(1, int(round(1 / dt)) + 1) * dt
    exact = solve_ivp(pivot, (0, 1), [0.3, 0.0], t_eval=times, rtol=1e-11, atol=1e-12, method="DOP853").y[0]
    x, theta = np.empty(len(times)), np.empty(len(times))
    for k in range(len(times)):
        sim.step(1)
        x[k], theta[k] = sim.runs[0].q
    return np.abs(x - 0.1 * (1 - np.cos(w * times))).max(), np.abs(theta - exact).max()


def test_the_driven_controller_moves_the_slider_along_its_trajectory_and_the_pivot_as_the_closed_form(tmp_path):
    """The driven torque is held over each step (a zero-order hold: first order in δt), so the errors halve with
    the step: at 1 ms x within 2e-5 m and θ within 1e-4 rad, at 0.5 ms at most 0.6 times those."""
    x_coarse, theta_coarse = driven_run(tmp_path, 1e-3)
    x_fine, theta_fine = driven_run(tmp_path, 5e-4)
    assert x_coarse < 2e-5 and theta_coarse < 1e-4
    assert x_fine < 0.6 * x_coarse and theta_fine < 0.6 * theta_coarse


@pytest.mark.parametrize("params, message", [("", 'needs trajectory="file.csv"'),
                                             ('trajectory="x.csv" kp="-1"', "gains must be finite and >= 0"),
                                             ('trajectory="y.csv"', "trajectory column is not a joint")])
def test_a_bad_driven_controller_names_the_scene_line(tmp_path, params, message):
    (tmp_path / "slider_pivot.urdf").write_text(SLIDER_PIVOT)
    (tmp_path / "x.csv").write_text("t,x\n0,0\n1,0.1\n")
    (tmp_path / "y.csv").write_text("t,thetaa\n0,0\n1,0.1\n")
    (tmp_path / "scene.xml").write_text(f"""<Universe>
  <MultiBody name="sp"><File>slider_pivot.urdf</File></MultiBody>
  <Controller plugin="driven" target="sp" {params}/>
</Universe>""")
    with pytest.raises(engine.errors.UniverseError, match=message):
        engine.Simulation(engine.load_universe(tmp_path / "scene.xml"))
