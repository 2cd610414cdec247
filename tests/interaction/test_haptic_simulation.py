"""The thesis's haptic object test through the real engine: a 1.75 kg box resting on a table (contacts solved by
the simulation), grasped in attach mode through a scripted device, lifted and held still (seed 000 L1962)."""
import numpy as np

from engine import Simulation, load_universe
from engine.interaction import HapticSession, SafetySettings, ScriptedDevice, SimulationBody, WorkspaceMap
from haptic_helpers import lockstep

M, G = 1.75, 9.81
SCENE = """<Universe>
  <Body name="table"><Box size="1 1 0.05" xyz="0 0 0.7"/><Mass>0</Mass></Body>
  <Body name="box"><Box size="0.2 0.2 0.1"/><Mass>1.75</Mass><Translation x="0" y="0" z="0.775"/></Body>
</Universe>
"""


def test_held_object_settles_at_its_weight_in_the_simulation(tmp_path, clock):
    """Held still, the vertical coupling force on the box is its weight 1.75 × 9.81 N within 1% (the thesis read
    17.15 N with g = 9.8), and the box hangs above the table."""
    scene = tmp_path / "grasp.xml"
    scene.write_text(SCENE)
    sim = Simulation(load_universe(scene))
    top = np.array([0.0, 0.0, 0.825])
    t = np.array([0.0, 0.199, 0.2, 0.4, 1.2, 3.0])
    z = np.array([0.0, 0.0, 0.0, 0.0, 0.1, 0.1])
    device = ScriptedDevice(t, np.stack([0 * z, 0 * z, z], axis=1), buttons=[0, 0, 1, 1, 1, 1], clock=clock)
    session = HapticSession(device, workspace_map=WorkspaceMap(p=top), clock=clock,
                            safety=SafetySettings(force_gain=0.05))

    def pick(x):  # the box (multibody 0, body 0) when the proxy is inside it
        R, p = sim.body_placement(0, 0)
        return (0, 0) if np.all(np.abs(R.T @ (x - p)) <= [0.1, 0.1, 0.05 + 1e-9]) else None

    port = session.physics_port(pick, lambda key: SimulationBody(sim, *key))
    device.start()
    lockstep(session, port, sim, clock, 3.0)
    rec = session.recording.arrays()
    settled = rec["t"] > rec["t"][-1] - 0.5
    assert sim.body_placement(0, 0)[1][2] > 0.775 + 0.05            # lifted off the table
    assert len(sim.contacts) == 0
    assert np.all(np.abs(rec["wrench"][settled, 2] - M * G) < 0.01 * M * G)
