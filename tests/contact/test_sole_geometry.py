"""Where a sole meets the static world (engine/contact/sole_geometry.py): the nearest point of a triangle against
a dense sampling of the triangle, the signed distance to a box against its closed form, and grains between the
nodes of a sole carrying a block."""
import numpy as np
import pytest

from engine import Simulation, load_universe
from engine.contact.sole_geometry import (box_nodes, closest_on_triangles, mesh_nodes, plane_nodes,
                                          sphere_triangles)

RNG = np.random.default_rng(7)


def test_the_nearest_point_of_a_triangle_beats_every_point_of_a_dense_sampling_and_has_its_weights():
    corners = RNG.normal(size=(50, 3, 3))
    points = RNG.normal(size=(50, 3)) * 2
    closest, weight = closest_on_triangles(corners, points)
    u, v = np.meshgrid(np.linspace(0, 1, 201), np.linspace(0, 1, 201))
    inside = u + v <= 1
    bary = np.column_stack([1 - u[inside] - v[inside], u[inside], v[inside]])
    for T, p, c, w in zip(corners, points, closest, weight):
        samples = bary @ T
        assert np.linalg.norm(c - p) <= np.linalg.norm(samples - p, axis=1).min() + 1e-12
        assert np.all(w >= -1e-12) and w.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(w @ T, c, atol=1e-12)


def test_the_node_tests_give_the_signed_distance_to_a_plane_and_to_a_box():
    x = RNG.uniform(-1, 1, size=(400, 3))
    nodes, point, normal, depth, weight = plane_nodes(x, np.array([0.0, 0.0, 1.0]), 0.1, 0.05)
    np.testing.assert_array_equal(nodes, np.flatnonzero(x[:, 2] <= 0.15))
    np.testing.assert_allclose(depth, 0.1 - x[nodes, 2])
    assert np.all(weight[:, 0] == 1.0) and not weight[:, 1:].any()
    R = np.linalg.qr(RNG.normal(size=(3, 3)))[0]
    R *= np.linalg.det(R)
    p, half = np.array([0.1, -0.2, 0.05]), np.array([0.3, 0.2, 0.1])
    nodes, point, normal, depth, _ = box_nodes(x, R, p, half, 0.2)
    local = (x - p) @ R
    q = np.clip(local, -half, half)                              # nearest point of the solid box
    outside = np.linalg.norm(local - q, axis=1)
    inside_depth = (half - np.abs(local)).min(axis=1)
    gap = np.where(outside > 0, outside, -inside_depth)
    np.testing.assert_array_equal(nodes, np.flatnonzero(gap <= 0.2))
    np.testing.assert_allclose(depth, -gap[nodes], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(normal, axis=1), 1.0)
    surface = point - 0.5 * depth[:, None] * normal               # the node itself (the sole's side)
    np.testing.assert_allclose(surface, x[nodes], atol=1e-12)
    out = gap[nodes] > 0
    np.testing.assert_allclose((normal[out] @ R), (local[nodes][out] - q[nodes][out]) / outside[nodes][out, None],
                               atol=1e-12)


def test_a_grain_meets_the_nearest_triangle_at_its_nearest_point():
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    triangles = np.array([[0, 1, 2], [1, 3, 2]])
    corners = x[triangles]
    center, radius = np.array([[0.6, 0.6, -0.01], [5.0, 5.0, 0.0]]), np.array([0.02, 0.02])
    triangle, point, normal, depth, weight = sphere_triangles(x, triangles, center, radius, 0.005)
    assert triangle.tolist() == [1] and depth[0] == pytest.approx(0.01)
    np.testing.assert_allclose(normal[0], [0, 0, 1])
    np.testing.assert_allclose(weight[0] @ corners[1], [0.6, 0.6, 0.0], atol=1e-12)
    np.testing.assert_allclose(point[0], [0.6, 0.6, -0.005])


BLOCK = """<robot name="block"><link name="block">
  <inertial><mass value="10"/><inertia ixx="0.05" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>
</robot>"""


def test_a_block_on_its_sole_rests_on_four_grains_between_the_nodes(tmp_path):
    """No ground: four grains of radius 1 cm under the sole, each below the middle of a cell (never under a
    node: the node test alone would let the block fall through). At rest the grains carry the weight (1e-6),
    each force spread on its triangle's three nodes (F_n = d_j f, 4.26 as corrected)."""
    (tmp_path / "block.urdf").write_text(BLOCK)
    grains = [(-0.075, -0.045), (0.075, -0.045), (-0.075, 0.045), (0.075, 0.045)]
    spheres = "".join(f'<Sphere radius="0.01" xyz="{x} {y} -0.01"/>' for x, y in grains)
    (tmp_path / "scene.xml").write_text(f"""<Universe>
  <Material name="grit" friction="1.0"/>
  <MultiBody name="b"><File>block.urdf</File><FloatingBase>true</FloatingBase><Translation z="0.045"/>
    <Material>grit</Material>
    <Sole link="block" size="0.22 0.13 0.02" h="0.03"><Translation z="-0.025"/><Material E="3e6" nu="0.4"/></Sole>
  </MultiBody>
  <Body name="grains">{spheres}<Mass>0</Mass><Material>grit</Material></Body>
</Universe>""")
    sim = Simulation(load_universe(tmp_path / "scene.xml"))
    sim.step(1000)
    stage = sim.contact_stage
    assert len(stage.contacts) == 4 and abs(sim.runs[0].v).max() < 1e-6
    np.testing.assert_allclose(stage.forces.sum(axis=0), [0, 0, 10 * 9.81], atol=1e-6 * 98.1)
    sole = sim.snapshot().soles[0]
    loaded = np.flatnonzero(np.abs(sole.force).sum(axis=1) > 0)
    assert 4 <= len(loaded) <= 12                                  # the nodes of the four triangles only
    np.testing.assert_allclose(sole.force.sum(axis=0)[2], 10 * 9.81, rtol=1e-6)
    rest = stage.soles.rest[0]
    assert np.all(np.min(np.linalg.norm(rest[:, None, :2] - np.array(grains)[None], axis=2), axis=0) > 0.005)


def test_the_node_test_on_a_mesh_equals_the_node_test_on_its_plane():
    """A ramp as a two-triangle mesh and as the half-space below its plane: the same nodes, depths and normals."""
    R = np.linalg.qr(RNG.normal(size=(3, 3)))[0]
    R *= np.linalg.det(R)
    corners = np.array([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0]], float) @ R.T + [0.1, 0.2, 0.3]
    faces = np.array([[0, 1, 2], [0, 2, 3]])
    normals = np.tile(R[:, 2], (2, 1))
    x = RNG.uniform(-0.5, 0.5, size=(300, 3)) + [0.1, 0.2, 0.3]
    tri = corners[faces]
    mesh = mesh_nodes(x, corners, faces, normals, tri.min(axis=1), tri.max(axis=1), 0.05)
    plane = plane_nodes(x, R[:, 2], float(R[:, 2] @ [0.1, 0.2, 0.3]), 0.05)
    np.testing.assert_array_equal(mesh[0], plane[0])
    for a, b in zip(mesh[1:], plane[1:]):
        np.testing.assert_allclose(a, b, atol=1e-12)
