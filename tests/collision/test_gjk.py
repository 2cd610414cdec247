"""GJK (engine/collision/_gjk.py) on convex hulls face to face a few µm apart: the distance, not a false
intersection (before its stop on distance bounds that meet, half of these pairs were reported intersecting and
left to FCL)."""
from __future__ import annotations

import numpy as np
import trimesh

from engine import spatial
from engine.collision._gjk import SEPARATED, gjk
from engine.collision.geometry import CONVEX


def flat_hull(rng, sign):
    """The hull of 200 random points in a 10 cm box above (sign +1) or below (−1) z = 0, 40 of them on z = 0:
    a polytope with a large flat face on the plane z = 0."""
    points = rng.uniform([-0.05, -0.05, 0.0], [0.05, 0.05, 0.1], (200, 3)) * [1.0, 1.0, sign]
    points[:40, 2] = 0.0
    return np.ascontiguousarray(trimesh.convex.convex_hull(points).vertices)


def test_hulls_face_to_face_a_few_micrometres_apart():
    """A above the plane, B below it, A lifted by the gap along the common face normal, both turned by the same
    random rotation: the distance is the gap (1 µm … 100 µm), to 1e-9 m."""
    rng, simplex = np.random.default_rng(0), np.zeros((3, 4, 3))
    for _ in range(200):
        above, below = flat_hull(rng, 1.0), flat_hull(rng, -1.0)
        gap = 10.0 ** rng.uniform(-6.0, -4.0)
        R = spatial.rotation_axis_angle(rng.normal(size=3), rng.uniform(0.0, np.pi))
        A = (CONVEX, np.zeros(3), above, R, R @ [0.0, 0.0, gap] + 0.3)
        B = (CONVEX, np.zeros(3), below, R.copy(), np.full(3, 0.3))
        status, distance, xa, xb = gjk(A, B, 5e-3, simplex)
        assert status == SEPARATED
        assert abs(distance - gap) <= 1e-9
        assert abs(np.linalg.norm(np.subtract(xa, xb)) - gap) <= 1e-9
