"""Seed 004's frame conventions in robot files (issue 14): modified DH (Khalil–Kleinfinger) joints and Euler /
Tait–Bryan origins give the same kinematics as the URDF they stand for (1e-12, and Pinocchio on the URDF);
loop closures declared in DH are checked at load; every bad value is an error naming file, line and value."""
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import engine
from engine import spatial
from engine.dynamics import forward_kinematics, frame_placement
from engine.errors import ModelError
from engine.model import Data
from engine.model.frames import EULER_ORDERS, dh_transform

ROBOTS = Path(__file__).resolve().parents[2] / "assets" / "robots"
TOL = 1e-12
LINK = ('<link name="{n}"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" '
        'izz="0.1"/></inertial></link>')


def write(tmp_path, *body, name="r"):
    """A robot file whose first element sits on line 2."""
    path = tmp_path / f"{name}.xml"
    path.write_text(f'<robot name="{name}">\n' + "\n".join(body) + "\n</robot>\n")
    return path


def joint(name="j", kind="revolute", parent="a", child="b", extra=""):
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


def placements(model, q):
    data = Data(model)
    forward_kinematics(model, data, q)
    return {name: frame_placement(model, data, k) for k, name in enumerate(model.frame_name)}


def test_puma560_dh_equals_urdf_and_pinocchio():
    """Every frame of the PUMA 560 written in modified DH (Craig 2005, §3.7) and as a hand-written URDF, at random
    configurations: identical placements to 1e-12, and Pinocchio (loading the URDF) agrees."""
    dh, urdf = engine.load_model(ROBOTS / "puma560_dh.xml"), engine.load_model(ROBOTS / "puma560.urdf")
    assert dh.frame_name == urdf.frame_name and dh.nq == urdf.nq == 6
    pm = pin.buildModelFromUrdf(str(ROBOTS / "puma560.urdf"))
    pd = pm.createData()
    rng = np.random.default_rng(560)
    for _ in range(50):
        q = rng.uniform(-np.pi, np.pi, 6)
        a, b = placements(dh, q), placements(urdf, q)
        pin.framesForwardKinematics(pm, pd, q)
        for name in dh.frame_name:
            np.testing.assert_allclose(a[name][0], b[name][0], rtol=0, atol=TOL, err_msg=name)
            np.testing.assert_allclose(a[name][1], b[name][1], rtol=0, atol=TOL, err_msg=name)
            oMf = pd.oMf[pm.getFrameId(name)]
            np.testing.assert_allclose(a[name][0], oMf.rotation, rtol=0, atol=TOL, err_msg=name)
            np.testing.assert_allclose(a[name][1], oMf.translation, rtol=0, atol=TOL, err_msg=name)


def test_puma560_closed_form_wrist_centre():
    """The wrist centre (origin of frames 4-6) of the PUMA 560 in frame 0, the last column of Craig §3.7's 0T6:
    p = (c1 (a2 c2 + a3 c23 - d4 s23) - d3 s1, s1 (a2 c2 + a3 c23 - d4 s23) + d3 c1, -a3 s23 - a2 s2 - d4 c23)."""
    a2, a3, d3, d4 = 0.4318, 0.02032, 0.14909, 0.43307
    model = engine.load_model(ROBOTS / "puma560_dh.xml")
    rng = np.random.default_rng(13)
    for _ in range(20):
        q = rng.uniform(-np.pi, np.pi, 6)
        c1, s1, c2, s2 = np.cos(q[0]), np.sin(q[0]), np.cos(q[1]), np.sin(q[1])
        c23, s23 = np.cos(q[1] + q[2]), np.sin(q[1] + q[2])
        reach = a2 * c2 + a3 * c23 - d4 * s23
        expected = [c1 * reach - d3 * s1, s1 * reach + d3 * c1, -a3 * s23 - a2 * s2 - d4 * c23]
        np.testing.assert_allclose(placements(model, q)["L6"][1], expected, rtol=0, atol=TOL)


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_dh_joint_variable(tmp_path, kind):
    """The joint variable adds to θ (revolute) or r (prismatic): the child frame at q is dh_transform at θ + q or
    r + q, tree parameters γ, b included; degrees="true" converts every angle."""
    path = write(tmp_path, LINK.format(n="a"), LINK.format(n="b"),
                 joint(kind=kind, extra='<dh gamma="20" b="0.1" alpha="-35" d="0.3" theta="50" r="0.2" '
                                        'degrees="true"/>'))
    model = engine.load_model(path)
    g, al, th = np.radians([20.0, -35.0, 50.0])
    for q in (0.0, 0.7, -1.9):
        expected = dh_transform(al, 0.3, th + q, 0.2, g, 0.1) if kind == "revolute" else \
            dh_transform(al, 0.3, th, 0.2 + q, g, 0.1)
        R, p = placements(model, np.array([q]))["b"]
        np.testing.assert_allclose(R, expected[0], rtol=0, atol=TOL)
        np.testing.assert_allclose(p, expected[1], rtol=0, atol=TOL)


