"""Universe XML: the thesis example loads unchanged (seed 000 Fig 3.2) and the extensions are read as documented."""
from pathlib import Path

import numpy as np
import pytest

from engine.model.universe import universe_from_urdf
from engine.model.universe_xml import load_universe
from engine.model.vrml import read_vrml
from engine.spatial import rotation_axis_angle

SCENES = Path(__file__).resolve().parents[2] / "scenes"


def test_thesis_example_loads_unchanged():
    u = load_universe(SCENES / "amelif_example.xml")
    (robot,) = u.multibodies
    np.testing.assert_allclose(robot.p, [-0.6, 0.7, 0.725])
    np.testing.assert_allclose(robot.R, np.eye(3), atol=1e-15)   # angle 0 about y
    assert robot.model.nv == 3
    (ground,) = u.statics
    assert ground.name == "Ground1"
    (mesh,) = ground.geometries
    assert mesh.kind == "mesh" and mesh.mesh_path.endswith("groundBlueLight.wrl")
    np.testing.assert_allclose(mesh.p, [1.0, 1.0, 0.02])
    # camera: the world-to-eye transform x_eye = R x - t, R 120 degrees about -(1, 1, 1) (x -> z, y -> x,
    # z -> y: the z-up world seen in OpenGL's y-up eye frame), t = (0, 1, 4): the eye stands 4 m along x and
    # 1 m up, looking along -x (its -z) with z up (its y), at the arm and the ground plate
    np.testing.assert_allclose(u.camera.p, [4.0, 0.0, 1.0], atol=1e-12)
    right, up, back = [0, 1, 0], [0, 0, 1], [1, 0, 0]
    np.testing.assert_allclose(u.camera.R, np.column_stack([right, up, back]), atol=1e-12)
    R = rotation_axis_angle([-1, -1, -1], np.radians(120.0))
    np.testing.assert_allclose(R @ u.camera.p - [0.0, 1.0, 4.0], 0.0, atol=1e-12)           # the eye maps to 0
    np.testing.assert_allclose(u.camera.target, [3.0, 0.0, 1.0], atol=1e-12)                 # 1 m ahead
    assert len(u.lights) == 2
    assert u.lights[0].position == (0.5, 0.5, 0.1, 0.0)
    assert u.lights[0].ambient == (0.15, 0.15, 0.25, 1.0)
    assert u.lights[1].diffuse == (0.825, 0.66, 0.165, 1.0)
    assert u.lights[1].specular == (1.0, 1.0, 1.0, 1.0)


def test_vrml_ground_mesh_is_the_4m_plate():
    vertices, faces, rgba = read_vrml(SCENES / "AFResources/vrml/decor_vrml/groundBlueLight.wrl")
    np.testing.assert_allclose(vertices.max(0) - vertices.min(0), [4.0, 4.0, 0.04])
    assert faces.shape == (12, 3)                      # 6 quads fanned into triangles
    assert rgba[:3] == (0.55, 0.65, 0.9)


def test_vrml_transform_nesting(tmp_path):
    f = tmp_path / "t.wrl"
    f.write_text("""#VRML V2.0 utf8
DEF T Transform { translation 1 0 0 rotation 0 0 1 1.5707963267948966 scale 2 2 2
  children [ Shape { geometry IndexedFaceSet { coord Coordinate { point [ 1 0 0, 0 1 0, 0 0 1 ] }
                                                coordIndex [ 0 1 2 -1 ] } } ] }""")
    vertices, faces, _ = read_vrml(f)
    # x' = R(90 deg about z) (2 x) + (1, 0, 0)
    np.testing.assert_allclose(vertices, [[1, 2, 0], [-1, 0, 0], [1, 0, 2]], atol=1e-12)
    assert faces.tolist() == [[0, 1, 2]]


def test_default_scene_settings():
    u = load_universe(SCENES / "default.xml")
    assert [m.name for m in u.multibodies] == ["talos", "box"]
    assert u.time_step == 0.001 and u.solver.name == "nonsmooth-newton"
    np.testing.assert_allclose(u.gravity, [0, 0, -9.81])
    assert u.materials["floor"].mu == 0.9
    box = u.multibody("box")
    assert box.model.nv == 6 and box.model.total_mass == 1.75
    # a uniform box of 1.75 kg, 0.2 x 0.15 x 0.15 m: Ixx = m (y^2 + z^2) / 12
    np.testing.assert_allclose(box.model.body_inertia_com[0][0, 0], 1.75 * (0.15**2 + 0.15**2) / 12)
    talos = u.multibody("talos")
    knee = talos.model.joint("leg_left_4_joint")
    assert talos.q0[knee.idx_q] == pytest.approx(0.859395)
    (control,) = u.controllers
    assert control.name == "stance-pd" and control.target == "talos" and control.params["kp"] == "2000"


def test_extensions(tmp_path):
    f = tmp_path / "u.xml"
    f.write_text("""<Universe name="x">
      <Settings><Gravity x="0" y="0" z="-9.8"/><TimeStep>0.002</TimeStep><Integrator>rk4</Integrator>
        <Solver name="lemke" facets="6" tolerance="1e-8" max_iterations="50" time_budget="0.0005"/>
        <Contact margin="0.01" max_points="3" correction="none"/></Settings>
      <Material name="ice" friction="0.05" restitution="0.5"/>
      <Body name="ball"><Sphere radius="0.1"/><Mass>2</Mass><Material>ice</Material>
        <Translation x="0" y="0" z="1"/><LinearVelocity>1 0 0</LinearVelocity></Body>
      <Body name="floor"><Plane/><Mass>0</Mass></Body>
      <CollisionPairs default="none"><Include a="ball" b="floor"/></CollisionPairs>
      <Device plugin="mouse" stiffness="300"/>
    </Universe>""")
    u = load_universe(f)
    assert u.time_step == 0.002 and u.integrator == "rk4"
    assert (u.solver.name, u.solver.facets, u.solver.time_budget) == ("lemke", 6, 0.0005)
    assert u.contact.margin == 0.01 and u.contact.correction == "none"
    assert u.contact.default_pairs == "none" and u.contact.include == (("ball", "floor"),)
    ball = u.multibody("ball")
    np.testing.assert_allclose(ball.model.body_inertia_com[0], 0.4 * 2 * 0.01 * np.eye(3))
    np.testing.assert_allclose(ball.q0, [0, 0, 1, 0, 0, 0, 1])
    np.testing.assert_allclose(ball.v0, [1, 0, 0, 0, 0, 0])
    assert u.materials["ice"].restitution == 0.5 and ball.model.geometries[0].material == "ice"
    assert u.devices[0].name == "mouse" and u.devices[0].params == {"stiffness": "300"}


def test_urdf_alone_is_dropped_on_the_ground():
    from engine.model.paths import example_robot_data_dir
    u = universe_from_urdf(example_robot_data_dir() / "solo_description/robots/solo12.urdf")
    (robot,) = u.multibodies
    assert robot.model.joints[0].nq == 7 and robot.q0[2] > 0.0
    assert u.statics[0].geometries[0].kind == "plane"


def test_vrml_meshes_load_through_the_mesh_loader():
    """AMELIF's .wrl files go through the same cached loader as STL/DAE (collision and drawing)."""
    from engine.model.meshes import load_mesh
    mesh = load_mesh(SCENES / "AFResources/vrml/decor_vrml/groundBlueLight.wrl")
    np.testing.assert_allclose(mesh.bounds, [[-2.0, -2.0, -0.02], [2.0, 2.0, 0.02]])
    assert mesh.is_watertight and mesh.volume == pytest.approx(4.0 * 4.0 * 0.04)
