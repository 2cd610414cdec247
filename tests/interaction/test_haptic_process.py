"""The haptic session in its own process (real child processes, real shared memory): a grasp held at the
object's weight, the watchdog on a stalled physics, a device fault, the mouse moved from the parent, and the
child's end when the session stops or the parent dies."""
import functools
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from engine import Simulation, load_universe
from engine.interaction import (DeviceError, MouseDevice, SafetySettings, ScriptedDevice, SimulationBody,
                                WorkspaceMap)
from engine.interaction.process import ProcessSession, process_session_for
from engine.interaction.scene_proximity import SceneProximity
from engine.interaction.shared import SharedPlacements
from engine.model.universe import PluginSpec
from haptic_helpers import FailingDevice, PhysicsLoop, RigidWorld, wait_for, world_body

M, G = 1.75, 9.81
GAIN = 0.05
SCENE = """<Universe>
  <Body name="table"><Box size="1 1 0.05" xyz="0 0 0.7"/><Mass>0</Mass></Body>
  <Body name="box"><Box size="0.2 0.2 0.1"/><Mass>1.75</Mass><Translation x="0" y="0" z="0.775"/></Body>
</Universe>
"""


def lift(device=ScriptedDevice, grasp_at=0.3, **kw):
    """A scripted device made in the child: still, grasp at ``grasp_at`` s, lift 10 cm over 1 s, hold."""
    t = grasp_at + np.array([-0.3, -0.001, 0.0, 0.2, 1.2, 60.0])
    z = np.array([0.0, 0.0, 0.0, 0.0, 0.1, 0.1])
    return functools.partial(device, t, np.stack([0 * z, 0 * z, z], axis=1), buttons=[0, 0, 1, 1, 1, 1], **kw)


def settled(rows, seconds=0.5):
    return rows["t"] > rows["t"][-1] - seconds


def recorded_until(session, t):
    """A condition: the child has recorded its ticks up to device time ``t``."""
    def reached():
        return len(session.recording) > 0 and session.recording.arrays()["t"][-1] >= t
    reached.__doc__ = f"the haptic ticks to reach t = {t} s"
    return reached


def test_a_box_held_through_the_haptic_process_settles_at_its_weight(tmp_path):
    """Seed 000 L1962 with the tick in a child process and the Simulation stepping in real time here: the
    vertical coupling force on the held 1.75 kg box is 1.75 × 9.81 N within 1%, and every tick was recorded."""
    scene = tmp_path / "grasp.xml"
    scene.write_text(SCENE)
    sim = Simulation(load_universe(scene))
    session = ProcessSession(lift(), workspace_map=WorkspaceMap(p=[0.0, 0.0, 0.825]),
                             safety=SafetySettings(force_gain=GAIN))

    def pick(x):
        R, p = sim.body_placement(0, 0)
        return (0, 0) if np.all(np.abs(R.T @ (x - p)) <= [0.1, 0.1, 0.05 + 1e-9]) else None

    port = session.physics_port(pick, lambda key: SimulationBody(sim, *key))
    end = sim.time + 2.5                                          # 2.5 s simulated from the device's start

    def held_at_its_weight():
        """2.5 s simulated, the last 0.5 s of the recording at the box's weight (or a physics error)"""
        if physics.error is not None or sim.time < end:
            return physics.error is not None
        rec = session.recording.arrays()
        return len(rec["t"]) > 0 and bool(np.all(np.abs(rec["wrench"][settled(rec), 2] - M * G) < 0.01 * M * G))
    with PhysicsLoop(sim, port, rate=1.0 / sim.dt) as physics:
        session.start()
        wait_for(held_at_its_weight)    # a loaded machine lags, and its watchdog may trip and the force ramp again
        session.stop()
    assert physics.error is None
    rec = session.recording.arrays()
    assert sim.body_placement(0, 0)[1][2] > 0.775 + 0.05 and len(sim.contacts) == 0     # lifted off the table
    hold = settled(rec)
    np.testing.assert_allclose(rec["force"][hold, 2], -GAIN * rec["wrench"][hold, 2], rtol=1e-9)  # the reaction
    assert len(rec["t"]) > 2000 and np.all(np.diff(rec["t"]) > 0)                # 1 kHz, no row lost or repeated
    assert np.all(np.diff(rec["sim_t"][~np.isnan(rec["sim_t"])]) >= 0)


