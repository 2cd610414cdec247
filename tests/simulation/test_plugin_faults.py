"""Faults never lose a run (issue 18 parts 1–2): a plugin that raises at step k, returns NaN, 1e12 or the wrong
shape, or a device that overruns its time budget, stops the run with one PluginError naming it; a step whose
velocity or kinetic energy leaves its physical bound stops with its stage named. In every case the simulation
keeps exactly the state after step k − 1 (compared with a fault-free twin) and a recorder holds steps 0 … k − 1."""
import os
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import engine
from app.recording import Recorder
from engine import plugins
from engine.contact import solve
from engine.errors import DivergenceError, PluginError, SimulationError, UniverseError
from engine.interaction import LockstepDevices, ScriptedDevice
from engine.model.universe import LimitSettings

ROOT = Path(__file__).resolve().parents[2]
K = 40             # the faulty step
DT = 1e-3
G = 9.81
EFFORT, SPEED = 5.0, 2.0   # the arm's joint limits (N m, rad/s)
ARM = """<robot name="arm">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="upper"><inertial><origin xyz="0 0 -0.25"/><mass value="1"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0 0 -0.25"/><mass value="1"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="5" velocity="2"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/><origin xyz="0 0 -0.5"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="5" velocity="2"/></joint>
</robot>"""
BOX = '<Body name="box"><Box size="0.3 0.2 0.1"/><Mass>2</Mass><Translation x="0" y="0" z="{z}"/></Body>'


@plugins.register("test-fault")
class FaultyController:
    """A PD toward 0.4 rad on every joint (the arm moves every step) that misbehaves on its ``at``-th call."""
    kind, stage = "controller", "control"

    def __init__(self, model, mode="none", at=0, value=1e12):
        self.nv, self.mode, self.at, self.value, self.calls = model.nv, mode, int(at), value, 0

    def reset(self, q, v):
        self.calls = 0

    def control(self, t, q, v):
        self.calls += 1
        tau = -3.0 * v - 2.0 * (q[:self.nv] - 0.4)
        if self.calls != self.at or self.mode == "none":
            return tau
        if self.mode == "raise":
            raise RuntimeError("the gains table is empty")
        if self.mode == "shape":
            return tau[:1]
        tau[self.nv - 1] = np.nan if self.mode == "nonfinite" else self.value
        return tau


@plugins.register("test-push")
class Push:
    """A force ``force`` (N) along body x on a free-flying box, on its ``at``-th call only."""
    kind, stage = "controller", "control"

    def __init__(self, model, force=0.0, at=0):
        self.nv, self.force, self.at, self.calls = model.nv, force, int(at), 0

    def reset(self, q, v):
        self.calls = 0

    def control(self, t, q, v):
        self.calls += 1
        tau = np.zeros(self.nv)
        tau[0] = self.force if self.calls == self.at else 0.0
        return tau


@plugins.register("test-fault-sensor")
class FaultySensor:
    """Reads the joint angles; misbehaves on its ``at``-th reading."""
    kind, stage = "sensor", "sense"
    signals = {"angle": ("rad", 2)}

    def __init__(self, multibody, target, mode="none", at=0):
        self.multibody, self.mode, self.at, self.calls, self.name = multibody, mode, int(at), 0, f"{target}/angles"

    def measure(self, sim):
        self.calls += 1
        angle = sim.runs[self.multibody].q.copy()
        if self.calls == self.at and self.mode == "raise":
            raise KeyError("calibration")
        if self.calls == self.at and self.mode == "nonfinite":
            angle[0] = np.nan
        if self.calls == self.at and self.mode == "shape":
            angle = np.zeros(3)
        return {"angle": angle}


