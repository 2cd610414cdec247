"""Contacts of primitive pairs against closed forms (positions, normals from B to A, depths)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.collision.scenes import I3, free_body, place, rot, static, world

H = 0.05  # half size of the 0.1 m cube


@pytest.fixture
def cube(tmp_path):
    return free_body(tmp_path, "cube", '<box size="0.1 0.1 0.1"/>')


def corners_below(R, p, h=H):
    """World corners of a cube whose bottom face is the local -z face."""
    signs = np.array([[sx, sy, -1.0] for sx in (-1, 1) for sy in (-1, 1)])
    return (signs * h) @ np.asarray(R).T + p


def same_points(a, b, atol=1e-12):
    """Point sets equal up to order."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and all(np.min(np.linalg.norm(b - x, axis=1)) < atol for x in a)


@pytest.mark.parametrize("depth", [1e-3, 1e-5, 0.0])
@pytest.mark.parametrize("yaw", [0.0, 30.0])
def test_cube_on_plane_gives_its_four_bottom_corners(cube, depth, yaw):
    w = world([cube], [static("ground")])
    R, p = rot([0, 0, 1], yaw), np.array([0.3, -0.2, H - depth])
    place(w, [(R, p)])
    c = w.detect()
    assert len(c) == 4
    # each contact sits midway between the corner (z = -depth) and the plane (z = 0)
    expected = corners_below(R, p) + [0.0, 0.0, depth / 2]
    assert same_points(c.point, expected)
    np.testing.assert_allclose(c.normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-15)
    np.testing.assert_allclose(c.depth, depth, atol=1e-15)
    assert [w.object_name(i) for i in c.object_a] == ["cube/cube"] * 4
    assert [w.object_name(i) for i in c.object_b] == ["ground"] * 4


def test_tilted_plane_and_box_on_edge_and_corner(cube):
    w = world([cube], [static("slope", R=rot([1, 0, 0], 20), p=(0, 0, 0.1))])
    n = rot([1, 0, 0], 20)[:, 2]
    R = rot([1, 0, 0], 20) @ rot([1, 0, 0], 45)  # edge down on the slope
    p = np.array([0, 0, 0.1]) + n * (H * np.sqrt(2) - 2e-3)
    place(w, [(R, p)])
    c = w.detect()
    assert len(c) == 2
    np.testing.assert_allclose(c.normal, np.tile(n, (2, 1)), atol=1e-12)
    np.testing.assert_allclose(c.depth, 2e-3, atol=1e-12)
    d = np.array([1, 1, 1]) / np.sqrt(3)  # corner (1, 1, 1) pointing down the slope normal
    axis = np.cross(d, -n)
    from engine import spatial
    R = spatial.rotation_axis_angle(axis, np.arccos(d @ -n))
    place(w, [(R, np.array([0, 0, 0.1]) + n * (H * np.sqrt(3) - 1e-3))])
    c = w.detect()
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [1e-3], atol=1e-12)
    np.testing.assert_allclose(c.point[0], np.array([0, 0, 0.1]) - n * 0.5e-3, atol=1e-12)


