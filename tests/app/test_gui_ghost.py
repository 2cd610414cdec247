"""View ▸ Ghost engine (app/ghost.py): a second Simulation of the open scene, stepped in lockstep by the physics
thread and drawn translucent over the main run, in a real window on the ten falling cubes of cubes_groups."""
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import app.ghost
import engine
from app import DEFAULT_SCENE
from app.ghost import GHOST_ALPHA, Ghost, divergence, engine_names
from app.viewport import stacked_placements
from engine.state import State
from gui_helpers import settle, wait

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

CUBES = Path(__file__).resolve().parents[2] / "scenes" / "cubes_groups.xml"
LANDED = 300     # steps: the cubes' 0.1-0.28 m falls take 0.14-0.24 s; at 0.3 s every one rests on the ground


def test_the_divergence_is_the_largest_gap_between_first_bodies():
    # two multibodies: first bodies 3-4-5 apart (5) and 1 apart; a multibody without bodies is left out
    main = SimpleNamespace(body_p=(np.array([[0.0, 0.0, 0.0], [9.0, 9.0, 9.0]]), np.array([[1.0, 2.0, 3.0]]),
                                   np.zeros((0, 3))))
    ghost = SimpleNamespace(body_p=(np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0]]), np.array([[1.0, 2.0, 4.0]]),
                                    np.zeros((0, 3))))
    assert divergence(main, ghost) == 5.0


def test_a_ghost_takes_q_v_t_of_a_state_whose_warm_start_another_engine_wrote():
    universe = engine.load_universe(CUBES)
    main = engine.Simulation(universe)
    main.step(LANDED)
    state = main.state
    foreign = State.capture(state.t, state.step, state.q, state.v, {"bullet_contacts": np.zeros(3)})
    ghost = Ghost(universe, "articula", foreign)
    got = ghost.sim.state
    assert got.t == state.t and got.step == state.step
    for a, b, c, d in zip(got.q, state.q, got.v, state.v):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(c, d)


@pytest.fixture(scope="module")
def cubes(qapp, window):
    """The window on cubes_groups, paused; no ghost and back on the default scene afterwards."""
    assert window.open_scene(CUBES), window.log.text()
    wait(qapp, lambda: window.frame is not None and window.viewport.snapshot is not None)
    yield window
    window.set_ghost_engine(None).result(30)
    assert window.open_scene(DEFAULT_SCENE)
    wait(qapp, lambda: window.frame is not None)


@pytest.fixture
def ghost(qapp, cubes):
    """The cubes at step LANDED with an articula ghost started there; no ghost afterwards."""
    window = cubes
    window.set_ghost_engine(None).result(30)
    window.physics.reset().result(30)
    window.physics.step(LANDED).result(60)
    window.set_ghost_engine("articula").result(30)
    settle(qapp, window)
    assert window.frame.ghost_engine == "articula" and window.frame.ghost.step == LANDED
    yield window
    if window.error_box is not None:
        window.error_box.close()
    window.set_ghost_engine(None).result(30)
    window.physics.reset().result(30)
    settle(qapp, window)


def step(qapp, window, n):
    window.physics.step(n).result(60)
    settle(qapp, window)
    return window.frame


def drawn(window):
    """(R, p) of the ghost's BodyMeshItems, float32 as uploaded, rows of the stacked placements."""
    (item, first), = window.ghost_bodies.items        # 21 stacked frames: one item
    M = item._matrices[:item.nbodies]
    return np.transpose(M[:, :3, :3], (0, 2, 1)), M[:, 3, :3]


def assert_same_placements(a, b, atol):
    for x, y in zip(stacked_placements(a), stacked_placements(b)):
        np.testing.assert_allclose(x, y, rtol=0, atol=atol)


