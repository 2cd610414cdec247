"""Joint dry friction as rows of the contact solve (``<Solver joint_friction="constraint">``, issue 13's "a locked
joint with dry friction μ_d holds under |τ| < μ_d"): against closed forms, and a double pendulum against an
independent reference built on Pinocchio's M and h with the box complementarity solved by enumeration."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pinocchio as pin
import pytest

import engine
from engine import plugins
from engine.errors import UniverseError
from tests.scenes import falling

SOLVERS = ("nonsmooth-newton", "gauss-seidel-newton", "gauss-seidel")
WHEEL = """<robot name="w"><link name="base"/>
  <link name="wheel"><inertial><mass value="1"/><inertia ixx="0.25" ixy="0" ixz="0" iyy="0.5" iyz="0" izz="0.25"/>
    </inertial></link>
  <joint name="axle" type="continuous"><parent link="base"/><child link="wheel"/><axis xyz="0 1 0"/>
    <limit effort="10" velocity="20"/><dynamics friction="0.5"/></joint></robot>"""
LINK = """<link name="l{i}"><inertial><origin xyz="0 0 -0.25"/><mass value="{m}"/>
    <inertia ixx="{I}" ixy="0" ixz="0" iyy="{I}" iyz="0" izz="0.001"/></inertial></link>"""
JOINT = """<joint name="j{i}" type="revolute"><parent link="{parent}"/><child link="l{i}"/>
    <origin xyz="0 0 {z}"/><axis xyz="0 1 0"/><limit lower="-10" upper="10" effort="100" velocity="100"/>
    <dynamics friction="{b}"/></joint>"""
TORQUE = {}


@plugins.register("test-constant-torque")
class ConstantTorque:
    """τ = TORQUE["tau"] on every joint."""
    kind, stage = "controller", "control"

    def __init__(self, model):
        self.nv = model.nv

    def reset(self, q, v):
        pass

    def control(self, t, q, v):
        return np.broadcast_to(np.asarray(TORQUE["tau"], float), (self.nv,)).copy()


def scene(tmp_path, robot, solver="nonsmooth-newton", friction='joint_friction="constraint"', gravity="0 0 -9.81",
          q0=""):
    (tmp_path / "r.urdf").write_text(robot)
    x, y, z = gravity.split()
    (tmp_path / "s.xml").write_text(
        f'<Universe><Settings><Gravity x="{x}" y="{y}" z="{z}"/>\n'
        f'<Solver name="{solver}" tolerance="1e-12" max_iterations="200" {friction}/></Settings>\n'
        f'<MultiBody name="r"><File>r.urdf</File>{q0}</MultiBody>\n'
        f'<Controller plugin="test-constant-torque" target="r"/></Universe>')
    return engine.Simulation(engine.load_universe(tmp_path / "s.xml"))


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_joint_holds_under_less_torque_than_its_dry_friction_and_slides_beyond(tmp_path, solver):
    """Axle with μ_d = 0.5 N m, inertia 0.5 kg m², no gravity: under τ = 0.3 or −0.49 it does not move at all;
    under τ = 0.8 it accelerates at (τ − μ_d)/I = 0.6 rad/s², so after n steps v = 0.6 n δt exactly."""
    for tau in (0.3, -0.49):
        TORQUE["tau"] = tau
        sim = scene(tmp_path, WHEEL, solver, gravity="0 0 0")
        sim.step(500)
        assert sim.runs[0].v[0] == 0.0 and abs(sim.runs[0].q[0]) < 1e-18
        (group,) = sim.solver_stats["groups"]
        assert group.rows == 1 and group.converged
        assert sim.snapshot().closures == ()                      # friction rows are not loop closures
    TORQUE["tau"] = 0.8
    sim = scene(tmp_path, WHEEL, solver, gravity="0 0 0")
    sim.step(1000)
    assert sim.runs[0].v[0] == pytest.approx(0.6, abs=1e-12)
    assert sim.runs[0].q[0] == pytest.approx(0.6 * 1e-6 * 1000 * 1001 / 2, abs=1e-12)   # Σ δt v_k


def test_as_a_torque_the_same_friction_lets_a_loaded_joint_creep(tmp_path):
    """``joint_friction="torque"`` applies −μ_d sign(q̇) explicitly with sign(0) = 0: under 0.3 N m < μ_d the
    axle starts moving at once (what the rows cure)."""
    TORQUE["tau"] = 0.3
    sim = scene(tmp_path, WHEEL, friction='joint_friction="torque"', gravity="0 0 0")
    sim.step(100)
    assert abs(sim.runs[0].v[0]) > 1e-4


def double_pendulum(b1, b2):
    links = LINK.format(i=1, m=2.0, I=0.05) + LINK.format(i=2, m=1.0, I=0.02)
    joints = JOINT.format(i=1, parent="base", z=0.0, b=b1) + JOINT.format(i=2, parent="l1", z=-0.5, b=b2)
    return f'<robot name="p"><link name="base"/>{links}{joints}</robot>'


def reference_step(model, data, q, v, tau, bound, dt):
    """One semi-implicit Euler step with the joints' box friction: v⁺ = v + δt M⁻¹(τ − h + f), and per joint
    |f_i| ≤ b_i with v⁺_i = 0 while |f_i| < b_i, f_i = −b_i sign(v⁺_i) otherwise; the complementarity solved by
    enumerating the 3ⁿ cases (each joint sticks, or slides one way), which has exactly one solution."""
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    v_free = v + dt * np.linalg.solve(M, tau - pin.rnea(model, data, q, v, np.zeros(model.nv)))
    Minv = np.linalg.inv(M)
    n = len(v)
    for case in itertools.product((0, 1, -1), repeat=n):
        stick = [i for i in range(n) if case[i] == 0]
        f = np.array([-s * bound[i] for i, s in enumerate(case)], float)      # slides along +s: f = −s b
        if stick:                                                          # v⁺_S = 0 for the free f_S
            A = dt * Minv[np.ix_(stick, stick)]
            rhs = -(v_free + dt * Minv @ f)[stick]
            f[stick] = np.linalg.solve(A, rhs)
        v_next = v_free + dt * Minv @ f
        if all(abs(f[i]) <= bound[i] * (1 + 1e-12) if case[i] == 0 else case[i] * v_next[i] >= 0 for i in range(n)):
            return q + dt * v_next, v_next
    raise AssertionError("no case of the box complementarity holds")


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_double_pendulum_with_dry_friction_follows_the_exact_box_complementarity(tmp_path, solver):
    """Released at (1.2, −0.8) rad under gravity with μ_d = (3, 0.4) N m and a shoulder torque of 2 N m: the
    joints stick, slide and stick again (both happen in the run); 1500 steps agree with ``reference_step`` on
    Pinocchio's dynamics to 1e-9."""
    robot = double_pendulum(3.0, 0.4)
    TORQUE["tau"] = [2.0, 0.0]
    sim = scene(tmp_path, robot, solver, q0='<Joint name="j1" value="1.2"/><Joint name="j2" value="-0.8"/>')
    model = pin.buildModelFromXML(robot)
    data = model.createData()
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    q, v = np.array([1.2, -0.8]), np.zeros(2)
    stuck = [0, 0]
    for _ in range(1500):
        q, v = reference_step(model, data, q, v, np.array([2.0, 0.0]), (3.0, 0.4), 1e-3)
        sim.step()
        np.testing.assert_allclose(sim.runs[0].q, q, atol=1e-9)
        np.testing.assert_allclose(sim.runs[0].v, v, atol=1e-9)
        stuck = [s + (v[i] == 0.0) for i, s in enumerate(stuck)]
    assert 10 < stuck[0] < 1490 and 10 < stuck[1] < 1490                  # each joint both stuck and slid


