"""Loop-closure cut forces λ and joint-reaction screws in seed 004's four conventions as signals (issue 14 part 6;
seed 003 §5.B, seed 004 §2.5), checked on a statically determinate case."""
import numpy as np
import pytest

import engine
from app.signals import CONVENTIONS, catalogue

G, M, L = 9.81, 2.0, 0.5
TILT = 0.3     # rad: the child frame is rolled about the bar (x), so that the parent and child axes differ;
               # the hinge axis stays the world's y (child axes (0, cos, −sin))

BAR = f"""<robot name="bar">
  <link name="base"/>
  <link name="bar"><inertial><origin xyz="{L / 2} 0 0"/><mass value="{M}"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.04" iyz="0" izz="0.04"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="bar"/><origin rpy="{TILT} 0 0"/>
    <axis xyz="0 {float(np.cos(TILT))!r} {float(-np.sin(TILT))!r}"/></joint>
  <closure name="tip" kind="point" link_a="bar" xyz_a="{L} 0 0" link_b="base" xyz_b="{L} 0 0"/>
</robot>"""


@pytest.fixture(scope="module")
def held_bar(tmp_path_factory):
    """A uniform bar hinged at one end and held at the other by a point closure, at rest after 0.3 s. Along the
    bar and sideways both supports hold it (statically indeterminate) but nothing loads those directions."""
    folder = tmp_path_factory.mktemp("bar")
    (folder / "bar.urdf").write_text(BAR)
    (folder / "scene.xml").write_text('<Universe><MultiBody name="bar"><File>bar.urdf</File>'
                                      '<Translation x="0" y="0" z="1"/></MultiBody></Universe>')
    universe = engine.load_universe(folder / "scene.xml")
    sim = engine.Simulation(universe)
    sim.step(300)
    return universe, sim.snapshot()


def signal(universe, group, name):
    return next(s for s in catalogue(universe) if s.group == group and s.name == name)


def test_the_closure_carries_half_the_weight(held_bar):
    """Moments about the hinge: λ_z L = m g L/2, so λ = (0, 0, m g / 2) on the bar at its tip (world axes)."""
    universe, snapshot = held_bar
    values = [signal(universe, "bar/closure tip", f"λ {axis}").value(snapshot) for axis in "xyz"]
    np.testing.assert_allclose(values, [0.0, 0.0, M * G / 2], rtol=0, atol=1e-6)


def test_the_hinge_reaction_in_the_four_conventions(held_bar):
    """The hinge carries the other half: the base pushes the bar up by m g/2 with no moment (the moments of the
    weight and of λ about the hinge cancel). EPRP (parent axes = world) is (0, 0, m g/2, 0, 0, 0); EPRE is it
    in the child axes, rolled by TILT about x; PERE and PERP are their opposites."""
    universe, snapshot = held_bar
    screw = {c: np.array([signal(universe, f"bar/joint reaction {c}", f"hinge {axis}").value(snapshot)
                          for axis in "XYZLMN"]) for c in CONVENTIONS}
    up = np.array([0.0, 0.0, M * G / 2, 0.0, 0.0, 0.0])
    c, s = np.cos(TILT), np.sin(TILT)
    in_child = np.array([0.0, s * M * G / 2, c * M * G / 2, 0.0, 0.0, 0.0])     # Rx(TILT)ᵀ (0, 0, m g/2)
    np.testing.assert_allclose(screw["EPRP"], up, rtol=0, atol=1e-6)
    np.testing.assert_allclose(screw["EPRE"], in_child, rtol=0, atol=1e-6)
    np.testing.assert_allclose(screw["PERE"], -in_child, rtol=0, atol=1e-6)
    np.testing.assert_allclose(screw["PERP"], -up, rtol=0, atol=1e-6)


@pytest.mark.parametrize("push", [0.0, 4.0])
def test_the_centre_of_pressure_of_a_pushed_box_moves_by_f_h_over_m_g(tmp_path, push):
    """A 1 kg box (0.3 × 0.2 × 0.1 m, μ = 0.9) pushed along x by a horizontal force F at its top (h = 0.1 m above
    the ground) stays put, and its centre of pressure moves forward by d = F h / (m g) (moments about the CoP:
    F h = m g d) from its centre: x = d, y = 0 in its frame."""
    (tmp_path / "box.xml").write_text("""<Universe><Material name="m" friction="0.9"/>
        <Body name="box"><Box size="0.3 0.2 0.1"/><Mass>1</Mass><Material>m</Material>
          <Translation x="0" y="0" z="0.05"/></Body>
        <Body name="ground"><Plane/><Mass>0</Mass><Material>m</Material></Body></Universe>""")
    universe = engine.load_universe(tmp_path / "box.xml")
    sim = engine.Simulation(universe)
    sim.set_external_wrench(0, 0, [push, 0, 0, 0, 0, 0], [0.0, 0.0, 0.1])
    sim.step(300)
    snapshot = sim.snapshot()
    cop = [signal(universe, "contact/box/box", f"CoP {axis} (body frame)").value(snapshot) for axis in "xy"]
    np.testing.assert_allclose(cop, [push * 0.1 / G, 0.0], rtol=0, atol=1e-6)
