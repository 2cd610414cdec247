"""Devices as plugins declared by a universe, picking (rays and points), and headless lockstep sessions."""
import numpy as np
import pytest
import trimesh

from engine import Simulation, load_universe, plugins
from engine.cli import main as cli_main
from engine.errors import PluginError, UniverseError
from engine.interaction import (BodyPicker, DeviceError, LockstepDevices, MouseDevice, ScriptedDevice,
                                ray_triangles, session_for)
from engine.interaction._proximity_kernels import _field
from engine.interaction.scene_proximity import _piece
from engine.model.model import Geometry

M, G = 1.75, 9.81
TABLE_AND_BOX = """<Universe>
  <Body name="table"><Box size="1 1 0.05" xyz="0 0 0.7"/><Mass>0</Mass></Body>
  <Body name="box"><Box size="0.2 0.2 0.1"/><Mass>1.75</Mass><Translation x="0" y="0" z="0.775"/></Body>
  <Body name="ball"><Sphere radius="0.05"/><Mass>0.5</Mass><Translation x="0.3" y="0" z="0.775"/></Body>
  {devices}
</Universe>
"""


def scene(tmp_path, devices=""):
    path = tmp_path / "scene.xml"
    path.write_text(TABLE_AND_BOX.format(devices=devices))
    return path


def test_ray_hits_the_nearest_face_of_a_cube_at_the_closed_form_distance():
    cube = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    s, face = ray_triangles([2.0, 0.1, 0.2], [-1.0, 0.0, 0.0], cube.vertices, cube.faces)
    assert s == pytest.approx(1.5, abs=1e-12)                      # enters through x = 0.5
    np.testing.assert_allclose(cube.face_normals[face], [1.0, 0.0, 0.0], atol=1e-12)
    d = np.array([-1.0, -1.0, -1.0]) / np.sqrt(3.0)                   # from (2, 2, 2) to the corner (0.5, 0.5, 0.5)
    assert ray_triangles([2.0, 2.0, 2.0], d, cube.vertices, cube.faces)[0] == pytest.approx(1.5 * np.sqrt(3.0))
    assert ray_triangles([2.0, 0.1, 0.2], [1.0, 0.0, 0.0], cube.vertices, cube.faces) == (np.inf, -1)
    assert ray_triangles([2.0, 0.7, 0.2], [-1.0, 0.0, 0.0], cube.vertices, cube.faces) == (np.inf, -1)


@pytest.mark.parametrize("kind, size, y, expected", [
    ("box", (0.2, 0.4, 0.6), [0.0, 0.0, 0.0], -0.1),
    ("box", (0.2, 0.4, 0.6), [0.4, 0.5, 0.3], np.hypot(0.3, 0.3)),    # nearest to the edge (0.1, 0.2, z)
    ("sphere", (0.5,), [0.0, 0.3, 0.4], 0.0),
    ("cylinder", (0.1, 0.4), [0.3, 0.0, 0.1], 0.2),
    ("cylinder", (0.1, 0.4), [0.0, 0.0, 0.15], -0.05),
    ("capsule", (0.1, 0.4), [0.0, 0.0, 0.5], 0.2),                    # above the segment end (0, 0, 0.2)
])
def test_signed_distances_of_the_primitives(kind, size, y, expected):
    # touch mode's and the picker's fields (scene_proximity.py), in the shape's frame
    kind, size3, _, _, (n, o) = _piece(Geometry("g", 0, kind, size, np.eye(3), np.zeros(3)))
    y = np.array(y, float)
    point, normal = np.zeros(3), np.zeros(3)
    assert _field(y, kind, size3, n, o, point, normal) == pytest.approx(expected, abs=1e-12)
    if expected > 0.0:                                               # outside: x = point + d n
        np.testing.assert_allclose(point + expected * normal, y, atol=1e-12)


def test_body_picker_finds_the_body_under_a_point_on_the_current_placements(tmp_path):
    sim = Simulation(load_universe(scene(tmp_path)))
    pick = BodyPicker(sim, tolerance=0.01)
    assert pick([0.05, 0.0, 0.80]) == (0, 0)                        # inside the box
    assert pick([0.0, 0.0, 0.825 + 0.005]) == (0, 0)                # 5 mm above its top face
    assert pick([0.3, 0.0, 0.775 + 0.055]) == (1, 0)                # the ball
    assert pick([0.0, 0.0, 0.9]) is None and pick([0.0, 0.0, 0.7]) is None   # air; the static table


