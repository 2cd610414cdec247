"""Geometry of the viewport overlays, checked against closed forms (no window needed)."""
import numpy as np

from app.overlays import arrows, cone_heights, contact_view, frame_axes, friction_cones
from engine import spatial
from engine.state import ActiveContacts


def test_friction_cone_has_its_apex_at_the_contact_and_rim_radius_mu_times_height():
    # a cone of half-angle atan(mu): at height h along the axis the rim is a circle of radius mu h
    rng = np.random.default_rng(0)
    points = rng.normal(size=(3, 3))
    axes = rng.normal(size=(3, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    heights, mu = np.array([0.1, 0.5, 2.0]), np.array([0.2, 0.9, 1.5])
    vertices, faces = friction_cones(points, axes, heights, mu, segments=12)
    vertices = vertices.reshape(3, 13, 3)
    np.testing.assert_array_equal(vertices[:, 0], points)
    rim = vertices[:, 1:] - points[:, None, :]
    along = np.einsum("nki,ni->nk", rim, axes)
    np.testing.assert_allclose(along, np.repeat(heights[:, None], 12, axis=1), atol=1e-12)
    radial = np.linalg.norm(rim - along[..., None] * axes[:, None, :], axis=2)
    np.testing.assert_allclose(radial, np.repeat((mu * heights)[:, None], 12, axis=1), atol=1e-12)
    assert faces.shape == (36, 3) and faces.max() == 38 and (faces[:12, 0] == 0).all()


def test_a_rolling_wheel_s_infinite_friction_draws_no_cone():
    points, axes = np.zeros((2, 3)), np.array([[0.0, 0.0, 1.0]] * 2)
    vertices, faces = friction_cones(points, axes, np.array([0.0, 0.5]), np.array([np.inf, 0.8]), segments=8)
    assert vertices.shape == (9, 3) and np.isfinite(vertices).all() and faces.max() == 8


def test_cone_height_follows_the_normal_force_seed000_fig51():
    # height = scale * (f . n): the tangential part of the force does not lengthen the cone; a pull gives none
    forces = np.array([[3.0, 0.0, 4.0], [0.0, 0.0, 8.0], [0.0, 1.0, -2.0]])
    normals = np.array([[0.0, 0.0, 1.0]] * 3)
    np.testing.assert_allclose(cone_heights(forces, normals, 0.01), [0.04, 0.08, 0.0])


def test_frame_axes_start_at_the_origin_and_follow_the_rotation_columns():
    R = spatial.rotation_rpy(0.3, -0.2, 1.1)[None]
    p = np.array([[1.0, 2.0, 3.0]])
    pos, colors = frame_axes(R, p, 0.5)
    np.testing.assert_allclose(pos[0::2], np.repeat(p, 3, axis=0))
    np.testing.assert_allclose(pos[1::2], p + 0.5 * R[0].T, atol=1e-15)
    np.testing.assert_array_equal(colors[0::2, :3].argmax(axis=1), [0, 1, 2])   # x red, y green, z blue


def test_arrow_shaft_goes_from_origin_to_origin_plus_vector_and_barbs_stay_behind_the_tip():
    origins = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    vectors = np.array([[0.0, 0.0, 2.0], [1.0, 0.0, 0.0]])
    segments = arrows(origins, vectors, head=0.25).reshape(2, 6, 3)
    np.testing.assert_array_equal(segments[:, 0], origins)
    np.testing.assert_array_equal(segments[:, 1], origins + vectors)
    for barb in (segments[:, 3], segments[:, 5]):
        back = np.einsum("ni,ni->n", barb - (origins + vectors), vectors / np.linalg.norm(vectors, axis=1)[:, None])
        np.testing.assert_allclose(back, -0.25 * np.linalg.norm(vectors, axis=1))


def test_contact_seen_from_the_mobile_body_turns_ground_first_contacts_round():
    contacts = ActiveContacts(point=np.zeros((2, 3)), normal=np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]),
                        force=np.array([[1.0, 0.0, 5.0], [0.0, 2.0, -7.0]]), depth=np.zeros(2), mu=np.ones(2),
                        body_a=("robot/foot", "ground"), body_b=("ground", "robot/hand"))
    _, normals, forces, _ = contact_view(contacts, {"ground"})
    np.testing.assert_array_equal(normals, [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(forces, [[1.0, 0.0, 5.0], [0.0, -2.0, 7.0]])


def test_the_support_polygon_is_the_hull_of_the_loaded_feet_and_the_zmp_lies_inside():
    """Two feet of four corners each (z = 0), the second offset by (0.3, 0.2), and a hand on a wall (horizontal
    normal, left out): the polygon is the hull of the eight corners — six edges — and the ZMP the centre of
    pressure of the feet."""
    from app.overlays import _hull, support_polygons
    corners = np.array([[x, y, 0.0] for x in (0.0, 0.2) for y in (0.0, 0.1)])
    points = np.vstack([corners, corners + [0.3, 0.2, 0.0], [[0.5, 0.5, 1.0]]])
    normals = np.vstack([np.tile([0.0, 0.0, 1.0], (8, 1)), [[1.0, 0.0, 0.0]]])
    forces = np.vstack([np.tile([0.0, 0.0, 10.0], (4, 1)), np.tile([0.0, 0.0, 30.0], (4, 1)), [[5.0, 0, 0]]])
    names = ("ground",) * 9
    contacts = ActiveContacts(points, normals, forces, np.zeros(9), np.full(9, 0.5), body_a=names,
                              body_b=("r/left",) * 4 + ("r/right",) * 4 + ("r/hand",))
    edges, zmps = support_polygons(contacts, ["r/", "other/"])
    ring = edges[0::2]
    assert len(ring) == 6 and np.allclose(edges[:, 2], 0.0)      # the hull of the two offset rectangles
    assert {tuple(p) for p in ring[:, :2].round(9)} == {(0.0, 0.0), (0.2, 0.0), (0.5, 0.2), (0.5, 0.3), (0.3, 0.3),
                                                         (0.0, 0.1)}
    np.testing.assert_allclose(zmps, [[(10 * 0.1 + 30 * 0.4) / 40, (10 * 0.05 + 30 * 0.25) / 40, 0.0]])
    assert len(_hull(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))) == 2     # aligned: a segment
