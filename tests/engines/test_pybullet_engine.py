"""The pybullet engine (issue 15, part 1): the same universe on both engines, against closed forms and each other.

Both engines integrate by semi-implicit Euler, so where there is no contact they must agree to rounding: that
checks the model written for Bullet (masses, inertias, joint frames, the free flyer's conventions) and the
state conversions. With contacts, each solves its own problem; the tests compare with closed forms."""
import dataclasses
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import engine
from engine import engines
from engine.errors import UniverseError

pytest.importorskip("pybullet")

G = 9.81
SCENES = Path(__file__).parents[2] / "scenes"


def universe(tmp_path, body, attributes="", settings=""):
    f = tmp_path / "scene.xml"
    f.write_text(f"<Universe>\n<Settings{attributes}>{settings}</Settings>\n{body}\n</Universe>\n")
    return engine.load_universe(f)


def both(u, steps, read):
    """``read(sim)`` after each of ``steps`` steps, per engine: {name: array}."""
    out = {}
    for name in ("articula", "pybullet"):
        sim = engine.Simulation(u, engine=name)
        assert sim.engine.name == name
        rows = []
        for _ in range(steps):
            sim.step()
            rows.append(np.array(read(sim), dtype=float))
        out[name] = np.array(rows)
    return out


BALL = """<Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass><Translation x="0" y="0" z="{z}"/></Body>
          <Body name="ground"><Plane/><Mass>0</Mass></Body>"""


def test_a_dropped_ball_falls_as_semi_implicit_euler_and_rests_on_the_ground(tmp_path):
    """Free fall from z0 by semi-implicit Euler (v_n = −g n δt, z_n = z0 − g δt² n(n+1)/2) on both engines to
    rounding; then at rest on the plane (z = r to 1 mm: Bullet keeps a small penetration) carried by a normal
    force m g."""
    u = universe(tmp_path, BALL.format(z=1.0))
    z = both(u, 900, lambda s: (s.runs[0].q[2], len(s.contacts) and s.contacts.force[:, 2].sum()))
    n = np.arange(1, 301)
    for name, rows in z.items():
        assert np.abs(rows[:300, 0] - (1.0 - G * 1e-6 * n * (n + 1) / 2)).max() < 1e-12, name
        assert rows[-1, 0] == pytest.approx(0.1, abs=1e-3), name
        assert rows[-1, 1] == pytest.approx(G, rel=1e-6), name


def _incline(tmp_path, degrees, mu):
    t = math.radians(degrees)
    n = np.array([math.sin(t), 0.0, math.cos(t)])
    centre = 0.1 * n + np.array([0.0, 0.0, 1.0])
    return universe(tmp_path, f"""
        <Material name="m" friction="{mu}"/>
        <Body name="slope"><Plane/><Mass>0</Mass><Material>m</Material>
          <Rotation angle="{degrees}" x="0" y="1" z="0"/><Translation x="0" y="0" z="1"/></Body>
        <Body name="box"><Box size="0.2 0.2 0.2"/><Mass>2</Mass><Material>m</Material>
          <Rotation angle="{degrees}" x="0" y="1" z="0"/>
          <Translation x="{centre[0]}" y="{centre[1]}" z="{centre[2]}"/></Body>""")


def test_a_box_slides_down_a_steep_incline_at_g_sin_minus_mu_cos(tmp_path):
    """30°, μ = 0.3 < tan 30° = 0.577: the box slides with a = g (sin θ − μ cos θ) = 2.357 m/s², pushed by a
    contact force (its weight's normal part along n, μ of it up the slope). Articula's exact cone gives both to
    1e-9; Bullet's box rocks on its changing contact manifold (angular velocities up to 0.1 rad/s), so over
    0.5 s its mean acceleration and mean contact force are within 1 %."""
    t, mu = math.radians(30.0), 0.3
    u = _incline(tmp_path, 30.0, mu)
    rows = both(u, 700, lambda s: [np.linalg.norm(s.body_velocity(0, 0)[0]), *s.contacts.force.sum(axis=0)])
    n, up = np.array([math.sin(t), 0.0, math.cos(t)]), np.array([-math.cos(t), 0.0, math.sin(t)])
    force = 2 * G * math.cos(t) * (n + mu * up)
    for name, tolerance in (("articula", 1e-9), ("pybullet", 0.01)):
        gain = rows[name][-1, 0] - rows[name][199, 0]              # over the last 0.5 s
        assert gain == pytest.approx(G * (math.sin(t) - mu * math.cos(t)) * 0.5, rel=tolerance), name
        mean = rows[name][200:, 1:].mean(axis=0)
        np.testing.assert_allclose(mean, force, rtol=0.0, atol=tolerance * np.linalg.norm(force), err_msg=name)


