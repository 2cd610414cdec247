"""The same bicycle on point contacts with friction (issue 12, validation): scenes/bicycle_friction.xml, the
benchmark bicycle with 2 mm-wide collision disks for wheels on μ = 1 Coulomb contacts, in Articula's
time-stepping loop, against the exact rolling of scenes/bicycle.xml (KKT constraints, RK4), both at δt = 1 ms.

What point contacts cost, measured over 2 s of the self-stable run (4.6 m/s, roll rate 0.5 rad/s): each step the
lowest rim point is a new contact that meets the ground and sticks (a small plastic impact), and the disk's two
rims share the load, so the time stepping leaks energy — 11.5 J of 1837 J at 2 s (3.0 J at δt = 0.5 ms: it
is the discretisation's) — and its weave drifts in phase: roll rate within 0.072 rad/s of the exact one, rear hub
within 0.16 m. The stated tolerances: roll rate 0.1 rad/s (a fifth of the initial 0.5), hub 0.25 m (of 9.1 m
travelled), forward speed 0.05 m/s, energy lost, never gained, less than 1 %.
(pybullet on the same scene: bench/bicycle.py.)"""
from pathlib import Path

import numpy as np

import engine

SCENES = Path(__file__).resolve().parents[2] / "scenes"


def test_time_stepping_with_friction_stays_near_the_exact_rolling():
    exact = engine.Simulation(engine.load_universe(SCENES / "bicycle.xml"))
    stepped = engine.Simulation(engine.load_universe(SCENES / "bicycle_friction.xml"))
    assert not stepped.engine.rolling and stepped.dt == exact.dt == 1e-3
    E0 = sum(stepped.energy())
    assert E0 == sum(exact.energy())
    roll = hub = speed = 0.0
    for _ in range(20):
        exact.step(100)
        stepped.step(100)
        a, b = exact.runs[0], stepped.runs[0]
        roll, speed = max(roll, abs(a.v[4] - b.v[4])), max(speed, abs(a.v[1] - b.v[1]))
        hub = max(hub, np.linalg.norm(a.q[:3] - b.q[:3]))
        assert sum(stepped.energy()) <= E0 + 1e-6 * E0                  # friction contacts never add energy
    assert roll < 0.1 and hub < 0.25 and speed < 0.05
    assert 0.0 < E0 - sum(stepped.energy()) < 0.01 * E0
    assert abs(sum(exact.energy()) - E0) < 1e-9 * E0                    # the exact one conserves it
