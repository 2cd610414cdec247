"""Device inputs in the simulation recording (issue 7 item 5, issue 6 item 5): a haptic session recorded with
the run, saved, loaded and replayed through the scripted device gives the same forces and the same motion."""
import numpy as np

from app.recording import Recorder
from engine import Simulation, load_universe
from engine.interaction import HapticSession, ScriptedDevice, WorkspaceMap, simulation_port

SCENE = """<Universe>
  <Body name="table"><Box size="1 1 0.05" xyz="0 0 0.7"/><Mass>0</Mass></Body>
  <Body name="box"><Box size="0.2 0.2 0.1"/><Mass>1.75</Mass><Translation x="0" y="0" z="0.775"/></Body>
</Universe>
"""
TOP = np.array([0.0, 0.0, 0.825])


def run(universe, device, steps, recorder=None):
    """Lockstep on simulated time: haptic tick, port, step; the session and the recorder it feeds."""
    sim = Simulation(universe)
    device._clock = lambda: sim.time
    session = HapticSession(device, workspace_map=WorkspaceMap(p=TOP), clock=lambda: sim.time)
    port = simulation_port(session, sim)
    session.start(threaded=False)
    if recorder is not None:
        recorder.attach_device("scripted", session.recording)
        recorder.append(sim)
    for _ in range(steps):
        session.tick()
        port.update(sim.time)
        sim.step()
        if recorder is not None:
            recorder.append(sim)
    session.stop()
    return sim, session


def test_a_recorded_session_replays_through_the_scripted_device_with_the_same_forces(tmp_path):
    scene = tmp_path / "box.xml"
    scene.write_text(SCENE)
    universe = load_universe(scene)
    t = np.array([0.0, 0.099, 0.1, 0.3, 0.8, 1.2])                   # waypoints on ticks: grasp, lift, slide
    position = [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0.05, 0, 0.08], [0.1, 0.02, 0.08]]
    recorder = Recorder(capacity=2000)
    _, session = run(universe, ScriptedDevice(t, position, buttons=[0, 0, 1, 1, 1, 1]), 1200, recorder)
    recorder.save(tmp_path / "run.npz", source=str(scene), multibodies=["box"])

    loaded = Recorder.load(tmp_path / "run.npz")
    columns = loaded.devices()["scripted"]
    assert len(columns["t"]) == 1200 and len(loaded) == 1201
    np.testing.assert_array_equal(columns["wrench"], session.recording.arrays()["wrench"])
    np.testing.assert_array_equal(columns["buttons"][[0, 99, 100]], [0, 0, 1])
    replay_recorder = Recorder(capacity=2000)
    _, again = run(universe, ScriptedDevice.from_file(tmp_path / "run.npz"), 1200, replay_recorder)
    replayed = again.recording.arrays()
    assert np.abs(columns["wrench"][:, 2]).max() > 10.0                # the box was really carried
    # every tick but the last, which has no next sample to give the replay its velocity (the replay holds)
    np.testing.assert_allclose(replayed["wrench"][:-1], columns["wrench"][:-1], atol=1e-6)
    np.testing.assert_allclose(replayed["force"][:-1], columns["force"][:-1], atol=1e-6)
    np.testing.assert_allclose(replay_recorder.frame(-2).state.q[0], loaded.frame(-2).state.q[0], atol=1e-9)
    assert np.abs(loaded.frame(-2).state.q[0][:3] - loaded.frame(0).state.q[0][:3]).max() > 0.05

def test_a_reset_starts_the_device_log_afresh(tmp_path):
    scene = tmp_path / "box.xml"
    scene.write_text(SCENE)
    recorder = Recorder(capacity=100)
    run(load_universe(scene), ScriptedDevice([0.0, 1.0], [[0, 0, 0], [0, 0, 0.1]]), 50, recorder)
    assert len(recorder.devices()["scripted"]["t"]) == 50
    recorder.clear()
    assert len(recorder.devices()["scripted"]["t"]) == 0