@plugins.register("test-fault-solver")
class FaultySolver:
    """Lemke, but it raises on its ``at``-th solve (class attribute, set by the test)."""
    kind, stage = "solver", "solver"
    at = 0

    def __init__(self, settings):
        self.settings, self.calls = settings, 0

    def solve(self, W, v_free, blocks, f0):
        self.calls += 1
        if self.calls == self.at:
            raise FloatingPointError("pivot underflow")
        return solve("lemke", W, v_free, blocks, self.settings)


def arm_universe(tmp_path, extra="", limits="", name="scene.xml"):
    (tmp_path / "arm.urdf").write_text(ARM)
    path = tmp_path / name
    path.write_text(f'<Universe><Settings>{limits}</Settings><MultiBody name="arm"><File>arm.urdf</File>'
                    f'<Translation x="0" y="0" z="2"/></MultiBody>{extra}</Universe>')
    return engine.load_universe(path)


def box_universe(tmp_path, extra="", limits="", z=0.05, solver=""):
    path = tmp_path / "box.xml"
    path.write_text(f'<Universe><Settings>{limits}{solver}</Settings>{BOX.format(z=z)}'
                    f'<Body name="ground"><Plane/><Mass>0</Mass></Body>{extra}</Universe>')
    return engine.load_universe(path)


def recorded_run(sim, steps, before_step=lambda: None):
    """Step like the GUI's physics thread: record after each step, stop at the first fault; (recorder, error)."""
    recorder = Recorder()
    recorder.append(sim)
    for _ in range(steps):
        try:
            before_step()
            sim.step()
        except SimulationError as exc:
            return recorder, exc
        recorder.append(sim)
    return recorder, None


def assert_kept_state_is_step(sim, recorder, twin, k):
    """The kept state is the twin's after step k − 1, exactly, and the recorder holds steps 0 … k − 1 of it."""
    twin_states = [twin.state]
    for _ in range(k - 1):
        twin.step()
        twin_states.append(twin.state)
    kept = sim.state
    assert (kept.step, kept.t) == (k - 1, twin_states[-1].t)
    for a, b in zip(kept.q + kept.v, twin_states[-1].q + twin_states[-1].v):
        np.testing.assert_array_equal(a, b)
    for key, value in twin_states[-1].warm_start.items():
        pairs = zip(kept.warm_start[key], value) if key == "factor" else [(kept.warm_start[key], value)]
        for a, b in pairs:                             # the kept factor: (L, meta), arrays of two shapes
            np.testing.assert_array_equal(a, b)
    assert [f.state.step for f in recorder.frames()] == list(range(k))
    for frame, state in zip(recorder.frames(), twin_states):
        np.testing.assert_array_equal(frame.state.q[0], state.q[0])
        np.testing.assert_array_equal(frame.state.v[0], state.v[0])


@pytest.mark.parametrize("mode, detail, value, shape", [
    ("raise", "raised RuntimeError: the gains table is empty", None, None),
    ("nonfinite", "returned a non-finite torque at index 1", "nan", None),
    ("huge", "drove the torque of dof 1 \\(joint 'elbow'\\) beyond its effort limit 5", 1e12, None),
    ("shape", "returned a torque of the wrong shape; expected \\(2,\\)", None, (1,)),
])
def test_a_faulty_controller_is_named_and_the_run_keeps_step_k_minus_1(tmp_path, mode, detail, value, shape):
    refuse = '<Limits effort_limits="refuse"/>'
    sim = engine.Simulation(arm_universe(tmp_path, f'<Controller plugin="test-fault" target="arm" mode="{mode}" '
                                                   f'at="{K}"/>', refuse))
    recorder, error = recorded_run(sim, 2 * K)
    assert isinstance(error, PluginError) and sim.faulted is error
    assert (error.plugin, error.kind, error.stage, error.multibody, error.step) == ("test-fault", "controller",
                                                                                    "control", "arm", K)
    assert error.time == pytest.approx((K - 1) * DT, abs=1e-15) and error.shape == shape
    assert (np.isnan(error.value) if value == "nan" else error.value == value)
    message = str(error)
    assert "\n" not in message and message.startswith(
        f"controller plugin 'test-fault' failed in stage 'control', multibody 'arm', step {K} (t = 0.039000 s): ")
    assert re.search(detail, message)
    twin = engine.Simulation(arm_universe(tmp_path, '<Controller plugin="test-fault" target="arm"/>', refuse,
                                          name="twin.xml"))
    assert_kept_state_is_step(sim, recorder, twin, K)
    if mode == "raise":
        assert isinstance(error.__cause__, RuntimeError)       # the plugin's own traceback, for -v


