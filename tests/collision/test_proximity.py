"""Proximity (margin) contacts, and normals/depths of random convex pairs against FCL as an oracle."""
from __future__ import annotations

import fcl
import numpy as np
import pytest
import trimesh

from engine import spatial
from tests.collision.scenes import I3, free_body, place, rot, static, world

SHAPES = {
    "box": ('<box size="0.2 0.1 0.3"/>', lambda: fcl.Box(0.2, 0.1, 0.3)),
    "sphere": ('<sphere radius="0.1"/>', lambda: fcl.Sphere(0.1)),
    "capsule": ('<capsule radius="0.05" length="0.2"/>', lambda: fcl.Capsule(0.05, 0.2)),
}


def test_gap_beyond_and_within_the_margin(tmp_path):
    cube = free_body(tmp_path, "cube", '<box size="0.1 0.1 0.1"/>')
    ball = free_body(tmp_path, "ball", '<sphere radius="0.05"/>')
    w = world([cube, ball], [static("ground")])
    place(w, [(rot([0, 0, 1], 20), [0, 0, 0.05 + 3e-3]), (I3, [0.3, 0, 0.05 + 3e-3])])
    assert len(w.detect()) == 0
    assert len(w.detect(margin=2.9e-3)) == 0
    c = w.detect(margin=5e-3)
    assert len(c) == 5  # the cube's 4 bottom corners and the ball's lowest point
    np.testing.assert_allclose(c.depth, -3e-3, atol=1e-15)
    np.testing.assert_allclose(c.point[:, 2], 1.5e-3, atol=1e-15)  # midway in the gap
    np.testing.assert_allclose(c.normal, np.tile([0, 0, 1.0], (5, 1)), atol=1e-15)
    place(w, [(I3, [0, 0, 0.5]), (I3, [0.1 + 4e-3, 0.0, 0.5])])  # ball 4 mm from the cube's +x face
    c = w.detect(margin=5e-3)
    assert len(c) == 1 and w.object_name(c.object_a[0]) == "cube/cube"
    np.testing.assert_allclose(c.normal, [[-1.0, 0.0, 0.0]], atol=1e-12)  # from the ball (B) to the cube (A)
    np.testing.assert_allclose(c.depth, [-4e-3], atol=1e-12)
    np.testing.assert_allclose(c.point, [[0.052, 0.0, 0.5]], atol=1e-12)


def test_convex_hulls_apart_within_the_margin(tmp_path):
    path = tmp_path / "ico.stl"
    trimesh.creation.icosahedron().export(path)  # vertices on the unit sphere
    a = free_body(tmp_path, "a", f'<mesh filename="{path}" scale="0.1 0.1 0.1"/>')
    b = free_body(tmp_path, "b", f'<mesh filename="{path}" scale="0.1 0.1 0.1"/>')
    w = world([a, b])
    ico = trimesh.creation.icosahedron()
    top = ico.vertices[np.argmax(ico.vertices[:, 2])]
    R = spatial.rotation_axis_angle(np.cross(top, [0, 0, -1]), np.arccos(-top[2]))  # a vertex pointing down
    face_up = ico.face_normals[0]
    r_in = 0.1 * face_up @ ico.vertices[ico.faces[0, 0]]  # distance of a face from the centre
    Rb = spatial.rotation_axis_angle(np.cross(face_up, [0, 0, 1]), np.arccos(face_up[2]))
    place(w, [(R, [0.0, 0.0, r_in + 0.1 + 2e-3]), (Rb, [0.0, 0.0, 0.0])])  # A's vertex 2 mm above B's face
    assert len(w.detect(margin=1e-3)) == 0
    c = w.detect(margin=3e-3)
    assert len(c) == 1
    np.testing.assert_allclose(c.depth, [-2e-3], atol=1e-7)  # float32 STL coordinates
    np.testing.assert_allclose(c.normal, [[0, 0, 1.0]], atol=1e-7)
    np.testing.assert_allclose(c.point, [[0, 0, r_in + 1e-3]], atol=1e-7)


def fcl_distance(kind_a, kind_b, Ra, pa):
    return fcl.distance(fcl.CollisionObject(SHAPES[kind_a][1](), fcl.Transform(Ra, pa)),
                        fcl.CollisionObject(SHAPES[kind_b][1](), fcl.Transform()))


def swept_oracle(kind_a, Ra, pa, kind_b, Rb):
    """Deepest contact of two spheres/capsules by brute force: A's core sampled every 10 um, the closest
    point of B's core to each sample in closed form."""
    half = {"sphere": 0.0, "capsule": 0.1}
    radius = {"sphere": 0.1, "capsule": 0.05}
    core_a = pa + np.linspace(-half[kind_a], half[kind_a], 20001)[:, None] * Ra[:, 2]
    t = np.clip(core_a @ Rb[:, 2], -half[kind_b], half[kind_b])
    e = core_a - t[:, None] * Rb[:, 2]
    d = np.linalg.norm(e, axis=1)
    i = int(np.argmin(d))
    return radius[kind_a] + radius[kind_b] - d[i], e[i] / d[i]


