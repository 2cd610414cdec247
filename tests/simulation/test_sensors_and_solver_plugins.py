"""Sensor plugins (engine/sensors.py) against statics and rigid-body kinematics, and a third-party contact solver
plugged in by name from the universe file."""
from dataclasses import replace

import numpy as np
import pytest

import engine
from engine import plugins
from engine.contact import solve
from engine.errors import SimulationError, UniverseError
from engine.spatial import rotation_axis_angle, rotation_to_quaternion

G = 9.81


def universe(tmp_path, body, extra="", settings="<Settings/>"):
    path = tmp_path / "scene.xml"
    path.write_text(f"<Universe>{settings}{body}<Body name=\"ground\"><Plane/><Mass>0</Mass></Body>{extra}</Universe>")
    return engine.load_universe(path)


BOX = '<Body name="box"><Box size="0.3 0.2 0.1"/><Mass>2</Mass><Translation x="0" y="0" z="0.05"/></Body>'


def test_force_torque_sensor_reads_the_weight_of_a_resting_box(tmp_path):
    # statics: the ground holds the box up with m g at its centre, no moment about it (4 symmetric corners)
    sim = engine.Simulation(universe(tmp_path, BOX, '<Sensor plugin="force-torque" target="box" body="box"/>'))
    sim.step(200)
    reading = sim.measurements["box/box"]
    np.testing.assert_allclose(reading["force"], [0.0, 0.0, 2.0 * G], rtol=0, atol=1e-9 * 2.0 * G)
    np.testing.assert_allclose(reading["torque"], 0.0, atol=1e-9)
    assert sim.timer.last["sense"] > 0.0


def test_imu_reads_a_free_spin_about_a_principal_axis(tmp_path):
    # no gravity, no contact: ω (body frame) stays ω0 about the principal axis z and R(t) = exp(t ω0)
    spinner = BOX.replace('z="0.05"', 'z="2"')
    u = universe(tmp_path, spinner, '<Sensor plugin="imu" target="box" body="box" name="imu"/>',
                 '<Settings><Gravity x="0" y="0" z="0"/></Settings>')
    sim = engine.Simulation(u)
    w0 = np.array([0.0, 0.0, 3.0])
    v = sim.state.v[0].copy()
    v[3:] = w0
    sim.set_state(replace(sim.state, v=(v,)))
    sim.step(500)
    reading = sim.measurements["imu"]
    np.testing.assert_allclose(reading["angular_velocity"], w0, atol=1e-12)
    np.testing.assert_allclose(reading["linear_velocity"], 0.0, atol=1e-12)
    q = rotation_to_quaternion(rotation_axis_angle([0.0, 0.0, 1.0], 3.0 * sim.time))
    np.testing.assert_allclose(np.abs(reading["quaternion"] @ q), 1.0, atol=1e-12)


def test_sensor_on_an_unknown_body_names_the_file_line_and_a_hint(tmp_path):
    with pytest.raises(UniverseError, match=r"scene.xml:1: sensor 'force-torque': 'box' has no body 'bax' "
                                            r"\(did you mean 'box'\?\)"):
        engine.Simulation(universe(tmp_path, BOX, '<Sensor plugin="force-torque" target="box" body="bax"/>'))


class WrappedLemke:
    """A third-party solver: here the built-in Lemke called through the plugin interface."""
    kind, stage = "solver", "solver"

    def __init__(self, settings):
        self.settings = settings

    def solve(self, W, v_free, blocks, f0):
        return solve("lemke", W, v_free, blocks, self.settings)


class NotANumber(WrappedLemke):
    def solve(self, W, v_free, blocks, f0):
        f, stats = super().solve(W, v_free, blocks, f0)
        return np.full_like(f, np.nan), stats


plugins.register("test-wrapped-lemke")(WrappedLemke)
plugins.register("test-nan")(NotANumber)
FALLING = BOX.replace('z="0.05"', 'z="0.08"').replace("<Mass>", '<Rotation angle="12" x="1" y="1" z="0"/><Mass>')


