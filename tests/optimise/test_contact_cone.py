"""A 3D contact on a geared arm with dry friction (scenes/geared_arm.xml's UR5, rotors α = 100, q_s = 2 N m):
its tool pressed on a table (pinned where it starts, at least 20 N) while wrist 1 turns by 0.37 rad in 0.3 s.
The friction cone √(F_x² + F_y²) ≤ μ F_z binds and holds at every node, and the dry friction, smoothed as
q_s tanh(q̇ / v_s) for IPOPT, lets it converge (with sign(q̇) it stalls at the iteration limit)."""
from pathlib import Path

import numpy as np

import engine
from engine.optimise.command import optimise
from engine.optimise.problem import load_problem
from engine.optimise.symbolic import point_position

ROOT = Path(__file__).resolve().parents[2]
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
START = (0.0, -1.2, 1.6, -1.97, -1.5708, 0.0)
PROBLEM = f"""multibody = "rotor_aware"
duration = 0.3
intervals = 15
[cost]
effort = 1.0
force = 1e-4
{chr(10).join(f"[actuators.{j}]" for j in JOINTS)}
[[contact]]
frame = "tool0"
mu = 0.3
min_normal = 20.0
[start.q]
{chr(10).join(f"{j} = {x}" for j, x in zip(JOINTS, START))}
[start.v]
{chr(10).join(f"{j} = 0.0" for j in JOINTS)}
[end.q]
wrist_1_joint = -1.6
"""


def test_a_pressed_tool_keeps_its_force_in_the_cone(tmp_path):
    (tmp_path / "press.toml").write_text(PROBLEM)
    universe = engine.load_universe(ROOT / "scenes" / "geared_arm.xml")
    result = optimise(universe, load_problem(tmp_path / "press.toml"))
    assert result.success, result.status_words
    F = result.forces
    assert F.shape == (16, 3) and (F[:, 2] >= 20.0 - 1e-6).all()
    ratio = np.hypot(F[:, 0], F[:, 1]) / F[:, 2]
    assert ratio.max() <= 0.3 + 1e-6 and ratio.max() > 0.29          # the cone binds
    model = universe.multibody("rotor_aware").model
    f = model.frame_index("tool0")
    tool = np.array([np.asarray(point_position(model, q, int(model.frame_body[f]), model.frame_p[f])).ravel()
                     for q in result.q])
    np.testing.assert_allclose(tool, np.tile(tool[0], (16, 1)), atol=1e-8)   # pinned
    assert abs(result.q[-1, 3] + 1.6) < 1e-9
