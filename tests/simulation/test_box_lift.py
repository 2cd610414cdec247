"""scenes/box_lift.xml: the dynamic box lift of seed 000 §5.2.1 (4.5 kg box, μ_o = 0.4) by two scripted pads,
with the object constraints 5.19–5.22 recorded by the ``object-constraints`` sensor."""
from pathlib import Path

import numpy as np
import pytest

from engine import Simulation, load_universe

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "box_lift.xml"
M, G = 4.5, 9.81


@pytest.fixture(scope="module")
def run():
    """The scripted 3 s: pads close (0–0.4 s), squeeze the box on the ground (0.4–1 s), lift 0.2 m (1–2 s),
    hold."""
    sim = Simulation(load_universe(SCENE))
    box, lifter = ([r.name for r in sim.runs].index(name) for name in ("box", "lifter"))
    rows = {"t": [], "z_box": [], "z_lift": []}
    for _ in range(3000):
        sim.step(1)
        rows["t"].append(sim.time)
        rows["z_box"].append(sim.runs[box].q[2])
        rows["z_lift"].append(sim.runs[lifter].q[0])
        for key, value in sim.measurements["box/box"].items():
            rows.setdefault(key, []).append(np.array(value))
    return {k: np.array(v) for k, v in rows.items()}, sim.runs[box].instance.q0[2]


def test_the_box_is_lifted_as_scripted_without_slipping_in_the_grasp(run):
    """Height gain 0.2 m ± 1 mm (observed 0.1998 m: the lift slide's PD, k_p = 2·10⁵ N/m, gives 0.2 mm under the
    box's weight); the box moves with the pads to 10 µm over the lift (observed: 3e-11 m, no slip)."""
    s, z0 = run
    assert s["z_box"][-1] - z0 == pytest.approx(0.2, abs=1e-3)
    during = s["t"] >= 1.0
    slip = (s["z_box"][during] - s["z_box"][during][0]) - (s["z_lift"][during] - s["z_lift"][during][0])
    assert np.abs(slip).max() < 1e-5


def test_the_object_constraints_hold_while_the_box_rests_squeezed_on_the_ground(run):
    """Squeezed at about 100 N a pad, on the ground (0.5 ≤ t < 1 s): no slip (5.19: |f_hx| < μ_o(m_o g − f_hz)),
    no tipping backward (5.20: τ_e1 < 0) or forward (5.21: τ_e2 > 0), the ground carries it (5.22: m_o g − f_hz > 0)
    — and, the box at rest, the ground's normal force is exactly that load, m_o g − f_hz, to 1e-3 N."""
    s, _ = run
    hold = (s["t"] >= 0.5) & (s["t"] < 1.0)
    assert np.all(s["slip_margin"][hold] > 0) and np.all(s["tau_e1"][hold] < 0)
    assert np.all(s["tau_e2"][hold] > 0) and np.all(s["ground_load"][hold] > 0)
    np.testing.assert_allclose(s["ground_force"][hold][:, 2], s["ground_load"][hold][:, 0], atol=1e-3)
    assert np.all(s["hand_cone"][hold] > 10.0)                     # each pad: 0.4 · 100 N − |T| ≈ 40 N


def test_the_carried_box_obeys_newton_and_each_hand_contact_its_cone(run):
    """Carried (t ≥ 1.1 s) the ground no longer touches the box, and the hands' vertical resultant is f_hz =
    m_o (g + a_z) to 1e-3 N, with a_z = (z_k − 2 z_k−1 + z_k−2)/δt² from the box's heights (semi-implicit Euler:
    exact for a translating body), independent of the sensor; so 5.22's m_o g − f_hz is −m_o a_z: it has turned
    (≤ 0) while the box accelerates upward. Over the whole run the sensor's Newton residual f_h + f_ground + m_o g⃗
    − m_o a stays below 1e-3 N (observed 4e-4 N, 1e-5 of the weight); each pad's contact resultant is inside its
    Coulomb cone (μ N − |T| ≥ 0; observed ≥ 13 N)."""
    s, _ = run
    carry = s["t"] >= 1.1
    assert np.abs(s["ground_force"][carry]).max() < 1e-6
    a_z = np.r_[np.nan, np.nan, np.diff(s["z_box"], 2)] / 1e-3 ** 2
    np.testing.assert_allclose(s["hand_force"][carry][:, 2], M * (G + a_z[carry]), rtol=0, atol=1e-3)
    accelerating = carry & (s["t"] < 1.5)
    assert np.all(s["ground_load"][accelerating] <= 1e-3) and s["ground_load"][accelerating].min() < -1.0
    assert np.abs(s["newton_residual"]).max() < 1e-3
    assert np.all(s["hand_cone"][carry] >= 0.0)


def test_a_sensor_whose_hand_is_no_multibody_stops_the_step_with_a_hint():
    """Bad input: ``hand="liftr"`` names no multibody; the first step raises a PluginError that suggests 'lifter'
    and the simulation keeps its last good state."""
    from engine.errors import PluginError
    sim = Simulation(load_universe(SCENE, overrides={"Sensor.hand": "liftr"}))
    with pytest.raises(PluginError, match="did you mean 'lifter'"):
        sim.step(1)
    assert sim.time == 0.0


def test_the_constraints_are_plottable_signals():
    """The GUI's signal catalogue offers the constraints under sensor/box/box (the sensor's default name), and they
    read the simulation's measurements: at rest on the ground, before the pads touch, 5.22 is m_o g and 5.20 is
    −m_o g d_o/2 (the ground's reaction at the middle of the base)."""
    from app.signals import catalogue
    universe = load_universe(SCENE)
    sim = Simulation(universe)
    sim.step(50)
    signals = {(s.group, s.name): s for s in catalogue(universe)}
    snapshot = sim.snapshot()
    assert signals["sensor/box/box", "ground_load"].value(snapshot) == pytest.approx(M * G, rel=1e-9)
    assert signals["sensor/box/box", "tau_e1"].value(snapshot) == pytest.approx(-M * G * 0.15, rel=1e-9)
    offered = {name for group, name in signals if group == "sensor/box/box"}
    assert {"slip_margin", "tau_e2", "hand_cone[1]", "newton_residual[2]"} <= offered
