"""Actuator models (issue 13, part 2): the motors' torque–speed envelope (seed 000 eqs. 5.25–5.26) and the joint
servo of eq. 5.8 with its friction compensation, against closed forms."""
import numpy as np
import pytest

import engine
from engine import plugins
from engine.errors import UniverseError
from engine.state import State

WHEEL = """<robot name="w"><link name="base"/>
  <link name="wheel"><inertial><mass value="1"/><inertia ixx="0.25" ixy="0" ixz="0" iyy="0.5" iyz="0" izz="0.25"/>
    </inertial></link>
  <joint name="axle" type="continuous"><parent link="base"/><child link="wheel"/><axis xyz="0 1 0"/>
    <limit effort="10" velocity="2"/>{dynamics}</joint></robot>"""


@plugins.register("test-full-torque")
class FullTorque:
    """Asks for 100 N m on every joint, far beyond any effort limit."""
    kind, stage = "controller", "control"

    def __init__(self, model):
        self.nv = model.nv

    def reset(self, q, v):
        pass

    def control(self, t, q, v):
        return np.full(self.nv, 100.0)


def wheel(tmp_path, controller, limits="envelope", dynamics=""):
    (tmp_path / "w.urdf").write_text(WHEEL.format(dynamics=dynamics))
    (tmp_path / "scene.xml").write_text(
        f'<Universe><Settings><Gravity x="0" y="0" z="0"/><Limits effort_limits="{limits}"/></Settings>'
        f'<MultiBody name="w"><File>w.urdf</File></MultiBody>\n{controller}</Universe>')
    return engine.Simulation(engine.load_universe(tmp_path / "scene.xml"))


def test_a_motor_asked_for_too_much_gives_its_torque_speed_envelope(tmp_path):
    """τ̄ = 10 N m, no-load speed 2 rad/s, inertia 0.5 kg m²: the applied torque is 10 (1 − ω/2) at every step,
    so ω(t) = 2 (1 − exp(−10 t)) (ω̇ = (10/0.5)(1 − ω/2)); after 1 s, within the semi-implicit Euler step's
    O(δt) error; with the plain clamp it would be 20 t."""
    sim = wheel(tmp_path, '<Controller plugin="test-full-torque" target="w"/>')
    run = sim.runs[0]
    for _ in range(1000):
        w = run.v[0]
        sim.step()
        assert run.tau[0] == pytest.approx(10.0 * (1.0 - w / 2.0), abs=1e-12)
    assert run.v[0] == pytest.approx(2.0 * (1.0 - np.exp(-10.0)), abs=2e-3)
    clamped = wheel(tmp_path, '<Controller plugin="test-full-torque" target="w"/>', limits="clamp")
    clamped.step(100)
    assert clamped.runs[0].v[0] == pytest.approx(20.0 * 0.1, rel=1e-9)


def test_the_servo_cancels_the_joints_friction_while_it_moves(tmp_path):
    """The axle declares viscous 0.2 N m s and dry 0.5 N m friction. Spinning at 1 rad/s without gravity, under
    the servo with zero gains it keeps its speed (the compensation μ_v ω + μ_d sign ω cancels the friction
    exactly); under a zero-gain pd it slows down as ω̇ = −(0.2 ω + 0.5) / 0.5."""
    friction = '<dynamics damping="0.2" friction="0.5"/>'
    for controller, expected in (('<Controller plugin="servo" target="w" kp="0" kv="0"/>', 1.0),
                                 ('<Controller plugin="pd" target="w" kp="0" kd="0"/>', None)):
        sim = wheel(tmp_path, controller, dynamics=friction)
        state = sim.state
        sim.set_state(State.capture(0.0, 0, state.q, [np.array([1.0])], state.warm_start))
        sim.step(100)
        if expected is not None:
            assert sim.runs[0].v[0] == pytest.approx(1.0, abs=1e-12)
        else:                                  # ω(t) = (1 + 2.5) exp(−0.4 t) − 2.5 while it turns
            assert sim.runs[0].v[0] == pytest.approx(3.5 * np.exp(-0.04) - 2.5, abs=2e-3)


def test_the_servo_is_eq_5_8_with_the_gear_ratio_of_each_joint(tmp_path):
    """Γ = R (K_p (q_d − q) + K_v (0 − q̇)) + μ_v q̇ + μ_d sign(q̇), R from the joint's <rotor gear_ratio>."""
    (tmp_path / "w.urdf").write_text(WHEEL.format(dynamics='<rotor inertia="1e-4" gear_ratio="50"/>'
                                                           '<friction viscous="0.3" dry="0.2"/>'))
    model = engine.load_model(tmp_path / "w.urdf")
    servo = plugins.get("controller", "servo")(model, np.array([0.4]), kp=2.0, kv=0.5)
    tau = servo.control(0.0, np.array([0.1]), np.array([-0.7]))
    assert tau[0] == pytest.approx(50 * (2.0 * 0.3 - 0.5 * -0.7) + 0.3 * -0.7 - 0.2, abs=1e-12)


def test_bad_servo_parameters_name_the_file_and_line(tmp_path):
    with pytest.raises(UniverseError, match=r"scene.xml:2: controller 'servo': kp must be finite and >= 0"):
        wheel(tmp_path, '<Controller plugin="servo" target="w" kp="-1"/>')
