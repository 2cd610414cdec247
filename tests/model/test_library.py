"""The model library (assets/robots, scenes) against the seeds' published numbers: RABBIT's Table III-2 and its
planar dynamics (Chessé 2002, eq. I.32, III.18), BIP's foot geometry against (III.20), the 5-bar's static hold
and energy over 10 s, seed 004's gymnast (Table 3, Table 7) hanging at its static sag.  The 5-bar and BIP mass
matrix constants are tests/dynamics/test_seeds.py's; every scene steps 1 s in tests/simulation/test_scenes.py."""
from pathlib import Path

import numpy as np
import pytest

import engine
from engine import Simulation, load_universe
from engine.dynamics import crba, forward_kinematics, frame_placement, rnea
from tests.dynamics.test_seeds import G, ancestry, planar_tree_dynamics

ROOT = Path(__file__).resolve().parents[2]
ROBOTS, SCENES = ROOT / "assets" / "robots", ROOT / "scenes"


def universe(tmp_path, body, settings=""):
    path = tmp_path / "scene.xml"
    path.write_text(f"<Universe><Settings>{settings}</Settings>{body}</Universe>")
    return load_universe(path)


# -- RABBIT (seed 003 §3.2, Table III-2, raw L2532-2555) ------------------------------------------------------

RABBIT_TABLE = {  # segment: r (m), m (kg), a (m), b, I about the joint axis O_i (kg m^2); b = 0
    "trunk": (0.0, 20.0, 0.2, 0.0, 2.22), "left_thigh": (0.4, 6.8, 0.163, 0.0, 0.25),
    "left_tibia": (0.4, 3.2, 0.127, 0.0, 0.1), "right_thigh": (0.4, 6.8, 0.163, 0.0, 0.25),
    "right_tibia": (0.4, 3.2, 0.127, 0.0, 0.1)}


@pytest.fixture(scope="module")
def rabbit():
    return engine.load_model(ROBOTS / "rabbit.xml")


def test_rabbit_segments_are_table_III_2(rabbit):
    """Mass, CoM on the segment axis at a from the upper joint, inertia about that joint's axis
    I_O = I_G + m a^2 = the table's I, segment lengths 0.4 m, 40 kg in all; boom x, z, pitch first."""
    assert rabbit.joint_name[:3] == ("boom_x", "boom_z", "boom_pitch")
    assert [j.type for j in rabbit.joints[:3]] == [engine.JointType.PRISMATIC] * 2 + [engine.JointType.REVOLUTE]
    for name, (r, m, a, _, I) in RABBIT_TABLE.items():
        b = rabbit.body_index(name)
        assert rabbit.body_mass[b] == pytest.approx(m, abs=1e-12)
        np.testing.assert_allclose(rabbit.body_com[b], [a, 0.0, 0.0], atol=1e-12)
        assert rabbit.body_inertia_com[b][1, 1] + m * a * a == pytest.approx(I, abs=1e-12)
    for knee in ("left_knee", "right_knee"):
        np.testing.assert_allclose(rabbit.joint_placement_p[rabbit.joint(knee).body], [0.4, 0.0, 0.0])
    assert rabbit.total_mass == pytest.approx(40.0, abs=1e-12)