def test_a_box_sticks_on_a_gentle_incline(tmp_path):
    """10°, μ = 0.5 > tan 10° = 0.18: static friction holds it (speed below 1 mm/s after settling)."""
    speeds = both(_incline(tmp_path, 10.0, 0.5), 500, lambda s: np.linalg.norm(s.body_velocity(0, 0)[0]))
    for name, rows in speeds.items():
        assert rows[-1] < 1e-3, name


PENDULUM = """<robot name="pendulum">
  <link name="arm"><inertial><origin xyz="0 0 -0.5"/><mass value="1.5"/>
    <inertia ixx="0.03" ixy="0.001" ixz="0" iyy="0.031" iyz="0.002" izz="0.004"/></inertial>
    <collision><origin xyz="0 0 -0.5"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="tip"><inertial><origin xyz="0.1 0 -0.2"/><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.001"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="world"/><child link="arm"/><axis xyz="0 1 0"/>
    <dynamics damping="0.05" friction="0.02"/></joint>
  <joint name="wrist" type="continuous"><parent link="arm"/><child link="tip"/><origin xyz="0 0 -1" rpy="0.3 0 0.2"/>
    <axis xyz="1 0 0"/></joint>
  <link name="world"/>
</robot>"""


def test_a_double_pendulum_with_joint_friction_swings_alike_on_both_engines(tmp_path):
    """No contact: the two engines integrate the same ODE (joint damping and dry friction included) by the same
    scheme, so their joint trajectories over 2 s, a full swing from 0.3 rad to −0.23 rad (friction) and back,
    agree to 1e-9 rad."""
    (tmp_path / "pendulum.urdf").write_text(PENDULUM)
    u = universe(tmp_path, """<MultiBody name="p"><File>pendulum.urdf</File><Translation x="0" y="0" z="2"/>
                                <Joint name="hinge" value="0.3"/></MultiBody>""")
    q = both(u, 2000, lambda s: s.runs[0].q.copy())
    np.testing.assert_allclose(q["pybullet"], q["articula"], atol=1e-9)
    hinge = q["articula"][:, 0]
    assert hinge.min() < -0.2 and hinge[-1] > 0.2


@pytest.mark.parametrize("dry, holds", [(5.0, True), (1.0, False)])
def test_joint_friction_as_a_constraint_is_bullet_s_joint_motor_and_both_engines_agree(tmp_path, dry, holds):
    """``joint_friction="constraint"``: Articula's friction rows and Bullet's velocity motors (target 0, maximum
    force μ_d) solve the same box complementarity each step, so the pendulum (its gravity torque about 2.3 N m
    at 0.3 rad, the free wrist swinging) is held at 0.3 rad exactly by μ_d = 5 N m on both engines, slides under
    1 N m, and the two trajectories agree to 1e-12 rad over 1 s."""
    (tmp_path / "pendulum.urdf").write_text(PENDULUM.replace('friction="0.02"', f'friction="{dry}"'))
    u = universe(tmp_path, """<MultiBody name="p"><File>pendulum.urdf</File><Translation x="0" y="0" z="2"/>
                                <Joint name="hinge" value="0.3"/></MultiBody>""",
                 settings='<Solver joint_friction="constraint"/>')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # the <Solver> settings are Articula's
        q = both(u, 1000, lambda s: s.runs[0].q.copy())
    np.testing.assert_allclose(q["pybullet"], q["articula"], atol=1e-12)
    assert (np.all(q["articula"][:, 0] == 0.3) if holds else q["articula"][-1, 0] < 0.0)
    assert np.abs(q["articula"][:, 1]).max() > 0.5                 # the wrist swings either way