def box_capsule_oracle(Ra, pa, Rb):
    """Deepest contact of the 0.2 x 0.1 x 0.3 box at (Ra, pa) and the capsule at (Rb, 0), by brute force:
    the capsule's core sampled every 10 um, the distance of each sample to the box in closed form."""
    core = np.linspace(-0.1, 0.1, 20001)[:, None] * Rb[:, 2]
    q = (core - pa) @ Ra  # samples in the box frame
    clamped = np.clip(q, -np.array([0.1, 0.05, 0.15]), [0.1, 0.05, 0.15])
    d = np.linalg.norm(q - clamped, axis=1)
    i = int(np.argmin(d))
    n = Ra @ (clamped[i] - q[i]) / d[i]  # from the capsule (B) to the box (A)
    return 0.05 - d[i], n


@pytest.mark.parametrize("kind_a, kind_b", [("box", "box"), ("sphere", "box"), ("box", "capsule"),
                                            ("capsule", "capsule"), ("sphere", "capsule"), ("sphere", "sphere")])
def test_random_shallow_contacts_match_an_oracle(tmp_path, kind_a, kind_b):
    """Random orientations, A brought along a random direction until it touches B (bisection on FCL's
    distance), then pushed 0.1-3 mm further: the deepest contact's depth and normal agree with FCL's for
    box-box and sphere-box (its closed forms; its normal points from A to B), and with a brute-force
    distance for the pairs where FCL runs GJK/EPA (off by up to 1 mm for box-capsule).  Boxes: where an
    edge-edge and a face axis overlap within 5 %, the two libraries may pick either (both bias towards faces)."""
    a = free_body(tmp_path, "a", SHAPES[kind_a][0])
    b = free_body(tmp_path, "b", SHAPES[kind_b][0])
    w = world([a, b])
    rng = np.random.default_rng(1)
    request = fcl.CollisionRequest(num_max_contacts=16, enable_contact=True)
    for _ in range(40):
        Ra, Rb = (spatial.quaternion_to_rotation(q / np.linalg.norm(q)) for q in rng.normal(size=(2, 4)))
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        lo, hi = 0.0, 1.0  # A at t u: touching between lo and hi
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if fcl_distance(kind_a, kind_b, Rb.T @ Ra, Rb.T @ (mid * u)) <= 0.0 else (lo, mid)
        pa = (hi - rng.uniform(1e-4, 3e-3)) * u
        place(w, [(Ra, pa), (Rb, np.zeros(3))])
        c = w.detect()
        i = int(np.argmax(c.depth))
        np.testing.assert_allclose(np.linalg.norm(c.normal, axis=1), 1.0, atol=1e-12)
        if "box" not in (kind_a, kind_b) or (kind_a, kind_b) == ("box", "capsule"):
            depth, normal = (box_capsule_oracle(Ra, pa, Rb) if kind_a == "box" else
                             swept_oracle(kind_a, Ra, pa, kind_b, Rb))
            assert c.depth[i] == pytest.approx(depth, abs=1e-8)
            np.testing.assert_allclose(c.normal[c.depth >= c.depth[i] - 1e-9][-1], normal, atol=1e-4)
            continue
        result = fcl.CollisionResult()
        assert fcl.collide(fcl.CollisionObject(SHAPES[kind_a][1](), fcl.Transform(Ra, pa)),
                           fcl.CollisionObject(SHAPES[kind_b][1](), fcl.Transform(Rb, np.zeros(3))), request, result)
        deepest = max(result.contacts, key=lambda x: x.penetration_depth)
        if kind_a == kind_b == "box" and abs(c.depth[i] - deepest.penetration_depth) > 1e-6:
            assert c.depth[i] == pytest.approx(deepest.penetration_depth, rel=0.06)
            continue
        assert c.depth[i] == pytest.approx(deepest.penetration_depth, abs=1e-6)
        np.testing.assert_allclose(c.normal[i], -deepest.normal, atol=1e-4)


def test_a_world_on_the_callers_placements_detects_as_one_given_copies(tmp_path):
    """``CollisionWorld(placements=(R, p))`` reads the caller's arrays, written in place, with nothing copied:
    the same contacts as a world updated with copies of the same poses; arrays of another shape are refused."""
    from engine.collision.world import CollisionSettings, CollisionWorld
    cube = free_body(tmp_path, "cube", '<box size="0.1 0.1 0.1"/>')
    ball = free_body(tmp_path, "ball", '<sphere radius="0.05"/>')
    R, p = np.zeros((3, 3, 3)), np.zeros((3, 3))                 # two bodies and a spare row, as WorldBodies
    shared = CollisionWorld([cube, ball], [static("ground")], settings=CollisionSettings(margin=5e-3),
                            placements=(R[:2], p[:2]))
    copied = world([cube, ball], [static("ground")], margin=5e-3)
    for poses in ([(rot([0, 0, 1], 20), [0, 0, 0.05 + 3e-3]), (I3, [0.3, 0, 0.05 + 3e-3])],
                  [(rot([1, 1, 0], 10), [0, 0, 0.049]), (I3, [0.1 + 4e-3, 0.0, 0.06])]):
        for k, (Rk, pk) in enumerate(poses):
            R[k], p[k] = Rk, pk
        shared.update()
        place(copied, poses)
        a, b = shared.detect(), copied.detect()
        assert len(a) >= 4
        for name in ("point", "normal", "depth", "pair"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    with pytest.raises(ValueError, match="placements"):
        CollisionWorld([cube, ball], [static("ground")], placements=(R, p))