@pytest.mark.parametrize("mode, detail", [
    ("raise", "raised KeyError: 'calibration'"),
    ("nonfinite", "returned a non-finite signal 'angle' at index 0"),
    ("shape", "returned a signal 'angle' of the wrong shape; expected \\(2,\\)"),
])
def test_a_faulty_sensor_is_named_and_its_step_is_undone(tmp_path, mode, detail):
    # the sense stage runs after integration: the step it fails in must be undone, measurements included
    sensor = f'<Sensor plugin="test-fault-sensor" target="arm" mode="{mode}" at="{K}"/>'
    control = '<Controller plugin="test-fault" target="arm"/>'
    sim = engine.Simulation(arm_universe(tmp_path, control + sensor))
    recorder, error = recorded_run(sim, 2 * K)
    assert isinstance(error, PluginError)
    assert (error.plugin, error.kind, error.stage, error.multibody, error.step) == ("test-fault-sensor", "sensor",
                                                                                    "sense", "arm", K)
    assert re.search(detail, str(error))
    twin = engine.Simulation(arm_universe(tmp_path, control, name="twin.xml"))
    assert_kept_state_is_step(sim, recorder, twin, K)
    np.testing.assert_array_equal(sim.measurements["arm/angles"]["angle"], sim.state.q[0])   # step K − 1's
    sim.disable_plugin("test-fault-sensor")                 # the run goes on without the sensor and its readings
    sim.step(3)
    assert sim.step_count == K + 2 and sim.sensors == [] and sim.measurements == {}


def test_a_faulty_solver_plugin_is_named_with_its_group_and_the_warm_start_is_kept(tmp_path):
    # a box resting on the ground: one group, one solve per step; the warm start of step K − 1 is kept
    FaultySolver.at = K
    sim = engine.Simulation(box_universe(tmp_path, solver='<Solver name="test-fault-solver"/>'))
    recorder, error = recorded_run(sim, 2 * K)
    assert isinstance(error, PluginError) and isinstance(error.__cause__, FloatingPointError)
    assert (error.plugin, error.kind, error.stage, error.multibody, error.step) == ("test-fault-solver", "solver",
                                                                                    "solver", "box", K)
    assert "raised FloatingPointError: pivot underflow" in str(error)
    FaultySolver.at = 0
    twin = engine.Simulation(box_universe(tmp_path, solver='<Solver name="test-fault-solver"/>'))
    assert_kept_state_is_step(sim, recorder, twin, K)
    assert len(twin.state.warm_start["pair"]) == 4                  # the warm start compared is not empty
    with pytest.raises(ValueError, match="contact solver 'test-fault-solver' cannot be disabled"):
        sim.disable_plugin("test-fault-solver")


