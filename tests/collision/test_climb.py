"""Hill climbing on a hull's edge graph (engine/collision/_gjk.py ``climb``) against taking every vertex, on the
convex hulls of Talos's collision meshes (example-robot-data): the same support value for any direction and any
start, and GJK with the graphs giving the distances and witness points GJK gives without them."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
from engine import spatial
from engine.collision import geometry
from engine.collision._gjk import SEPARATED, climb, gjk
from engine.model.paths import example_robot_data_dir


@pytest.fixture(scope="module")
def hulls():
    """The CONVEX shapes of Talos's collision meshes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mimic joints, non-watertight collision meshes (hull fallback)
        model = engine.load_model(example_robot_data_dir() / "talos_data/robots/talos_reduced.urdf",
                                  floating_base=True)
    shapes = [s for g in model.geometries if g.role == "collision" for s in geometry.shapes_of(g)]
    hulls = [s for s in shapes if s.kind == geometry.CONVEX]
    assert len(hulls) >= 40
    return hulls


def test_the_edge_graph_is_the_hull_surface(hulls):
    """Every vertex has at least 3 neighbours (a vertex of a polytope is on >= 3 faces), the graph is symmetric,
    and it has the E = 3 V - 6 edges of a closed triangulated surface of genus 0 (Euler: V - E + T = 2, 2 E = 3 T)."""
    for s in hulls:
        first, to = s.edges
        degree = np.diff(first)
        assert len(first) == len(s.vertices) + 1 and degree.min() >= 3
        pairs = {(i, int(j)) for i in range(len(s.vertices)) for j in to[first[i]:first[i + 1]]}
        assert all((j, i) in pairs for i, j in pairs)
        assert len(to) == 2 * (3 * len(s.vertices) - 6)      # each edge in both directions


def test_climbing_reaches_the_furthest_vertex(hulls):
    """From random starts along random directions, the vertex climbing stops at is as far along the direction as
    the furthest vertex (max over all vertices), to rounding: |difference| <= 4 eps max|x.d|."""
    rng = np.random.default_rng(1)
    for s in hulls:
        first, to = s.edges
        for _ in range(50):
            d = rng.normal(size=3)
            start = int(rng.integers(len(s.vertices)))
            i = climb(s.vertices, first, to, (d[0], d[1], d[2]), start)
            values = s.vertices @ d
            assert values[i] >= values.max() - 4 * np.finfo(float).eps * np.abs(values).max()


def test_gjk_with_the_graphs_gives_the_distance_of_gjk_over_every_vertex(hulls):
    """Pairs of Talos hulls placed at random a few mm to cm apart: status, distance and witness points of GJK with
    hill climbing equal those of GJK taking every vertex, to 1e-12 m (both converge to the same exact distance
    between the same polytopes; only rounding, and the order in which tied vertices are found, differ)."""
    rng, simplex = np.random.default_rng(2), np.zeros((3, 4, 3))
    compared = 0
    for _ in range(300):
        a, b = (hulls[i] for i in rng.choice(len(hulls), 2, replace=False))
        Ra = spatial.rotation_axis_angle(rng.normal(size=3), rng.uniform(0.0, np.pi))
        Rb = spatial.rotation_axis_angle(rng.normal(size=3), rng.uniform(0.0, np.pi))
        pa = rng.normal(size=3) * 0.1
        A = (geometry.CONVEX, np.zeros(3), a.vertices, Ra, pa)
        B = (geometry.CONVEX, np.zeros(3), b.vertices, Rb, pa + rng.normal(size=3) * 0.15)
        plain = gjk(A, B, 0.05, simplex)
        climbing = gjk(A, B, 0.05, simplex, a.edges, b.edges)
        assert plain[0] == climbing[0]
        if plain[0] == SEPARATED:
            compared += 1
            assert abs(plain[1] - climbing[1]) <= 1e-12
            np.testing.assert_allclose(np.subtract(plain[2], plain[3]), np.subtract(climbing[2], climbing[3]),
                                       atol=1e-12)
    assert compared >= 30