def test_dh_accepts_the_thesis_name_a(tmp_path):
    one = engine.load_model(write(tmp_path, LINK.format(n="a"), LINK.format(n="b"),
                                  joint(extra='<dh alpha="0.4" a="0.3" theta="0.1" r="0.2"/>'), name="one"))
    two = engine.load_model(write(tmp_path, LINK.format(n="a"), LINK.format(n="b"),
                                  joint(extra='<dh alpha="0.4" d="0.3" theta="0.1" r="0.2"/>'), name="two"))
    np.testing.assert_array_equal(one.joint_placement_p, two.joint_placement_p)


@pytest.mark.parametrize("axes", ["intrinsic", "extrinsic"])
@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_origin_every_order(tmp_path, order, axes):
    """<origin euler order axes> places the joint at the product of elementary rotations (built here)."""
    angles = [0.3, -1.2, 2.5]
    path = write(tmp_path, LINK.format(n="a"), LINK.format(n="b"),
                 joint(kind="fixed", extra=f'<origin xyz="0.1 -0.2 0.3" euler="{angles[0]} {angles[1]} '
                                           f'{angles[2]}" order="{order}" axes="{axes}"/>'),
                 joint("k", parent="b", child="c", extra='<axis xyz="0 0 1"/>'), LINK.format(n="c"))
    model = engine.load_model(path)
    e = {"x": [1, 0, 0], "y": [0, 1, 0], "z": [0, 0, 1]}
    Rs = [spatial.rotation_axis_angle(e[a], t) for a, t in zip(order, angles)]
    expected = Rs[0] @ Rs[1] @ Rs[2] if axes == "intrinsic" else Rs[2] @ Rs[1] @ Rs[0]
    np.testing.assert_allclose(model.joint_placement_R[0], expected, rtol=0, atol=TOL)
    np.testing.assert_allclose(model.joint_placement_p[0], [0.1, -0.2, 0.3], rtol=0, atol=TOL)


def test_euler_zyx_is_urdf_rpy_and_degrees(tmp_path):
    rpy = write(tmp_path, LINK.format(n="a"), LINK.format(n="b"),
                joint(extra='<origin xyz="1 2 3" rpy="0.1 0.2 0.3"/>'), name="rpy")
    eul = write(tmp_path, LINK.format(n="a"), LINK.format(n="b"),
                joint(extra=f'<origin xyz="1 2 3" euler="{float(np.degrees(0.3))!r} {float(np.degrees(0.2))!r} '
                            f'{float(np.degrees(0.1))!r}" order="zyx" degrees="true"/>'), name="eul")
    np.testing.assert_allclose(engine.load_model(rpy).joint_placement_R, engine.load_model(eul).joint_placement_R,
                               rtol=0, atol=TOL)


FOUR_BAR = "\n".join([
    '<link name="base"/>', "{bars}",
    joint("j1", parent="base", child="b1", extra='<dh theta="90" degrees="true"/>'),
    joint("j2", parent="b1", child="b2", extra='<dh d="0.5" theta="-90" degrees="true"/>'),
    joint("j3", parent="b2", child="b3", extra='<dh d="{top}" theta="-90" degrees="true"/>'),
    '<closure name="cut" kind="{kind}" link_a="b3" link_b="base">',
    '  <dh end="a" alpha="0" d="0.5" theta="-90" r="0" degrees="true"/>',
    '  <dh end="b" alpha="0" d="0.8" theta="0" r="0"/>',
    '  <assembled joint="j1" value="0"/>',
    "</closure>"])
BARS = "\n".join(LINK.format(n=f"b{k}") for k in (1, 2, 3))


@pytest.mark.parametrize("kind", ["point", "hinge"])
def test_dh_loop_that_closes(tmp_path, kind):
    """A planar 4-bar in DH (a 0.8 x 0.5 rectangle at q = 0), cut at its fourth hinge, anchors in DH: it loads."""
    model = engine.load_model(write(tmp_path, FOUR_BAR.format(bars=BARS, top=0.8, kind=kind)))
    c = model.closures[0]
    np.testing.assert_allclose(c.p_a, [0.5, 0, 0], atol=TOL)
    np.testing.assert_allclose(c.p_b, [0.8, 0, 0], atol=TOL)


