"""Flexible joints from the universe file (engine/model/flexibility.py, seed 000 §3.7): Talos's frames unchanged at
zero deflection, the split robot against Pinocchio loading the same bush written out as a URDF, a plate hanging on
its bush against m g / k_z and √(k_z / m), controllers leaving the bush alone, and bad input."""
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import engine
from engine.control.pd import JointPD
from engine.dynamics import crba, forward_kinematics, rnea
from engine.errors import UniverseError

LEG = """<robot name="leg"><link name="base"/>
  <link name="shank"><inertial><origin xyz="0 0 -0.2"/><mass value="3"/>
    <inertia ixx="0.04" ixy="0" ixz="0" iyy="0.04" iyz="0" izz="0.005"/></inertial></link>
  <link name="foot"><inertial><origin xyz="0.03 0.01 -0.05"/><mass value="2"/>
    <inertia ixx="0.004" ixy="0.0002" ixz="0" iyy="0.007" iyz="0" izz="0.005"/></inertial>
    <collision><origin xyz="0.03 0 -0.09"/><geometry><box size="0.22 0.13 0.02"/></geometry></collision></link>
  <joint name="knee" type="revolute"><parent link="base"/><child link="shank"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="100" velocity="10"/></joint>
  <joint name="ankle" type="revolute"><parent link="shank"/><child link="foot"/><origin xyz="0 0 -0.4"/>
    <axis xyz="1 0 0"/><limit lower="-2" upper="2" effort="100" velocity="10"/></joint>
</robot>"""

# the same robot with the bush written out (plate = half the foot, same centre of mass), for Pinocchio
EXPLICIT = LEG.replace("""  <link name="foot"><inertial><origin xyz="0.03 0.01 -0.05"/><mass value="2"/>
    <inertia ixx="0.004" ixy="0.0002" ixz="0" iyy="0.007" iyz="0" izz="0.005"/></inertial>
    <collision><origin xyz="0.03 0 -0.09"/><geometry><box size="0.22 0.13 0.02"/></geometry></collision></link>""",
                       """  <link name="foot"><inertial><origin xyz="0.03 0.01 -0.05"/><mass value="1"/>
    <inertia ixx="0.002" ixy="0.0001" ixz="0" iyy="0.0035" iyz="0" izz="0.0025"/></inertial></link>
  <link name="zx"/><link name="xy"/>
  <link name="plate"><inertial><origin xyz="0.03 0.01 -0.05"/><mass value="1"/>
    <inertia ixx="0.002" ixy="0.0001" ixz="0" iyy="0.0035" iyz="0" izz="0.0025"/></inertial></link>
  <joint name="fz" type="prismatic"><parent link="foot"/><child link="zx"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="0" velocity="10"/></joint>
  <joint name="fx" type="revolute"><parent link="zx"/><child link="xy"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="0" velocity="10"/></joint>
  <joint name="fy" type="revolute"><parent link="xy"/><child link="plate"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="0" velocity="10"/></joint>""")
KZ, CZ, KX, CX, KY, CY = 5e4, 40.0, 900.0, 0.5, 1100.0, 0.7


def leg_universe(tmp_path, flexibility=f'<Flexibility link="foot" kz="{KZ}" cz="{CZ}" kx="{KX}" cx="{CX}" ky="{KY}" '
                                       f'cy="{CY}"/>', settings=""):
    (tmp_path / "leg.urdf").write_text(LEG)
    path = tmp_path / "scene.xml"
    path.write_text(f"""<Universe><Settings>{settings}</Settings>
  <MultiBody name="leg"><File>leg.urdf</File>{flexibility}</MultiBody>
</Universe>""")
    return engine.load_universe(path)


def test_talos_frames_are_unchanged_at_zero_deflection():
    scene = Path(__file__).resolve().parents[2] / "scenes/drop_flexible_ankles.xml"
    flexible = engine.load_universe(scene).multibodies[0]
    rigid = engine.load_universe(scene.with_name("drop_rigid.xml")).multibodies[0]
    rng = np.random.default_rng(3)
    q_rigid = rigid.q0.copy()
    q_rigid[7:] = rng.uniform(-0.5, 0.5, rigid.model.nq - 7)
    q_flex = engine.neutral(flexible.model)
    for j in rigid.model.joints:
        k = flexible.model.joint(j.name)
        q_flex[k.idx_q:k.idx_q + k.nq] = q_rigid[j.idx_q:j.idx_q + j.nq]
    data_r, data_f = rigid.model.create_data(), flexible.model.create_data()
    forward_kinematics(rigid.model, data_r, q_rigid)
    forward_kinematics(flexible.model, data_f, q_flex)
    for name, body, R, p in zip(rigid.model.frame_name, rigid.model.frame_body, rigid.model.frame_R,
                                rigid.model.frame_p):
        f = flexible.model.frame_index(name)
        b = flexible.model.frame_body[f]
        world_r = data_r.oMi_R[body] @ R if body >= 0 else R
        world_f = data_f.oMi_R[b] @ flexible.model.frame_R[f] if b >= 0 else flexible.model.frame_R[f]
        np.testing.assert_allclose(world_f, world_r, atol=1e-12)
    assert flexible.model.total_mass == pytest.approx(rigid.model.total_mass, rel=1e-14)


