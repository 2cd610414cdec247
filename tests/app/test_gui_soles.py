"""Deformable soles in the GUI (app/soles_view.py, app/signals.py): tributary areas and pressures against closed
forms, the soles drawn and coloured by their load in a real window, the magnification moving the drawn nodes, and
the sole signals reading the snapshot."""
from pathlib import Path

import numpy as np
import pytest

import engine
from app import DEFAULT_SCENE
from app.signals import catalogue
from app.soles_view import node_pressure, tributary_areas
from gui_helpers import settle, wait

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SCENES = Path(__file__).resolve().parents[2] / "scenes"


@pytest.fixture(scope="module")
def drop():
    return engine.load_universe(SCENES / "drop_soles.xml")


def test_the_tributary_areas_cover_the_bottom_face_and_a_pressure_is_a_force_over_its_area(drop):
    sole = drop.multibodies[0].soles[0].sole
    areas = tributary_areas(sole)
    assert areas.sum() == pytest.approx(0.22 * 0.13, rel=1e-12) and np.all(areas > 0)
    force = np.zeros((len(areas), 3))
    force[3, 2], force[5, 2] = 12.0, -4.0                         # a push and a pull (no pressure)
    state = engine.state.SoleState(np.eye(3), np.zeros(3), np.zeros_like(force), force)
    pressure = node_pressure(state, areas)
    assert pressure[3] == pytest.approx(12.0 / areas[3]) and pressure[5] == 0.0 and pressure.sum() == pressure[3]


def test_the_sole_signals_read_the_snapshot(drop):
    sim = engine.Simulation(drop)
    sim.step(300)                                                 # landed and settled
    snapshot = sim.snapshot()
    signals = {s.key: s for s in catalogue(drop)}
    state = snapshot.soles[1]
    group = "sole/talos/leg_right_6_link"
    assert signals[f"{group}/normal force"].value(snapshot) == pytest.approx(state.force[:, 2].sum())
    assert signals[f"{group}/compression max"].value(snapshot) == pytest.approx(1e3 * state.displacement[:, 2].max())
    assert signals[f"{group}/loaded nodes"].value(snapshot) == np.count_nonzero(state.force[:, 2] > 0) > 0


def test_the_centre_of_mass_acceleration_is_the_change_of_the_centre_of_mass_velocity(drop):
    """The signal c̈ = g + Σ f / M (Newton's law for the robot, from one snapshot) against the finite differences
    of ċ = Σ m_i v_Gi / M (the kinematics of two steps) through the soles' impact of a 1 cm drop: the discrete
    step changes the momentum by δt (M g + Σ f) at the configuration of its start, so the two differ by O(δt)
    terms of the velocity-dependent momentum map, here below 2e-3 of the peak (129 m/s², the closed form
    v₀ √(2k/m) of two E A / h = 4.3 MN/m soles under Talos's 90.3 kg is 137 m/s²)."""
    sim = engine.Simulation(drop)
    model = sim.runs[0].model
    signal = {s.key: s for s in catalogue(drop)}["talos/centre of mass/acceleration z"]

    def com_velocity():
        v = np.zeros(3)
        for b in range(model.nbodies):
            R, p = sim.body_placement(0, b)
            v += model.body_mass[b] * sim.body_velocity_at(0, b, R @ model.body_com[b] + p)
        return v / model.body_mass.sum()

    before, signals, differences = com_velocity(), [], []
    for _ in range(150):
        sim.step()
        after = com_velocity()
        signals.append(signal.value(sim.snapshot()))
        differences.append((after - before)[2] / drop.time_step)
        before = after
    signals, differences = np.array(signals), np.array(differences)
    assert signals[:5] == pytest.approx(-9.81, abs=1e-9)                 # falling: g, no contact yet
    assert 100.0 < signals.max() < 140.0
    assert np.abs(signals - differences).max() < 2e-3 * signals.max()


def test_the_soles_are_drawn_coloured_by_their_load_and_magnified_on_demand(qapp, window):
    try:
        assert window.open_scene(SCENES / "talos_soles.xml"), window.log.text()
        settle(qapp, window)
        soles = window.viewport.soles
        assert len(soles.items) == 2 and window.plots.rows                 # default plots include the soles'
        assert "talos/centre of mass/acceleration z" in window.plots.series      # … and the impacts they absorb
        before = np.array(soles.items[0].opts["meshdata"].vertexColors())
        window.play_pause()
        wait(qapp, lambda: window.frame.snapshot.t > 0.05)
        window.play_pause()
        wait(qapp, lambda: not window.physics.playing)
        settle(qapp, window)
        loaded = np.array(soles.items[0].opts["meshdata"].vertexColors())
        assert window.viewport.snapshot.soles[0].force[:, 2].sum() > 0 and soles.pressure_range > 0 and np.abs(loaded - before).max() > 0.1          # red where it presses
        drawn = np.array(soles.items[0].opts["meshdata"].vertexes())
        window.viewport.set_sole_magnification(100.0)
        magnified = np.array(soles.items[0].opts["meshdata"].vertexes())
        state = window.frame.snapshot.soles[0]
        U = window.universe.multibodies[0].soles[0].sole.displacement(state.displacement.ravel())
        np.testing.assert_allclose(magnified - drawn, (99.0 * U @ state.R.T).astype(np.float32), atol=2e-6)
        window.viewport.set_layer_visible("visual", False)                # the feet hide their soles
        sole_pixels = window.viewport.grab_array()
        for item in soles.items:
            item.setVisible(False)
        hidden = window.viewport.grab_array()
        assert np.count_nonzero(np.any(sole_pixels != hidden, axis=2)) > 60     # two 22 × 13 cm soles from 3 m
    finally:
        window.viewport.set_layer_visible("visual", True)
        window.viewport.set_sole_magnification(1.0)
        assert window.open_scene(DEFAULT_SCENE), window.log.text()
        settle(qapp, window)