def test_a_solver_plugin_named_in_the_universe_runs_the_contact_solve(tmp_path):
    runs = []
    for name in ("lemke", "test-wrapped-lemke"):
        sim = engine.Simulation(universe(tmp_path, FALLING, settings=f'<Settings><Solver name="{name}"/></Settings>'))
        sim.step(300)
        runs.append(sim)
    assert len(runs[1].contacts) == 4 and runs[1].contacts.force[:, 2].sum() > 0.0
    np.testing.assert_array_equal(runs[0].state.q[0], runs[1].state.q[0])


def test_a_solver_plugin_returning_nan_stops_the_step_with_its_name(tmp_path):
    sim = engine.Simulation(universe(tmp_path, FALLING, settings='<Settings><Solver name="test-nan"/></Settings>'))
    with pytest.raises(SimulationError, match=r"solver plugin 'test-nan' failed in stage 'solver', multibody 'box', "
                                              r"step \d+ .*non-finite contact force"):
        sim.step(300)


def test_an_unknown_solver_lists_the_plugins_too(tmp_path):
    with pytest.raises(UniverseError, match=r"unknown contact solver 'test-wrapped-lemk'.*test-wrapped-lemke"):
        universe(tmp_path, BOX, settings='<Settings><Solver name="test-wrapped-lemk"/></Settings>')


# ---- sensor models: calibration, offset, bias, noise, quantisation (seed 000 §5.1.2, eqs. 5.2–5.6) ------------------

ARM = """<robot name="arm"><link name="base"/>
  <link name="upper"><inertial><origin xyz="0 0 -0.25"/><mass value="1"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.001"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 1.5"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="10"/></joint></robot>"""


def test_an_ideal_force_torque_reading_is_the_exact_wrench_and_a_calibrated_one_inverts_eq_5_6(tmp_path):
    """G = I, no offset, no noise: the raw reading is the noise-free wrench, exactly. With a full calibration
    matrix G and an offset f_d, w = G (f_l + f_d) recovers the wrench from the reading (eq. 5.6) to 1e-12."""
    G6 = np.eye(6) + 0.05 * np.arange(36).reshape(6, 6) / 36.0
    offset = np.array([0.5, -0.2, 1.0, 0.01, 0.02, -0.03])
    sensors = ('<Sensor plugin="force-torque" target="box" body="box" name="ideal"/>'
               f'<Sensor plugin="force-torque" target="box" body="box" name="real" '
               f'calibration="{" ".join(map(str, G6.ravel()))}" offset="{" ".join(map(str, offset))}"/>')
    sim = engine.Simulation(universe(tmp_path, BOX, sensors))
    sim.step(200)
    ideal, real = sim.measurements["ideal"], sim.measurements["real"]
    wrench = np.concatenate([ideal["force"], ideal["torque"]])
    assert np.array_equal(ideal["reading"], wrench) and wrench[2] == pytest.approx(2.0 * G)
    np.testing.assert_allclose(G6 @ (real["reading"] + offset), wrench, rtol=0, atol=1e-12 * 2.0 * G)


def test_sensor_noise_has_the_configured_mean_and_deviation_over_ten_thousand_steps(tmp_path):
    """Force–torque noise σ = (0.5 N, 0.02 N m) about the exact wrench, an IMU gyro bias b with noise 0.01 rad/s:
    over n = 10⁴ steps the sample mean of reading − truth is 0 (or b) and the sample deviation σ, each within
    3σ/√n; the IMU of a box at rest reads the specific force +g up in its frame and its accelerometer that plus
    its bias."""
    sensors = ('<Sensor plugin="force-torque" target="box" body="box" name="ft" noise="0.5 0.02" seed="7"/>'
               '<Sensor plugin="imu" target="box" body="box" name="imu" gyro_bias="0.1 -0.2 0.3" gyro_noise="0.01" '
               'accel_bias="0 0 0.5" seed="8"/>')
    sim = engine.Simulation(universe(tmp_path, BOX, sensors))
    sim.step(200)
    n = 10_000
    ft_error, gyro_error = np.empty((n, 6)), np.empty((n, 3))
    for k in range(n):
        sim.step()
        ft, imu = sim.measurements["ft"], sim.measurements["imu"]
        ft_error[k] = ft["reading"] - np.concatenate([ft["force"], ft["torque"]])
        gyro_error[k] = imu["gyro"] - imu["angular_velocity"]
    sigma = np.array([0.5] * 3 + [0.02] * 3)
    assert np.all(np.abs(ft_error.mean(axis=0)) <= 3 * sigma / np.sqrt(n))
    assert np.all(np.abs(ft_error.std(axis=0) - sigma) <= 3 * sigma / np.sqrt(n))
    assert np.all(np.abs(gyro_error.mean(axis=0) - [0.1, -0.2, 0.3]) <= 3 * 0.01 / np.sqrt(n))
    assert np.all(np.abs(gyro_error.std(axis=0) - 0.01) <= 3 * 0.01 / np.sqrt(n))
    np.testing.assert_allclose(imu["specific_force"], [0.0, 0.0, G], atol=1e-6)
    np.testing.assert_allclose(imu["accelerometer"], [0.0, 0.0, G + 0.5], atol=1e-6)