def test_a_device_beyond_its_time_budget_is_named_and_the_run_keeps_step_k_minus_1(tmp_path):
    t = np.array([0.0, 1.0])
    np.savez(tmp_path / "still.npz", t=t, position=np.zeros((2, 3)), buttons=[0, 0])
    device = '<Device plugin="scripted" file="still.npz" origin="0 0 0.2" frame="world"/>'
    sim = engine.Simulation(box_universe(tmp_path, device, '<Limits device_budget="0.05"/>'))
    devices = LockstepDevices(sim)
    session = devices.sessions[0]
    reads = []

    def read():   # the device driver hangs for 0.2 s on the K-th tick
        reads.append(1)
        if len(reads) == K:
            time.sleep(0.2)
        return ScriptedDevice.read(session.device)
    session.device.read = read
    recorder, error = recorded_run(sim, 2 * K, devices.before_step)
    assert isinstance(error, PluginError) and sim.faulted is error and session.fault is error
    assert (error.plugin, error.kind, error.stage, error.step) == ("scripted", "device", "haptic", K)
    assert error.value >= 0.2 and "beyond the time budget 0.05 s" in str(error)
    twin = engine.Simulation(box_universe(tmp_path))
    assert_kept_state_is_step(sim, recorder, twin, K)
    devices.stop()


def test_a_faulted_simulation_refuses_to_step_until_cleared_disabled_reset_or_set(tmp_path):
    sim = engine.Simulation(arm_universe(tmp_path, f'<Controller plugin="test-fault" target="arm" mode="raise" '
                                                   f'at="{K}"/>'))
    with pytest.raises(PluginError):
        sim.step(2 * K)
    kept = sim.state
    with pytest.raises(SimulationError, match="the simulation is faulted \\(controller plugin 'test-fault'.*"
                                              "reset\\(\\), set_state\\(\\), clear_fault\\(\\) or disable_plugin"):
        sim.step()
    assert sim.state.step == kept.step
    sim.clear_fault()                        # continue: the controller faults only on its K-th call
    sim.step(5)
    assert sim.step_count == K + 4 and sim.faulted is None
    sim.reset()                              # reset: the controller counts again from 0
    with pytest.raises(PluginError):
        sim.step(2 * K)
    sim.set_state(kept)                      # a state set clears the fault
    assert sim.faulted is None
    sim.step()
    sim.reset()
    with pytest.raises(PluginError):
        sim.step(2 * K)
    sim.disable_plugin("test-fault")         # no controller left: the arm swings freely
    assert sim.faulted is None and sim.runs[0].controllers == []
    sim.step(3)
    with pytest.raises(ValueError, match="no plugin named 'test-fault' is running"):
        sim.disable_plugin("test-fault")


def test_torques_beyond_the_effort_limits_are_clamped_with_a_counted_warning(tmp_path):
    # default effort_limits="clamp": the run equals one whose controller returns the limit itself
    runs = []
    for value in (1e12, EFFORT):
        sim = engine.Simulation(arm_universe(tmp_path, f'<Controller plugin="test-fault" target="arm" mode="huge" '
                                                       f'at="{K}" value="{value}"/>', name=f"arm{value}.xml"))
        if value > EFFORT:
            with pytest.warns(UserWarning, match="torques of 'arm' clamped to their limits"):
                sim.step(K)
        else:
            sim.step(K)
        runs.append(sim)
    assert runs[0].effort_clamps == {"arm": 1} and runs[1].effort_clamps == {}
    assert runs[0].snapshot().tau[0][1] == EFFORT
    np.testing.assert_array_equal(runs[0].state.q[0], runs[1].state.q[0])
    np.testing.assert_array_equal(runs[0].state.v[0], runs[1].state.v[0])


def test_ignored_effort_limits_let_1e12_through_and_the_speed_bound_stops_it_in_the_dynamics_stage(tmp_path):
    # v_free = v + δt M⁻¹ τ ≫ 20 × 2 rad/s on both joints (M couples them): stopped at "dynamics", before the
    # state holds it
    sim = engine.Simulation(arm_universe(tmp_path, f'<Controller plugin="test-fault" target="arm" mode="huge" '
                                                   f'at="{K}"/>', '<Limits effort_limits="ignore"/>'))
    recorder, error = recorded_run(sim, 2 * K)
    assert isinstance(error, DivergenceError) and sim.faulted is error
    assert (error.stage, error.multibody, error.step, error.index, error.bound) == ("dynamics", "arm", K, 0,
                                                                                    20 * SPEED)
    assert str(error).startswith("free velocity v + δt a_free of dof 0 (joint 'shoulder') beyond its bound 40 in "
                                 "stage 'dynamics', multibody 'arm', step 40")
    assert abs(error.value) > 1e6 and np.all(np.abs(sim.state.v[0]) < SPEED)   # the bad value, not the kept one
    twin = engine.Simulation(arm_universe(tmp_path, '<Controller plugin="test-fault" target="arm"/>',
                                          name="twin.xml"))
    assert_kept_state_is_step(sim, recorder, twin, K)