def holding(device=ScriptedDevice, **kw):
    world = RigidWorld(M, [0.1, 0.1, 0.05], [0.0, 0.0, 0.75], table_z=0.75)
    session = ProcessSession(lift(device, **kw), workspace_map=WorkspaceMap(p=world.c + [0, 0, 0.05]),
                             safety=SafetySettings(force_gain=GAIN))
    return world, session, session.physics_port(*world_body(world))


def test_a_stalled_physics_zeroes_the_force_of_the_haptic_process_within_50_ms():
    world, session, port = holding()
    with PhysicsLoop(world, port) as physics:
        session.start()
        wait_for(recorded_until(session, 1.0))                # held since the grasp at 0.3 s
        physics.stalled.set()
        time.sleep(0.2)
        physics.stalled.clear()
        time.sleep(0.5)
        session.stop()
    rec = session.recording.arrays()
    f = np.linalg.norm(rec["force"], axis=1)
    # age of the physics feedback each tick used: time since the first tick that saw its simulation time
    seen = ~np.isnan(rec["sim_t"])
    t, sim_t, f = rec["t"][seen], rec["sim_t"][seen], f[seen]
    first = {s: ti for s, ti in zip(sim_t[::-1], t[::-1])}
    age = t - np.array([first[s] for s in sim_t])
    assert age.max() > 0.15                                                        # the stall was seen
    assert np.all(f[age > 0.050] == 0.0)                                           # zero within 50 ms
    stall = np.flatnonzero(sim_t == sim_t[np.argmax(age)])[0]
    assert np.all(f[stall - 100:stall] > 0.5 * GAIN * M * G)                       # holding until the stall
    assert f[-1] > 0.5 * GAIN * M * G                                               # physics back: force back


def test_a_device_fault_in_the_child_stops_the_coupling_and_is_reported():
    world, session, port = holding(FailingDevice, fail_after=900)
    reported = []
    session.on_error = reported.append
    with PhysicsLoop(world, port) as physics:
        session.start()
        wait_for(lambda: session.fault is not None)
        steps = physics.steps
        time.sleep(0.1)
        assert physics.steps > steps and physics.error is None                    # the physics runs on
        assert isinstance(session.fault, DeviceError) and "USB cable pulled" in str(session.fault)
        assert reported == [session.fault] and not session.running
        assert not world.wrench.any()                                              # the body was released
        process = session._process
        assert process.is_alive()                                                  # the coupling stopped, not
        session.stop()                                                             # the child: it waits for stop
    assert process.exitcode == 0
    rec = session.recording.arrays()
    assert len(rec["t"]) == 900 and np.abs(rec["wrench"][:, 2]).max() > 0.5 * M * G  # it held the box before


def test_a_phantom_that_cannot_open_in_the_child_raises_in_the_parent():
    session = process_session_for(PluginSpec("device", "phantom", {"library": "/nonexistent/libHD.so"}))
    with pytest.raises(DeviceError, match="OpenHaptics"):
        session.start()
    session._process.join(5.0)
    assert session._process.exitcode == 0
    session.stop()


def test_the_mouse_moved_here_grasps_in_the_child_and_its_force_comes_back():
    """The GUI's side of the mouse stays in this process: place, press and drag move the proxy the child reads;
    the force the child writes is what ``force`` shows here, the weight of the held box (times the gain)."""
    world = RigidWorld(M, [0.1, 0.1, 0.05], [0.0, 0.0, 0.75], table_z=0.75)
    mouse = MouseDevice(shared=True)
    session = ProcessSession(mouse, safety=SafetySettings(force_gain=GAIN))
    port = session.physics_port(*world_body(world))
    with PhysicsLoop(world, port):
        session.start()
        mouse.place(world.c + [0.0, 0.0, 0.05])
        mouse.press()
        time.sleep(0.2)
        for _ in range(50):                                        # 5 cm up in 50 GUI events
            mouse.drag(0.0, 0.001, UP)
            time.sleep(0.005)
        time.sleep(1.5)
        force, held = mouse.force, world.c[2]
        mouse.release()
        time.sleep(0.2)
        released = mouse.force
        session.stop()
    assert held > 0.75 + 0.005
    assert force[2] == pytest.approx(-GAIN * M * G, rel=0.01)
    assert not released.any()
    np.testing.assert_allclose(session.recording.arrays()["position"][-1], mouse.position)


UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])    # a camera whose up axis is z
PARENT = """
import sys, time
sys.path[:0] = {path!r}
from engine.interaction import MouseDevice
from engine.interaction.process import ProcessSession
if __name__ == "__main__":
    session = ProcessSession(MouseDevice(shared=True))
    session.start()
    print(session._process.pid, flush=True)
    time.sleep(60)
"""


def test_the_child_exits_when_the_session_stops_or_the_parent_dies(tmp_path):
    session = ProcessSession(MouseDevice(shared=True))
    session.start()
    process = session._process
    session.stop()
    assert not process.is_alive() and process.exitcode == 0

    # the killed parent cannot remove its forkserver's folder (pymp-*): made under tmp_path, not /tmp
    parent = subprocess.Popen([sys.executable, "-c", PARENT.format(path=sys.path)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "TMPDIR": str(tmp_path)})
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 5.0
    while _running(child):
        assert time.monotonic() < deadline, "the haptic child outlived its parent"
        time.sleep(0.02)


def test_a_killed_child_is_reported_and_its_force_no_longer_applied():
    world, session, port = holding()
    reported = []
    session.on_error = reported.append
    with PhysicsLoop(world, port) as physics:
        session.start()
        wait_for(recorded_until(session, 1.0))
        assert world.wrench[2] > 0.5 * M * G                                       # holding
        os.kill(session._process.pid, signal.SIGKILL)
        time.sleep(0.3)
        assert physics.error is None and not world.wrench.any()                   # stale commands: released
        assert reported and "ended unexpectedly" in str(session.fault) and not session.running
        session.stop()


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


TOUCH_SCENE = """<Universe>
  <Body name="table"><Box size="0.8 0.6 0.04"/><Mass>0</Mass><Translation x="0" y="0" z="0.7"/></Body>
  <Body name="ball"><Sphere radius="0.05"/><Mass>1</Mass><Translation x="0.3" y="0.2" z="0.77"/></Body>
</Universe>
"""


class PublishingSimulation:
    """A Simulation that publishes its body placements to shared memory after each step (what the GUI's physics
    thread does for a touch-mode haptic process)."""

    def __init__(self, sim, placements):
        self.sim, self.placements = sim, placements
        self.publish()

    @property
    def time(self):
        return self.sim.time

    def publish(self):
        snapshot = self.sim.snapshot()
        self.placements.write(snapshot.body_R, snapshot.body_p)

    def step(self):
        self.sim.step()
        self.publish()


def test_touch_mode_in_the_child_renders_the_table_from_shared_placements(tmp_path):
    """Pressing 1 cm into a static table top: the god-object stays on it, so the device feels
    f = k_c (g - x_d) = 800 N/m × 0.01 m = 8 N straight up (Zilles & Salisbury), and the static table gets no
    wrench; the scene's geometry went to the child once, the placements go through shared memory."""
    scene = tmp_path / "touch.xml"
    scene.write_text(TOUCH_SCENE)
    universe = load_universe(scene)
    placements = SharedPlacements.of(universe)
    world = PublishingSimulation(Simulation(universe), placements)
    t, z = np.array([0.0, 0.3, 0.8, 60.0]), np.array([0.02, 0.02, -0.01, -0.01])
    device = functools.partial(ScriptedDevice, t, np.stack([0 * z, 0 * z, z], axis=1))
    session = ProcessSession(device, mode="touch", proximity=SceneProximity(universe, placements),
                             workspace_map=WorkspaceMap(p=[0.0, 0.0, 0.72]))
    port = session.physics_port(lambda x: None, lambda key: None)
    pressed = recorded_until(session, 1.5)

    def eight_newtons_up():
        """the last 0.3 s of the recording, past the press, at 8 N up"""
        rec = session.recording.arrays()
        return pressed() and np.allclose(rec["force"][settled(rec, 0.3)], [0.0, 0.0, 8.0], rtol=0.0, atol=1e-3)
    with PhysicsLoop(world, port, rate=1.0 / world.sim.dt):
        session.start()
        wait_for(eight_newtons_up)      # on a loaded machine the watchdog may trip first, and the force ramp again
        session.stop()
    assert not session.recording.arrays()["wrench"].any()
