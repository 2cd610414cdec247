"""Narrowphase results reused while a pair barely moves (engine/collision/_reuse.py).

A pair's kept result stands while A has moved, relative to B, by less than its reach: the bound
δ = |Δc| + ‖ΔR‖_F ρ_A on the displacement of any point of A's bounding box (ρ_A its half diagonal), computed here
from the perturbation itself.  Below the contact reach ε, kept contacts are re-expressed with the new poses and
agree with a fresh narrowphase to 2δ in depth (each is 1-Lipschitz in the displacement) and to 1.5δ in position
(the re-expressed midpoint moves by δ/2, the fresh contact, a vertex of A on B's face, by δ); above it the full
narrowphase runs.
"""
from __future__ import annotations

import numpy as np
import pytest
import trimesh

from engine import spatial
from engine.collision import CollisionSettings, CollisionWorld
from engine.collision.geometry import CONVEX
from engine.contact import stepping
from engine.model.universe import ContactSettings
from tests.collision.scenes import I3, free_body, place, rot, static

EPS = stepping.REUSE_SLOP * ContactSettings().slop   # the contact stage's reuse distance
RHO = np.sqrt(3) * 0.05                              # ρ of a 0.1 m cube


def hull_cube(tmp_path, name, size):
    path = tmp_path / f"{name}.stl"
    trimesh.creation.box((size, size, size)).export(path)
    return free_body(tmp_path, name, f'<mesh filename="{path}"/>')


def scene(tmp_path, reuse_distance=EPS, margin=5e-3):
    """A 0.1 m hull cube a on a 0.3 m hull cube b (cores intersecting: FCL and face clipping), a 0.1 m hull cube c
    on the ground (a hull against a plane) and, 2 mm above b, a hull cube d (GJK's witness points, face clipping)."""
    bodies = [hull_cube(tmp_path, "a", 0.1), hull_cube(tmp_path, "b", 0.3), hull_cube(tmp_path, "c", 0.1),
              hull_cube(tmp_path, "d", 0.1)]
    w = CollisionWorld(bodies, [static("ground")], None,
                       CollisionSettings(margin=margin, reuse_distance=reuse_distance))
    assert set(w.shapes.kind[:4]) == {CONVEX}
    return w


POSES = [(I3, [0.02, -0.03, 0.36 - 1e-3]), (I3, [0.0, 0.0, 0.16]), (I3, [1.0, 0.0, 0.05 - 1e-3]),
         (I3, [-0.09, 0.09, 0.36 + 2e-3])]   # b 10 mm above the ground, a and d 10 mm apart


def perturbed(rng, delta):
    """POSES with a, c and d turned about their centre and moved, each point of their boxes by <= delta: |t| = δ/2
    and ‖ΔR − I‖_F ρ = 2√2 sin(θ/2) ρ = δ/2 (b, the large cube, stays)."""
    out = list(POSES)
    theta = 2.0 * np.arcsin(0.5 * delta / (2.0 * np.sqrt(2.0) * RHO))
    for i in (0, 2, 3):
        dR = spatial.rotation_axis_angle(rng.normal(size=3), theta)
        t = rng.normal(size=3)
        out[i] = (dR @ POSES[i][0], np.add(POSES[i][1], 0.5 * delta * t / np.linalg.norm(t)))
    return out


def by_pair(c):
    return {int(k): (c.point[c.pair == k], c.normal[c.pair == k], c.depth[c.pair == k]) for k in np.unique(c.pair)}


def fresh(tmp_path, poses, margin=5e-3):
    """The contacts of a world that keeps nothing in contact, at ``poses``."""
    w = scene(tmp_path, 0.0, margin)
    place(w, poses)
    return w.detect()


def same(c, d):
    return all(np.array_equal(getattr(c, n), getattr(d, n)) for n in ("point", "normal", "depth", "pair"))


