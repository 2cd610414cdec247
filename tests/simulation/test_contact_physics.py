"""Frictional contact against closed forms (issue 5 validation; seed 000 §3.3–§3.4, §4).

Each test builds a small inline universe and checks a number derived in its comment."""
import math

import numpy as np
import pytest

from engine.errors import SimulationError
from engine.plugins import register
from engine.model.universe_xml import load_universe
from engine.simulation import Simulation

G = 9.81


def universe(tmp_path, body, settings=""):
    f = tmp_path / "scene.xml"
    f.write_text(f"<Universe>\n<Settings>{settings}</Settings>\n{body}\n</Universe>\n")
    return load_universe(f)


@pytest.mark.parametrize("e", [0.0, 0.5, 0.9])
def test_ball_bounces_with_newton_restitution(tmp_path, e):
    """Newton's impact law (seed 000 eq. 3.5): the velocity after the impact step is −e times the velocity
    before it; with e = 0 the ball stays on the ground (no rebound, no sinking)."""
    sim = Simulation(universe(tmp_path, f"""
        <Material name="m" friction="0.5" restitution="{e}"/>
        <Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Material>m</Material>
          <Translation x="0" y="0" z="0.6"/></Body>
        <Body name="ground"><Plane/><Mass>0</Mass><Material>m</Material></Body>"""))
    vz, z = [0.0], [0.6]
    for _ in range(450):
        sim.step()
        vz.append(sim.runs[0].v[2])
        z.append(sim.runs[0].q[2])
    vz, z = np.array(vz), np.array(z)
    k = int(np.argmax(np.diff(vz) > 2 * G * sim.dt))     # the first step that is not free fall
    assert vz[k] < -3.0                                   # v⁻ = −sqrt(2 g 0.5) ≈ −3.13 m/s
    if e > 0.0:
        assert vz[k + 1] == pytest.approx(-e * vz[k], rel=1e-6)
    else:
        assert np.all(np.abs(vz[k + 2:]) < 1e-6)
        assert np.all(z[k + 2:] > 0.1 - 1e-4) and np.all(z[k + 2:] < 0.1 + 1e-6)


def _incline(tmp_path, degrees, mu):
    """A 0.2 m cube resting on a plane tilted by ``degrees`` about y, both of friction ``mu``."""
    t = math.radians(degrees)
    n = np.array([math.sin(t), 0.0, math.cos(t)])       # plane normal
    centre = 0.1 * n + np.array([0.0, 0.0, 1.0])
    return universe(tmp_path, f"""
        <Material name="m" friction="{mu}"/>
        <Body name="slope"><Plane/><Mass>0</Mass><Material>m</Material>
          <Rotation angle="{degrees}" x="0" y="1" z="0"/><Translation x="0" y="0" z="1"/></Body>
        <Body name="box"><Box size="0.2 0.2 0.2"/><Mass>2</Mass><Material>m</Material>
          <Rotation angle="{degrees}" x="0" y="1" z="0"/>
          <Translation x="{centre[0]}" y="{centre[1]}" z="{centre[2]}"/></Body>"""), n


def test_block_sticks_on_a_gentle_incline(tmp_path):
    """tan θ = tan 20° = 0.36 < μ = 0.5: static friction holds the block (drift < 1e-6 m over 2 s)."""
    u, _ = _incline(tmp_path, 20.0, 0.5)
    sim = Simulation(u)
    start = sim.runs[0].q[:3].copy()
    sim.step(2000)
    assert np.linalg.norm(sim.runs[0].q[:3] - start) < 1e-6


