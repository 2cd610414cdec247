"""Contact manifold reduction: at most N points, the deepest kept, the support polygon kept, duplicates merged."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from engine.collision.reduction import TIE, reduce_manifold


def reduce(points, depths, n_max=4, merge=1e-4, face=1e-3, normal=(0.0, 0.0, 1.0)):
    k = len(points)
    raw = np.zeros((k + 8, 7))
    raw[:k, :3], raw[:k, 3:6], raw[:k, 6] = points, normal, depths
    selected = np.zeros(k + 8, dtype=np.int64)
    m = reduce_manifold(raw, k, n_max, (merge, face), np.zeros((k + 8, 2)), selected, np.zeros(2 * n_max + 2, np.int64))
    return raw[selected[:m]]


def grid(n=7, size=0.2):
    u = np.linspace(-size / 2, size / 2, n)
    return np.array([[x, y, 0.0] for x in u for y in u])


def test_flat_patch_keeps_its_corners():
    out = reduce(grid(), np.full(49, 1e-3))
    assert len(out) == 4
    corners = {(x, y) for x in (-0.1, 0.1) for y in (-0.1, 0.1)}
    assert {(round(x, 12), round(y, 12)) for x, y in out[:, :2]} == corners


def test_deepest_point_is_kept_and_the_patch_stays_wide():
    points, depths = grid(), np.full(49, 1e-3)
    depths[24] = 2e-3  # the centre is deepest
    out = reduce(points, depths)
    assert len(out) == 4 and out[0, 6] == 2e-3 and np.allclose(out[0, :2], 0.0)
    # the 3 others span half the square at least: area of their hull >= 1/2 of 0.2^2
    assert ConvexHull(out[:, :2]).volume >= 0.5 * 0.04 - 1e-12


@pytest.mark.parametrize("n_max", [3, 6, 8])
def test_n_points_of_a_regular_polygon(n_max):
    angles = 2 * np.pi * np.arange(24) / 24
    points = np.column_stack([np.cos(angles), np.sin(angles), np.zeros(24)]) * 0.1
    out = reduce(points, np.full(24, 1e-3), n_max=n_max)
    assert len(out) == n_max
    full = ConvexHull(points[:, :2]).volume
    best = 0.5 * n_max * np.sin(2 * np.pi / n_max) * 0.01  # the largest inscribed n-gon
    # greedy from a diameter: 3 points give a right triangle, 1/(3 sqrt 3 / 4) = 77 % of the best
    assert ConvexHull(out[:, :2]).volume >= 0.75 * best and best <= full


def test_duplicates_merge_into_the_deepest():
    corners = np.array([[x, y, 0.0] for x in (0, 0.1) for y in (0, 0.1)])
    points = np.vstack([corners, corners + 1e-6, corners - 2e-6])
    depths = np.concatenate([np.full(4, 1e-3), np.full(4, 2e-3), np.full(4, 1.5e-3)])
    out = reduce(points, depths, merge=1e-4)
    assert len(out) == 4
    np.testing.assert_allclose(out[:, 6], 2e-3)
    np.testing.assert_allclose(np.sort(out[:, 0]), [1e-6, 1e-6, 0.1 + 1e-6, 0.1 + 1e-6])


def test_line_contact_gives_its_two_ends():
    points = np.column_stack([np.linspace(0, 0.3, 11), np.zeros(11), np.zeros(11)])
    out = reduce(points, np.full(11, 1e-3))
    assert len(out) == 2
    np.testing.assert_allclose(np.sort(out[:, 0]), [0.0, 0.3])


def test_single_cluster_gives_one_point():
    out = reduce(np.random.default_rng(0).normal(scale=1e-6, size=(9, 3)), np.arange(9) * 1e-4)
    assert len(out) == 1 and out[0, 6] == 8e-4


def test_a_sole_stands_on_its_face_not_on_its_raised_rim():
    """A sole flat to 0.2 mm (the 7 x 7 grid, depths 0.1 .. 0.3 mm) inside a rim 1.5-2 mm higher (proximity
    contacts, depth < 0) and wider: the 4 points are the face's corners, all within face_tolerance of the
    deepest, not the rim's."""
    rng = np.random.default_rng(3)
    face = grid()
    rim = np.array([[x, y, 0.0] for x in (-0.13, 0.13) for y in (-0.13, 0.13)])
    depths = np.concatenate([rng.uniform(1e-4, 3e-4, 49), [-1.5e-3, -1.8e-3, -2e-3, -1.6e-3]])
    out = reduce(np.vstack([face, rim]), depths)
    assert len(out) == 4 and out[0, 6] >= depths.max() - TIE * 1e-3       # the deepest, up to a tie
    assert np.all(out[:, 6] >= depths.max() - 1e-3)
    assert ConvexHull(out[:, :2]).volume >= 0.5 * 0.04


def test_a_line_face_is_completed_by_the_nearest_rim():
    """The touching face is a line (an edge resting on the ground): its two ends, then proximity points off the
    line complete the support so the solver sees the side the body falls to one step early."""
    line = np.array([[x, 0.0, 0.0] for x in np.linspace(-0.1, 0.1, 9)])
    off = np.array([[-0.1, 0.05, 0.0], [0.1, 0.05, 0.0]])
    out = reduce(np.vstack([line, off]), np.concatenate([np.full(9, 1e-3), [-2e-3, -2e-3]]))
    assert len(out) == 4
    assert sorted(np.round(out[:, 0], 12).tolist()) == [-0.1, -0.1, 0.1, 0.1]
    assert sorted(out[:, 6].tolist()) == [-2e-3, -2e-3, 1e-3, 1e-3]


def test_one_point_per_pair_is_the_deepest():
    depths = np.full(49, 1e-3)
    depths[30] = 3e-3
    out = reduce(grid(), depths, n_max=1)
    assert len(out) == 1 and out[0, 6] == 3e-3
