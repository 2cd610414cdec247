"""Touch mode on a universe: SceneProximity against the exact fields of its primitives and trimesh's signed
distance to a mesh, the touched body's key, and the god-object pressing on a universe's table."""
import numpy as np
import pytest
import trimesh

import engine
from engine.interaction import Box, GodObject, Sphere, TouchSettings
from engine.interaction.scene_proximity import SceneProximity

RNG = np.random.default_rng(5)


@pytest.fixture
def scene(tmp_path):
    trimesh.creation.icosphere(subdivisions=2, radius=0.1).export(tmp_path / "ball.stl")
    path = tmp_path / "scene.xml"
    path.write_text("""<Universe><Settings/>
        <Body name="table"><Box size="0.8 0.6 0.04"/><Mass>0</Mass><Translation x="0" y="0" z="0.7"/></Body>
        <Body name="ball"><Sphere radius="0.05"/><Mass>1</Mass><Translation x="0.2" y="0" z="0.775"/></Body>
        <Body name="pebble"><File>ball.stl</File><Mass>1</Mass><Inertia>0.004 0 0 0 0.004 0 0 0 0.004</Inertia>
          <Translation x="-0.2" y="0.1" z="0.82"/>
          <Rotation angle="30" x="0" y="0" z="1"/></Body>
        <Body name="ground"><Plane/><Mass>0</Mass></Body></Universe>""")
    universe = engine.load_universe(path)
    sim = engine.Simulation(universe)
    snapshot = sim.snapshot()
    return universe, SceneProximity(universe, lambda: (snapshot.body_R, snapshot.body_p)), tmp_path


def test_primitives_are_exact_and_name_the_touched_body(scene):
    universe, query, _ = scene
    names = [mb.name for mb in universe.multibodies]
    table = Box([0.4, 0.3, 0.02], np.eye(3), np.array([0.0, 0.0, 0.7]))
    ball = Sphere(np.array([0.2, 0.0, 0.775]), 0.05)
    for x in RNG.uniform([-0.35, -0.25, 0.69], [0.35, 0.25, 0.76], size=(200, 3)):
        expected = min((table(x), None), (ball(x), (names.index("ball"), 0)), (_ground(x), None),
                       key=lambda pair: pair[0].distance)
        got = query(x)
        if got.body == (names.index("pebble"), 0):
            continue                                   # the mesh is nearer: checked below
        assert got.distance == pytest.approx(expected[0].distance, abs=1e-12)
        np.testing.assert_allclose(got.point, expected[0].point, atol=1e-12)
        np.testing.assert_allclose(got.normal, expected[0].normal, atol=1e-12)
        assert got.body == expected[1]


def _ground(x):
    return engine.interaction.Plane(np.array([0.0, 0.0, 1.0]))(x)


def test_a_mesh_reads_its_hull_never_farther_than_the_surface(scene):
    # trimesh's signed distance to the rotated icosphere (positive inside there): ours is exact inside, a lower
    # bound outside (what sphere tracing needs), and exact off the middle of a face
    universe, query, folder = scene
    m = [mb.name for mb in universe.multibodies].index("pebble")
    mesh = trimesh.load(folder / "ball.stl")                # as stored: float32 vertices
    mesh.apply_transform(trimesh.transformations.rotation_matrix(np.radians(30), [0, 0, 1]))
    mesh.apply_translation([-0.2, 0.1, 0.82])
    center = np.array([-0.2, 0.1, 0.82])
    for u in RNG.normal(size=(100, 3)):
        x = center + u / np.linalg.norm(u) * RNG.uniform(0.02, 0.13)
        got = query(x)
        if got.body != (m, 0):
            continue
        true = -trimesh.proximity.signed_distance(mesh, [x])[0]
        if true <= 0.0:
            assert got.distance == pytest.approx(true, abs=1e-9)
        else:
            assert got.distance <= true + 1e-12
    face = mesh.triangles_center[7] + 0.01 * mesh.face_normals[7]
    assert query(face).distance == pytest.approx(0.01, abs=1e-9)


def test_the_god_object_stays_on_the_table_of_a_universe(scene):
    _, query, _ = scene
    god = GodObject(query, TouchSettings(stiffness=800.0, damping=2.0, tolerance=1e-6))
    top = 0.72
    for k in range(200):                               # the hand sinks 5 cm into the table top at x = -0.1
        x = np.array([-0.1, -0.1, top + 0.01 - 0.06 * k / 199])
        contact = god.update(x, np.array([0.0, 0.0, -0.3]))
        assert contact.god[2] >= top - 1e-6
    assert contact.body is None and contact.force[2] == pytest.approx(800.0 * 0.05 + 2.0 * 0.3, rel=1e-6)


def test_a_declared_touch_device_presses_a_box_onto_the_table_headless(tmp_path):
    """<Device mode="touch">: a scripted hand sinks 2 cm into the top of a 1.75 kg box resting on a table and
    holds. The god-object stays on the top face, the hand feels k_c x 2 cm, and the table carries the box's
    weight plus that push (the reaction on the box), to 1%."""
    t = np.array([0.0, 0.3, 1.0, 3.0])
    z = np.array([0.05, 0.05, -0.02, -0.02])             # device frame = world, origin on the box's top face
    np.savez(tmp_path / "press.npz", t=t, position=np.stack([0 * z + 0.03, 0 * z, z], axis=1), buttons=[0] * 4)
    path = tmp_path / "scene.xml"
    path.write_text("""<Universe>
        <Body name="table"><Box size="1 1 0.05"/><Mass>0</Mass><Translation x="0" y="0" z="0.7"/></Body>
        <Body name="box"><Box size="0.2 0.2 0.1"/><Mass>1.75</Mass><Translation x="0" y="0" z="0.775"/></Body>
        <Device plugin="scripted" file="press.npz" frame="world" origin="0 0 0.825" mode="touch"
                stiffness="500"/></Universe>""")
    sim = engine.Simulation(engine.load_universe(path))
    devices = engine.interaction.LockstepDevices(sim)
    for _ in range(2500):
        devices.before_step()
        sim.step()
    devices.stop()
    force = devices.sessions[0].recording.arrays()["force"]
    top = sim.body_placement(0, 0)[1][2] + 0.05
    assert top == pytest.approx(0.825, abs=1e-3)          # the box is not pushed through the table
    np.testing.assert_allclose(force[-300:, 2], 500.0 * (top - 0.805), rtol=0.01)
    np.testing.assert_allclose(sim.contacts.force[:, 2].sum(), 1.75 * 9.81 + force[-1, 2], rtol=0.01)