def test_dh_loop_that_does_not_close(tmp_path):
    path = write(tmp_path, FOUR_BAR.format(bars=BARS, top=0.79, kind="point"))
    with pytest.raises(ModelError, match=r"does not close .* 0\.01 m apart") as exc:
        engine.load_model(path)
    assert exc.value.file == str(path) and exc.value.line == 9 and exc.value.value == pytest.approx(0.01, abs=1e-12)


def test_five_bar_asset_is_checked(tmp_path):
    """assets/robots/five_bar.xml declares the rectangle where it closes; one degree off is reported."""
    engine.load_model(ROBOTS / "five_bar.xml")
    text = (ROBOTS / "five_bar.xml").read_text().replace('joint="j4" value="-90"', 'joint="j4" value="-89"')
    path = tmp_path / "five_bar.xml"
    path.write_text(text)
    with pytest.raises(ModelError, match="does not close") as exc:
        engine.load_model(path)
    assert exc.value.line == text.splitlines().index(next(l for l in text.splitlines() if "<closure" in l)) + 1
    assert exc.value.value == pytest.approx(0.4 * 2 * np.sin(np.radians(0.5)), rel=1e-12)


ORIGIN = 'rpy="0 0 0"'
BAD = {
    "unknown order": ('<origin euler="0 0 0" order="xxy"/>', "'order' must be one of", "xxy"),
    "upper-case order": ('<origin euler="0 0 0" order="XYZ"/>', "lower case", "XYZ"),
    "no order": ('<origin euler="0 0 0"/>', "needs the attribute 'order'", None),
    "order without euler": ('<origin rpy="0 0 0" order="zyx"/>', "goes with 'euler'", "zyx"),
    "euler count": ('<origin euler="0 0" order="zyx"/>', "needs 3 numbers", "0 0"),
    "euler non-finite": ('<origin euler="0 nan 0" order="zyx"/>', "must be finite", "0 nan 0"),
    "rpy and euler": ('<origin rpy="0 0 0" euler="0 0 0" order="zyx"/>', "not both", "0 0 0"),
    "bad axes": ('<origin euler="0 0 0" order="zyx" axes="moving"/>', "intrinsic or extrinsic", "moving"),
    "origin typo": ('<origin eular="0 0 0"/>', "did you mean 'euler'", "eular"),
    "dh and origin": ('<origin xyz="0 0 0"/><dh alpha="0"/>', "by <dh> or by <origin>", "dh"),
    "dh non-finite": ('<dh alpha="inf" d="0" theta="0" r="0"/>', "must be finite", "inf"),
    "dh count": ('<dh alpha="0 1" d="0" theta="0" r="0"/>', "needs 1 numbers", "0 1"),
    "dh unknown": ('<dh alpha="0" sigma="0"/>', "has no attribute 'sigma'", "sigma"),
    "dh a and d": ('<dh a="0.1" d="0.1"/>', "not both", "0.1"),
    "dh axis": ('<dh alpha="0"/><axis xyz="1 0 0"/>', "can only be 0 0 1", "1 0 0"),
    "two dh": ('<dh alpha="0"/><dh alpha="1"/>', "more than one <dh>", None),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_joint_frame(tmp_path, case):
    extra, message, value = BAD[case]
    path = write(tmp_path, LINK.format(n="a"), LINK.format(n="b"), joint(extra=extra))
    with pytest.raises(ModelError, match=message) as exc:
        engine.load_model(path)
    assert exc.value.file == str(path) and exc.value.line == 4 and exc.value.value == value


BAD_CLOSURE = {
    "unknown joint": ('<assembled joint="jx" value="0"/>', "names 'jx'", "jx", 5),
    "dh end": ('<dh end="c" alpha="0"/>', 'end="a" or end="b"', "c", 5),
    "dh and xyz": ('<dh end="b" alpha="0"/>', "not both", "b", 5),
    "assembled twice": ('<assembled joint="j" value="0"/><assembled joint="j" value="1"/>', "twice", "j", 5),
    "assembled value": ('<assembled joint="j" value="x"/>', "not a list of numbers", "x", 5),
    "unknown child": ('<asembled joint="j" value="0"/>', "did you mean 'assembled'", "asembled", 5),
}


@pytest.mark.parametrize("case", BAD_CLOSURE, ids=list(BAD_CLOSURE))
def test_bad_closure(tmp_path, case):
    child, message, value, line = BAD_CLOSURE[case]
    path = write(tmp_path, LINK.format(n="a"), LINK.format(n="b"), joint(),
                 f'<closure name="c" link_a="b" link_b="a" xyz_b="0 0 0">{child}</closure>')
    with pytest.raises(ModelError, match=message) as exc:
        engine.load_model(path)
    assert exc.value.file == str(path) and exc.value.line == line and exc.value.value == value
