"""Every universe shipped in scenes/ loads and steps 1 s of simulated time with finite states."""
from pathlib import Path

import numpy as np
import pytest

from engine import Simulation, load_universe

SCENES = sorted((Path(__file__).resolve().parents[2] / "scenes").glob("*.xml"))


@pytest.mark.parametrize("scene", SCENES, ids=[s.stem for s in SCENES])
def test_scene_steps_one_second(scene):
    sim = Simulation(load_universe(scene))
    sim.step(int(round(1.0 / sim.dt)))
    assert sim.time == pytest.approx(1.0)
    assert all(np.all(np.isfinite(q)) for q in sim.state.q)


def test_the_collision_group_cubes_land_in_ten_groups_of_four_contacts():
    """Seed 000 L1823: k = 10 separate cubes, m = 4 contacts each, each cube its own collision group carrying
    its weight."""
    sim = Simulation(load_universe(SCENES[0].parent / "cubes_groups.xml"))
    sim.step(1000)
    reports = sim.contact_stage.reports
    assert len(reports) == 10 and all(r.contacts == 4 and r.rows == 12 and r.converged for r in reports)
    assert np.asarray(sim.contacts.force)[:, 2].sum() == pytest.approx(10 * 9.81, rel=1e-6)


def test_the_two_handled_object_rests_on_the_table_for_the_haptic_session():
    """The 1.75 kg object of seed 000 §4's haptic scene rests on its four corners beside Talos, and the scene
    declares the mouse as its haptic device."""
    universe = load_universe(SCENES[0].parent / "talos_haptic_object.xml")
    assert [d.name for d in universe.devices] == ["mouse"]
    sim = Simulation(universe)
    sim.step(500)
    names = np.array(sim.contacts.body_a + sim.contacts.body_b).reshape(2, -1)
    on_object = np.any(names == "object/object", axis=0)
    assert on_object.sum() == 4
    assert np.abs(np.asarray(sim.contacts.force)[on_object]).sum(axis=0)[2] == pytest.approx(1.75 * 9.81, rel=1e-6)