def test_rabbit_planar_dynamics_closed_form(rabbit):
    """At random states, the whole 7x7 M in (x, z, absolute angles theta) against the planar closed form:
    the rotational block is (I.32) about the hip (thighs and trunk hang from it, tibias from the knees), the
    translational block m I, their coupling CG(k) (-sin theta_k, cos theta_k) with CG(k) = m_k a_k + m_{>k} r_k
    (III.18); gravity forces (Annex C) likewise.  Our angles are relative, with the trunk upright and the legs
    down at q = 0: theta = C q_rot + (pi/2, 3pi/2, 3pi/2, 3pi/2, 3pi/2)."""
    sub = slice(2, 7)
    names = rabbit.body_name[sub]
    C = ancestry(rabbit)[sub, sub]
    offset = np.array([np.pi / 2] + [3 * np.pi / 2] * 4)
    r, m, a, b, I = (np.array([RABBIT_TABLE[n][k] for n in names]) for k in range(5))
    CG = m * a + (C.T @ m - m) * r
    data, rng = rabbit.create_data(), np.random.default_rng(4)

    class Rotational:  # the (I.32) helper reads body_name and body_parent of the five rotating bodies
        body_name, nbodies, body_parent = names, 5, rabbit.body_parent[sub] - 2

    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, 7)
        theta = C @ q[sub] + offset
        T = np.zeros((7, 7))
        T[:2, :2], T[2:, 2:] = np.eye(2), C          # (x, z, theta) = T q
        Tinv = np.linalg.inv(T)
        M_abs = Tinv.T @ crba(rabbit, data, q) @ Tinv
        tau_g = Tinv.T @ rnea(rabbit, data, q, np.zeros(7), np.zeros(7))
        M_rot, dV = planar_tree_dynamics(Rotational, RABBIT_TABLE, theta)
        expected = np.zeros((7, 7))
        expected[:2, :2] = 40.0 * np.eye(2)
        expected[:2, 2:] = CG * np.array([-np.sin(theta), np.cos(theta)])
        expected[2:, :2], expected[2:, 2:] = expected[:2, 2:].T, M_rot
        np.testing.assert_allclose(M_abs, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(tau_g, np.r_[0.0, 40.0 * G, dV], rtol=0, atol=1e-10)


def test_rabbit_scene_is_the_thesis_double_support(tmp_path):
    """scenes/rabbit.xml: rollers on (0, 0) and (LPAS, 0) = (0.45, 0), hip at (15.32, 70.0) cm (L3077-3100), and
    the absolute angles of the digest's inverse kinematics (§3.2: 51.255, 104.055, -48.902, -85.144 deg)."""
    u = load_universe(SCENES / "rabbit.xml")
    mb = u.multibody("rabbit")
    model, data = mb.model, mb.model.create_data()
    forward_kinematics(model, data, mb.q0)
    foot = {s: frame_placement(model, data, model.frame_index(f"{s}_foot"))[1] for s in ("left", "right")}
    np.testing.assert_allclose(foot["left"][[0, 2]], [0.0, 0.01], atol=1e-9)     # roller centres, radius 1 cm
    np.testing.assert_allclose(foot["right"][[0, 2]], [0.45, 0.01], atol=1e-9)
    hip = data.oMi_p[model.body_index("trunk")]
    np.testing.assert_allclose(hip[[0, 2]], [0.1532, 0.71], atol=1e-12)

    def angle(body, flip=False):                      # absolute angle of a segment's X_i in the x-z plane
        x = data.oMi_R[model.body_index(body)][:, 0] * (-1 if flip else 1)
        return np.degrees(np.arctan2(x[2], x[0]))

    # the thesis runs the rear leg foot-to-hip (q1 tibia O1->O2, q2 thigh O2->O3): our axes reversed
    got = [angle("left_tibia", True), angle("left_thigh", True), angle("right_thigh"), angle("right_tibia")]
    np.testing.assert_allclose(got, [51.255, 104.055, -48.902, -85.144], atol=5e-4)


# -- BIP foot geometry (seed 003 §3.3, III.20, Annex A) -----------------------------------------------------------

LPAS, DELTA, HIP = 0.5, np.radians(11.0), (0.07, 0.845)   # L4109-4125
R1, R6, L_PIED = 0.188, 0.29, 0.4314111417                 # Table III-3; l_pied is the file's choice


def test_bip_feet_are_one_triangle_and_scene_is_the_double_support():
    """Both feet are the triangle (ankle, heel, toe) with ankle-toe r1 = r7, ankle-heel r6 and heel-toe l_pied;
    at scenes/bip.xml's initial posture the thesis' closure (III.20a) |B1B1'| = 0 for LPAS = 0.5 m, the front foot
    angle (III.20b) delta = q6 + eta = 11 deg, the rear foot lies flat (its heel on the ground at -l_pied) and
    the hip is at (7.0, 84.5) cm from the rear toe (L4109-4125)."""
    u = load_universe(SCENES / "bip.xml")
    mb = u.multibody("bip")
    model, data = mb.model, mb.model.create_data()
    forward_kinematics(model, data, mb.q0)

    def point(frame):
        return frame_placement(model, data, model.frame_index(frame))[1][[0, 2]]

    rear_toe, rear_ankle = data.oMi_p[0][[0, 2]], data.oMi_p[1][[0, 2]]
    front_ankle = data.oMi_p[model.body_index("S6_front_foot")][[0, 2]]
    heel_a, heel_b, toe_b = point("rear_heel"), point("front_heel"), point("front_toe")
    for ankle, heel, toe in ((rear_ankle, heel_a, rear_toe), (front_ankle, heel_b, toe_b)):
        np.testing.assert_allclose([np.linalg.norm(toe - ankle), np.linalg.norm(heel - ankle),
                                    np.linalg.norm(toe - heel)], [R1, R6, L_PIED], atol=1e-9)
    np.testing.assert_allclose(heel_b, [LPAS - L_PIED, 0.0], atol=1e-9)          # (III.20a): B1 on B1'
    np.testing.assert_allclose(heel_a, [-L_PIED, 0.0], atol=1e-9)                # rear foot flat
    np.testing.assert_allclose(data.oMi_p[model.body_index("S7_trunk")][[0, 2]], HIP, atol=1e-9)
    x6 = data.oMi_R[model.body_index("S6_front_foot")][:, 0]
    eta = np.pi - np.arccos((R6**2 + L_PIED**2 - R1**2) / (2 * L_PIED * R6))   # (III.20b)
    assert np.arctan2(x6[2], x6[0]) + eta == pytest.approx(DELTA, abs=1e-9)


# -- the 5-bar (seed 003 §3.1, §5.A) -------------------------------------------------------------------------------

FIVE_BAR = f"""<MultiBody name="five_bar"><File>{ROBOTS / "five_bar.xml"}</File><Translation x="0" y="0" z="1"/>
    <Joint name="j1" value="{np.pi / 2}"/><Joint name="j2" value="{-np.pi / 2}"/><Joint name="j4" value="{-np.pi / 2}"/>
    </MultiBody>"""


def test_five_bar_passive_ten_seconds_closed_and_conservative():
    """scenes/five_bar.xml (passive, gravity, rk4 on the closed chain's constrained dynamics) for 10 s: the loop
    stays closed at O5 within 1e-6 m and the total energy within 1e-3 of the largest kinetic energy (§5.A)."""
    sim = Simulation(load_universe(SCENES / "five_bar.xml"))
    s4 = sim.runs[0].model.body_index("S4")

    def gap():  # O5: (0.4, 0, 0) in S4 against (0.8, 0, 0) in the base frame
        (R, p), (R0, p0) = sim.body_placement(0, s4), sim.body_placement(0, -1)
        return np.linalg.norm(R @ [0.4, 0.0, 0.0] + p - R0 @ [0.8, 0.0, 0.0] - p0)

    E0, worst, drift, kinetic = sum(sim.energy()), gap(), 0.0, 0.0
    for _ in range(10000):
        sim.step()
        (T, V), worst = sim.energy(), max(worst, gap())
        drift, kinetic = max(drift, abs(T + V - E0)), max(kinetic, T)
    assert worst <= 1e-6
    assert kinetic > 50.0 and drift <= 1e-3 * kinetic


def test_five_bar_static_hold_base_reactions_carry_the_weight(tmp_path):
    """Held by a joint PD (no gravity compensation) in its closing configuration, the 5-bar settles; the base then
    carries it through the hinge O1 (the joint wrench of rnea with the closure wrench as external force) and the
    closure O5 (the solver's force): their vertical components sum to the weight, 13 kg x 9.81 = 127.53 N (§3.1),
    and each carries a share."""
    sim = Simulation(universe(tmp_path, FIVE_BAR + '<Controller plugin="pd" target="five_bar" kp="300" kd="20"/>'))
    sim.step(3000)
    run = sim.runs[0]
    model, data = run.model, run.model.create_data()
    assert np.abs(run.v).max() < 1e-9
    rnea(model, data, run.q, run.v, np.zeros(4), f_ext=run.f_contact)
    s4 = model.body_index("S4")
    at_O1 = (data.oMi_R[0] @ data.f[0][:3])[2]
    at_O5 = (data.oMi_R[s4] @ run.f_contact[s4][:3])[2]
    assert at_O1 + at_O5 == pytest.approx(127.53, abs=1e-6)
    assert min(at_O1, at_O5) > 10.0


# -- seed 004's gymnast (§2.8, §3.3-3.4; Table 3 L1822-1832, Table 7 L1972-1987) ----------------------------------

TABLE_3 = {  # segment: mass (kg), I at the CoM (kg m^2), length (m), CoM from the bar-side joint (m)
    "head": (3.565, 0.020, 0.210, 0.081), "trunk": (17.529, 0.311, 0.428, 0.178), "arm": (1.387, 0.018, 0.290, 0.123),
    "forearm": (1.188, 0.007, 0.206, 0.112), "hand": (0.396, 0.001, 0.075, 0.0), "thigh": (4.952, 0.234, 0.419, 0.151),
    "shank": (1.089, 0.020, 0.362, 0.160), "foot": (0.990, 0.005, 0.175, 0.035)}
SPRINGS = {"bar_x": (15326, 910), "bar_z": (31983, 593), "right_shoulder_ap": (24496, 3956),
           "left_shoulder_ap": (24496, 3956), "right_shoulder_pd": (20533, 1057), "left_shoulder_pd": (20533, 1057)}
BAR_MASS = 0.675


@pytest.fixture(scope="module")
def gymnast():
    return engine.load_model(ROBOTS / "gymnast.xml")


def test_gymnast_is_table_3_on_table_7_springs(gymnast):
    """41.098 kg in 14 segments plus the 0.675 kg bar (15 bodies with mass); each segment's mass and I_yy; and,
    hanging straight (q = 0), each segment's CoM at its Table 3 distance below the bar: the lengths of the
    segments between it and the bar plus its CoM offset from its bar-side joint (the head's points back up from
    the neck).  The springs and dampers are Table 7's."""
    assert gymnast.total_mass - BAR_MASS == pytest.approx(41.098, abs=1e-12)
    assert np.count_nonzero(gymnast.body_mass) == 15
    L = {k: v[2] for k, v in TABLE_3.items()}
    arm_top = L["hand"] + L["forearm"] + L["arm"]               # the shoulders, below the bar
    depth = {"hand": 0.0, "forearm": L["hand"], "arm": L["hand"] + L["forearm"], "trunk": arm_top,
             "thigh": arm_top + L["trunk"], "shank": arm_top + L["trunk"] + L["thigh"],
             "foot": arm_top + L["trunk"] + L["thigh"] + L["shank"]}
    data = gymnast.create_data()
    forward_kinematics(gymnast, data, np.zeros(gymnast.nq))
    for body in gymnast.body_name:
        seg = body.split("_", 1)[-1]
        if seg not in TABLE_3:
            continue
        m, I, _, com = TABLE_3[seg]
        b = gymnast.body_index(body)
        assert gymnast.body_mass[b] == pytest.approx(m, abs=1e-12), body
        assert gymnast.body_inertia_com[b][1, 1] == pytest.approx(I, abs=1e-12), body
        z = (data.oMi_R[b] @ gymnast.body_com[b] + data.oMi_p[b])[2]
        expected = arm_top - com if seg == "head" else depth[seg] + com
        assert -z == pytest.approx(expected, abs=1e-12), body
    for joint, (k, c) in SPRINGS.items():
        dof = gymnast.joint(joint).idx_v
        assert (gymnast.dof_stiffness[dof], gymnast.dof_damping[dof]) == (k, c), joint


def test_gymnast_hangs_at_the_static_sag_of_the_springs(tmp_path):
    """Hanging straight, the gymnast is in equilibrium where the springs carry the weight: the bar's vertical
    spring all of it, (41.098 + 0.675) g / 31983 N/m = 12.81 mm; each shoulder's p-d spring half of what hangs
    below the shoulders, (trunk + head + legs) g / 2 / 20533 N/m = 8.40 mm; the horizontal and a-p springs
    nothing.  Started there, nothing moves for 0.3 s (a sag off by d would oscillate with amplitude d).  Time
    step 0.1 ms as scenes/gymnast.xml; a PD holds the neck, an inverted pendulum above the shoulders."""
    below = TABLE_3["trunk"][0] + TABLE_3["head"][0] + 2 * sum(TABLE_3[s][0] for s in ("thigh", "shank", "foot"))
    sag = {"bar_z": -(41.098 + BAR_MASS) * G / 31983, "left_shoulder_pd": below * G / 2 / 20533,
           "right_shoulder_pd": below * G / 2 / 20533}
    assert sag["bar_z"] == pytest.approx(-0.012813, abs=5e-7) and sag["left_shoulder_pd"] == pytest.approx(0.008398,
                                                                                                       abs=5e-7)
    model = engine.load_model(ROBOTS / "gymnast.xml")
    kp = " ".join("100" if name == "neck" else "0" for name in model.joint_name)
    joints = "".join(f'<Joint name="{name}" value="{value!r}"/>' for name, value in sag.items())
    sim = Simulation(universe(tmp_path, f'<MultiBody name="g"><File>{ROBOTS / "gymnast.xml"}</File>{joints}'
                                        f'<Translation x="0" y="0" z="2.5"/></MultiBody>'
                                        f'<Controller plugin="pd" target="g" kp="{kp}" kd="0"/>',
                              "<TimeStep>0.0001</TimeStep>"))
    sim.step(3000)
    run = sim.runs[0]
    assert np.abs(run.v).max() < 1e-9
    for name, value in sag.items():
        assert run.q[model.joint(name).idx_q] == pytest.approx(value, rel=1e-9), name
    others = [j.idx_q for j in model.joints if j.name not in sag]
    assert np.abs(run.q[others]).max() < 1e-12