def test_bad_joint_friction_settings_name_the_line(tmp_path):
    (tmp_path / "r.urdf").write_text(WHEEL)
    for attributes, words in (('name="lemke" joint_friction="constraint"', "Lemke"),
                              ('joint_friction="implicit"', "constraint")):
        (tmp_path / "s.xml").write_text(f'<Universe><Settings>\n<Solver {attributes}/></Settings>'
                                        f'<MultiBody name="r"><File>r.urdf</File></MultiBody></Universe>')
        with pytest.raises(UniverseError, match=words) as error:
            engine.load_universe(tmp_path / "s.xml")
        assert error.value.line == 2


CART = """<robot name="c"><link name="base"/>
  <link name="cart"><inertial><mass value="3"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
    </inertial><collision><geometry><box size="0.6 0.6 0.1"/></geometry></collision></link>
  <joint name="rail" type="prismatic"><parent link="base"/><child link="cart"/><origin xyz="0 0 0.5"/>
    <axis xyz="1 0 0"/><limit lower="-10" upper="10" effort="100" velocity="100"/>
    <dynamics friction="2"/></joint></robot>"""


@pytest.mark.parametrize("gx, acceleration", [(0.4, 0.0), (1.0, 0.5)])
def test_a_box_on_a_cart_and_the_carts_rail_friction_are_solved_together(tmp_path, gx, acceleration):
    """A 1 kg box (μ = 1) rests on a 3 kg cart whose rail has 2 N of dry friction; gravity leans along the rail
    by gx. The rail's row and the box's contacts are one problem (the box's weight reaches the rail through
    them): at gx = 0.4 the 4 kg pull 1.6 N < 2 N and nothing moves; at gx = 1 both accelerate together at
    (4 gx − 2)/4 = 0.5 m/s² (the box needs 0.5 N of its 9.81 N of friction)."""
    (tmp_path / "c.urdf").write_text(CART)
    (tmp_path / "s.xml").write_text(
        f'<Universe><Settings><Gravity x="{gx}" y="0" z="-9.81"/><Solver joint_friction="constraint"/></Settings>'
        '<Material name="grip" friction="1" restitution="0"/>'
        '<MultiBody name="cart"><File>c.urdf</File><Material>grip</Material></MultiBody>'
        '<Body name="box"><Box size="0.2 0.2 0.2"/><Mass>1</Mass><Translation x="0" y="0" z="0.65"/>'
        '<Material>grip</Material></Body></Universe>')
    sim = engine.Simulation(engine.load_universe(tmp_path / "s.xml"))
    sim.step(300)                                   # the box settles (it starts on the cart's top face)
    cart, box = sim.runs
    v0, w0 = cart.v[0], box.v[0]
    sim.step(200)
    assert cart.v[0] - v0 == pytest.approx(0.2 * acceleration, abs=1e-6)
    assert box.v[0] - w0 == pytest.approx(0.2 * acceleration, abs=1e-6)
    (group,) = sim.solver_stats["groups"]
    assert group.multibodies == (0, 1) and group.rows == 3 * group.contacts + 1


