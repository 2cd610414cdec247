"""The benchmark bicycle in the Simulation (issue 12): <Wheel> elements make a multibody roll on the ground with
the constrained dynamics of engine/dynamics/rolling.py, under the loop's torques and user wrenches."""
import re
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.dynamics.rolling import step_rolling
from engine.errors import UniverseError

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "bicycle.xml"


def test_the_scene_rolls_as_the_rolling_dynamics_do():
    """500 steps of the scene equal 500 direct ``step_rolling`` steps from its initial state, to the bit; the
    wheels' ground forces are reported as contacts on each wheel, at ground level, no slip allowed (μ = ∞), and
    they obey Newton's law for the whole bicycle: Σ λ = M (c̈ − g), c̈ the second difference of its centre of mass
    over the neighbouring steps (to 0.05 N of ~930 N)."""
    sim = engine.Simulation(engine.load_universe(SCENE))
    run, disks = sim.runs[0], sim.engine.rolling[0]
    q, v = run.q.copy(), run.v.copy()
    data = run.model.create_data()
    sim.step(499)
    centre = [engine.com(run.model, data, run.q)]
    sim.step(1)
    centre.append(engine.com(run.model, data, run.q))
    c = sim.contacts
    sim.step(1)
    centre.append(engine.com(run.model, data, run.q))
    for _ in range(501):
        q, v = step_rolling(run.model, data, q, v, np.zeros(run.model.nv), sim.dt, disks, run.gravity)
    np.testing.assert_array_equal(run.q, q)
    np.testing.assert_array_equal(run.v, v)
    assert c.body_a == ("bicycle/front_wheel", "bicycle/rear_wheel") and c.body_b == ("ground", "ground")
    assert np.all(np.isinf(c.mu)) and np.abs(c.point[:, 2]).max() < 1e-12
    acceleration = (centre[2] - 2 * centre[1] + centre[0]) / sim.dt ** 2
    mass = run.model.total_mass
    np.testing.assert_allclose(c.force.sum(axis=0), mass * (acceleration - sim.universe.gravity), rtol=0, atol=0.05)


def test_a_lateral_push_is_absorbed():
    """The issue's disturbance, 50 N m about the forward axis for 0.02 s (what a user's push through the mouse or
    the haptic device becomes: an external wrench), on the self-stable bicycle at 4.6 m/s: its roll rate leaves
    the unpushed run's, then the weave decays again; 5 s later it rolls upright (roll rate below 0.1 rad/s, lean
    below 0.05 rad)."""
    pushed, free = (engine.Simulation(engine.load_universe(SCENE)) for _ in range(2))
    for sim in (pushed, free):
        sim.step(1000)
    R, p = pushed.body_placement(0, 0)
    pushed.set_external_wrench(0, 0, [0, 0, 0, *(50.0 * R[:, 1])], p)    # about the frame's forward axis
    pushed.step(20)
    free.step(20)
    pushed.clear_external_wrenches()
    assert abs(pushed.runs[0].v[4] - free.runs[0].v[4]) > 0.01
    pushed.step(5000)
    R, _ = pushed.body_placement(0, 0)
    lean = np.arcsin(abs(R[:, 0] @ [0.0, 1.0, 0.0]))                     # the frame's up axis off the vertical
    assert abs(pushed.runs[0].v[4]) < 0.1 and lean < 0.05


@pytest.mark.parametrize("wheel, message", [
    ('<Wheel link="front_whel" radius="0.35" axis="0 1 0"/>', "no link 'front_whel' (did you mean 'front_wheel'?)"),
    ('<Wheel link="front_wheel" radius="-1" axis="0 1 0"/>', "radius"),
    ('<Wheel link="front_wheel" radius="0.35" axis="0 0 0"/>', "zero length")])
def test_a_bad_wheel_names_its_line(tmp_path, wheel, message):
    (tmp_path / "bike.xml").write_text(SCENE.read_text().replace(
        '<Wheel link="front_wheel" radius="0.35" axis="0 1 0"/>', wheel).replace(
        "../assets", str(SCENE.parents[1] / "assets")))
    with pytest.raises(UniverseError, match=re.escape(message)) as info:
        engine.load_universe(tmp_path / "bike.xml")
    assert info.value.line == 17


def test_wheels_need_a_ground(tmp_path):
    text = SCENE.read_text().replace("../assets", str(SCENE.parents[1] / "assets"))
    start, end = text.index('  <Body name="ground">'), text.index("</Body>") + len("</Body>")
    (tmp_path / "bike.xml").write_text(text[:start] + text[end:])
    with pytest.raises(UniverseError, match="the wheels of 'bicycle' need a ground"):
        engine.Simulation(engine.load_universe(tmp_path / "bike.xml"))
