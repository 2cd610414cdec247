"""The window on the pybullet engine (issue 15, part 1): the GUI, its physics thread and its recorder are those of
Articula's engine; only the Simulation's engine changes."""
import warnings

import numpy as np

import app
import engine
from gui_helpers import settle, wait


def test_the_window_plays_the_default_scene_on_pybullet_as_headless_pybullet_does(qapp, window):
    """Opened with engine_name = "pybullet", the default scene plays 100 steps in the window to the same state
    as a headless pybullet Simulation (Bullet is deterministic), with its contacts in the frame; the next scene
    opened on the universe's own engine is Articula's again."""
    try:
        window.engine_name = "pybullet"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")               # the <Solver> settings Bullet does not use
            assert window.open_scene(app.DEFAULT_SCENE), window.log.text()
            headless = engine.Simulation(engine.load_universe(app.DEFAULT_SCENE), engine="pybullet")
        headless.step(100)
        assert window.physics.submit(lambda sim: sim.engine.name).result(30) == "pybullet"
        window.physics.play(stop_at_step=100)
        wait(qapp, lambda: window.frame.snapshot.step == 100 and not window.frame.playing)
        snapshot = window.frame.snapshot
        for a, b in zip(snapshot.q + snapshot.v, headless.state.q + headless.state.v):
            np.testing.assert_array_equal(a, b)
        assert len(snapshot.contacts) > 0 and set(snapshot.contacts.body_b) >= {"ground"}
    finally:
        window.engine_name = None
        assert window.open_scene(app.DEFAULT_SCENE)
        settle(qapp, window)
    assert window.physics.submit(lambda sim: sim.engine.name).result(30) == "articula"