def test_a_point_closure_holds_on_bullet_s_point_to_point_constraint(tmp_path):
    """Seed 003's 5-bar (closed at O5 by a point closure), released passive from its rectangle with no ground:
    Bullet's point-to-point constraint keeps the loop closed within 2 mm for 1 s (Articula's projection: 1e-9 m);
    over the first 0.2 s the joint angles agree within 2e-3 rad, and the total energy stays within 0.5 J of its
    start for 0.3 s on both."""
    robot = Path(__file__).parents[2] / "assets" / "robots" / "five_bar.xml"
    u = universe(tmp_path, f"""<MultiBody name="five_bar"><File>{robot}</File><Translation x="0" y="0" z="1"/>
        <Joint name="j1" value="1.5707963267948966"/><Joint name="j2" value="-1.5707963267948966"/>
        <Joint name="j4" value="-1.5707963267948966"/></MultiBody>""")
    closure, base = u.multibodies[0].model.closures[0], u.multibodies[0]

    def read(sim):
        (R,), (p,) = sim.placements()
        a = p[closure.body_a] + R[closure.body_a] @ closure.p_a
        b = base.R @ closure.p_b + base.p if closure.body_b < 0 else p[closure.body_b] + R[closure.body_b] @ closure.p_b
        return [np.linalg.norm(a - b), sum(sim.energy()), *sim.runs[0].q]
    rows = both(u, 1000, read)
    assert rows["articula"][:, 0].max() < 1e-9 and rows["pybullet"][:, 0].max() < 2e-3
    np.testing.assert_allclose(rows["pybullet"][:200, 2:], rows["articula"][:200, 2:], atol=2e-3)
    start = engine.Simulation(u).energy()
    for name in rows:
        assert np.abs(rows[name][:300, 1] - sum(start)).max() < 0.5, name