def test_kept_contacts_agree_with_a_fresh_narrowphase_below_the_reuse_distance(tmp_path):
    """Depth to 2δ, position to 1.5δ, normal to the turn of the moved cube: |Δn| <= 2 sin(θ/2) = δ/(2√2 ρ) (the
    kept normal is fixed in B, the fresh one is B's or A's face normal)."""
    w, rng = scene(tmp_path), np.random.default_rng(1)
    place(w, POSES)
    first = by_pair(w.detect())
    assert len(first) == 3 and all(len(v[2]) == 4 for v in first.values())   # a-b, b-d, c-ground: four corners
    delta = 0.9 * EPS
    for _ in range(20):
        poses = perturbed(rng, delta)
        place(w, poses)
        kept, new = by_pair(w.detect()), by_pair(fresh(tmp_path, poses))
        assert kept.keys() == new.keys()
        for k, (x, n, d) in kept.items():
            x0, n0, d0 = new[k]
            assert len(d) == len(d0)
            for xi, ni, di in zip(x, n, d):
                j = np.argmin(np.linalg.norm(x0 - xi, axis=1))
                assert np.linalg.norm(x0[j] - xi) <= 1.5 * delta
                assert abs(d0[j] - di) <= 2.0 * delta
                assert np.linalg.norm(n0[j] - ni) <= delta / (2.0 * np.sqrt(2.0) * RHO) + 1e-12
        place(w, POSES)                                        # back: the kept contacts, to rounding
        for k, (x, n, d) in by_pair(w.detect()).items():
            np.testing.assert_allclose(x, first[k][0], rtol=0, atol=1e-15)
            np.testing.assert_allclose(d, first[k][2], rtol=0, atol=1e-15)


def test_kept_contacts_are_the_kept_points_moved_with_their_bodies(tmp_path):
    """Below the reuse distance the output is the re-expression of the kept contacts (not a new narrowphase):
    surface points x_A = point − depth/2 n moved with A, x_B = point + depth/2 n and n moved with B,
    depth = (x_B − x_A)·n.  Pairs a–b and c–ground have a small cube as A (δ = 0.9 ε); b–d has the large cube b
    as A, whose ρ = 0.26 m and distance to d's centre make δ > ε as d turns: it is tested afresh."""
    w = scene(tmp_path)
    place(w, POSES)
    c0 = w.detect()
    poses = perturbed(np.random.default_rng(2), 0.9 * EPS)
    place(w, poses)
    c = w.detect()
    assert np.array_equal(c.pair, c0.pair)

    def moved(x, obj, vector=False):                           # x, world at POSES -> world at poses
        m = w.objects[obj].multibody
        if m < 0:
            return x
        (R0, p0), (R1, p1) = POSES[m], poses[m]
        return R1 @ (np.asarray(R0).T @ x) if vector else R1 @ (np.asarray(R0).T @ (x - p0)) + p1

    new = fresh(tmp_path, poses)
    for i in range(len(c0)):
        oa, ob = w.tables.pair_object[c0.pair[i]]
        if oa == 1:
            assert np.array_equal(c.point[i], new.point[i]) and np.array_equal(c.depth[i], new.depth[i])
            continue
        xa = moved(c0.point[i] - 0.5 * c0.depth[i] * c0.normal[i], oa)
        xb = moved(c0.point[i] + 0.5 * c0.depth[i] * c0.normal[i], ob)
        n = moved(c0.normal[i], ob, vector=True)
        np.testing.assert_allclose(c.point[i], 0.5 * (xa + xb), rtol=0, atol=1e-15)
        np.testing.assert_allclose(c.normal[i], n, rtol=0, atol=1e-15)
        np.testing.assert_allclose(c.depth[i], (xb - xa) @ n, rtol=0, atol=1e-15)


def test_above_the_reuse_distance_the_narrowphase_runs(tmp_path):
    w, rng = scene(tmp_path), np.random.default_rng(3)
    for _ in range(5):
        w.restore()
        place(w, POSES)
        w.detect()
        poses = perturbed(rng, 1.1 * EPS)
        place(w, poses)
        assert same(w.detect(), fresh(tmp_path, poses))


def test_a_pair_apart_is_tested_again_once_it_moved_its_clearance(tmp_path):
    """A 0.1 m hull cube d turned 45° about z faces the vertical edge of a 0.3 m hull cube b across a 3 mm gap, its
    bounding box overlapping b's; margin 1 mm: no contact, kept with the 2 mm clearance along d's face normal.
    Moved 1.5 mm closer (less than the clearance) it is still apart; 2.5 mm closer, 0.5 mm from b, the
    narrowphase runs: b's edge touches d's face at gap 0.5 mm."""
    b, d = hull_cube(tmp_path, "b", 0.3), hull_cube(tmp_path, "d", 0.1)
    w = CollisionWorld([b, d], [], None, CollisionSettings(margin=1e-3, reuse_distance=EPS))
    diagonal = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    corner = np.array([0.15, 0.15, 0.0])

    def at(gap):
        place(w, [(I3, np.zeros(3)), (rot([0, 0, 1], 45), corner + (0.05 + gap) * diagonal)])
        return w.detect()

    assert len(at(3e-3)) == 0
    assert w.cache.reach[0] == pytest.approx(2e-3, abs=1e-7) and w.cache.count[0] == 0   # float32 STL
    assert len(at(1.5e-3)) == 0
    c = at(0.5e-3)
    assert len(c) >= 1
    np.testing.assert_allclose(c.depth, -0.5e-3, rtol=0, atol=1e-7)
    np.testing.assert_allclose(c.normal, np.tile(-diagonal, (len(c), 1)), rtol=0, atol=1e-7)


