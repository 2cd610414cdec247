"""Bad input for a multibody on wheels (issue 12, "Bad input"): a wheel whose axis is not its joint's, a wheel
link with a shape that is not its disk, a wheel on a joint that does not spin, an initial state off the rolling
constraints (refused, or projected with a warning when asked). Each error names the file, the <Wheel> line and
the value."""
import re
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.errors import UniverseError

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "bicycle.xml"
BIKE = SCENE.parents[1] / "assets" / "robots" / "benchmark_bicycle.urdf"
FRONT = '<Wheel link="front_wheel" radius="0.35" axis="0 1 0"/>'


def scene(tmp_path, *replacements, robot=None):
    text = SCENE.read_text().replace("../assets/robots/benchmark_bicycle.urdf", str(robot or BIKE))
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "bike.xml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("wheel, message, value", [
    ('<Wheel link="front_wheel" radius="0.35" axis="0 0 1"/>',
     "the wheel's spin axis is not the axis [0.0, 1.0, 0.0] of its joint 'front_spin'", [0.0, 0.0, 1.0]),
    ('<Wheel link="front_wheel" radius="0.3" axis="0 1 0"/>',
     "the wheel 'front_wheel' has a visual cylinder", ("cylinder", (0.35, 0.02))),
    ('<Wheel link="fork" radius="0.35" axis="0 0 1"/>', "the wheel 'fork' has a visual cylinder",
     ("cylinder", (0.015, 0.5))),
    ('<Wheel link="frame" radius="0.35" axis="0 0 1"/>', "the wheel 'frame' must turn on a revolute", "free")])
def test_a_wheel_that_is_not_a_spinning_disk_is_refused(tmp_path, wheel, message, value):
    with pytest.raises(UniverseError, match=re.escape(message)) as info:
        engine.load_universe(scene(tmp_path, (FRONT, wheel)))
    assert info.value.line == 17 and info.value.file.endswith("bike.xml") and info.value.value == value


def test_a_wheel_shaped_as_a_box_is_refused(tmp_path):
    """The robot file gives the front wheel a box: the error names the shape, its line in the robot file and the
    <Wheel> line."""
    robot = tmp_path / "bike.urdf"
    robot.write_text(BIKE.read_text().replace('<cylinder radius="0.35" length="0.02"/>', '<box size="0.7 0.02 0.7"/>'))
    with pytest.raises(UniverseError, match=r"the wheel 'front_wheel' has a visual box \(.*bike.urdf:31\)") as info:
        engine.load_universe(scene(tmp_path, robot=robot))
    assert info.value.line == 17 and info.value.value == ("box", (0.7, 0.02, 0.7))


@pytest.mark.parametrize("joint, off", [
    ('value="0 0 0.35 -0.5 -0.5 -0.5 0.5"', (0.05, 0.0)),                 # 5 cm above the ground
    ('velocity="0 4.6 0 0 0.5 0"', (0.0, 0.15))])                           # the rear contact point slips sideways
def test_an_initial_state_off_the_constraints_is_refused_then_projected_when_asked(tmp_path, joint, off):
    """Beyond 1e-6 (m, m/s) the Simulation refuses the state, naming the worst wheel's line and (Φ, |J v|); with
    project="true" on a <Wheel> it warns with the same numbers and starts from the projection: both contact
    points on the ground and still (to 1e-12)."""
    default = joint.split("=")[0] + ('="0 0 0.3 -0.5 -0.5 -0.5 0.5"' if joint.startswith("value")
                                     else '="0 4.6 -0.15 0 0.5 0"')
    path = scene(tmp_path, (default, joint))
    with pytest.raises(UniverseError, match="is off its wheels' constraints") as info:
        engine.Simulation(engine.load_universe(path))
    assert info.value.line in (17, 18) and np.allclose(info.value.value, off, atol=1e-9)
    path = scene(tmp_path, (default, joint), (FRONT, FRONT.replace("/>", ' project="true"/>')))
    with pytest.warns(UserWarning, match=r"bike.xml:1[78]: the initial state of 'bicycle' is off"):
        sim = engine.Simulation(engine.load_universe(path))
    run, disks = sim.runs[0], sim.engine.rolling[0]
    assert np.abs(disks.altitudes(run.model, run.data, run.q)).max() < 1e-12
    assert np.abs(disks.jacobian(run.model, run.data, run.q) @ run.v).max() < 1e-12
    sim.step(10)


def test_a_wheel_with_a_collision_shape_is_refused(tmp_path):
    """A wheel's contact with the ground is its rolling constraint: a collision disk on it (the friction
    bicycle's, assets/robots/benchmark_bicycle_tyres.urdf) would also be pressed on the ground by the contact
    stage — measured before this check: the collision contacts took the weight, the wheels' λ turned negative
    (−14 N) and the energy grew by 11 J in 1 s. Refused, naming the shape."""
    robot = BIKE.with_name("benchmark_bicycle_tyres.urdf")
    with pytest.raises(UniverseError, match="the wheel 'front_wheel' has a collision cylinder") as info:
        engine.load_universe(scene(tmp_path, robot=robot))
    assert info.value.line == 17 and info.value.value == "front_wheel/collision0"