def test_block_slides_on_a_steep_incline(tmp_path):
    """tan 35° = 0.70 > μ = 0.4: it slides with a = g (sin θ − μ cos θ) down the slope (within 1e-3)."""
    theta, mu = 35.0, 0.4
    u, n = _incline(tmp_path, theta, mu)
    sim = Simulation(u)
    down = np.array([math.cos(math.radians(theta)), 0.0, -math.sin(math.radians(theta))])  # ⟂ n, downhill
    assert abs(down @ n) < 1e-12

    def speed():  # downhill speed of the box; the free-flyer v is in the body frame
        return (sim.body_placement(0, 0)[0] @ sim.runs[0].v[:3]) @ down

    sim.step(100)
    v0 = speed()
    sim.step(500)
    a = (speed() - v0) / 0.5
    expected = G * (math.sin(math.radians(theta)) - mu * math.cos(math.radians(theta)))
    assert a == pytest.approx(expected, rel=1e-3)


def test_four_legged_table_carries_its_weight(tmp_path):
    """A 1 kg four-legged table at rest: the normal forces sum to m g within 1e-6 N (the split among the legs is
    not unique, seed 000 §4: the LCP of the thesis gave 2.275 / 2.625 N)."""
    sim = Simulation(universe(tmp_path, """
        <Body name="table"><Mass>1</Mass><Inertia>0.02 0 0 0 0.02 0 0 0 0.03</Inertia>
          <Box size="0.6 0.4 0.04" xyz="0 0 0.3"/>
          <Box size="0.04 0.04 0.28" xyz="0.25 0.15 0.14"/><Box size="0.04 0.04 0.28" xyz="-0.25 0.15 0.14"/>
          <Box size="0.04 0.04 0.28" xyz="0.25 -0.15 0.14"/><Box size="0.04 0.04 0.28" xyz="-0.25 -0.15 0.14"/>
          <CoM>0 0 0.25</CoM></Body>
        <Body name="ground"><Plane/><Mass>0</Mass></Body>"""))
    sim.step(300)
    normal_sum = float(np.sum(sim.contacts.force @ np.array([0.0, 0.0, 1.0])))
    assert normal_sum == pytest.approx(1.0 * G, abs=1e-6)


def test_contact_forces_stay_in_the_cone(tmp_path):
    """A box thrown sliding and tumbling: every returned force satisfies ‖f_t‖ ≤ μ f_n (1 + 1e-9), f_n ≥ 0."""
    mu = 0.3
    sim = Simulation(universe(tmp_path, f"""
        <Material name="m" friction="{mu}"/>
        <Body name="box"><Box size="0.3 0.2 0.1"/><Mass>1</Mass><Material>m</Material>
          <Translation x="0" y="0" z="0.2"/><Rotation angle="30" x="1" y="1" z="0"/>
          <LinearVelocity>2 0.5 0</LinearVelocity><AngularVelocity>0 0 6</AngularVelocity></Body>
        <Body name="ground"><Plane/><Mass>0</Mass><Material>m</Material></Body>"""))
    seen = 0
    for _ in range(800):
        sim.step()
        c = sim.contacts
        fn = np.einsum("ij,ij->i", c.force, c.normal)
        ft = np.linalg.norm(c.force - fn[:, None] * c.normal, axis=1)
        assert np.all(fn >= -1e-12)
        assert np.all(ft <= mu * fn * (1 + 1e-9) + 1e-12)
        seen += len(c)
    assert seen > 100


def test_inelastic_contact_never_adds_energy(tmp_path):
    """With e = 0 and no penetration correction the contact impulse is dissipative: at every step, the kinetic
    energy after the contact solve is at most that of the free velocity v_free = v + δt a_free (the tumbling
    box's kinetic energy ½ vᵀ M v uses its constant body-frame inertia)."""
    sim = Simulation(universe(tmp_path, """
        <Body name="box"><Box size="0.3 0.2 0.1"/><Mass>1</Mass>
          <Translation x="0" y="0" z="0.3"/><Rotation angle="20" x="1" y="0" z="0"/>
          <LinearVelocity>1 0 0</LinearVelocity><AngularVelocity>0 0 4</AngularVelocity></Body>
        <Body name="ground"><Plane/><Mass>0</Mass></Body>""", '<Contact correction="none"/>'))
    run = sim.runs[0]
    M = run.model.body_inertia[0]

    def kinetic(v):
        return 0.5 * v @ M @ v

    active = 0
    for _ in range(600):
        v_before = run.v.copy()
        sim.step()
        v_free = v_before + sim.dt * run.a_free
        if np.any(run.f_contact):
            active += 1
            assert kinetic(run.v) <= kinetic(v_free) * (1 + 1e-9) + 1e-12
    assert active > 50


