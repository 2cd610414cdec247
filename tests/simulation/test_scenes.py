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