def test_kept_carries_the_kept_contacts_and_restore_and_a_new_margin_forget_them(tmp_path):
    w, poses = scene(tmp_path), perturbed(np.random.default_rng(4), 0.9 * EPS)
    place(w, POSES)
    w.detect()
    saved = w.kept()
    place(w, poses)
    reused = w.detect()
    new = fresh(tmp_path, poses)
    assert not same(reused, new)                                # reuse shows at the bit level
    restored = scene(tmp_path)
    restored.restore(saved)                                     # a new world given them continues the same
    place(restored, poses)
    assert same(restored.detect(), reused)
    w.restore()                                                 # forgets: the narrowphase runs
    place(w, poses)
    assert same(w.detect(), new)
    place(w, POSES)
    w.detect()
    place(w, poses)
    assert same(w.detect(margin=4e-3), fresh(tmp_path, poses, 4e-3))


def test_a_small_body_apart_stands_while_it_turns_little_relative_to_a_large_one(tmp_path):
    """The pair of test_a_pair_apart_... (A the 0.3 m cube b, B the 0.1 m cube d across a 3 mm gap, kept with the
    2 mm clearance). b turned by θ about d's centre: in d's frame b's far corners, 0.5 m away, move by 6 mm at
    θ = 0.012 rad (beyond the clearance), while in b's frame d only turns about its centre, its corners by at most
    ‖ΔR‖_F ρ_d = √2 θ ρ_d = 1.5 mm (within it), so the pair kept apart stands (``_reuse.stands_apart``: its kept pose is
    not replaced) and gives what a fresh narrowphase gives, nothing; at 0.02 rad (2.45 mm) it is tested again."""
    b, d = hull_cube(tmp_path, "b", 0.3), hull_cube(tmp_path, "d", 0.1)
    diagonal = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    centre = np.array([0.15, 0.15, 0.0]) + 0.053 * diagonal
    poses = lambda theta: [(rot([0, 0, 1], np.degrees(theta)), centre - rot([0, 0, 1], np.degrees(theta)) @ centre),
                           (rot([0, 0, 1], 45), centre)]
    w = CollisionWorld([b, d], [], None, CollisionSettings(margin=1e-3, reuse_distance=EPS))
    place(w, poses(0.0))
    assert len(w.detect()) == 0 and w.cache.reach[0] > 1.9e-3
    kept = w.cache.R[0].copy()
    for theta, stands in ((0.012, True), (0.02, False)):
        place(w, poses(theta))
        fresh_world = CollisionWorld([b, d], [], None, CollisionSettings(margin=1e-3))
        place(fresh_world, poses(theta))
        assert same(w.detect(), fresh_world.detect())
        assert np.array_equal(w.cache.R[0], kept) == stands


def test_the_detection_never_writes_the_kept_results_handed_out_last(tmp_path):
    """``kept()`` hands out views of one of two slots; the detections after it pack into the other, so what the
    Simulation keeps as its last good warm start stays as it was, and restores the same detection."""
    w, rng = scene(tmp_path), np.random.default_rng(5)
    place(w, POSES)
    w.detect()
    first = w.kept()
    saved = {k: a.copy() for k, a in first.items()}
    poses = perturbed(rng, 1.1 * EPS)                           # beyond the reuse distance: new kept contacts
    for _ in range(3):
        place(w, poses)
        w.detect()
        assert all(np.array_equal(first[k], saved[k]) for k in saved)
    second = w.kept()
    assert not np.array_equal(second["kept_rows"], saved["kept_rows"])
    assert not np.shares_memory(second["kept_rows"], first["kept_rows"])
    w.restore(first)                                            # back to the first: the same as a world given a copy
    copy = scene(tmp_path)
    copy.restore(saved)
    place(w, poses)
    place(copy, poses)
    assert same(w.detect(), copy.detect())