def test_sphere_on_plane(tmp_path):
    ball = free_body(tmp_path, "ball", '<sphere radius="0.2"/>')
    w = world([ball], [static("ground")])
    place(w, [(rot([1, 1, 0], 33), [1.0, 2.0, 0.2 - 0.004])])
    c = w.detect()
    assert len(c) == 1
    np.testing.assert_allclose(c.point, [[1.0, 2.0, -0.002]], atol=1e-15)
    np.testing.assert_allclose(c.normal, [[0.0, 0.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(c.depth, [0.004], atol=1e-15)


def test_sphere_sphere_and_sphere_box(tmp_path):
    a = free_body(tmp_path, "a", '<sphere radius="0.1"/>')
    b = free_body(tmp_path, "b", '<sphere radius="0.2"/>')
    w = world([a, b])
    u = np.array([2.0, -1.0, 2.0]) / 3.0
    place(w, [(I3, 0.29 * u), (I3, [0.0, 0.0, 0.0])])
    c = w.detect()
    np.testing.assert_allclose(c.normal, [u], atol=1e-15)           # from B (origin) to A
    np.testing.assert_allclose(c.depth, [0.01], atol=1e-15)         # r_a + r_b - |d|
    np.testing.assert_allclose(c.point, [0.195 * u], atol=1e-15)    # midway: 0.2 - 0.01/2 from B
    box = free_body(tmp_path, "box", '<box size="0.4 0.4 0.4"/>')
    w = world([box, a])  # the sphere is B: the normal points from the sphere to the box
    place(w, [(I3, [0, 0, 0]), (I3, [0.25, 0.25, 0.0])])  # near the vertical edge x = y = 0.2
    c = w.detect()
    gap = np.hypot(0.05, 0.05) - 0.1
    np.testing.assert_allclose(c.depth, [-gap], atol=1e-12)
    np.testing.assert_allclose(c.normal, [[-np.sqrt(0.5), -np.sqrt(0.5), 0.0]], atol=1e-12)
    place(w, [(I3, [0, 0, 0]), (I3, [0.19, 0.0, 0.05])])  # centre inside the box, nearest face x = 0.2
    c = w.detect()
    np.testing.assert_allclose(c.depth, [0.01 + 0.1], atol=1e-12)
    np.testing.assert_allclose(c.normal, [[-1.0, 0.0, 0.0]], atol=1e-12)


def test_capsule_capsule_crossing_and_parallel(tmp_path):
    a = free_body(tmp_path, "a", '<capsule radius="0.05" length="0.4"/>')
    b = free_body(tmp_path, "b", '<capsule radius="0.03" length="0.4"/>')
    w = world([a, b])
    # A along x at height 0.075, B along y at the origin: axes 0.075 apart, radii sum 0.08
    place(w, [(rot([0, 1, 0], 90), [0.02, -0.05, 0.075]), (rot([1, 0, 0], 90), [0.0, 0.0, 0.0])])
    c = w.detect()
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [0.005], atol=1e-12)
    np.testing.assert_allclose(c.normal, [[0.0, 0.0, 1.0]], atol=1e-12)
    np.testing.assert_allclose(c.point, [[0.0, -0.05, 0.075 - 0.05 + 0.0025]], atol=1e-12)
    # parallel, overlapping over x in [0.1, 0.2]: a line contact, both ends kept
    place(w, [(rot([0, 1, 0], 90), [0.3, 0.0, 0.075]), (rot([0, 1, 0], 90), [0.0, 0.0, 0.0])])
    c = w.detect()
    assert len(c) == 2
    np.testing.assert_allclose(np.sort(c.point[:, 0]), [0.1, 0.2], atol=1e-12)
    np.testing.assert_allclose(c.depth, [0.005, 0.005], atol=1e-12)
    np.testing.assert_allclose(c.normal, [[0, 0, 1.0]] * 2, atol=1e-12)


def test_box_on_box_face_contact(tmp_path, cube):
    table = free_body(tmp_path, "table", '<box size="1 1 0.2"/>')
    w = world([cube, table])
    p = np.array([0.1, 0.05, 0.1 + H - 1e-3])
    place(w, [(I3, p), (I3, [0, 0, 0])])
    c = w.detect()
    assert same_points(c.point, corners_below(I3, p) + [0, 0, 0.5e-3])
    np.testing.assert_allclose(c.normal, [[0, 0, 1.0]] * 4, atol=1e-15)
    np.testing.assert_allclose(c.depth, [1e-3] * 4, atol=1e-15)
    # the cube hanging over the table's corner: the contact is the overlap square [0.45, 0.5]^2
    p = np.array([0.5, 0.5, 0.1 + H - 1e-3])
    place(w, [(I3, p), (I3, [0, 0, 0])])
    c = w.detect()
    expected = [[x, y, 0.1 - 0.5e-3] for x in (0.45, 0.5) for y in (0.45, 0.5)]
    assert same_points(c.point, expected, atol=1e-12)


def test_box_on_box_rotated_keeps_four_points_of_the_octagon(tmp_path, cube):
    low = free_body(tmp_path, "low", '<box size="0.1 0.1 0.1"/>')
    w = world([cube, low])
    place(w, [(rot([0, 0, 1], 45), [0, 0, 2 * H - 1e-3]), (I3, [0, 0, 0])])
    c = w.detect()
    assert len(c) == 4
    np.testing.assert_allclose(c.depth, [1e-3] * 4, atol=1e-15)
    # the two squares overlap on an octagon with vertices (+-H, +-H (sqrt 2 - 1)) and (+-H (sqrt 2 - 1), +-H)
    k = H * (np.sqrt(2) - 1)
    octagon = [(sx * a, sy * b) for sx in (-1, 1) for sy in (-1, 1) for a, b in ((H, k), (k, H))]
    assert all(np.min(np.linalg.norm(np.array(octagon) - xy, axis=1)) < 1e-12 for xy in c.point[:, :2])
    assert len({(np.sign(x), np.sign(y)) for x, y in c.point[:, :2]}) == 4  # spread over the 4 quadrants


def test_box_edge_on_box_face(tmp_path, cube):
    table = free_body(tmp_path, "table", '<box size="1 1 0.2"/>')
    w = world([cube, table])
    z = 0.1 + H * np.sqrt(2) - 2e-3
    place(w, [(rot([1, 0, 0], 45), [0.1, 0.05, z]), (I3, [0, 0, 0])])
    c = w.detect()
    assert same_points(c.point, [[0.1 - H, 0.05, 0.1 - 1e-3], [0.1 + H, 0.05, 0.1 - 1e-3]], atol=1e-12)
    np.testing.assert_allclose(c.normal, [[0, 0, 1.0]] * 2, atol=1e-12)
    np.testing.assert_allclose(c.depth, [2e-3] * 2, atol=1e-12)


def test_box_edge_across_box_edge(tmp_path, cube):
    other = free_body(tmp_path, "other", '<box size="0.1 0.1 0.1"/>')
    w = world([cube, other])
    e = H * np.sqrt(2)  # an edge stands e above the centre of a box turned 45 deg about x (or y)
    place(w, [(rot([0, 1, 0], 45), [0.01, 0.02, 2 * e - 2e-3]), (rot([1, 0, 0], 45), [0, 0, 0])])
    c = w.detect()
    assert len(c) == 1
    np.testing.assert_allclose(c.normal, [[0, 0, 1.0]], atol=1e-12)
    np.testing.assert_allclose(c.depth, [2e-3], atol=1e-12)
    np.testing.assert_allclose(c.point, [[0.01, 0.0, e - 1e-3]], atol=1e-12)


@pytest.mark.parametrize("tilt", [0.0, 90.0, 30.0])
def test_cylinder_on_plane(tmp_path, tilt):
    r, h, d = 0.05, 0.15, 1e-3
    cyl = free_body(tmp_path, "cyl", f'<cylinder radius="{r}" length="{2 * h}"/>')
    w = world([cyl], [static("ground")])
    t = np.radians(tilt)
    z = h * np.cos(t) + r * np.sin(t) - d  # lowest rim point at -d
    place(w, [(rot([1, 0, 0], tilt), [0, 0, z])])
    c = w.detect()
    assert np.all(c.depth <= d + 1e-12) and np.isclose(c.depth.max(), d, atol=1e-12)
    np.testing.assert_allclose(c.normal, np.tile([0, 0, 1.0], (len(c), 1)), atol=1e-15)
    if tilt == 0.0:  # the bottom disc: rim points, spread around it
        assert len(c) == 4
        np.testing.assert_allclose(np.linalg.norm(c.point[:, :2], axis=1), r, atol=1e-12)
    elif tilt == 90.0:  # lying: the two ends of the lowest line
        assert same_points(c.point, [[0, -h, -d / 2], [0, h, -d / 2]], atol=1e-12)
    else:  # the lowest rim point only
        assert len(c) == 1
        np.testing.assert_allclose(c.point, [[0, h * np.sin(t) - r * np.cos(t), -d / 2]], atol=1e-12)


def test_capsule_lying_on_box_gives_a_line_contact(tmp_path):
    cap = free_body(tmp_path, "cap", '<capsule radius="0.05" length="0.3"/>')
    table = free_body(tmp_path, "table", '<box size="1 1 0.2"/>')
    w = world([cap, table])
    place(w, [(rot([0, 1, 0], 90), [0.0, 0.1, 0.1 + 0.05 - 1e-3]), (I3, [0, 0, 0])])
    c = w.detect()
    assert same_points(c.point, [[-0.15, 0.1, 0.1 - 0.5e-3], [0.15, 0.1, 0.1 - 0.5e-3]], atol=1e-9)
    np.testing.assert_allclose(c.normal, [[0, 0, 1.0]] * 2, atol=1e-9)
    np.testing.assert_allclose(c.depth, [1e-3] * 2, atol=1e-9)


@pytest.mark.parametrize("tilt", [0.0, 90.0])
def test_cylinder_on_box_standing_and_lying(tmp_path, tilt):
    r, h, d = 0.05, 0.1, 1e-3
    cyl = free_body(tmp_path, "cyl", f'<cylinder radius="{r}" length="{2 * h}"/>')
    table = free_body(tmp_path, "table", '<box size="1 1 0.2"/>')
    w = world([cyl, table])
    z = 0.1 + (h if tilt == 0.0 else r) - d
    place(w, [(rot([1, 0, 0], tilt), [0.2, 0.1, z]), (I3, [0, 0, 0])])
    c = w.detect()
    np.testing.assert_allclose(c.normal, np.tile([0, 0, 1.0], (len(c), 1)), atol=1e-9)
    np.testing.assert_allclose(c.depth, d, atol=1e-9)
    np.testing.assert_allclose(c.point[:, 2], 0.1 - d / 2, atol=1e-9)
    if tilt == 0.0:  # 4 points of the bottom rim, around it
        assert len(c) == 4
        np.testing.assert_allclose(np.linalg.norm(c.point[:, :2] - [0.2, 0.1], axis=1), r, atol=1e-9)
    else:  # the two ends of the lowest line
        assert same_points(c.point[:, :2], [[0.2, 0.1 - h], [0.2, 0.1 + h]], atol=1e-9)