def test_sliding_box_loses_energy_monotonically(tmp_path):
    """A box landing flat and sliding to rest (e = 0, no correction, no rotation): the total energy never
    increases (semi-implicit Euler in free fall loses ½ m g² δt² per step; friction and impacts dissipate)."""
    sim = Simulation(universe(tmp_path, """
        <Material name="m" friction="0.3"/>
        <Body name="box"><Box size="0.3 0.2 0.1"/><Mass>1</Mass><Material>m</Material>
          <Translation x="0" y="0" z="0.1"/><LinearVelocity>1.5 0 0</LinearVelocity></Body>
        <Body name="ground"><Plane/><Mass>0</Mass><Material>m</Material></Body>""", '<Contact correction="none"/>'))
    energy = [sum(sim.energy())]
    for _ in range(700):
        sim.step()
        energy.append(sum(sim.energy()))
    assert np.max(np.diff(energy)) <= 1e-12 * abs(energy[0])
    assert sim.runs[0].v @ sim.runs[0].v < 1e-12          # stopped: 1.5²/(2 · 0.3 g) = 0.38 m in 0.51 s


@pytest.mark.parametrize("push, tips", [(0.7, False), (1.3, True)])
def test_box_tips_past_its_tipping_point(tmp_path, push, tips):
    """A 0.2 × 0.2 × 0.6 m box of 1 kg pushed horizontally at its top (h = 0.6 m): it tips when F h > m g w/2,
    i.e. F > F_tip = 1 · 9.81 · 0.1 / 0.6 (friction μ = 1 prevents sliding)."""
    sim = Simulation(universe(tmp_path, """
        <Material name="m" friction="1.0"/>
        <Body name="box"><Box size="0.2 0.2 0.6"/><Mass>1</Mass><Material>m</Material>
          <Translation x="0" y="0" z="0.3"/></Body>
        <Body name="ground"><Plane/><Mass>0</Mass><Material>m</Material></Body>"""))
    f_tip = 1.0 * G * 0.1 / 0.6
    sim.step(20)
    for _ in range(400):
        R, p = sim.body_placement(0, 0)
        top = p + R @ np.array([-0.1, 0.0, 0.3])
        sim.set_external_wrench(0, 0, [push * f_tip, 0, 0, 0, 0, 0], top)
        sim.step()
    tilt = math.degrees(math.acos(min(1.0, sim.body_placement(0, 0)[0][2, 2])))
    assert (tilt > 5.0) if tips else (tilt < 1e-3)


@register("nan-after-5-steps")
class NanController:
    """A broken controller: finite torques, then NaN from t = 5 ms on."""
    kind = "controller"
    stage = "control"

    def __init__(self, model):
        self.nv = model.nv

    def reset(self, q, v):
        pass

    def control(self, t, q, v):
        return np.full(self.nv, np.nan if t >= 0.005 - 1e-12 else 0.0)


def test_non_finite_value_stops_with_the_stage_and_keeps_the_last_state(tmp_path):
    sim = Simulation(universe(tmp_path, """
        <Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="0" y="0" z="1"/></Body>
        <Controller plugin="nan-after-5-steps" target="ball"/>"""))
    sim.step(5)
    good = sim.state
    with pytest.raises(SimulationError, match="'nan-after-5-steps' failed in stage 'control', multibody 'ball'"):
        sim.step(3)
    assert sim.time == good.t
    np.testing.assert_array_equal(sim.state.q[0], good.q[0])
