"""URDF reader, and Articula's robot XML, which is URDF plus a few extensions for what URDF cannot say.

Extensions (documented in docs/universe-format.md):

* ``<robot floating_base="true">``: the root rides a free-flyer joint unless the caller decides.
* joint types ``spherical`` (quaternion) and ``free`` (free flyer) besides URDF's own.
* inside ``<joint>``: ``<rotor inertia="j_m" transverse="i_m" gear_ratio="alpha" axis="x y z"/>`` (motor
  rotor carried by the parent link, seed 002 §2.3), ``<friction viscous="..." dry="..."/>`` (both
  reflected to the joint; URDF's ``<dynamics damping friction>`` says the same), ``<spring stiffness="..."
  reference="..."/>`` (passive flexible joint).
* top level: ``<closure name kind="point|hinge" link_a xyz_a rpy_a link_b xyz_b rpy_b tolerance/>`` loop
  closures; inside, ``<dh end="a|b" .../>`` gives an anchor in modified DH, and ``<assembled joint value/>``
  children a configuration at which the loop must close (checked at load, ``description.compile_model``).
* frame conventions of seed 004 (``engine.model.frames``): ``<origin xyz euler="β ρ φ" order="zyx"
  axes="intrinsic|extrinsic" degrees="true"/>`` (any of the 12 Euler/Tait–Bryan orders) wherever URDF has an
  ``<origin>``, and in a joint ``<dh alpha d theta r gamma b degrees/>`` (modified DH, Khalil–Kleinfinger) in
  place of ``<origin>``: the joint then moves about / along its z axis.

Every error names the file and the line. Fixed joints are merged in ``description.compile_model``.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from engine import spatial
from engine.errors import ModelError, did_you_mean
from engine.model.description import JOINT_KINDS, ClosureSpec, JointSpec, LinkSpec, RobotDescription
from engine.model.frames import EULER_ORDERS, dh_transform, euler_matrix
from engine.model.model import Geometry
from engine.model.paths import resolve_path
from engine.model.xmlutil import Reader, parse_xml

# Tags other tools put in URDFs; they describe nothing the dynamics needs.
IGNORED_ROBOT_TAGS = {"gazebo", "transmission", "ros2_control", "sensor", "plugin", "xacro:include",
                      "drake:collision_filter_group", "klampt", "mujoco", "group", "disable_collisions"}
ROBOT_TAGS = {"link", "joint", "material", "closure"}
LINK_TAGS = {"inertial", "visual", "collision"}
JOINT_TAGS = {"origin", "parent", "child", "axis", "limit", "dynamics", "mimic", "safety_controller",
              "calibration", "rotor", "friction", "spring", "dh"}
ORIGIN_ATTRIBUTES = {"xyz", "rpy", "euler", "order", "axes", "degrees"}
DH_ATTRIBUTES = {"alpha", "d", "a", "theta", "r", "gamma", "b", "degrees"}


def read_urdf(path, package_dirs=()) -> RobotDescription:
    """Read a URDF or Articula robot XML file into a ``RobotDescription``."""
    path = Path(path)
    root = parse_xml(path, ModelError)
    r = Reader(path, ModelError)
    if root.tag != "robot":
        r.fail(root, f"a robot file starts with <robot>, not <{root.tag}>{did_you_mean(root.tag, ['robot'])}",
               root.tag)
    desc = RobotDescription(name=root.get("name", path.stem), source=str(path),
                            floating_base=r.boolean(root, "floating_base", False))
    materials = {m.get("name"): _rgba(r, m) for m in root.findall("material")}
    joint_names = set()
    for el in root:
        if not isinstance(el.tag, str):
            continue
        tag = el.tag.split("}")[-1]
        if tag == "link":
            link = _link(r, el, materials, path, package_dirs)
            if link.name in desc.links:
                r.fail(el, f"duplicate link name '{link.name}'", link.name)
            desc.links[link.name] = link
        elif tag == "joint":
            joint = _joint(r, el)
            if joint.name in joint_names:
                r.fail(el, f"duplicate joint name '{joint.name}'", joint.name)
            joint_names.add(joint.name)
            desc.joints.append(joint)
        elif tag == "closure":
            desc.closures.append(_closure(r, el))
        elif tag not in IGNORED_ROBOT_TAGS:
            _check_typos(r, el.getparent(), ROBOT_TAGS | IGNORED_ROBOT_TAGS, only=el)
    if not desc.links:
        r.fail(root, "the robot has no <link>")
    mimic = [j.name for j in desc.joints if j.mimic]
    if mimic:
        warnings.warn(f"{path}: {len(mimic)} joint(s) with <mimic> ({', '.join(mimic[:3])}"
                      f"{', ...' if len(mimic) > 3 else ''}) are simulated as independent joints", stacklevel=3)
    return desc


def _check_typos(r: Reader, el, known, only=None):
    """URDF lets tools add their own tags, so an unknown tag is an error only when it looks like a misspelt
    known one (``<inertal>``); other unknown tags are ignored, as every URDF reader does."""
    for child in [only] if only is not None else el:
        if isinstance(child.tag, str) and child.tag not in known:
            hint = did_you_mean(child.tag, known, cutoff=0.8)
            if hint:
                r.fail(child, f"<{el.tag}> has no child <{child.tag}>{hint}", child.tag)


def _origin(r: Reader, el):
    """(R, p) of an ``<origin xyz rpy>`` or ``<origin xyz euler order axes degrees>`` child of ``el`` (identity
    if absent). Euler angles: ``engine.model.frames.euler_matrix``, intrinsic unless ``axes="extrinsic"``."""
    o = el.find("origin")
    if o is None:
        return np.eye(3), np.zeros(3)
    r.check_attributes(o, ORIGIN_ATTRIBUTES)
    xyz = r.floats(o, "xyz", 3, default=[0, 0, 0])
    scale = np.pi / 180.0 if r.boolean(o, "degrees", False) else 1.0
    if not r.has(o, "euler"):
        for name in ("order", "axes"):
            if r.has(o, name):
                r.fail(o, f"<origin> '{name}' goes with 'euler' angles", o.get(name))
        return spatial.rotation_rpy(*(scale * r.floats(o, "rpy", 3, default=[0, 0, 0]))), xyz
    if r.has(o, "rpy"):
        r.fail(o, "<origin> takes 'rpy' or 'euler', not both", o.get("euler"))
    euler = scale * r.floats(o, "euler", 3)
    order = r.string(o, "order", required=True)
    if order not in EULER_ORDERS:
        r.fail(o, f"<origin> 'order' must be one of {', '.join(EULER_ORDERS)} (lower case; intrinsic or "
                  f"extrinsic is said by 'axes'){did_you_mean(order.lower(), EULER_ORDERS)}", order)
    axes = r.string(o, "axes", default="intrinsic")
    if axes not in ("intrinsic", "extrinsic"):
        r.fail(o, f"<origin> 'axes' must be intrinsic or extrinsic{did_you_mean(axes, ['intrinsic', 'extrinsic'])}",
               axes)
    return euler_matrix(euler, order, intrinsic=axes == "intrinsic"), xyz


def _dh(r: Reader, el, extra=()):
    """(R, p) of a ``<dh alpha d theta r gamma b degrees>`` element: ``engine.model.frames.dh_transform``
    (``a`` is accepted for ``d``, the thesis' name; every parameter defaults to 0)."""
    r.check_attributes(el, DH_ATTRIBUTES | set(extra))
    if r.has(el, "a") and r.has(el, "d"):
        r.fail(el, "<dh> takes 'd' (Khalil–Dombre) or 'a' (the same distance, seed 004's name), not both",
               el.get("a"))
    scale = np.pi / 180.0 if r.boolean(el, "degrees", False) else 1.0
    d = r.number(el, "a" if r.has(el, "a") else "d", default=0.0)
    return dh_transform(scale * r.number(el, "alpha", default=0.0), d, scale * r.number(el, "theta", default=0.0),
                        r.number(el, "r", default=0.0), scale * r.number(el, "gamma", default=0.0),
                        r.number(el, "b", default=0.0))


def _rgba(r: Reader, material_el):
    color = material_el.find("color")
    if color is None:
        return None
    rgba = r.floats(color, "rgba", 4, default=[0.7, 0.7, 0.7, 1.0])
    return tuple(float(x) for x in rgba)


def _link(r: Reader, el, materials, path, package_dirs) -> LinkSpec:
    name = r.string(el, "name", required=True)
    _check_typos(r, el, LINK_TAGS)
    link = LinkSpec(name=name, line=el.sourceline)
    inertial = el.find("inertial")
    if inertial is not None:
        R, p = _origin(r, inertial)
        mass_el = inertial.find("mass")
        link.mass = r.number(mass_el, "value", required=True) if mass_el is not None else 0.0
        inertia_el = inertial.find("inertia")
        if inertia_el is not None:
            ixx, ixy, ixz, iyy, iyz, izz = (r.number(inertia_el, k, default=0.0)
                                            for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
            I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
            link.inertia = R @ I @ R.T  # inertial frame -> link frame, still about the CoM
        link.com = p
    for role in ("visual", "collision"):
        for k, g_el in enumerate(el.findall(role)):
            g = _geometry(r, g_el, role, f"{name}/{role}{k}", materials, path, package_dirs)
            if g is not None:
                link.geometries.append(g)
    return link


def _geometry(r: Reader, el, role, default_name, materials, path, package_dirs):
    R, p = _origin(r, el)
    shape_parent = el.find("geometry")
    if shape_parent is None or len(shape_parent) == 0:
        r.fail(el, f"<{role}> needs a <geometry> with a shape")
    shape = next(iter(c for c in shape_parent if isinstance(c.tag, str)))
    rgba = (0.7, 0.7, 0.7, 1.0)
    material = el.find("material")
    if material is not None:
        rgba = _rgba(r, material) or materials.get(material.get("name")) or rgba
    common = dict(name=el.get("name", default_name), body=-1, R=R, p=p, role=role, rgba=rgba,
                  source=f"{path}:{shape.sourceline}")
    if shape.tag == "box":
        size = r.floats(shape, "size", 3, required=True)
        return Geometry(kind="box", size=tuple(_nonneg(r, shape, size, "size")), **common)
    if shape.tag == "sphere":
        return Geometry(kind="sphere", size=(r.number(shape, "radius", required=True, nonnegative=True),), **common)
    if shape.tag in ("cylinder", "capsule"):
        return Geometry(kind=shape.tag, size=(r.number(shape, "radius", required=True, nonnegative=True),
                                              r.number(shape, "length", required=True, nonnegative=True)), **common)
    if shape.tag == "plane":  # pybullet's extension: an infinite plane through the origin, normal +z
        normal = r.floats(shape, "normal", 3, default=[0, 0, 1])
        if np.linalg.norm(normal) < 1e-12:
            r.fail(shape, "<plane> normal has zero length", normal.tolist())
        common["R"] = R @ _rotation_z_to(normal / np.linalg.norm(normal))
        return Geometry(kind="plane", size=(), **common)
    if shape.tag == "mesh":
        filename = r.string(shape, "filename", required=True)
        resolved = resolve_path(filename, path, package_dirs)
        if resolved is None:
            r.fail(shape, "mesh file not found (package:// paths are searched in the package directories, "
                          "$ARTICULA_PACKAGE_PATH, $ROS_PACKAGE_PATH and above the robot file)", filename)
        scale = r.floats(shape, "scale", default=[1, 1, 1])
        if scale.size == 1:
            scale = np.repeat(scale, 3)
        if scale.size != 3:
            r.fail(shape, "<mesh> 'scale' needs 1 or 3 numbers", shape.get("scale"))
        return Geometry(kind="mesh", size=(), mesh_path=str(resolved), mesh_scale=tuple(scale), **common)
    r.fail(shape, f"unsupported geometry <{shape.tag}>"
                  f"{did_you_mean(shape.tag, ['box', 'sphere', 'cylinder', 'capsule', 'mesh', 'plane'])}", shape.tag)


def _rotation_z_to(n):
    """A rotation taking +z to the unit vector n."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, n)
    s = np.linalg.norm(axis)
    if s < 1e-12:
        return np.eye(3) if n[2] > 0 else spatial.rotation_axis_angle([1.0, 0.0, 0.0], np.pi)
    return spatial.rotation_axis_angle(axis / s, np.arctan2(s, n[2]))


def _nonneg(r, el, values, name):
    if np.any(values < 0.0):
        r.fail(el, f"<{el.tag}> '{name}' must be >= 0", values.tolist())
    return values


def _joint(r: Reader, el) -> JointSpec:
    name = r.string(el, "name", required=True)
    kind = r.string(el, "type", required=True)
    if kind not in JOINT_KINDS:
        r.fail(el, f"joint '{name}': unsupported joint type{did_you_mean(kind, JOINT_KINDS)}", kind)
    _check_typos(r, el, JOINT_TAGS)
    parent, child = el.find("parent"), el.find("child")
    if parent is None or child is None:
        r.fail(el, f"joint '{name}' needs <parent link=...> and <child link=...>")
    dh = el.findall("dh")
    if len(dh) > 1:
        r.fail(dh[1], f"joint '{name}' has more than one <dh>")
    if dh and el.find("origin") is not None:
        r.fail(dh[0], f"joint '{name}': its frame is given by <dh> or by <origin>, not both", "dh")
    R, p = _dh(r, dh[0]) if dh else _origin(r, el)
    j = JointSpec(name=name, kind=kind, parent=r.string(parent, "link", required=True),
                  child=r.string(child, "link", required=True), line=el.sourceline, R=R, p=p)
    axis = el.find("axis")
    if axis is not None:
        j.axis = r.floats(axis, "xyz", 3, default=[1, 0, 0])
    if dh:  # Khalil–Kleinfinger: joint j moves about / along z_j
        if axis is not None and not np.allclose(j.axis / max(np.linalg.norm(j.axis), 1e-300), [0, 0, 1],
                                                rtol=0, atol=1e-12):
            r.fail(axis, f"joint '{name}' is given in modified DH, so it moves about / along z: its <axis> can "
                         f"only be 0 0 1", axis.get("xyz"))
        j.axis = np.array([0.0, 0.0, 1.0])
    limit = el.find("limit")
    if limit is not None:
        j.lower = r.number(limit, "lower", default=-np.inf if kind == "continuous" else 0.0)
        j.upper = r.number(limit, "upper", default=np.inf if kind == "continuous" else 0.0)
        j.effort = r.number(limit, "effort", default=np.inf, nonnegative=True)
        j.velocity = r.number(limit, "velocity", default=np.inf, nonnegative=True)
        if kind in ("revolute", "prismatic") and j.lower > j.upper:
            r.fail(limit, f"joint '{name}': lower limit above upper limit", (j.lower, j.upper))
        if j.effort == 0.0:  # URDF files often write effort="0" for "not given"
            j.effort = np.inf
        if j.velocity == 0.0:
            j.velocity = np.inf
    elif kind in ("revolute", "prismatic"):
        j.lower, j.upper = -np.inf, np.inf
    dynamics = el.find("dynamics")
    if dynamics is not None:
        j.damping = r.number(dynamics, "damping", default=0.0, nonnegative=True)
        j.friction = r.number(dynamics, "friction", default=0.0, nonnegative=True)
    friction = el.find("friction")
    if friction is not None:
        j.damping = r.number(friction, "viscous", default=j.damping, nonnegative=True)
        j.friction = r.number(friction, "dry", default=j.friction, nonnegative=True)
    rotor = el.find("rotor")
    if rotor is not None:
        r.check_attributes(rotor, {"inertia", "transverse", "gear_ratio", "axis"})
        j.rotor_inertia = r.number(rotor, "inertia", required=True, nonnegative=True)
        j.rotor_transverse = r.number(rotor, "transverse", default=j.rotor_inertia / 2.0, nonnegative=True)
        j.gear_ratio = r.number(rotor, "gear_ratio", default=1.0)
        if r.has(rotor, "axis"):
            j.rotor_axis = r.floats(rotor, "axis", 3)
            if np.linalg.norm(j.rotor_axis) < 1e-12:
                r.fail(rotor, f"joint '{name}': rotor axis has zero length", j.rotor_axis.tolist())
    spring = el.find("spring")
    if spring is not None:
        j.stiffness = r.number(spring, "stiffness", required=True, nonnegative=True)
        j.spring_reference = r.number(spring, "reference", default=0.0)
    if kind in ("spherical", "free"):     # per-dof damping, friction, springs and rotors are for 1-dof joints
        for e in (dynamics, friction, spring, rotor):
            for key, value in ([] if e is None else e.attrib.items()):
                if key not in ("axis", "reference") and float(value) != 0.0:
                    r.fail(e, f"joint '{name}': a {kind} joint takes no <{e.tag} {key}> (only revolute and "
                              "prismatic joints do)", value)
    j.mimic = el.find("mimic") is not None
    return j


def _closure(r: Reader, el) -> ClosureSpec:
    """A loop closure: each anchor by ``xyz_*``/``rpy_*`` or a ``<dh end="a|b">`` child (in the link's frame);
    ``<assembled joint value [degrees]>`` children name a configuration (other joints at 0) where it must close
    within ``tolerance`` (m for the anchors' gap, rad for a hinge's axes)."""
    r.check_attributes(el, {"name", "kind", "link_a", "xyz_a", "rpy_a", "link_b", "xyz_b", "rpy_b", "tolerance"})
    r.check_children(el, {"dh", "assembled"})
    name = r.string(el, "name", required=True)
    dh = {}
    for d in el.findall("dh"):
        end = d.get("end")
        if end not in ("a", "b"):
            r.fail(d, f"closure '{name}': <dh> needs end=\"a\" or end=\"b\" (the anchor it places)", end)
        if end in dh:
            r.fail(d, f"closure '{name}' has two <dh end=\"{end}\">", end)
        if r.has(el, f"xyz_{end}") or r.has(el, f"rpy_{end}"):
            r.fail(d, f"closure '{name}': anchor {end} is given by <dh> or by xyz_{end}/rpy_{end}, not both", end)
        dh[end] = _dh(r, d, extra={"end"})
    ends = {}
    for side in ("a", "b"):
        R, p = dh[side] if side in dh else (spatial.rotation_rpy(*r.floats(el, f"rpy_{side}", 3, default=[0, 0, 0])),
                                            r.floats(el, f"xyz_{side}", 3, default=[0, 0, 0]))
        ends[side] = (r.string(el, f"link_{side}", required=True), R, p)
    assembled = {}
    for a in el.findall("assembled"):
        r.check_attributes(a, {"joint", "value", "degrees"})
        joint = r.string(a, "joint", required=True)
        if joint in assembled:
            r.fail(a, f"closure '{name}': joint '{joint}' is assembled twice", joint)
        scale = np.pi / 180.0 if r.boolean(a, "degrees", False) else 1.0
        assembled[joint] = (scale * r.number(a, "value", required=True), a.sourceline)
    return ClosureSpec(name=name, kind=r.string(el, "kind", default="point"),
                       link_a=ends["a"][0], R_a=ends["a"][1], p_a=ends["a"][2],
                       link_b=ends["b"][0], R_b=ends["b"][1], p_b=ends["b"][2], line=el.sourceline,
                       assembled=assembled, tolerance=r.number(el, "tolerance", default=1e-6, positive=True))
