"""Joint limits as rows of the contact solve (``<Solver joint_limits="constraint">``): a URDF joint's range holds,
as Signorini's condition on one row per limited joint, against closed forms; without it, nothing stops a joint."""
from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.scenes import falling

PENDULUM = """<robot name="p"><link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="0.2" upper="1.5" effort="10" velocity="10"/></joint></robot>"""
SLIDER = """<robot name="s"><link name="base"/>
  <link name="slide"><inertial><mass value="3"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
    </inertial></link>
  <joint name="rail" type="prismatic"><parent link="base"/><child link="slide"/><axis xyz="0 0 1"/>
    <limit lower="-0.1" upper="0.5" effort="10" velocity="10"/></joint></robot>"""


def scene(tmp_path, robot, joint, q0, limits="constraint", solver="nonsmooth-newton"):
    (tmp_path / "r.urdf").write_text(robot)
    (tmp_path / "s.xml").write_text(
        f'<Universe><Settings><Solver name="{solver}" tolerance="1e-12" joint_limits="{limits}"/></Settings>'
        f'<MultiBody name="r"><File>r.urdf</File><Joint name="{joint}" value="{q0}"/></MultiBody></Universe>')
    return engine.Simulation(engine.load_universe(tmp_path / "s.xml"))


@pytest.mark.parametrize("solver", ["nonsmooth-newton", "gauss-seidel-newton", "gauss-seidel"])
def test_a_pendulum_falls_onto_its_lower_limit_and_rests_there(tmp_path, solver):
    """Released at 0.6 rad, gravity pulls the arm (2 kg at 0.5 m) towards 0 and onto its lower limit 0.2 rad: it
    never passes the bound (the row lets it approach until it touches), stops there (no restitution), and the
    limit then carries the gravity torque m g l sin 0.2."""
    sim = scene(tmp_path, PENDULUM, "hinge", 0.6, solver=solver)
    lowest = np.inf
    for _ in range(1000):
        sim.step()
        lowest = min(lowest, sim.runs[0].q[0])
    assert lowest >= 0.2 - 1e-12 and sim.runs[0].q[0] == pytest.approx(0.2, abs=1e-12)
    assert abs(sim.runs[0].v[0]) < 1e-12
    cl = sim.contact_stage.closures
    (k,) = np.flatnonzero(cl.rows > 0)
    assert cl.force[k, 0] == pytest.approx(2 * 9.81 * 0.5 * np.sin(0.2), rel=1e-9)


def test_without_the_rows_the_same_pendulum_swings_through_its_range(tmp_path):
    sim = scene(tmp_path, PENDULUM, "hinge", 0.6, limits="none")
    sim.step(500)
    assert sim.runs[0].q[0] < 0.0


def test_a_slider_dropped_on_its_lower_stop_rests_at_its_weight_and_is_free_above(tmp_path):
    """A 3 kg slide on a vertical rail falls 0.3 m onto its stop at −0.1 m and rests there with the stop's force
    m g; far from both stops its row is idle, so the slide falls freely (v = −g t, as semi-implicit Euler)."""
    sim = scene(tmp_path, SLIDER, "rail", 0.2)
    sim.step(100)
    cl = sim.contact_stage.closures
    assert sim.runs[0].v[0] == pytest.approx(-9.81 * 0.1, rel=1e-12) and not cl.rows.any()
    sim.step(900)
    assert sim.runs[0].q[0] == pytest.approx(-0.1, abs=1e-12) and abs(sim.runs[0].v[0]) < 1e-12
    (k,) = np.flatnonzero(cl.rows > 0)
    assert cl.force[k, 0] == pytest.approx(3 * 9.81, rel=1e-9)


def test_talos_falling_keeps_every_joint_within_its_range(tmp_path):
    """Talos released without a controller folds as it falls; with the rows no joint leaves its URDF range (by
    more than the contact slop of 0.5 mm that the penetration correction tolerates), which it does without them.
    The rows come into use ``LIMIT_MARGIN`` before a bound, wide enough that a light joint thrown by an impact
    elsewhere (a gripper finger as the hand hits the ground) cannot cross it within one step unseen."""
    excess = {}
    for limits in ("constraint", "none"):
        (tmp_path / "talos.xml").write_text(falling(f'joint_limits="{limits}"'))
        sim = engine.Simulation(engine.load_universe(tmp_path / "talos.xml"))
        model, worst = sim.runs[0].model, 0.0
        lo, hi = model.q_lower[7:], model.q_upper[7:]
        for _ in range(800):
            sim.step()
            q = sim.runs[0].q[7:]
            worst = max(worst, float(np.max(np.maximum(lo - q, q - hi))))
        excess[limits] = worst
    assert excess["constraint"] <= 5e-4 and excess["none"] > 0.05


def test_bad_joint_limit_settings_name_the_line(tmp_path):
    (tmp_path / "r.urdf").write_text(PENDULUM)
    for attributes, words in (('name="lemke" joint_limits="constraint"', "Lemke"), ('joint_limits="on"', "none")):
        (tmp_path / "s.xml").write_text(f'<Universe><Settings>\n<Solver {attributes}/></Settings>'
                                        f'<MultiBody name="r"><File>r.urdf</File></MultiBody></Universe>')
        with pytest.raises(engine.UniverseError, match=words) as error:
            engine.load_universe(tmp_path / "s.xml")
        assert error.value.line == 2


def test_two_robots_rows_stay_their_own(tmp_path):
    """Two pendulums with friction and limit rows in one universe (the table orders every robot's friction rows
    before the limit rows): each moves bit for bit as it does alone."""
    (tmp_path / "r.urdf").write_text(PENDULUM.replace("</joint>", '<dynamics friction="0.8"/></joint>'))
    solver = '<Solver name="nonsmooth-newton" tolerance="1e-12" joint_limits="constraint" joint_friction="constraint"/>'

    def universe(name, starts):
        bodies = "".join(f'<MultiBody name="p{k}"><File>r.urdf</File><Translation x="{2 * k}" y="0" z="0"/>'
                         f'<Joint name="hinge" value="{q}"/></MultiBody>' for k, q in starts)
        (tmp_path / name).write_text(f"<Universe><Settings>{solver}</Settings>{bodies}</Universe>")
        return engine.Simulation(engine.load_universe(tmp_path / name))

    both = universe("both.xml", [(0, 0.6), (1, 1.2)])
    alone = [universe(f"alone{k}.xml", [(k, q)]) for k, q in ((0, 0.6), (1, 1.2))]
    for _ in range(600):
        for sim in (both, *alone):
            sim.step()
    for k in range(2):
        np.testing.assert_array_equal(both.runs[k].q, alone[k].runs[0].q)
    assert both.runs[0].q[0] == pytest.approx(0.2, abs=1e-9)        # the first lands on its limit