def test_the_split_leg_has_pinocchios_mass_matrix_and_inverse_dynamics(tmp_path):
    """The bush written out by hand and loaded by Pinocchio: M(q) and the joint forces at random states agree
    to 1e-9 once our springs and dampers (k q + c q̇, Pinocchio has none) are taken off."""
    model = leg_universe(tmp_path).multibodies[0].model
    (tmp_path / "explicit.urdf").write_text(EXPLICIT)
    pm = pin.buildModelFromUrdf(str(tmp_path / "explicit.urdf"))
    pd = pm.createData()
    assert model.nv == pm.nv == 5
    stiffness, damping = np.array([0, 0, KZ, KX, KY]), np.array([0, 0, CZ, CX, CY])
    np.testing.assert_array_equal(model.dof_stiffness, stiffness)
    np.testing.assert_array_equal(model.dof_damping, damping)
    rng, data = np.random.default_rng(5), model.create_data()
    for _ in range(10):
        q, v, a = rng.uniform(-0.5, 0.5, (3, 5))
        np.testing.assert_allclose(crba(model, data, q), pin.crba(pm, pd, q), atol=1e-9)
        ours = rnea(model, data, q, v, a, gravity=np.array([0, 0, -9.81])) - stiffness * q - damping * v
        np.testing.assert_allclose(ours, pin.rnea(pm, pd, q, v, a), atol=1e-9)


HANGING = """<robot name="hanging"><link name="base"/>
  <link name="foot"><inertial><origin xyz="0 0 -0.05"/><mass value="2"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.007" iyz="0" izz="0.005"/></inertial></link>
  <joint name="mount" type="fixed"><parent link="base"/><child link="foot"/></joint></robot>"""


def test_a_plate_hangs_by_m_g_over_kz_and_bounces_at_its_natural_frequency(tmp_path):
    """A foot welded to the world, its 1 kg plate (half of it, centre of mass on the bush's z axis) on
    k_z = 5e4 N/m without damping, released at zero deflection: it swings between 0 and −2 m g / k_z about the
    static deflection −m g / k_z with the half period π √(m / k_z) (rk4 at 0.1 ms)."""
    (tmp_path / "hanging.urdf").write_text(HANGING)
    (tmp_path / "scene.xml").write_text(f"""<Universe>
  <Settings><Integrator>rk4</Integrator><TimeStep>0.0001</TimeStep></Settings>
  <MultiBody name="h"><File>hanging.urdf</File>
    <Flexibility link="foot" kz="{KZ}" cz="0" kx="{KX}" cx="0" ky="{KY}" cy="0"/></MultiBody>
</Universe>""")
    sim = engine.Simulation(engine.load_universe(tmp_path / "scene.xml"))
    z = sim.runs[0].model.joint("foot_flex_z").idx_q
    period = 2 * np.pi * np.sqrt(1.0 / KZ)
    trace = []
    for _ in range(int(round(period / 1e-4))):
        sim.step(1)
        trace.append(sim.runs[0].q[z])
    trace = np.array(trace)
    static = -1.0 * 9.81 / KZ
    assert trace.min() == pytest.approx(2 * static, rel=1e-4)
    lowest = (np.argmin(trace) + 1) * 1e-4
    assert lowest == pytest.approx(period / 2, abs=1e-4)
    assert np.abs(sim.runs[0].q[[z + 1, z + 2]]).max() < 1e-12           # no tilt: the plate hangs plumb


def test_controllers_leave_the_bush_untorqued(tmp_path):
    model = leg_universe(tmp_path).multibodies[0].model
    pd = JointPD(model, engine.neutral(model), np.array([0, 0, -9.81]), kp=100.0, kd=10.0, gravity_compensation=1)
    tau = pd.control(0.0, np.full(model.nq, 0.3), np.full(model.nv, 0.2))
    assert np.all(tau[model.dof_passive] == 0.0) and np.all(tau[~model.dof_passive] != 0.0)
    assert model.dof_passive.tolist() == [False, False, True, True, True]


@pytest.mark.parametrize("element, message, got", [
    ('<Flexibility link="fot"/>', "link is not a link of leg.urdf (did you mean 'foot'?)", "(got 'fot')"),
    ('<Flexibility link="base"/>', "link 'base' has no mass to share with its sole plate", "(got 'base')"),
    ('<Flexibility link="foot" kz="-5"/>', "'kz' must be >= 0", "(got -5.0)"),
    ('<Flexibility link="foot" plate="1"/>', "plate (the sole plate's share of the link's mass) must lie in (0, 1)",
     "(got 1.0)"),
    ('<Flexibility link="foot" kq="5"/>', "has no attribute 'kq'", "(got 'kq')"),
    ('<Flexibility link="foot"/><Flexibility link="foot"/>', "link 'foot' is already flexible (line 2)",
     "(got 'foot')"),
])
def test_a_bad_flexibility_names_the_scene_line_and_the_value(tmp_path, element, message, got):
    with pytest.raises(UniverseError) as info:
        leg_universe(tmp_path, flexibility=element)
    text = str(info.value)
    assert text.startswith(f"{tmp_path / 'scene.xml'}:2: ") and message in text and got in text, text
