"""The physics thread against a headless Simulation of the same universe (no window needed)."""
import time

import numpy as np
import pytest

import engine
from app.physics_thread import LatestSlot, PhysicsThread
from app.recording import Recorder

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def universe(default_universe):
    return default_universe


@pytest.fixture(scope="module")
def running(universe):
    physics = PhysicsThread(engine.Simulation(universe), Recorder(capacity=10_000))
    physics.start()
    yield physics
    physics.stop()
    assert not physics.is_alive()


@pytest.fixture
def thread(running):
    """The module's physics thread, reset, paused, at real time."""
    running.reset().result(30)
    running.set_speed(1.0).result(30)
    return running


@pytest.fixture(scope="module")
def headless(universe):
    """State after n steps of a Simulation run without any thread (one Simulation, reset for each n)."""
    sim, states = engine.Simulation(universe), {}

    def state_after(n):
        if n not in states:
            sim.reset()
            sim.step(n)
            states[n] = sim.state
        return states[n]
    return state_after


def _wait_paused(physics, timeout=60.0):
    end = time.monotonic() + timeout
    while physics.playing:
        assert time.monotonic() < end, "the run did not pause in time"
        time.sleep(0.005)
    physics.submit(lambda sim: None).result(timeout)   # and the last frame is published


def _assert_same_state(a, b):
    assert a.step == b.step and a.t == b.t
    for qa, qb, va, vb in zip(a.q, b.q, a.v, b.v):
        np.testing.assert_array_equal(qa, qb)
        np.testing.assert_array_equal(va, vb)


def test_latest_slot_returns_the_newest_value_and_counts_versions():
    slot = LatestSlot()
    assert slot.get() == (0, None)
    slot.put("a")
    slot.put("b")
    assert slot.get() == (2, "b")


@pytest.mark.parametrize("speed", [None, 4.0, 1.0])
def test_n_steps_at_any_speed_give_the_headless_state(headless, thread, speed):
    n = 120
    thread.set_speed(speed).result(30)
    thread.play(stop_at_step=n).result(30)
    _wait_paused(thread)
    _assert_same_state(thread.submit(lambda sim: sim.state).result(5), headless(n))
    assert thread.latest.get()[1].snapshot.step == n


def test_interleaved_single_steps_and_play_give_the_headless_state(headless, thread):
    thread.step(3).result(30)
    thread.set_speed(None).result(30)
    thread.play(stop_at_step=40).result(30)
    _wait_paused(thread)
    thread.step(1).result(30)
    _assert_same_state(thread.submit(lambda sim: sim.state).result(5), headless(41))


def test_step_advances_exactly_one_time_step_and_reset_restores_the_initial_state(universe, thread):
    thread.step(1).result(30)
    frame = thread.latest.get()[1]
    assert frame.snapshot.step == 1 and frame.snapshot.t == universe.time_step and not frame.playing
    thread.reset().result(30)
    snapshot = thread.latest.get()[1].snapshot
    assert snapshot.step == 0 and snapshot.t == 0.0
    for mb, q, v in zip(universe.multibodies, snapshot.q, snapshot.v):
        np.testing.assert_array_equal(q, mb.q0)
        np.testing.assert_array_equal(v, mb.v0)
    assert len(thread.recorder) == 1


def test_real_time_pacing_keeps_simulated_time_near_wall_time(thread):
    thread.set_speed(1.0).result(30)
    thread.play().result(30)
    start = time.monotonic()
    time.sleep(0.6)
    thread.pause().result(30)
    wall = time.monotonic() - start
    t = thread.latest.get()[1].snapshot.t
    assert t <= wall + 0.05     # never ahead of the wall clock (a loaded machine may lag behind it)


def test_a_simulation_error_stops_the_run_reports_it_and_keeps_the_recording(thread):
    thread.set_speed(None).result(30)
    thread.play(stop_at_step=20).result(30)
    _wait_paused(thread)

    def blow_up(sim):   # a velocity whose square overflows: the dynamics produce inf
        state = sim.state
        v = [np.full_like(a, 1e300) for a in state.v]
        sim.set_state(type(state).capture(state.t, state.step, state.q, v))
    thread.submit(blow_up).result(5)
    thread.play().result(30)
    error = thread.errors.get(timeout=30)
    assert isinstance(error, engine.SimulationError) and "non-finite" in str(error)
    _wait_paused(thread)
    assert len(thread.recorder) == 21 and thread.recorder.frame(-1).state.step == 20
    assert thread.is_alive()


def test_reading_frames_never_waits_for_a_slow_physics(thread):
    busy = thread.submit(lambda sim: time.sleep(0.5))    # the physics thread is busy for half a second
    started, reads = time.monotonic(), 0
    while time.monotonic() - started < 0.3:
        thread.latest.get()
        reads += 1
    assert not busy.done() and reads > 1000
    busy.result(5)