def test_a_free_body_beyond_max_speed_stops_in_the_dynamics_stage_with_the_bad_value(tmp_path):
    # a box high in the air (no contact), pushed with F = 1e7 N along x at step K: v_x = F δt / m = 5000 m/s
    F, m = 1e7, 2.0
    sim = engine.Simulation(box_universe(tmp_path, f'<Controller plugin="test-push" target="box" force="{F}" '
                                                   f'at="{K}"/>', z=5.0))
    recorder, error = recorded_run(sim, 2 * K)
    assert isinstance(error, DivergenceError)
    assert (error.stage, error.index, error.bound) == ("dynamics", 0, 1000.0)
    assert error.value == pytest.approx(F * DT / m, rel=1e-12)
    twin = engine.Simulation(box_universe(tmp_path, z=5.0))
    assert_kept_state_is_step(sim, recorder, twin, K)


def test_a_kinetic_energy_jump_stops_the_integration_stage(tmp_path):
    # max_speed raised out of the way: F = 1e6 N on the 2 kg box gives v_x = 500 m/s in one step, T⁺ = ½ m v²
    # = 250 kJ against the bound 100 × (T + m g · 1 m) ≈ 1962 J
    F, m = 1e6, 2.0
    sim = engine.Simulation(box_universe(tmp_path, f'<Controller plugin="test-push" target="box" force="{F}" '
                                                   f'at="{K}"/>', '<Limits max_speed="1e6"/>', z=5.0))
    recorder, error = recorded_run(sim, 2 * K)
    assert isinstance(error, DivergenceError) and (error.stage, error.quantity) == ("integration", "kinetic energy")
    v_x, v_z = F * DT / m, -G * K * DT                    # semi-implicit Euler from rest, no contact
    assert error.value == pytest.approx(0.5 * m * (v_x ** 2 + v_z ** 2), rel=1e-9)
    v_k = G * (K - 1) * DT
    assert error.bound == pytest.approx(100.0 * (0.5 * m * v_k ** 2 + m * G * 1.0), rel=1e-9)
    twin = engine.Simulation(box_universe(tmp_path, z=5.0))
    assert_kept_state_is_step(sim, recorder, twin, K)


def test_an_external_wrench_beyond_its_bound_is_clamped_or_refused(tmp_path):
    # bound: 10 × m g = 196.2 N for the 2 kg box; a 1e12 N push is scaled down to it, direction kept
    sim = engine.Simulation(box_universe(tmp_path, z=5.0))
    sim.set_external_wrench(0, 0, [1e12, 0, 0, 0, 0, 0], [0, 0, 5.0])
    with pytest.warns(UserWarning, match="external wrenches of 'box' clamped"):
        sim.step()
    assert sim.state.v[0][0] == pytest.approx(10 * 2.0 * G * DT / 2.0, rel=1e-12)
    assert sim.effort_clamps == {"box": 1}
    refusing = engine.Simulation(box_universe(tmp_path, limits='<Limits effort_limits="refuse"/>', z=5.0))
    refusing.set_external_wrench(0, 0, [1e12, 0, 0, 0, 0, 0], [0, 0, 5.0])
    with pytest.raises(SimulationError, match="external wrench on body 'box' of 'box' beyond its bound 196.2 N"):
        refusing.step()
    assert refusing.step_count == 0 and refusing.faulted is not None