def test_talos_dynamics_agree_to_rounding_in_free_flight():
    """Talos (example-robot-data), floating, tilted and 2 m up with no ground and no controller: one step from
    rest gives the same acceleration on both engines (to 1e-10: masses, inertias, joint frames, the free
    flyer's centre-of-mass conventions), and no contact."""
    u = engine.load_universe(SCENES / "default.xml")
    talos = u.multibodies[0]
    q0 = talos.q0.copy()
    q0[2] += 2.0
    q0[3:7] = np.array([0.1, 0.2, 0.05, 1.0]) / np.linalg.norm([0.1, 0.2, 0.05, 1.0])
    u = dataclasses.replace(u, statics=(), controllers=(), multibodies=(dataclasses.replace(talos, q0=q0),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = both(u, 1, lambda s: s.runs[0].a.copy() if not len(s.contacts) else np.full(s.runs[0].model.nv, np.nan))
    assert np.abs(a["articula"]).max() > 1.0                     # something to compare: the free fall's g
    np.testing.assert_allclose(a["pybullet"], a["articula"], atol=1e-10)


def test_spherical_joints_agree_to_rounding_on_the_avatar():
    """The de Leva avatar (spherical hips, shoulders, wrists, ankles; PD torques per axis) with random joint
    velocities and no ground: one step gives the same accelerations on both engines to 1e-10 (a spherical joint's
    quaternion, angular velocity and torque are in its child frame on both)."""
    u = engine.load_universe(SCENES / "avatar.xml")
    avatar = u.multibodies[0]
    v0 = 0.3 * np.random.default_rng(0).standard_normal(avatar.model.nv)
    u = dataclasses.replace(u, statics=(), multibodies=(dataclasses.replace(avatar, v0=v0),))
    rows = both(u, 1, lambda s: [len(s.contacts), np.abs(s.runs[0].tau).max(), *s.runs[0].a])
    assert rows["articula"][0, 0] == rows["pybullet"][0, 0] == 0 and rows["articula"][0, 1] > 1.0   # PD at work
    np.testing.assert_allclose(rows["pybullet"][0, 2:], rows["articula"][0, 2:], atol=1e-10)


def test_talos_stands_on_the_default_scene_with_its_controller():
    """The default scene (Talos, stance PD, table, box) runs on pybullet with its controller: after 1 s the
    base is within 1 cm of where it started and both feet carry the weight (Σ f_z = m g within 2 %)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = engine.Simulation(engine.load_universe(SCENES / "default.xml"), engine="pybullet")
    start = sim.runs[0].q[:3].copy()
    sim.step(1000)
    assert np.linalg.norm(sim.runs[0].q[:3] - start) < 0.01
    c = sim.contacts
    feet = [k for k, name in enumerate(c.body_a) if name.startswith("talos/leg_") and c.body_b[k] == "ground"]
    assert sum(c.force[k, 2] for k in feet) == pytest.approx(sim.runs[0].model.total_mass * G, rel=0.02)


def test_external_wrench_and_state_round_trip(tmp_path):
    """A 3 N force on a 1 kg ball in zero gravity: Δv = F δt per step; ``set_state`` puts Bullet back exactly
    where the state says (the next steps repeat to the bit)."""
    u = universe(tmp_path, BALL.format(z=3.0).replace('<Body name="ground"><Plane/><Mass>0</Mass></Body>', ""),
                 settings='<Gravity x="0" y="0" z="0"/>')
    sim = engine.Simulation(u, engine="pybullet")
    sim.set_external_wrench(0, 0, [3.0, 0, 0, 0, 0, 0], [0.0, 0.0, 3.0])
    sim.step(10)
    assert sim.runs[0].v[0] == pytest.approx(10 * 3.0 * 1e-3, rel=1e-12)
    saved = sim.state
    sim.step(20)
    after = sim.runs[0].q.copy()
    sim.set_state(saved)
    np.testing.assert_array_equal(sim.runs[0].q, saved.q[0])
    sim.step(20)
    np.testing.assert_array_equal(sim.runs[0].q, after)


@pytest.mark.parametrize("scene, feature", [("drop_soles.xml", "the FEM sole under 'talos/leg_left_6_link' "
                                                                "(" + str(SCENES / "drop_soles.xml") + ":17)"),
                                            ("five_bar.xml", "the integrator 'rk4'"),
                                            ("bicycle.xml", "the rolling wheel 'bicycle/front_wheel' (" +
                                             str(SCENES / "bicycle.xml") + ":17)")])
def test_features_bullet_lacks_are_refused_with_their_line(scene, feature):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u = engine.load_universe(SCENES / scene)
    with pytest.raises(UniverseError, match="the pybullet engine cannot run this universe") as info:
        engine.Simulation(u, engine="pybullet")
    assert feature in str(info.value)


def test_rotors_restitution_and_integrators_are_refused_by_name(tmp_path):
    (tmp_path / "wheel.urdf").write_text("""<robot name="w"><link name="base"/><link name="wheel">
        <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
        </link><joint name="axle" type="continuous"><parent link="base"/><child link="wheel"/>
        <axis xyz="0 0 1"/><rotor inertia="1e-4" gear_ratio="50"/></joint></robot>""")
    u = universe(tmp_path, """<Material name="rubber" friction="0.8" restitution="0.5"/>
                              <MultiBody name="w"><File>wheel.urdf</File></MultiBody>""",
                 settings="<Integrator>rk4</Integrator>")
    with pytest.raises(UniverseError) as info:
        engine.Simulation(u, engine="pybullet")
    message = str(info.value)
    scene = tmp_path / "scene.xml"
    assert f"the integrator 'rk4' ({scene}:2)" in message
    assert f"the restitution 0.5 of material 'rubber' ({scene}:3)" in message
    assert "the motor rotor of joint 'axle' of 'w'" in message


def test_a_hinge_closure_is_refused():
    from engine.engines.bullet_model import refusals
    u = engine.load_universe(SCENES / "five_bar.xml")
    mb = u.multibodies[0]
    hinge = dataclasses.replace(mb.model.closures[0], kind="hinge")
    u = dataclasses.replace(u, multibodies=(dataclasses.replace(mb, model=dataclasses.replace(mb.model,
                                                                                              closures=(hinge,))),))
    assert any(r.startswith("the hinge closure 'O5' of 'five_bar'") for r in refusals(u))
    assert not any("closure" in r for r in refusals(engine.load_universe(SCENES / "five_bar.xml")))


def test_articula_solver_settings_are_named_in_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine.Simulation(engine.load_universe(SCENES / "default.xml"), engine="pybullet")
    assert any(f"the contact solver 'nonsmooth-newton' ({SCENES / 'default.xml'}:10) is Articula's" in
               str(w.message) for w in caught)


def test_an_unknown_engine_is_an_error_with_a_did_you_mean(tmp_path):
    with pytest.raises(UniverseError, match=r"unknown engine 'pybulet' \(did you mean 'pybullet'\?\)") as info:
        universe(tmp_path, BALL.format(z=1.0), ' engine="pybulet"')
    assert info.value.line == 2
    with pytest.raises(ValueError, match="unknown engine 'bullet'.*available: articula, pybullet"):
        engine.Simulation(universe(tmp_path, BALL.format(z=1.0)), engine="bullet")
    assert engines.names()[:2] == ["articula", "pybullet"]


def test_the_command_line_runs_a_scene_on_the_engine_it_names(tmp_path, capsys):
    from engine.cli import main
    (tmp_path / "ball.xml").write_text(f"<Universe>{BALL.format(z=1.0)}</Universe>")
    assert main(["run", str(tmp_path / "ball.xml"), "--engine", "pybullet", "--duration", "0.2"]) == 0
    assert "steps of 1 ms on the pybullet engine" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(tmp_path / "ball.xml"), "--engine", "pybulet"])
    assert exit_.value.code == 2
    assert "--engine: unknown engine 'pybulet' (did you mean 'pybullet'?)" in capsys.readouterr().err
