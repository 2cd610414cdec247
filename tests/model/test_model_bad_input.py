"""Malformed input gets a clear error naming the file, the line and the value — never a traceback from inside a
parser. Each case is a small broken file; the expected line is where the fault is."""
import textwrap

import numpy as np
import pytest

import engine
from engine.errors import ModelError, UniverseError
from engine.model import load_model
from engine.model.universe import universe_from_urdf
from engine.model.universe_xml import load_universe

LINK = '<link name="{n}"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial></link>'


def robot(*body, name="r"):
    """A robot file whose first element sits on line 2 (line 1 is <robot>)."""
    return f'<robot name="{name}">\n' + "\n".join(body) + "\n</robot>\n"


def joint(name="j", kind="revolute", parent="a", child="b", extra=""):
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


A, B, C = LINK.format(n="a"), LINK.format(n="b"), LINK.format(n="c")

ROBOT_CASES = {
    "truncated": ('<robot name="r">\n<link name="a">\n<inertial>', "malformed XML", 3),
    "not a robot": ('<robt name="r">\n</robt>\n', "did you mean 'robot'", 1),
    "bad number": (robot(A, B, joint(extra='<origin xyz="0 0 abc"/>')), "not a list of numbers", 4),
    "wrong count": (robot(A, B, joint(extra='<origin rpy="0 0"/>')), "needs 3 numbers", 4),
    "nan mass": (robot(LINK.format(n="a").replace('value="1"', 'value="nan"')), "must be finite", 2),
    "inf inertia": (robot(LINK.format(n="a").replace('ixx="0.1"', 'ixx="inf"')), "must be finite", 2),
    "negative mass": (robot(A, LINK.format(n="b").replace('value="1"', 'value="-2"'), joint()), "negative mass", 3),
    "zero mass mobile": (robot(A, '<link name="b"/>', joint()), "zero mass", 3),
    "not positive": (robot(A, LINK.format(n="b").replace('izz="0.1"', 'izz="-0.1"'), joint()),
                     "not positive semi-definite", 3),
    "triangle": (robot(A, LINK.format(n="b").replace('izz="0.1"', 'izz="0.5"'), joint()), "triangle inequality", 3),
    "zero axis": (robot(A, B, joint(extra='<axis xyz="0 0 0"/>')), "axis has zero length", 4),
    "cycle": (robot(A, B, joint(), joint("k", parent="b", child="a")), "cycle", 4),
    "two parents": (robot(A, B, C, joint(), joint("k", parent="c", child="b")), "two parent joints", 6),
    "undefined link": (robot(A, B, joint(child="x")), "undefined link 'x'", 4),
    "duplicate link": (robot(A, A), "duplicate link name", 3),
    "duplicate joint": (robot(A, B, C, joint(), joint(child="c")), "duplicate joint name", 6),
    "xacro leftover": (robot(A, B, joint(extra='<origin xyz="${reflect*1} 0 0"/>')), "unexpanded xacro", 4),
    "xacro find": (robot(A.replace("</link>", '<visual><geometry><mesh filename="$(find pkg)/m.stl"/></geometry>'
                                            '</visual></link>')), "unexpanded xacro", 2),
    "missing mesh": (robot(A.replace("</link>", '<visual><geometry><mesh filename="nowhere/m.stl"/></geometry>'
                                              '</visual></link>')), "mesh file not found", 2),
    "bad joint type": (robot(A, B, joint(kind="screw")), "unsupported joint type", 4),
    "misspelt tag": (robot(A.replace("<inertial>", "<inertal>").replace("</inertial>", "</inertal>")),
                     "did you mean 'inertial'", 2),
    "limits reversed": (robot(A, B, joint(extra='<limit lower="1" upper="-1"/>')), "lower limit above upper", 4),
    "no joint type": (robot(A, B, '<joint name="j"><parent link="a"/><child link="b"/></joint>'),
                      "needs the attribute 'type'", 4),
    "no parent": (robot(A, B, '<joint name="j" type="fixed"><child link="b"/></joint>'), "needs <parent", 4),
    "negative box": (robot(A.replace("</link>", '<collision><geometry><box size="1 -1 1"/></geometry>'
                                              '</collision></link>')), "must be >= 0", 2),
    "two roots": (robot(A, B), "do not form one tree", 3),
    "zero rotor axis": (robot(A, B, joint(extra='<rotor inertia="1e-4" gear_ratio="50" axis="0 0 0"/>')),
                        "rotor axis has zero length", 4),
    "spherical friction": (robot(A, B, joint(kind="spherical", extra='<dynamics damping="0" friction="0.3"/>')),
                           "a spherical joint takes no <dynamics friction>", 4),
    "spherical spring": (robot(A, B, joint(kind="spherical", extra='<spring stiffness="10"/>')),
                         "a spherical joint takes no <spring stiffness>", 4),
    "mesh scale": (robot(A.replace("</link>", '<visual><geometry><mesh filename="m.stl" scale="1 2"/></geometry>'
                                            '</visual></link>')), "needs 1 or 3 numbers", 2),
    "no links": ('<robot name="r">\n</robot>\n', "has no <link>", 1),
    "closure kind": (robot(A, B, joint(), '<closure name="c" kind="weld" link_a="a" link_b="b"/>'),
                     "'point' or 'hinge'", 5),
    "free body no inertia": (robot('<link name="a"><inertial><mass value="1"/></inertial></link>',
                                   name="r\" floating_base=\"true"), "positive definite inertia", 2),
}