def test_a_non_finite_state_is_refused(tmp_path):
    sim = engine.Simulation(box_universe(tmp_path))
    v = sim.state.v[0].copy()
    v[2] = np.inf
    with pytest.raises(ValueError, match="state of 'box' is not finite"):
        sim.set_state(replace(sim.state, v=(v,)))


@pytest.mark.parametrize("attributes, message", [
    ('effort_limits="clip"', "effort_limits must be one of \\('clamp', 'refuse', 'ignore', 'envelope'\\) \\(did you mean "
                             "'clamp'\\?\\)"),
    ('velocity_factor="-1"', "velocity_factor"),
    ('energy_jmp="10"', "energy_jmp"),
])
def test_bad_limits_name_the_file_and_line(tmp_path, attributes, message):
    path = tmp_path / "bad.xml"
    path.write_text(f'<Universe>\n<Settings>\n<Limits {attributes}/>\n</Settings>\n</Universe>')
    with pytest.raises(UniverseError, match=f"bad.xml:3: .*{message}"):
        engine.load_universe(path)


def test_limits_are_read_from_the_settings(tmp_path):
    u = arm_universe(tmp_path, limits='<Limits effort_limits="refuse" velocity_factor="5" max_speed="50" '
                                      'energy_jump="10" wrench_factor="3" device_budget="0.2"/>')
    assert u.limits == LimitSettings("refuse", 5.0, 50.0, 10.0, 3.0, 0.2)
    limits = engine.Simulation(u).runs[0].limits
    np.testing.assert_array_equal(limits.speed, [5 * SPEED, 5 * SPEED])
    np.testing.assert_array_equal(limits.effort, [EFFORT, EFFORT])
    assert limits.max_force == pytest.approx(3 * 2.0 * G)       # the arm's two 1 kg links (the base is fixed)


def test_the_fault_kernels_agree_with_numpy_and_run_as_plain_python():
    from engine.faults._kernels import clamp_envelope, first_beyond, first_non_finite
    rng = np.random.default_rng(5)
    x, bound = rng.normal(size=50) * 3.0, np.abs(rng.normal(size=50)) + 0.5
    beyond = np.flatnonzero(np.abs(x) > bound)
    assert first_beyond(x, bound) == beyond[0] and first_beyond(np.zeros(50), bound) == -1
    clamped, v, no_speed = x.copy(), rng.normal(size=50), np.full(50, np.inf)
    assert clamp_envelope(clamped, v, bound, no_speed) == len(beyond)     # no speed bound: a plain clamp
    np.testing.assert_array_equal(clamped, np.clip(x, -bound, bound))
    speed = np.full(50, 2.0)                                                # the envelope (eqs. 5.25-5.26)
    enveloped = x.copy()
    clamp_envelope(enveloped, v, bound, speed)
    upper, lower = bound * np.minimum(1, 1 - v / speed), -bound * np.minimum(1, 1 + v / speed)
    np.testing.assert_array_equal(enveloped, np.minimum(np.maximum(x, lower), upper))
    x[7] = np.nan
    assert first_beyond(x, np.full(50, np.inf)) == 7 and first_non_finite(x.reshape(5, 10)) == 7
    script = ("import numpy as np, numba\n"
              "from engine.faults._kernels import clamp_envelope, first_beyond, first_non_finite\n"
              "x = np.array([0.5, -3.0, np.inf]); b = np.ones(3)\n"
              "assert first_beyond(x, b) == 1 and first_non_finite(x) == 2 and numba.config.DISABLE_JIT\n"
              "x[2] = 2.0; assert clamp_envelope(x, 0 * b, b, b + np.inf) == 2 and x.tolist() == [0.5, -1.0, 1.0]\n"
              "print('nojit ok')\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0 and "nojit ok" in out.stdout, out.stderr[-2000:]
