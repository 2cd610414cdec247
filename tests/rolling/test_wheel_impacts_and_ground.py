"""Impact laws and wheel–ground gaps of the event-driven wheels (engine/rolling/; seed 001 §2.7–2.8, Mauny 2018
eqs. 3.23/3.24, 3.28/3.30, App. D)."""
import math

import numpy as np
import pytest

from engine.model.model import Geometry
from engine.model.universe import StaticBody
from engine.rolling.ground import Ground, lowest_point
from engine.rolling.impact import complete_impact, plastic_impact, predict_correct


def random_problem(seed, n=9, m=6):
    """A mass matrix M (n × n, positive definite), constraint rows C (m × n) and a velocity V₋."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    return A @ A.T + n * np.eye(n), rng.normal(size=(m, n)), rng.normal(size=n)


def energy(M, v):
    return 0.5 * v @ M @ v


@pytest.mark.parametrize("seed", range(5))
def test_an_elastic_impact_keeps_the_energy_and_reverses_the_contact_velocities(seed):
    """ε = I: V₊ = V₋ − 2 𝕄⁻¹ℂᵀ(ℂ𝕄⁻¹ℂᵀ)⁻¹ℂV₋ is the 𝕄-reflection of V₋ (3.24a): T₊ = T₋, ℂV₊ = −ℂV₋."""
    M, C, v = random_problem(seed)
    v_plus, impulse = complete_impact(M, C, np.eye(len(C)), v)
    assert abs(energy(M, v_plus) - energy(M, v)) < 1e-12 * energy(M, v)
    np.testing.assert_allclose(C @ v_plus, -C @ v, rtol=0, atol=1e-12)
    np.testing.assert_allclose(M @ (v_plus - v), C.T @ impulse, rtol=0, atol=1e-11)     # 3.17


@pytest.mark.parametrize("seed", range(5))
def test_the_plastic_reduced_law_is_the_complete_law_with_no_restitution(seed):
    """(3.28)/(3.30) and (3.23)/(3.24) with E = 0 give the same V₊ and Λ (the two metrics of §3.14 meet on
    impulses that lie in span ℂᵀ); ℂV₊ = 0 and the energy lost is T(V₋ − V₊) > 0 (Carnot)."""
    M, C, v = random_problem(seed)
    v_red, lam_red = plastic_impact(M, C, v)
    v_com, lam_com = complete_impact(M, C, np.zeros((6, 6)), v)
    np.testing.assert_allclose(v_red, v_com, rtol=0, atol=1e-12)
    np.testing.assert_allclose(lam_red, lam_com, rtol=0, atol=1e-10)
    assert np.abs(C @ v_red).max() < 1e-12
    assert energy(M, v) - energy(M, v_red) == pytest.approx(energy(M, v - v_red), rel=1e-10)
    assert energy(M, v) - energy(M, v_red) > 0.0


@pytest.mark.parametrize("seed", range(10))
def test_a_restitution_eps_loses_the_energy_newton_s_law_says(seed):
    """E = ε I, 0 ≤ ε ≤ 1: ℂV₊ = −εℂV₋ and T₊ − T₋ = ½(ε² − 1) γᵀ(ℂ𝕄⁻¹ℂᵀ)⁻¹γ, γ = ℂV₋ (from 3.23/3.24a): no
    energy is gained. (With ε_N ≠ ε_T the change is ½ γᵀ(I + E)W⁻¹(E − I)γ, not of one sign: Newton's law
    with a tangential restitution can gain energy, which ε = I and ε = 0 cannot.)"""
    M, C, v = random_problem(100 + seed)
    eps = np.random.default_rng(seed).uniform(0.0, 1.0)
    v_plus, _ = complete_impact(M, C, eps * np.eye(len(C)), v)
    gamma = C @ v
    np.testing.assert_allclose(C @ v_plus, -eps * gamma, rtol=0, atol=1e-12)
    change = 0.5 * (eps ** 2 - 1.0) * gamma @ np.linalg.solve(C @ np.linalg.solve(M, C.T), gamma)
    assert energy(M, v_plus) - energy(M, v) == pytest.approx(change, rel=1e-9)
    assert change <= 0.0


def test_predict_correct_drops_the_contact_that_would_pull():
    """Remark 3.6: a prediction with Λ_N < 0 is rejected and solved again without that contact; the accepted one
    has Λ_N ≥ 0 and leaves the dropped contact free (its normal velocity ≥ 0)."""
    M, C, v = random_problem(7)
    for seed in range(50):
        M, C, v = random_problem(seed)
        rows = {0: C[:3], 1: C[3:]}
        tried = predict_correct(M, rows, {0: (0.0, 0.0), 1: (0.0, 0.0)}, v, (0, 1))
        if not tried[0].accepted:
            break
    assert len(tried) >= 2 and tried[-1].accepted and tried[0].impulse[:, 0].min() < 0
    dropped = set(tried[0].contacts) - set(tried[-1].contacts)
    assert all(rows[w][0] @ tried[-1].v >= -1e-12 for w in dropped)
    assert all(lam[0] >= 0 for lam in tried[-1].impulse)


def box(name, size, p, R=np.eye(3)):
    return StaticBody(name, (Geometry(name=name, body=-1, kind="box", size=size, R=R, p=np.asarray(p, float)),))


def test_a_disk_above_a_box_face_has_the_plane_s_gap_and_leaves_the_face_at_its_edge():
    """Upright disk (axis y, radius 0.3) above a box whose top is z = 0 for −2 ≤ x ≤ 0: face gap = height − h
    (2.18) anywhere over the face; near the edge x = 0 the margin of its contact point in the face is −x,
    positive before the edge and negative past it (the hard lift-off's event function)."""
    ground = Ground.from_statics([box("step", (2.0, 2.0, 1.0), (-1.0, 0.0, -0.5))], np.eye(3), np.zeros(3), "x")
    a, h = np.array([0.0, 1.0, 0.0]), 0.3
    for x in (-1.7, -0.7, -0.2, -1e-3):
        phi, support = ground.gap(np.array([x, 0.0, 0.5]), a, h)
        assert phi == pytest.approx(0.2, abs=1e-15) and support.face >= 0 and support.name == "step"
        assert ground.margin(support, np.array([x, 0.0, 0.5]), a, h) > 0.0
    for x in (-1e-2, -1e-3, 1e-3, 1e-2):
        assert ground.margin(support, np.array([x, 0.0, 0.5]), a, h) == pytest.approx(-x, abs=1e-15)


def test_past_the_edge_the_gap_is_measured_to_the_edge():
    """No face under the disk: the gap to the box's top edge (the line x = 0, z = 0): |O − Q| − h for a disk
    whose plane contains the normal (App. D's vertex rule C = O − h (O − C')/|O − C'|)."""
    ground = Ground.from_statics([box("step", (2.0, 2.0, 1.0), (-1.0, 0.0, -0.5))], np.eye(3), np.zeros(3), "x")
    O, a, h = np.array([0.4, 0.0, 0.5]), np.array([0.0, 1.0, 0.0]), 0.3
    phi, support = ground.gap(O, a, h)
    assert support.face == -2
    assert phi == pytest.approx(math.hypot(0.4, 0.5) - h, abs=1e-14)


def test_the_lowest_point_of_a_leaned_steered_disk_is_below_every_rim_point():
    """C = O − h u/|u| (2.20/2.22 without the angles) against a sampled rim, for random axes and normals."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, N = rng.normal(size=3), rng.normal(size=3)
        a, N, O = a / np.linalg.norm(a), N / np.linalg.norm(N), rng.normal(size=3)
        C = lowest_point(O, a, 0.35, N)
        e1 = np.cross(a, rng.normal(size=3))
        e1 /= np.linalg.norm(e1)
        angles = np.linspace(0.0, 2 * np.pi, 20001)
        rim = O + 0.35 * (np.outer(np.cos(angles), e1) + np.outer(np.sin(angles), np.cross(a, e1)))
        assert abs(np.linalg.norm(C - O) - 0.35) < 1e-14 and abs((C - O) @ a) < 1e-14
        assert N @ C <= (rim @ N).min() + 1e-12


def test_the_broad_phase_keeps_every_triangle_within_reach(monkeypatch):
    """FCL's BVH against a sphere of radius h + REACH returns the triangles the gap needs: on a random soup
    of 300 triangles, the gaps below REACH equal those of the brute force (every triangle tested); beyond, a
    face farther than REACH is not seen and the gap is REACH or a nearer edge's, never more than the brute
    force's."""
    import engine.rolling.ground as ground_module
    rng = np.random.default_rng(4)
    triangles = rng.uniform(-3, 3, size=(300, 1, 3)) * [1, 1, 0.1] + rng.normal(scale=0.4, size=(300, 3, 3))
    ground = Ground([], triangles, np.arange(300), [f"t{i}" for i in range(300)], [])
    tested = 0
    for _ in range(200):
        O, a = rng.uniform(-3, 3, size=3) * [1, 1, 0.3] + [0, 0, 0.8], rng.normal(size=3)
        a /= np.linalg.norm(a)
        phi, support = ground.gap(O, a, 0.3)
        with monkeypatch.context() as m:
            m.setattr(ground_module, "REACH", 1e9)
            brute, brute_support = ground.gap(O, a, 0.3)
        if brute < ground_module.REACH - 1e-9:
            assert phi == brute and support.face == brute_support.face
            tested += 1
        else:
            assert phi <= brute
    assert tested > 50