def test_an_imu_in_free_fall_feels_no_specific_force_and_a_restored_run_reads_the_same_noise(tmp_path):
    """Free fall: the accelerometer's specific force Rᵀ(a − g) is zero (to round-off of (V − V_last)/δt).
    The noise of step k depends on (seed, k) only: a run restored at step 50 reads, at step 80, what the
    original read."""
    falling = BOX.replace('z="0.05"', 'z="5"')
    sim = engine.Simulation(universe(tmp_path, falling, '<Sensor plugin="imu" target="box" body="box" name="imu" '
                                                        'gyro_noise="0.01" accel_noise="0.1" seed="4"/>'))
    sim.step(50)
    state = sim.state
    sim.step(30)
    first = {k: v.copy() for k, v in sim.measurements["imu"].items()}
    np.testing.assert_allclose(first["specific_force"], 0.0, atol=1e-9)
    sim.set_state(state)
    sim.step(30)
    for key, value in first.items():
        np.testing.assert_array_equal(sim.measurements["imu"][key], value)


def test_an_encoder_counts_whole_steps_of_its_resolution(tmp_path):
    """A pendulum swinging through 0.1 rad reads floor(q / r) · r with r = 2π / 2¹²: never above q, less than
    one step below, a whole number of steps."""
    r = 2 * np.pi / 2 ** 12
    pendulum = ('<MultiBody name="arm"><File>arm.urdf</File><Joint name="shoulder" value="0.1"/></MultiBody>'
                f'<Sensor plugin="encoder" target="arm" joint="shoulder" resolution="{r!r}"/>')
    (tmp_path / "arm.urdf").write_text(ARM)
    sim = engine.Simulation(universe(tmp_path, pendulum))
    for _ in range(100):
        sim.step()
        reading = sim.measurements["arm/shoulder"]
        q = sim.runs[0].q[0]
        assert reading["position"][0] == q
        assert q - r < reading["reading"][0] <= q
        assert reading["reading"][0] / r == pytest.approx(round(reading["reading"][0] / r), abs=1e-9)


@pytest.mark.parametrize("sensor, message", [
    ('plugin="encoder" target="arm" joint="shouldr" resolution="0.001"', "no joint 'shouldr' (did you mean"),
    ('plugin="encoder" target="arm" joint="shoulder" resolution="-1"', "resolution must be finite and > 0"),
    ('plugin="force-torque" target="arm" body="upper" noise="-0.5"', "'noise' must be finite and >= 0"),
    ('plugin="force-torque" target="arm" body="upper" calibration="1 2 3"', "'calibration' takes 36 numbers"),
    ('plugin="force-torque" target="arm" body="upper" calibration="1 1 1 0 1 1"', "must be invertible"),
    ('plugin="imu" target="arm" body="upper" gyro_bias="1 2"', "'gyro_bias' takes 1 or 3 numbers"),
    ('plugin="imu" target="arm" body="upper" seed="1.5"', "'seed' must be an integer"),
])
def test_bad_sensor_model_parameters_name_the_file_the_line_and_the_value(tmp_path, sensor, message):
    (tmp_path / "arm.urdf").write_text(ARM)
    body = f'<MultiBody name="arm"><File>arm.urdf</File></MultiBody>\n<Sensor {sensor}/>'
    with pytest.raises(UniverseError) as info:
        engine.Simulation(universe(tmp_path, body))
    assert message in str(info.value) and "scene.xml:2" in str(info.value)                             # the <Sensor> line
