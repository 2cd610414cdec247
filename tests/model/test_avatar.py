"""The human avatar generator (engine/model/avatar.py): segment masses sum to the requested mass, de Leva's
published fractions, CoMs and radii of gyration come back out of the generated file, the file loads in Pinocchio
with the same M(q) to 1e-9, the per-axis PD holds the spherical joints, and bad anthropometry is refused by name."""
import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from lxml import etree

import engine
from engine import Simulation, load_universe
from engine.dynamics import crba, forward_kinematics
from engine.dynamics.integrators import random_configuration
from engine.model.avatar import add_avatar_parser, avatar_command, avatar_scene_xml, avatar_xml, pd_gains
from engine.model.model import JointType
from engine.model.pinocchio_layout import pinocchio_q

ROOT = Path(__file__).resolve().parents[2]
PERSONS = [(1.75, 70.0, "m"), (1.62, 55.0, "f"), (1.90, 95.0, "m"), (1.50, 48.0, "f")]


def write(tmp_path, height, mass, sex, name="avatar.xml", **kw):
    path = tmp_path / name
    path.write_text(avatar_xml(height, mass, sex, **kw))
    return path


@pytest.mark.parametrize("height, mass, sex", PERSONS)
def test_segment_masses_sum_to_the_requested_mass(tmp_path, height, mass, sex):
    model = engine.load_model(write(tmp_path, height, mass, sex))
    assert model.nbodies == 14
    assert model.total_mass == pytest.approx(mass, rel=1e-12)


def test_joints_are_spherical_with_quaternions_and_every_segment_has_a_capsule(tmp_path):
    model = engine.load_model(write(tmp_path, 1.75, 70.0, "m"))
    kinds = {j.name: j.type for j in model.joints}
    balls = ["neck"] + [f"{s}_{j}" for s in ("left", "right") for j in ("shoulder", "wrist", "hip", "ankle")]
    assert all(kinds[n] == JointType.SPHERICAL for n in balls)
    assert all(model.joint(n).nq == 4 for n in balls)                     # unit quaternions
    assert all(kinds[f"{s}_{j}"] == JointType.REVOLUTE for s in ("left", "right") for j in ("elbow", "knee"))
    assert kinds["root_joint"] == JointType.FREE
    capsules = [g for g in model.geometries if g.role == "collision"]
    assert sorted(g.body for g in capsules) == list(range(14)) and {g.kind for g in capsules} == {"capsule"}


# de Leva 1996 Table 4, as published: mass (% of body mass), CoM (% of length from the first endpoint), radii of
# gyration sagittal, transverse, longitudinal (% of length); a few rows of each table.
DE_LEVA_ROWS = {("m", "thigh"): (14.16, 40.95, 32.9, 32.9, 14.9), ("f", "thigh"): (14.78, 36.12, 36.9, 36.4, 16.2),
                ("m", "upper_arm"): (2.71, 57.72, 28.5, 26.9, 15.8), ("f", "shank"): (4.81, 44.16, 27.1, 26.7, 9.3),
                ("m", "trunk"): (43.46, 51.38, 32.8, 30.6, 16.9)}


@pytest.mark.parametrize("sex, segment", sorted(DE_LEVA_ROWS))
def test_de_leva_parameters_come_back_out_of_the_file(tmp_path, sex, segment):
    """Read back from the compiled model at q = 0: the segment's mass fraction (the female fractions sum to
    99.99 %, normalised), its CoM along the segment from the first endpoint, its radii of gyration about the CoM;
    the segment length is the distance between its joint and the next one (the trunk: the neck)."""
    mass = 64.0
    model = engine.load_model(write(tmp_path, 1.70, mass, sex))
    body = model.body_index(segment if segment == "trunk" else f"left_{segment}")
    child = {"thigh": "left_knee", "upper_arm": "left_elbow", "shank": "left_ankle", "trunk": "neck"}[segment]
    length = np.linalg.norm(model.joint_placement_p[model.joint(child).body])
    pct, com, *radii = DE_LEVA_ROWS[sex, segment]
    total = 99.99 if sex == "f" else 100.0
    m = model.body_mass[body]
    assert m == pytest.approx(mass * pct / total, rel=1e-12)
    first_end = np.array([0, 0, length]) if segment == "trunk" else np.zeros(3)   # the trunk runs CERV -> MIDH
    assert np.linalg.norm(model.body_com[body] - first_end) == pytest.approx(com / 100 * length, rel=1e-12)
    I = np.diag(model.body_inertia_com[body])                                     # x sagittal, y transverse, z long
    np.testing.assert_allclose(np.sqrt(I / m) / length, np.array(radii) / 100, rtol=1e-12)