def test_an_articula_ghost_steps_in_lockstep_and_is_drawn_translucent(qapp, ghost):
    window = ghost
    items = window.ghost_bodies.items
    assert items and all(item in window.viewport.items and item.translucent for item, _ in items)
    alpha = np.concatenate([item._arrays["a_color"][:, 3] for item, _ in items])
    assert len(alpha) > 0 and np.all(alpha == np.float32(GHOST_ALPHA))
    frame = step(qapp, window, 100)
    assert frame.snapshot.step == frame.ghost.step == LANDED + 100
    main, ghost_sim, own = window.physics.submit(
        lambda sim: (sim, window.physics.ghost.sim, window.physics.ghost.sim.snapshot())).result(30)
    assert ghost_sim is not main and ghost_sim.step_count == main.step_count == LANDED + 100
    assert_same_placements(frame.ghost, own, atol=0.0)               # the frame carries the ghost's snapshot
    assert_same_placements(frame.ghost, frame.snapshot, atol=1e-12)  # same engine, same state: same run
    assert len(frame.ghost.contacts) == len(frame.snapshot.contacts) > 0
    R, p = stacked_placements(frame.ghost)
    R_drawn, p_drawn = drawn(window)
    np.testing.assert_array_equal(R_drawn, R.astype(np.float32))
    np.testing.assert_array_equal(p_drawn, p.astype(np.float32))
    assert window.ghost_label.isVisible() and window.ghost_label.text() == "ghost articula: 0.000 mm apart"


def lift_ghost_cube(window, height):
    """Raise the ghost's cube 0 by ``height`` (m) at rest; returns the ghost's new state."""
    def lift(sim):
        ghost_sim = window.physics.ghost.sim
        state = ghost_sim.state
        q, v = [a.copy() for a in state.q], [a.copy() for a in state.v]
        q[0][2] += height
        v[0][:] = 0.0
        ghost_sim.set_state(State.capture(state.t, state.step, q, v))
        return ghost_sim.state
    return window.physics.submit(lift).result(30)


def test_the_ghost_runs_its_own_simulation_and_the_status_bar_shows_how_far_apart(qapp, ghost):
    window = ghost
    lifted = lift_ghost_cube(window, 0.05)
    frame = step(qapp, window, 20)
    reference = engine.Simulation(window.universe)       # the lifted state run headless, the same 20 steps
    reference.set_state(lifted)
    reference.step(20)
    assert_same_placements(frame.ghost, reference.snapshot(), atol=1e-12)
    gap = divergence(frame.snapshot, frame.ghost)
    # cube 0 rests on the ground in the main run; the ghost's, 5 cm higher, has fallen g t²/2 = 2.0 mm in 20 ms
    assert gap == pytest.approx(0.05 - 0.5 * 9.81 * 0.02 ** 2, abs=2e-4)
    assert window.ghost_label.text() == f"ghost articula: {1e3 * gap:.3f} mm apart"
    R_drawn, p_drawn = drawn(window)
    np.testing.assert_array_equal(p_drawn, stacked_placements(frame.ghost)[1].astype(np.float32))


def test_reset_and_seek_bring_the_ghost_back_on_the_main_run(qapp, ghost):
    window = ghost
    lift_ghost_cube(window, 0.05)
    step(qapp, window, 10)
    window.reset()
    settle(qapp, window)
    frame = window.frame
    assert frame.snapshot.step == frame.ghost.step == 0 and frame.ghost_engine == "articula"
    for q, mb in zip(frame.ghost.q, window.universe.multibodies):
        np.testing.assert_array_equal(q, mb.q0)
    step(qapp, window, 30)
    lift_ghost_cube(window, 0.05)
    window.seek(5)                                         # a recorded frame of the main run
    settle(qapp, window)
    frame = window.frame
    assert 0 < frame.snapshot.step == frame.ghost.step == window.recorder.frame(5).state.step < 30
    for a, b in zip(frame.ghost.q, frame.snapshot.q):
        np.testing.assert_array_equal(a, b)
    assert_same_placements(frame.ghost, frame.snapshot, atol=0.0)


def test_choosing_none_removes_the_ghost(qapp, ghost):
    window = ghost
    items = [item for item, _ in window.ghost_bodies.items]
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    ghosts = next(a.menu() for a in view.actions() if a.text() == "Ghost engine")
    assert [a.text() for a in ghosts.actions()] == ["None", "articula", "pybullet"]
    assert ghosts.actions()[1].isChecked()
    ghosts.actions()[0].trigger()
    window.physics.submit(lambda sim: None).result(30)
    settle(qapp, window)
    assert window.frame.ghost is None and window.frame.ghost_engine is None and window.physics.ghost is None
    assert window.ghost_bodies is None and not any(item in window.viewport.items for item in items)
    assert not window.ghost_label.isVisible()
    frame = step(qapp, window, 5)
    assert frame.snapshot.step == LANDED + 5 and frame.ghost is None