def test_devices_are_plugins_configured_by_the_universe(tmp_path):
    assert {"mouse", "phantom", "scripted"} <= set(plugins.available("device"))
    universe = load_universe(scene(tmp_path, '<Device plugin="mouse" stiffness="300" origin="0 0 1"/>'))
    session = session_for(universe.devices[0], tmp_path)
    assert isinstance(session.device, MouseDevice)
    assert session.coupling.k_p == 300.0 and session.coupling.k_v is None and session.mode == "attach"
    np.testing.assert_array_equal(session.map.p, [0.0, 0.0, 1.0])


@pytest.mark.parametrize("device, message", [
    ('<Device plugin="phantom" colour="red"/>', "no parameter 'colour'"),
    ('<Device plugin="mouse" mode="grab"/>', "mode must be one of"),
    ('<Device plugin="mouse" origin="0 1"/>', "'origin' needs 3 finite"),
    ('<Device plugin="joystick"/>', "no device plugin named 'joystick'"),
])
def test_bad_device_declarations_name_the_scene_line(tmp_path, device, message):
    universe = load_universe(scene(tmp_path, device))
    with pytest.raises(UniverseError, match=message) as error:
        session_for(universe.devices[0], tmp_path)
    assert "scene.xml" in str(error.value) and ":5" in str(error.value)


def test_a_missing_openhaptics_says_how_to_install_it(tmp_path):
    universe = load_universe(scene(tmp_path, f'<Device plugin="phantom" library="{tmp_path}/libHD.so"/>'))
    session = session_for(universe.devices[0], tmp_path)
    with pytest.raises(DeviceError, match="OpenHaptics.*ARTICULA_LIBHD.*mouse device works"):
        session.start()


def lift_trajectory(path):
    """Grasp the box's top face at 0.2 s, lift it 10 cm by 1.2 s, hold it (device frame = world, origin on top)."""
    t = np.array([0.0, 0.199, 0.2, 0.4, 1.2, 3.0])
    z = np.array([0.0, 0.0, 0.0, 0.0, 0.1, 0.1])
    np.savez(path, t=t, position=np.stack([0 * z, 0 * z, z], axis=1), buttons=[0, 0, 1, 1, 1, 1])


def test_a_declared_scripted_device_lifts_the_box_headless_and_holds_its_weight(tmp_path):
    """The thesis's haptic object test through a <Device>: held still, the vertical coupling force on the 1.75 kg
    box is its weight within 1% (seed 000 L1962: 17.15 N with g = 9.8)."""
    lift_trajectory(tmp_path / "lift.npz")
    path = scene(tmp_path, '<Device plugin="scripted" file="lift.npz" frame="world" origin="0 0 0.825" '
                           'force_gain="0.05"/>')
    sim = Simulation(load_universe(path))
    devices = LockstepDevices(sim)
    for _ in range(3000):
        devices.before_step()
        sim.step()
    devices.stop()
    wrench = devices.sessions[0].recording.arrays()["wrench"]
    assert sim.body_placement(0, 0)[1][2] > 0.775 + 0.05
    np.testing.assert_allclose(wrench[-500:, 2], M * G, rtol=0.01)
    assert cli_main(["run", str(path), "--duration", "0.3", "--quiet"]) == 0


def test_a_failing_device_stops_its_coupling_and_faults_the_headless_run_by_name(tmp_path):
    lift_trajectory(tmp_path / "lift.npz")
    sim = Simulation(load_universe(scene(tmp_path, '<Device plugin="scripted" file="lift.npz" '
                                                   'origin="0 0 0.825" frame="world"/>')))
    devices = LockstepDevices(sim)
    reads = []

    def read():
        reads.append(1)
        if len(reads) > 600:
            raise OSError("cable pulled")
        return ScriptedDevice.read(devices.sessions[0].device)
    devices.sessions[0].device.read = read

    def run_800_steps():
        for _ in range(800):
            devices.before_step()
            sim.step()
    with pytest.raises(PluginError, match=r"device plugin 'scripted' failed in stage 'haptic', step 601 .*"
                                          r"DeviceError.*cable pulled") as fault:
        run_800_steps()
    assert sim.faulted is fault.value and sim.step_count == 600
    assert isinstance(fault.value.__cause__, DeviceError) and devices.sessions[0].fault is fault.value
    assert not sim.external.get((0, 0), (np.zeros(6),))[0].any()        # the port let go of the box
    sim.disable_plugin("scripted")                                       # the run goes on without the device
    for _ in range(10):
        devices.before_step()
        sim.step()
    assert sim.step_count == 610
