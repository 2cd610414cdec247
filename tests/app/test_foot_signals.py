"""Heel and toe normal forces, the centre of pressure along the sole and its margin as signals (issue 14 part 6;
seed 003 §5.C, Chessé's two-point foot), on a foot standing still on its heel and toe, a statically
determinate load split."""
import pytest

import engine
from app.signals import catalogue

G, M, L, XC, R = 9.81, 3.0, 0.2, 0.05, 0.01       # weight, mass, heel-to-toe length, CoM from the heel, sphere radius


def foot_urdf(xc):
    spheres = "".join(f'<collision><origin xyz="0 {y} 0"/><geometry><sphere radius="{R}"/></geometry></collision>'
                      for y in (-0.04, 0.04))
    return f"""<robot name="shoe">
  <link name="foot"><inertial><origin xyz="{xc} 0 0"/><mass value="{M}"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="heel">{spheres}</link>
  <link name="toe">{spheres}</link>
  <joint name="heel_point" type="fixed"><parent link="foot"/><child link="heel"/></joint>
  <joint name="toe_point" type="fixed"><parent link="foot"/><child link="toe"/><origin xyz="{L} 0 0"/></joint>
</robot>"""


@pytest.fixture(scope="module", params=[XC, L / 2, 0.17])
def standing(tmp_path_factory, request):
    """The foot at rest on its four spheres (two at the heel, two at the toe) after 0.5 s."""
    folder = tmp_path_factory.mktemp("foot")
    (folder / "shoe.urdf").write_text(foot_urdf(request.param))
    (folder / "scene.xml").write_text(
        '<Universe><MultiBody name="shoe"><File>shoe.urdf</File><FloatingBase>true</FloatingBase>'
        f'<Translation x="0" y="0" z="{R}"/></MultiBody><Body name="ground"><Plane/><Mass>0</Mass></Body>'
        '</Universe>')
    universe = engine.load_universe(folder / "scene.xml")
    sim = engine.Simulation(universe)
    sim.step(500)
    signals = {s.key: s for s in catalogue(universe)}
    return request.param, {k: signals[f"shoe/foot/{k}"].value(sim.snapshot())
                           for k in ("heel normal force", "toe normal force", "CoP from heel", "CoP margin")}


def test_the_load_splits_by_the_lever_rule(standing):
    """Moments about the heel: N_toe L = M g x_c, so N_toe = M g x_c / L and N_heel = M g (L − x_c) / L; the
    CoP is under the centre of mass, x_cop = L N_toe / (N_heel + N_toe) = x_c, inside the foot by
    min(x_c, L − x_c)."""
    xc, value = standing
    assert value["toe normal force"] == pytest.approx(M * G * xc / L, abs=1e-6)
    assert value["heel normal force"] == pytest.approx(M * G * (L - xc) / L, abs=1e-6)
    assert value["CoP from heel"] == pytest.approx(xc, abs=1e-8)
    assert value["CoP margin"] == pytest.approx(min(xc, L - xc), abs=1e-8)


def test_bip_front_foot_has_heel_and_toe_signals():
    """BIP's front foot carries the frames front_heel (B1) and front_toe (B2), its rear foot rear_heel (A1) and
    rear_toe (the pivot joint's frame at A2 = O1: the load there is the joint's reaction, not a contact)."""
    from pathlib import Path
    universe = engine.load_universe(Path(__file__).resolve().parents[2] / "scenes/bip.xml")
    keys = {s.key for s in catalogue(universe)}
    for foot in ("S6_front_foot", "S1_rear_foot"):
        assert {f"bip/{foot}/{k}" for k in ("heel normal force", "toe normal force", "CoP from heel",
                                            "CoP margin")} <= keys