@pytest.mark.parametrize("height, mass, sex", PERSONS[:2])
def test_standing_height_is_the_requested_height(tmp_path, height, mass, sex):
    """At q = 0 the capsules span from the sole (z = 0 when standing) to the vertex: the requested height."""
    model = engine.load_model(write(tmp_path, height, mass, sex), floating_base=False)
    data = model.create_data()
    forward_kinematics(model, data, engine.neutral(model))
    ends = []
    for g in model.geometries:
        if g.role == "collision":
            R, p = data.oMi_R[g.body] @ g.R, data.oMi_R[g.body] @ g.p + data.oMi_p[g.body]
            radius, length = g.size
            ends += [p[2] + abs(R[2, 2]) * length / 2 + radius, p[2] - abs(R[2, 2]) * length / 2 - radius]
    assert max(ends) - min(ends) == pytest.approx(height, abs=1e-12)


# -- Pinocchio ------------------------------------------------------------------------------------------------

def pinocchio_model(path):
    """The robot XML read into a ``pinocchio.Model`` by hand (lxml), independently of our loader: Pinocchio's URDF
    reader (urdfdom) refuses type="spherical".  Free-flyer root; children in joint-name order (urdfdom's)."""
    root = etree.parse(str(path)).getroot()
    links = {link.get("name"): link for link in root.findall("link")}
    joints = root.findall("joint")
    child_of = {j.find("child").get("link") for j in joints}
    (base,) = [name for name in links if name not in child_of]
    pm = pin.Model()

    def numbers(el, attr, default="0 0 0"):
        return np.array([float(x) for x in (el.get(attr, default) if el is not None else default).split()])

    def add(link_name, parent_id, joint_model, placement, joint_name):
        jid = pm.addJoint(parent_id, joint_model, placement, joint_name)
        inertial = links[link_name].find("inertial")
        I = inertial.find("inertia")
        inertia = np.array([[float(I.get("ixx")), float(I.get("ixy")), float(I.get("ixz"))],
                            [float(I.get("ixy")), float(I.get("iyy")), float(I.get("iyz"))],
                            [float(I.get("ixz")), float(I.get("iyz")), float(I.get("izz"))]])
        pm.appendBodyToJoint(jid, pin.Inertia(float(inertial.find("mass").get("value")),
                                              numbers(inertial.find("origin"), "xyz"), inertia), pin.SE3.Identity())
        for j in sorted((j for j in joints if j.find("parent").get("link") == link_name), key=lambda j: j.get("name")):
            origin = j.find("origin")
            R = pin.rpy.rpyToMatrix(*numbers(origin, "rpy"))
            kind = {"spherical": pin.JointModelSpherical, "revolute": None}[j.get("type")]
            model = kind() if kind else pin.JointModelRevoluteUnaligned(numbers(j.find("axis"), "xyz"))
            add(j.find("child").get("link"), jid, model, pin.SE3(R, numbers(origin, "xyz")), j.get("name"))

    add(base, 0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    return pm


@pytest.mark.parametrize("height, mass, sex", PERSONS[:2])
def test_pinocchio_loads_the_avatar_with_the_same_mass_matrix(tmp_path, height, mass, sex):
    path = write(tmp_path, height, mass, sex)
    model, pm = engine.load_model(path), pinocchio_model(path)
    assert [pm.names[i] for i in range(1, pm.njoints)] == list(model.joint_name)
    pd = pm.createData()
    assert pin.computeTotalMass(pm) == pytest.approx(mass, rel=1e-12)
    data, rng = model.create_data(), np.random.default_rng(5)
    for _ in range(10):
        q = random_configuration(model, rng)
        M_pin = pin.crba(pm, pd, pinocchio_q(model, pm, q))
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        M = crba(model, data, q)
        assert np.abs(M - M_pin).max() <= 1e-9 * max(1.0, np.abs(M_pin).max())


# -- the scene and its per-axis PD ----------------------------------------------------------------------------

def test_shipped_avatar_and_scene_are_the_generator_output():
    """assets/robots/avatar.xml and scenes/avatar.xml are what `articula avatar --height 1.75 --mass 70 --sex m
    -o assets/robots/avatar.xml --scene scenes/avatar.xml` writes."""
    robot = ROOT / "assets" / "robots" / "avatar.xml"
    assert robot.read_text() == avatar_xml(1.75, 70.0, "m")
    assert (ROOT / "scenes" / "avatar.xml").read_text() == avatar_scene_xml(robot, "../assets/robots/avatar.xml", 1.75)


@pytest.mark.parametrize("spherical", ["1", "0"])
def test_pd_brings_spherical_joints_back_axis_by_axis(tmp_path, spherical):
    """The shipped scene (pinned pelvis, pd with spherical="1" and gravity compensation) started with the left
    shoulder turned 0.3 rad about (1, 1, 0)/sqrt 2 and the right hip 0.2 rad about z: critically damped per axis at
    2 Hz, every joint is back within 1e-4 rad of q0 after 3 s; with spherical="0" the balls are passive and the
    limbs swing off."""
    scene = tmp_path / "avatar.xml"
    text = (ROOT / "scenes" / "avatar.xml").read_text().replace('spherical="1"', f'spherical="{spherical}"')
    scene.write_text(text.replace("../assets/robots/avatar.xml", str(ROOT / "assets" / "robots" / "avatar.xml")))
    sim = Simulation(load_universe(scene))
    run, model = sim.runs[0], sim.runs[0].model
    q0 = run.q.copy()
    for joint, axis, angle in (("left_shoulder", (1, 1, 0), 0.3), ("right_hip", (0, 0, 1), 0.2)):
        k = model.joint(joint).idx_q
        axis = np.array(axis, float) / np.linalg.norm(axis)
        run.q[k:k + 4] = np.r_[math.sin(angle / 2) * axis, math.cos(angle / 2)]
    sim.set_state(sim.state)
    sim.step(3000)
    error = np.abs(engine.difference(model, run.q, q0)).max()
    assert error < 1e-4 if spherical == "1" else error > 0.1


# -- bad input --------------------------------------------------------------------------------------------------

BAD = {  # arguments -> words the error must contain (the option, the value)
    "negative mass": (["--mass", "-70"], ["--mass", "-70"]),
    "zero height": (["--height", "0"], ["--height", "0.0"]),
    "segment longer than the body": (["--length", "thigh=1.9"], ["--length thigh", "longer than the body", "1.9"]),
    "negative length": (["--length", "shank=-0.4"], ["--length shank", "-0.4"]),
    "unknown segment": (["--length", "thig=0.4"], ["unknown segment 'thig'", "did you mean 'thigh'"]),
    "no room for the feet": (["--length", "trunk=0.9", "--length", "thigh=0.5"], ["no room for the feet", "--length"]),
    "length without a value": (["--length", "thigh"], ["SEGMENT=METRES", "thigh"]),
    "sex": (["--sex", "x"], ["--sex", "'x'"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_anthropometry_is_refused_by_name(case, tmp_path, capsys):
    args, words = BAD[case]
    base = {"--height": "1.75", "--mass": "70", "--sex": "m"}
    for option, value in zip(args[::2], args[1::2]):
        base.pop(option, None)
    argv = [x for kv in base.items() for x in kv] + args + ["-o", str(tmp_path / "a.xml")]
    assert avatar_command(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and all(w in err for w in words), err
    assert not (tmp_path / "a.xml").exists()


def test_command_writes_a_robot_and_a_scene_that_steps(tmp_path, capsys):
    out, scene = tmp_path / "robots" / "avatar.xml", tmp_path / "scene.xml"
    out.parent.mkdir()
    args = ["--height", "1.62", "--mass", "55", "--sex", "f", "-o", str(out), "--scene", str(scene)]
    assert avatar_command(args) == 0
    assert "wrote" in capsys.readouterr().out
    assert "<File>robots/avatar.xml</File>" in scene.read_text()
    sim = Simulation(load_universe(scene))
    sim.step(200)
    assert np.abs(sim.runs[0].v).max() < 1e-9        # q0 is held exactly: gravity compensation, no error


def test_unwritable_output_is_an_error_naming_the_file(tmp_path, capsys):
    target = tmp_path / "missing" / "avatar.xml"
    assert avatar_command(["--height", "1.75", "--mass", "70", "--sex", "m", "-o", str(target)]) == 2
    assert f"cannot write {target}" in capsys.readouterr().err


def test_capsules_carry_the_avatar_lying_on_the_ground(tmp_path):
    """Real FCL on the collision capsules: the free-flying avatar dropped on its back from 20 cm (joint PD of
    ``pd_gains`` holding its posture) comes to rest on the ground, the contacts carrying its weight, 70 x 9.81 N,
    with under 1 mm of penetration."""
    robot = ROOT / "assets" / "robots" / "avatar.xml"
    kp, kd = (" ".join(repr(float(x)) for x in k) for k in pd_gains(engine.load_model(robot, floating_base=True)))
    back = f"0 0 0.2 0 {-math.sqrt(0.5)!r} 0 {math.sqrt(0.5)!r}"          # turned -90 deg about y: face up
    path = tmp_path / "lying.xml"
    path.write_text(f"""<Universe><Settings/><MultiBody name="avatar"><File>{robot}</File>
        <FloatingBase>true</FloatingBase><Joint name="root_joint" value="{back}"/></MultiBody>
        <Body name="ground"><Plane/><Mass>0</Mass></Body>
        <Controller plugin="pd" target="avatar" spherical="1" kp="{kp}" kd="{kd}"/></Universe>""")
    sim = Simulation(load_universe(path))
    sim.step(2000)
    contacts = sim.contacts
    assert np.abs(sim.runs[0].v).max() < 1e-4
    assert contacts.force[:, 2].sum() == pytest.approx(70.0 * 9.81, rel=1e-6)
    assert np.all(contacts.depth < 1e-3)


def test_add_avatar_parser_wires_the_command_into_a_cli(tmp_path):
    """What engine/cli.py does with it: ``add_avatar_parser(subparsers)``, then ``args.run(args)``."""
    import argparse
    parser = argparse.ArgumentParser(prog="articula")
    add_avatar_parser(parser.add_subparsers(dest="command", required=True))
    out = tmp_path / "a.xml"
    args = parser.parse_args(["avatar", "--height", "1.8", "--mass", "80", "--sex", "m", "-o", str(out)])
    assert args.command == "avatar" and args.run(args) == 0
    assert engine.load_model(out).total_mass == pytest.approx(80.0, rel=1e-12)
