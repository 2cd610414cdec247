"""EPA (engine/collision/_epa.py) on the convex hulls of Talos's collision meshes (example-robot-data), overlapping
at random by up to 2 mm: its penetration depth and normal against FCL's on the same pairs, and against GJK's
distance after the pair is moved apart along the normal found.  (On overlaps of centimetres FCL's depth is not the
least: its own separating move leaves the pair closer than it should, where EPA's does not; not tested here.)"""
from __future__ import annotations

import fcl
import numpy as np

from engine import spatial
from engine.collision import geometry
from engine.collision._epa import MAX_FACES, MAX_ITERATIONS, epa
from engine.collision._gjk import ENCLOSED, SEPARATED, gjk
from tests.collision.test_climb import hulls  # noqa: F401  (fixture)

FCL_TOLERANCE = 1e-6   # m: FCL's convex-convex penetration (libccd MPR) stops at 1e-6 (its mpr_tolerance)


def overlapping_pairs(hulls, rng, count):
    """(A, B, shape a, shape b): two hulls turned at random, B put 1 to 20 cm from A in a random direction, then
    moved towards A along the normal GJK finds by their distance plus an overlap of 0 to 2 mm (the depths of
    links resting on each other)."""
    simplex = np.zeros((3, 4, 3))
    for _ in range(count):
        a, b = (hulls[i] for i in rng.choice(len(hulls), 2, replace=False))
        Ra = spatial.rotation_axis_angle(rng.normal(size=3), rng.uniform(0.0, np.pi))
        Rb = spatial.rotation_axis_angle(rng.normal(size=3), rng.uniform(0.0, np.pi))
        u = rng.normal(size=3)
        pb = (np.linalg.norm(a.box_half) + np.linalg.norm(b.box_half) + rng.uniform(0.01, 0.2)) * u / np.linalg.norm(u)
        A = (geometry.CONVEX, np.zeros(3), a.vertices, Ra, -Ra @ a.box_center)
        B = (geometry.CONVEX, np.zeros(3), b.vertices, Rb, pb - Rb @ b.box_center)
        status, distance, xa, xb = gjk(A, B, 1.0, simplex, a.edges, b.edges)
        assert status == SEPARATED
        n = np.subtract(xa, xb) / distance
        B = B[:4] + (B[4] + (distance + rng.uniform(0.0, 2e-3)) * n,)
        yield A, B, a, b


def fcl_penetration(A, B, a, b):
    """FCL's (depth, normal from B to A) of the overlapping pair, or None."""
    oa, ob = fcl.CollisionObject(a.fcl_geometry), fcl.CollisionObject(b.fcl_geometry)
    oa.setTransform(fcl.Transform(A[3], A[4]))
    ob.setTransform(fcl.Transform(B[3], B[4]))
    result = fcl.CollisionResult()
    if not fcl.collide(oa, ob, fcl.CollisionRequest(num_max_contacts=1, enable_contact=True), result):
        return None
    c = result.contacts[0]
    n = -c.normal if c.o1 is a.fcl_geometry else c.normal
    return abs(c.penetration_depth), n / np.linalg.norm(n)


def sat_depth(A, B, a, b):
    """The exact penetration depth of two polytopes by the separating axis theorem: the least, over the normals of
    the triangles of A and B and the cross products of their edges, of the translation along the axis that
    separates them, h_B(u) - min_A u.x (Gottschalk; Ericson §5.2.1).  Triangles: the 3-cycles of the edge graphs
    (the hull's triangles, and any other 3-cycle: more axes only add upper bounds)."""
    def edges_and_triangles(s):
        first, to = s.edges
        near = [set(to[first[i]:first[i + 1]].tolist()) for i in range(len(first) - 1)]
        edges = np.array([(i, j) for i in range(len(near)) for j in near[i] if i < j])
        triangles = np.array([(i, j, k) for i, j in edges for k in near[i] & near[j] if k > j])
        return edges, triangles

    axes = []
    points = []
    for shape, (_, _, _, R, p) in ((a, A), (b, B)):
        x = shape.vertices @ R.T + p
        edges, triangles = edges_and_triangles(shape)
        points.append((x, x[edges[:, 1]] - x[edges[:, 0]]))
        axes.append(np.cross(x[triangles[:, 1]] - x[triangles[:, 0]], x[triangles[:, 2]] - x[triangles[:, 0]]))
    (xa, da), (xb, db) = points
    axes = np.vstack(axes + [np.cross(da[:, None, :], db[None, :, :]).reshape(-1, 3)])
    axes = axes[np.linalg.norm(axes, axis=1) > 1e-12]
    axes /= np.linalg.norm(axes, axis=1)[:, None]
    axes = np.vstack([axes, -axes])
    return float(np.min((xb @ axes.T).max(axis=0) - (xa @ axes.T).min(axis=0)))


def run_epa(A, B, a, b):
    simplex = np.zeros((3, 4 + MAX_ITERATIONS, 3))
    status = gjk(A, B, 0.0, simplex, a.edges, b.edges)[0]
    if status != ENCLOSED:
        return status, None
    faces, normal, distance = np.zeros((MAX_FACES, 3), np.int64), np.zeros((MAX_FACES, 3)), np.zeros(MAX_FACES)
    return status, epa(A, B, simplex, faces, normal, distance, a.edges, b.edges)


def test_epa_gives_the_exact_penetration_depth(hulls):   # noqa: F811
    """On 300 random pairs of Talos's smaller hulls (<= 120 vertices: the gripper's, the ankles' ...), each overlap
    GJK encloses (the others touch): (1) x_A - x_B = -depth n; (2) the depth is the exact one of the separating
    axis theorem (``sat_depth``) to 1e-9 m (EPA's tolerance is 1e-10); (3) A moved by (depth + 1 mm) n is 1 mm
    from B by GJK, to 1e-9 m: n is the direction the depth separates along; (4) FCL (libccd's MPR, which is not
    the least depth) finds at least this depth, to its tolerance."""
    small = [s for s in hulls if len(s.vertices) <= 120]
    assert len(small) >= 8
    rng = np.random.default_rng(3)
    resolved = 0
    for A, B, a, b in overlapping_pairs(small, rng, 300):
        status, result = run_epa(A, B, a, b)
        if status != ENCLOSED:
            continue
        found, depth, n, xa, xb = result
        assert found
        resolved += 1
        n = np.array(n)
        np.testing.assert_allclose(np.subtract(xa, xb), -depth * n, atol=1e-12)
        assert abs(depth - sat_depth(A, B, a, b)) <= 1e-9
        moved = (A[0], A[1], A[2], A[3], A[4] + (depth + 1e-3) * n)
        status, distance, _, _ = gjk(moved, B, 1.0, np.zeros((3, 4, 3)), a.edges, b.edges)
        assert status == SEPARATED and abs(distance - 1e-3) <= 1e-9
        reference = fcl_penetration(A, B, a, b)
        assert reference is None and depth < FCL_TOLERANCE or reference[0] >= depth - FCL_TOLERANCE
    assert resolved >= 150
