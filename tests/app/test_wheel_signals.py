"""Signals of a multibody on wheels (issue 12 part 6, app/wheel_signals.py) on the thesis's upright run up a 10°
incline (seed 001 A5), whose every value has a closed form: it rolls straight up the slope decelerating at
a = g sin θ · M / m_eff (m_eff = M + Σ I_k / h_k² = 97.619 kg, M = 94 kg), so after t: speed v0 − a t; each wheel's
ground force along the slope spins it down, λ_x,k = (I_k / h_k²) a; the normal forces carry M g cos θ; no lean,
no heading, no steer, no sideways force."""
import math
from pathlib import Path

import pytest

import engine
from app.signals import catalogue

ROBOT = Path(__file__).resolve().parents[2] / "assets" / "robots" / "benchmark_bicycle.urdf"
G, M, THETA = 9.81, 94.0, math.radians(10.0)
WHEELS = {"front_wheel": (0.35, 0.28), "rear_wheel": (0.3, 0.12)}           # h, spin inertia


@pytest.fixture(scope="module")
def uphill(tmp_path_factory):
    path = tmp_path_factory.mktemp("incline") / "incline.xml"
    rotation = '<Rotation angle="-10" x="0" y="1" z="0"/>'                  # x rises 10° forward
    path.write_text(f"""<Universe name="incline"><Settings><TimeStep>0.001</TimeStep></Settings>
  <MultiBody name="bicycle"><File>{ROBOT}</File><FloatingBase>true</FloatingBase>{rotation}
    <Joint name="root_joint" value="0 0 0.3 -0.5 -0.5 -0.5 0.5" velocity="0 4.6 0 0 0 0"/>
    <Joint name="front_spin" velocity="{4.6 / 0.35!r}"/><Joint name="rear_spin" velocity="{4.6 / 0.3!r}"/>
    <Wheel link="front_wheel" radius="0.35" axis="0 1 0"/><Wheel link="rear_wheel" radius="0.3" axis="0 0 1"/>
  </MultiBody>
  <Body name="ground"><Plane/>{rotation}<Mass>0</Mass></Body></Universe>""")
    universe = engine.load_universe(path)
    sim = engine.Simulation(universe)
    sim.step(500)
    return {s.key: s for s in catalogue(universe)}, sim.snapshot()


def test_wheel_signals_on_the_incline(uphill):
    signals, snapshot = uphill
    m_eff = M + sum(inertia / h ** 2 for h, inertia in WHEELS.values())
    a = G * math.sin(THETA) * M / m_eff
    normal = 0.0
    for wheel, (h, inertia) in WHEELS.items():
        value = {name: signals[f"bicycle/wheel {wheel}/{name}"].value(snapshot)
                 for name in ("lean", "heading", "forward speed", "λ x (ground axes)", "λ y (ground axes)",
                              "λ normal (ground axes)")}
        assert abs(value["lean"]) < 1e-9 and abs(value["heading"]) < 1e-9 and abs(value["λ y (ground axes)"]) < 1e-9
        assert value["forward speed"] == pytest.approx(4.6 - a * snapshot.t, abs=1e-9)
        assert value["λ x (ground axes)"] == pytest.approx(inertia / h ** 2 * a, abs=1e-6)
        normal += value["λ normal (ground axes)"]
    assert normal == pytest.approx(M * G * math.cos(THETA), abs=1e-6)
    assert abs(signals["bicycle/wheels/steer (front_wheel against rear_wheel)"].value(snapshot)) < 1e-9


def test_wheel_signals_follow_the_weave():
    """On the self-stable run (scenes/bicycle.xml) after 0.3 s: the rear wheel's lean is the frame's roll (its axis
    is the frame's lateral axis: asin of the frame's z·up), its forward speed h3 (ω·a) = h3 (Ω3 + ṙ3) in the frame's
    axes (rolling), and only multibodies with wheels get these signals."""
    universe = engine.load_universe(Path(__file__).resolve().parents[2] / "scenes" / "bicycle.xml")
    sim = engine.Simulation(universe)
    sim.step(300)
    snapshot, signals = sim.snapshot(), {s.key: s for s in catalogue(universe)}
    R = snapshot.body_R[0][0]                                                # the frame, world axes
    v = snapshot.v[0]
    lean = signals["bicycle/wheel rear_wheel/lean"].value(snapshot)
    assert lean == pytest.approx(math.degrees(math.asin(R[2, 2])), abs=1e-9) and abs(lean) > 0.5
    rear = next(j.idx_v for j in universe.multibodies[0].model.joints if j.name == "rear_spin")
    assert signals["bicycle/wheel rear_wheel/forward speed"].value(snapshot) == pytest.approx(
        0.3 * (v[5] + v[rear]), abs=1e-9)
    plain = engine.load_universe(Path(__file__).resolve().parents[2] / "scenes" / "bicycle_friction.xml")
    assert not [s for s in catalogue(plain) if "/wheel" in s.group]