def test_the_pybullet_entry_is_enabled_only_when_the_engine_exists(cubes):
    entry = cubes.actions.ghost["pybullet"]
    assert entry.isEnabled() == ("pybullet" in engine_names())
    if not entry.isEnabled():
        assert "'pybullet' is not available" in entry.toolTip()
    assert cubes.actions.ghost["articula"].isEnabled()


def test_a_pybullet_ghost_keeps_the_resting_cubes_where_articula_keeps_them(qapp, cubes):
    """The cubes at rest, a pybullet ghost from there: after 200 steps each engine holds them on the ground, the
    ghost's bodies within 1 mm of the main run's (Bullet rests them 10⁻⁵ m deep), drawn and labelled."""
    window = cubes
    window.set_ghost_engine(None).result(30)
    window.physics.reset().result(30)
    window.physics.step(LANDED).result(60)
    try:
        window.set_ghost_engine("pybullet").result(30)
        frame = step(qapp, window, 200)
        assert frame.ghost_engine == "pybullet" and frame.ghost.step == frame.snapshot.step == LANDED + 200
        ghost_sim = window.physics.submit(lambda sim: window.physics.ghost.sim).result(30)
        assert ghost_sim.engine.name == "pybullet" and len(frame.ghost.contacts) > 0
        assert_same_placements(frame.ghost, frame.snapshot, atol=1e-3)
        assert window.ghost_label.text().startswith("ghost pybullet: ")
        assert float(window.ghost_label.text().split()[2]) < 1.0            # mm
    finally:
        window.set_ghost_engine(None).result(30)
        window.physics.reset().result(30)
        settle(qapp, window)


class FaultyGhost(engine.Simulation):
    """A Simulation that faults on its 5th step (as a diverging engine would)."""

    def step(self, n=1):
        if self.step_count >= LANDED + 4:
            raise engine.SimulationError("ghost test: diverged at its 5th step")
        super().step(n)


def test_a_ghost_that_faults_is_dropped_and_the_main_run_goes_on(qapp, cubes, monkeypatch):
    window = cubes
    window.physics.reset().result(30)
    window.physics.step(LANDED).result(60)
    monkeypatch.setattr(app.ghost, "make_simulation", lambda universe, name: FaultyGhost(universe))
    window.set_ghost_engine("articula").result(30)
    window.physics.set_speed(None).result(30)
    try:
        window.physics.play(stop_at_step=LANDED + 60)
        wait(qapp, lambda: window.frame.snapshot.step == LANDED + 60 and not window.frame.playing)
    finally:
        window.physics.set_speed(1.0).result(30)
    settle(qapp, window)
    assert window.frame.ghost is None and window.physics.ghost is None and window.ghost_bodies is None
    assert window.error_box is None or not window.error_box.isVisible()    # no dialog: the main run is fine
    assert "ghost engine 'articula' dropped: ghost test: diverged at its 5th step" in window.log.text()
    assert window.ghost_engine is None and window.actions.ghost[None].isChecked()
    window.physics.reset().result(30)
    settle(qapp, window)


def test_a_ghost_engine_that_cannot_be_built_is_reported_and_nothing_else_changes(qapp, cubes):
    window = cubes
    window.physics.reset().result(30)
    window.set_ghost_engine("no-such-engine").result(30)
    wait(qapp, lambda: window.ghost_engine is None)
    assert "ghost engine 'no-such-engine' dropped" in window.log.text()
    assert window.statusBar().currentMessage().startswith("ghost engine 'no-such-engine' dropped")
    assert window.actions.ghost[None].isChecked() and window.physics.ghost is None
    frame = step(qapp, window, 3)
    assert frame.snapshot.step == 3 and frame.ghost is None