def test_a_fallen_robot_with_its_joints_friction_as_rows_comes_to_rest(tmp_path):
    """Talos dropped without a controller (``tests.scenes.falling``), its joints' limits and dry friction as rows,
    as MuJoCo takes them, lies still from 2.1 s on: over 2.7–3 s every velocity is zero to rounding (the rows
    hold each joint whose torque stays below μ_d), each solve converges in one Newton step at most, and most take
    none: their warm start solves the problem to rounding (``_newton_kernels.solved_at_start``); the ground carries
    the weight m g, with no horizontal force (no acceleration). With the friction as the explicit torque the same
    fall never rests: the grippers (I ≈ 1.2e-3 kg m², μ_d = 1 N m) turn their velocity round every step, ± 0.9
    rad/s, and the solves take 40–75 iterations on average (docs/architecture.md, A robot at rest needs its joints'
    friction as rows)."""
    path = tmp_path / "talos.xml"
    path.write_text(falling('name="nonsmooth-newton" joint_limits="constraint" joint_friction="constraint"'))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # <mimic> joints simulated as independent joints
        sim = engine.Simulation(engine.load_universe(path))
    run = sim.runs[0]
    sim.step(2700)
    iterations = []
    for _ in range(300):
        sim.step()
        (group,) = sim.solver_stats["groups"]
        assert group.converged and group.iterations <= 1
        assert np.abs(run.v).max() <= 1e-12
        iterations.append(group.iterations)
    assert iterations.count(0) >= 150
    contacts, forces = sim.contact_stage.contacts, sim.contact_stage.forces
    ground = forces[contacts.multibody_a != contacts.multibody_b].sum(axis=0)
    weight = run.model.total_mass * 9.81
    np.testing.assert_allclose(ground, [0.0, 0.0, weight], rtol=0, atol=1e-9 * weight)