@pytest.mark.parametrize("case", sorted(ROBOT_CASES))
def test_broken_robot_file(case, tmp_path):
    text, fragment, line = ROBOT_CASES[case]
    f = tmp_path / "broken.urdf"
    f.write_text(text)
    if "mesh scale" in case:
        (tmp_path / "m.stl").write_text("solid m\nendsolid m\n")
    with pytest.raises(ModelError) as err:
        load_model(f)
    message = str(err.value)
    assert fragment in message
    assert f"{f}:{line}:" in message, message


def test_missing_robot_file(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        load_model(tmp_path / "absent.urdf")


def universe(*body):
    return "<Universe>\n" + "\n".join(body) + "\n</Universe>\n"


BALL = '<Body name="ball"><Sphere radius="0.1"/><Mass>1</Mass></Body>'

UNIVERSE_CASES = {
    "misspelt tag": (universe("<MultiBdy/>"), "did you mean 'MultiBody'", 2),
    "misspelt attribute": (universe('<Body name="b"><Rotation angel="3" x="1"/></Body>'), "did you mean 'angle'", 2),
    "no robot file": (universe("<MultiBody/>"), "needs a <File>", 2),
    "robot not found": (universe("<MultiBody><File>none.urdf</File></MultiBody>"), "robot file not found", 2),
    "broken robot": (universe("<MultiBody><File>bad.urdf</File></MultiBody>"), "could not be loaded", 2),
    "negative mass": (universe('<Body name="b"><Sphere radius="1"/><Mass>-1</Mass></Body>'), "must be >= 0", 2),
    "eight inertia values": (universe('<Body name="b"><Box size="1 1 1"/><Mass>1</Mass>'
                                      '<Inertia>1 0 0 0 1 0 0 0</Inertia></Body>'), "needs 9 numbers", 2),
    "mobile mesh without inertia": (universe('<Body name="b"><File>m.stl</File><Mass>1</Mass></Body>'),
                                    "needs an <Inertia>", 2),
    "zero inertia": (universe('<Body name="b"><Box size="1 1 1"/><Mass>1</Mass>'
                              '<Inertia>0 0 0 0 0 0 0 0 0</Inertia></Body>'), "positive definite inertia", 2),
    "zero size": (universe('<Body name="b"><Box size="1 0 1"/><Mass>0</Mass></Body>'), "must be > 0", 2),
    "untrusted plugin code": (universe('<PluginModule path="evil.py"/>'), "--trust-scene-plugins", 2),
    "unknown material": (universe('<Body name="b"><Sphere radius="1"/><Material>gum</Material></Body>'),
                         "undefined material 'gum'", 2),
    "unknown integrator": (universe("<Settings><Integrator>rk5</Integrator></Settings>"), "did you mean 'rk4'", 2),
    "unknown joint": (universe("<MultiBody><File>ok.urdf</File><Joint name=\"jj\" value=\"1\"/></MultiBody>"),
                      "did you mean 'j'", 2),
    "non-unit quaternion": (universe('<MultiBody><File>free.urdf</File>'
                                     '<Joint name="root_joint" value="0 0 1 0 0 0 2"/></MultiBody>'), "unit norm", 2),
    "zero time step": (universe("<Settings><TimeStep>0</TimeStep></Settings>"), "must be > 0", 2),
    "restitution above one": (universe('<Material name="m" restitution="1.5"/>'), "restitution must be in", 2),
    "camera looks at itself": (universe('<Configurations><Camera><Translation x="1" y="0" z="0"/>'
                                        '<LookAt x="1" y="0" z="0"/></Camera></Configurations>'), "its own position", 2),
    "unknown light attribute": (universe('<Configurations><Light><LightAttribute type="glow"/></Light>'
                                         '</Configurations>'), "unknown LightAttribute", 2),
    "duplicate labels": (universe(BALL, BALL), "share the label (the first at line 2)", 3),
    "controller target": (universe(BALL, '<Controller plugin="pd" target="robot"/>'), "not a body of this", 3),
    "bad number": (universe('<Body name="b"><Translation x="one"/></Body>'), "not a list of numbers", 2),
    "truncated": ("<Universe>\n<Body>\n", "malformed XML", 3),
    "unknown solver": (universe('<Settings><Solver name="gauss-seidl"/></Settings>'), "did you mean", 2),
    "unknown delassus": (universe('<Settings><Solver delassus="chang"/></Settings>'), "unknown Delassus method", 2),
}


@pytest.mark.parametrize("case", sorted(UNIVERSE_CASES))
def test_broken_universe_file(case, tmp_path):
    text, fragment, line = UNIVERSE_CASES[case]
    (tmp_path / "bad.urdf").write_text(robot(A, B, joint(kind="screw")))
    (tmp_path / "ok.urdf").write_text(robot(A, B, joint()))
    (tmp_path / "free.urdf").write_text(robot(A, name='r" floating_base="true'))
    (tmp_path / "m.stl").write_text(textwrap.dedent("""\
        solid m
        facet normal 0 0 1
        outer loop
        vertex 0 0 0
        vertex 1 0 0
        vertex 0 1 0
        endloop
        endfacet
        endsolid m
        """))
    f = tmp_path / "scene.xml"
    f.write_text(text)
    with pytest.raises(UniverseError) as err:
        load_universe(f)
    message = str(err.value)
    assert fragment in message
    assert f"{f}:{line}:" in message, message


def test_count_of_broken_files():
    assert len(ROBOT_CASES) + len(UNIVERSE_CASES) >= 30


MESH_CASES = {   # mesh file content, scale attribute, the cause the message gives
    "corrupt text STL": (b"solid x\nfacet garbage\n", "", "holds no triangle"),
    "empty file": (b"", "", "holds no triangle"),
    "random bytes": (bytes(np.random.default_rng(3).integers(0, 256, 300, dtype=np.uint8)), "", "holds no triangle"),
    "zero scale": (b"", ' scale="0 1 1"', "scale factors must be finite and non-zero"),
}


@pytest.mark.parametrize("case", sorted(MESH_CASES))
def test_a_bad_mesh_is_reported_at_the_line_of_the_robot_file_that_uses_it(case, tmp_path):
    content, scale, cause = MESH_CASES[case]
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "part.stl").write_bytes(content)
    urdf = tmp_path / "robot.urdf"
    urdf.write_text('<robot name="r">\n<link name="base"><inertial><mass value="1"/>'
                    '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>\n'
                    f'<collision><geometry>\n<mesh filename="meshes/part.stl"{scale}/></geometry></collision>'
                    '</link>\n</robot>\n')
    with pytest.raises(engine.ModelError) as err:
        engine.Simulation(universe_from_urdf(urdf))
    message = str(err.value)
    assert message.startswith(f"{urdf}:4: collision geometry 'base/collision0': mesh ")
    assert "meshes/part.stl cannot be read" in message and cause in message
