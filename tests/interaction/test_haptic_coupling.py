"""Attach mode: the thesis experiment, eq. 3.63 damping, ramp, clamp, passivity (deterministic lockstep)."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from engine.interaction import (CouplingSettings, DeviceError, HapticSession, SafetySettings, ScriptedDevice,
                                WorkspaceMap, coupling_gains)
from engine.interaction.coupling import rotation_log
from haptic_helpers import RigidWorld, lockstep, world_body

M, G = 1.75, 9.81


def grasp_and_lift(clock, lift=0.1, t_grasp=0.2, t_lift=(0.4, 1.2), t_end=3.0, **session_kw):
    """The thesis' haptic object test (seed 000 L1962): a 1.75 kg box on a table, grasped on its top face,
    lifted by ``lift`` m, held still."""
    world = RigidWorld(M, [0.1, 0.1, 0.05], [0.0, 0.0, 0.75], table_z=0.75)
    top = world.c + [0.0, 0.0, 0.05]
    t = np.array([0.0, t_grasp - 1e-3, t_grasp, t_lift[0], t_lift[1], t_end])
    z = np.array([0.0, 0.0, 0.0, 0.0, lift, lift])
    device = ScriptedDevice(t, np.stack([0 * z, 0 * z, z], axis=1), buttons=[0, 0, 1, 1, 1, 1], clock=clock,
                            **session_kw.pop("device_kw", {}))
    session = HapticSession(device, workspace_map=WorkspaceMap(p=top), clock=clock, **session_kw)
    port = session.physics_port(*world_body(world))
    device.start()
    lockstep(session, port, world, clock, t_end)
    return world, device, session


def test_held_object_settles_at_its_weight(clock):
    """1.75 kg held still in attach mode: vertical coupling force 1.75 x 9.81 N within 1% (thesis: 17.15 N)."""
    world, device, session = grasp_and_lift(clock, safety=SafetySettings(force_gain=0.05))
    rec = session.recording.arrays()
    settled = rec["t"] > rec["t"][-1] - 0.5
    f_body = rec["wrench"][settled, 2]
    assert world.c[2] > 0.75 + 0.03                                # lifted off the table
    assert np.all(np.abs(f_body - M * G) < 0.01 * M * G)
    np.testing.assert_allclose(world.wrench[:3], [0.0, 0.0, M * G], rtol=0, atol=0.01 * M * G)
    f_device = device.forces()[-500:, 1:4]                         # the hand feels the weight, scaled by 0.05
    np.testing.assert_allclose(f_device.mean(axis=0), [0.0, 0.0, -0.05 * M * G], atol=0.01 * 0.05 * M * G)


def test_damping_of_eq_363_gives_the_closed_form_overshoot(clock):
    """k_v = sqrt(2 m k_p) is damping ratio zeta = 1/sqrt(2): a free mass released at a distance e0 from a still
    proxy, e(t) = e0 exp(-zeta w t) (cos w_d t + zeta / sqrt(1 - zeta^2) sin w_d t), overshoots the proxy by
    exp(-pi zeta / sqrt(1 - zeta^2)) e0 = exp(-pi) e0 = 4.32 % (the proxy jumps between two ticks, so the
    device reports no velocity)."""
    assert coupling_gains(CouplingSettings(k_p=400.0), M).k_v == pytest.approx(np.sqrt(2 * M * 400.0))
    world = RigidWorld(M, [0.05] * 3, [0.0, 0.0, 1.0], g=0.0)
    step = 0.02
    device = ScriptedDevice([0.0, 0.1005, 0.1006, 3.0], [[0, 0, 0], [0, 0, 0], [step, 0, 0], [step, 0, 0]],
                            buttons=[1, 1, 1, 1], clock=clock)
    session = HapticSession(device, workspace_map=WorkspaceMap(p=world.c), clock=clock,
                            coupling=CouplingSettings(k_p=400.0, rotational=False),
                            safety=SafetySettings(ramp_time=0.0, passivity=False))
    port = session.physics_port(*world_body(world))
    device.start()
    x = []
    for _ in range(2000):
        lockstep(session, port, world, clock, 1e-3)
        x.append(world.c[0])
    overshoot = (max(x) - step) / step
    assert overshoot == pytest.approx(np.exp(-np.pi), abs=4e-3)


def test_rotation_log_matches_scipy():
    rng = np.random.default_rng(0)
    vectors = list(rng.normal(size=(20, 3))) + [np.array([0.0, 0.0, np.pi - 1e-9]), np.array([1e-9, 0, 0])]
    for r in vectors:
        r = r / np.linalg.norm(r) * min(np.linalg.norm(r), np.pi - 1e-9)
        R = Rotation.from_rotvec(r).as_matrix()
        np.testing.assert_allclose(rotation_log(R), r, atol=1e-7)


def test_force_ramps_up_smoothly_when_the_grasp_starts(clock):
    """The hand sweeps at speed u across a pinned body and grabs it at t_g: unramped, the hand would at once feel
    f = -(k_p u (t - t_g) + k_v u); the ramp starts the force from 0 without a jump and reaches that law after
    ramp_time."""
    clock.t, u, t_g, k_p, k_v, T = 0.0, 0.1, 0.2, 400.0, 20.0, 0.1
    t = np.arange(0.0, 0.6, 1e-3)
    device = ScriptedDevice(t, np.stack([u * t, 0 * t, 0 * t], axis=1), buttons=(t >= t_g - 1e-9), clock=clock)
    pinned = DrivenBody(clock, 0.0, 0.0, 0.0)
    session = HapticSession(device, clock=clock, coupling=CouplingSettings(k_p=k_p, k_v=k_v, rotational=False),
                            safety=SafetySettings(ramp_time=T, passivity=False))
    port = session.physics_port(lambda x: "pinned", lambda key: pinned)
    device.start()
    for _ in range(len(t) - 2):
        clock.t += 1e-3
        port.update(clock.t)
        session.tick()
    log = device.forces()
    f = -log[:, 1]
    grabbed = np.flatnonzero(f > 0)[0] - 1                           # first tick with the body (ramp value 0)
    x_grasp = u * log[grabbed - 1, 0]                                 # where the hand was when the button went down
    law = k_p * (u * log[:, 0] - x_grasp) + k_v * u
    assert f[grabbed] == 0.0 and law[grabbed] > 1.9
    assert np.all(np.diff(f[grabbed:grabbed + 100]) < 0.1)           # no jump: at most 0.1 N per ms
    after = log[:, 0] > log[grabbed, 0] + T + 1e-6
    np.testing.assert_allclose(f[after], law[after], rtol=1e-9)


def test_huge_coupling_error_never_exceeds_the_device_maximum(clock):
    """A 10 m lift (the proxy far from the grasped point) sends |f| <= max_force and |tau| <= max_torque, each
    along the unclamped coupling wrench (the recorded body wrench, reversed)."""
    world, device, session = grasp_and_lift(clock, lift=10.0, t_end=1.5, safety=SafetySettings(passivity=False),
                                            device_kw={"max_force": 3.3, "max_torque": 0.1})
    sent, wrench = device.forces(), session.recording.arrays()["wrench"]
    f, tau = np.linalg.norm(sent[:, 1:4], axis=1), np.linalg.norm(sent[:, 4:7], axis=1)
    assert f.max() == pytest.approx(3.3) and np.all(f <= 3.3 + 1e-12)
    assert np.all(tau <= 0.1 + 1e-12)
    pushed = np.linalg.norm(wrench[:, :3], axis=1) > 1e-9
    cosine = np.einsum("ij,ij->i", sent[pushed, 1:4], -wrench[pushed, :3]) / (
        f[pushed] * np.linalg.norm(wrench[pushed, :3], axis=1))
    assert np.all(cosine > 1.0 - 1e-9)


class DrivenBody:
    """An active environment: a motor moves the grasped body along x as A sin(w t + phi), whatever the force."""

    def __init__(self, clock, amplitude, omega, phase):
        self.clock, self.A, self.omega, self.phase, self.mass = clock, amplitude, omega, phase, 1.0

    def placement(self):
        return np.eye(3), np.array([self.A * np.sin(self.omega * self.clock() + self.phase), 0.0, 0.0])

    def velocity_at(self, point):
        return np.array([self.A * self.omega * np.cos(self.omega * self.clock() + self.phase), 0.0, 0.0])

    def apply_wrench(self, wrench, point):
        pass


@pytest.mark.parametrize("passivity", [False, True])
def test_passivity_controller_bounds_the_energy_returned_to_the_hand(clock, passivity):
    """The hand oscillates on a body that a motor drives ahead of it: the world pumps energy into the hand.
    The energy that flowed from the hand into the world, E = sum -f.v dt (from the forces the device received and
    the hand's known velocity), goes negative without the controller and stays >= -E_budget with it."""
    clock.t = 0.0
    A, omega, budget = 0.02, 2 * np.pi * 2.0, 0.01
    t = np.arange(0.0, 2.0, 1e-3)
    device = ScriptedDevice(t, np.stack([A * np.sin(omega * t), 0 * t, 0 * t], axis=1), buttons=np.ones_like(t),
                            clock=clock)
    body = DrivenBody(clock, A, omega, phase=1.0)
    session = HapticSession(device, clock=clock, coupling=CouplingSettings(k_p=300.0, k_v=5.0, rotational=False),
                            safety=SafetySettings(passivity=passivity, energy_budget=budget))
    port = session.physics_port(lambda x: "motor", lambda key: body)
    device.start()
    for _ in range(len(t) - 1):
        clock.t += 1e-3
        port.update(clock.t)
        session.tick()
    log = device.forces()
    v = A * omega * np.cos(omega * log[:, 0])                      # the hand's velocity, x
    energy = np.cumsum(-log[:, 1] * v * 1e-3)
    if passivity:
        assert energy.min() >= -budget - 2e-3
    else:
        assert energy.min() < -10 * budget


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="k_p"):
        CouplingSettings(k_p=-1.0)
    with pytest.raises(ValueError, match="watchdog"):
        SafetySettings(watchdog=float("nan"))
    with pytest.raises(ValueError, match="mode"):
        HapticSession(ScriptedDevice([0.0], [[0, 0, 0]]), mode="grab")
    assert issubclass(DeviceError, Exception)
