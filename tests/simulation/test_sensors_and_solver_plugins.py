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
