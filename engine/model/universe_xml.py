"""AMELIF-style universe XML (seed 000 §2, "Example XML"), with Articula's extensions.

The thesis example loads unchanged: ``Universe`` ▸ ``MultiBody`` (``File``, ``Rotation angle x y z`` in
degrees, ``Translation``), ``Body`` (``File`` mesh, ``Mass``, ``CoM``, 9-value ``Inertia``, ``Label``; mass 0 =
static), ``Configurations`` (``Camera``, ``Light`` ▸ ``LightAttribute``). The extensions (``Settings``,
``Material``, primitive shapes, ``CollisionPairs``, ``Controller``, ``Device``, ``Sensor``, ``PluginModule``) are
documented in docs/universe-format.md. Unknown tags and attributes are errors with a "did you mean" hint.
"""
from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from engine import spatial
from engine.errors import ArticulaError, UniverseError, did_you_mean
from engine.model import universe as U
from engine.model.description import LinkSpec, RobotDescription, compile_model
from engine.model.model import Geometry, JointType, neutral
from engine.model.overrides import apply_overrides
from engine.model.paths import resolve_path
from engine.model.sole_xml import sole_specs
from engine.model.xmlutil import Reader, degrees, parse_xml

UNIVERSE_TAGS = {"MultiBody", "Body", "Configurations", "Settings", "Material", "CollisionPairs", "Controller",
                 "Device", "Sensor", "PluginModule"}
MULTIBODY_TAGS = {"File", "Rotation", "Translation", "FloatingBase", "Joint", "Material", "Label", "Sole",
                  "Flexibility", "Wheel"}
SHAPES = {"Box": ("size", 3), "Sphere": ("radius", 1), "Cylinder": ("radius length", 2),
          "Capsule": ("radius length", 2), "Plane": ("", 0)}
BODY_TAGS = {"File", "Mass", "CoM", "Inertia", "Translation", "Rotation", "Label", "Material", "Color",
             "LinearVelocity", "AngularVelocity", "Scale", *SHAPES}
SETTINGS_TAGS = {"Gravity", "TimeStep", "Integrator", "Solver", "Contact", "Limits"}
DELASSUS_METHODS = ("auto", "test-force", "chang-khatib", "thesis", "dense")
INTEGRATORS = ("semi-implicit-euler", "rk4", "rk2", "explicit-euler")


def load_universe(path, trust_plugins: bool = False, overrides=None) -> U.Universe:
    """Read a universe XML file. ``PluginModule`` entries (code) load only with ``trust_plugins``;
    ``overrides``: {path: value} changed first (``engine.model.overrides``: a sweep's parameters)."""
    path = Path(path)
    root = parse_xml(path, UniverseError)
    if overrides:
        apply_overrides(root, overrides, str(path))
    r = Reader(path, UniverseError)
    if root.tag != "Universe":
        r.fail(root, f"a universe file starts with <Universe>, not <{root.tag}>", root.tag)
    r.check_attributes(root, {"name"})
    r.check_children(root, UNIVERSE_TAGS)
    for el in root.findall("PluginModule"):          # first: the settings may name a solver it registers
        _plugin_module(r, el, path, trust_plugins)
    settings = _settings(r, root.find("Settings"))
    sources = settings.pop("sources")
    materials = {"default": U.Material("default")}
    for el in root.findall("Material"):
        r.check_attributes(el, {"name", "friction", "restitution"})
        name = r.string(el, "name", required=True)
        sources[f"material:{name}"] = f"{path}:{el.sourceline}"
        materials[name] = U.Material(name, r.number(el, "friction", default=0.5, nonnegative=True),
                                     r.number(el, "restitution", default=0.0, nonnegative=True))
        if materials[name].restitution > 1.0:
            r.fail(el, "restitution must be in [0, 1]", materials[name].restitution)
    multibodies, statics, labels = [], [], {}     # multibodies: the <MultiBody>s, then the mobile <Body>s
    for el in root.findall("MultiBody") + root.findall("Body"):
        item = _multibody(r, el, path, materials) if el.tag == "MultiBody" else _body(r, el, path, materials)
        if item.name in labels:
            r.fail(el, f"two bodies share the label (the first at line {labels[item.name]})", item.name)
        labels[item.name] = el.sourceline
        (multibodies if isinstance(item, U.MultiBodyInstance) else statics).append(item)
    camera, lights = _configurations(r, root.find("Configurations"))
    plugins = {kind: tuple(_plugin(r, el, kind.lower(), labels) for el in root.findall(kind))
               for kind in ("Controller", "Device", "Sensor")}
    return U.Universe(source=str(path), name=root.get("name", path.stem), multibodies=tuple(multibodies),
                      statics=tuple(statics), materials=materials, camera=camera, lights=lights,
                      controllers=plugins["Controller"], devices=plugins["Device"], sensors=plugins["Sensor"],
                      contact=_collision_pairs(r, root.find("CollisionPairs"), settings.pop("contact"), labels),
                      sources=sources, **settings)


def _placement(r, el):
    """(R, p) from ``Rotation angle(deg) x y z`` and ``Translation x y z`` children (identity if absent)."""
    R, p = np.eye(3), np.zeros(3)
    rot = el.find("Rotation")
    if rot is not None:
        r.check_attributes(rot, {"angle", "x", "y", "z"})
        axis = np.array([r.number(rot, k, default=0.0) for k in "xyz"])
        angle = r.number(rot, "angle", default=0.0)
        if angle != 0.0 and np.linalg.norm(axis) < 1e-12:
            r.fail(rot, "rotation axis has zero length", axis.tolist())
        R = spatial.rotation_axis_angle(axis, degrees(angle))
    tr = el.find("Translation")
    if tr is not None:
        r.check_attributes(tr, {"x", "y", "z"})
        p = np.array([r.number(tr, k, default=0.0) for k in "xyz"])
    return R, p


def _text(r, el, tag, default=None):
    child = el.find(tag)
    return default if child is None else (child.text or "").strip()


def _multibody(r, el, path, materials) -> U.MultiBodyInstance:
    r.check_attributes(el, {"id", "name"})
    r.check_children(el, MULTIBODY_TAGS)
    file_el = el.find("File")
    if file_el is None:
        r.fail(el, "<MultiBody> needs a <File> (URDF or robot XML)")
    reference = (file_el.text or "").strip()
    robot = resolve_path(reference, path)
    if robot is None:
        r.fail(file_el, "robot file not found (relative to the universe file, or package://)", reference)
    floating = el.find("FloatingBase")
    floating = None if floating is None else r.boolean(floating, "value", True) if floating.get("value") \
        else _bool_text(r, floating)
    from engine.model import load_model
    try:
        flexible = el.findall("Flexibility")
        model = _flexible_model(r, flexible, robot, floating) if flexible else load_model(robot, floating_base=floating)
    except UniverseError:
        raise
    except ArticulaError as exc:
        raise UniverseError(f"<MultiBody> <File> could not be loaded: {exc}", str(path), file_el.sourceline,
                            (file_el.text or "").strip()) from None
    R, p = _placement(r, el)
    q0, v0 = neutral(model), np.zeros(model.nv)
    for j_el in el.findall("Joint"):
        _initial_joint(r, j_el, model, q0, v0)
    name = el.get("name") or _text(r, el, "Label") or model.name
    material = _material(r, el, materials)
    if material != "default":  # the scene's material for the geometries the robot file leaves at "default"
        model = replace(model, geometries=tuple(replace(g, material=material) if g.material == "default" else g
                                                for g in model.geometries))
    soles = sole_specs(r, el, path, model, name, material, materials, _placement)
    wheels = tuple(_wheel(r, w, model, path) for w in el.findall("Wheel"))
    return U.MultiBodyInstance(name=name, model=model, R=R, p=p, q0=q0, v0=v0, soles=soles, wheels=wheels)


def _wheel(r, el, model, path) -> U.WheelSpec:
    """``<Wheel link="front_wheel" radius="0.35" axis="0 1 0"/>``: a thin disk centred on the link's origin, rolling
    without slipping on the universe's ground plane (engine/dynamics/rolling.py); ``restitution`` ε_N ∈ [0, 1] and
    ``tangential`` ε_T ∈ [−1, 1] (default 0, plastic) are its Newton impact law under ``<Settings events="on">``
    (engine/rolling/, seed 001 eq. 3.12); ``project="true"``: a start off the constraints is projected onto them
    (with a warning) instead of refused."""
    r.check_attributes(el, {"link", "radius", "axis", "restitution", "tangential", "project"})
    link = r.string(el, "link", required=True)
    if link not in model.body_name:
        r.fail(el, f"the robot has no link '{link}'{did_you_mean(link, model.body_name)}", link)
    axis = r.floats(el, "axis", 3, required=True)
    if np.linalg.norm(axis) < 1e-12:
        r.fail(el, "the wheel's spin axis has zero length", axis.tolist())
    eps_n, eps_t = r.number(el, "restitution", 0.0), r.number(el, "tangential", 0.0)
    if not 0.0 <= eps_n <= 1.0:
        r.fail(el, "a wheel's normal restitution must lie in [0, 1]", eps_n)
    if not -1.0 <= eps_t <= 1.0:
        r.fail(el, "a wheel's tangential restitution must lie in [-1, 1]", eps_t)
    body, axis = model.body_name.index(link), axis / np.linalg.norm(axis)
    radius = r.number(el, "radius", required=True, positive=True)
    _check_wheel_link(r, el, model, body, axis, radius)
    return U.WheelSpec(body=body, radius=radius, axis=axis, source=f"{path}:{el.sourceline}",
                       project=r.boolean(el, "project", False), restitution=(eps_n, eps_t))


def _check_wheel_link(r, el, model, body, axis, radius):
    """A wheel spins on a revolute joint about its own axis, and its shapes are disks: cylinders of its radius,
    their z along the axis, centred on the link's origin (seed 001 §2.4: the wheel is the disk the contact
    closed forms assume), visual only (a collision shape would meet the ground in the contact stage as well)."""
    link = model.body_name[body]
    if model.joint_type[body] != JointType.REVOLUTE:
        r.fail(el, f"the wheel '{link}' must turn on a revolute (or continuous) joint", JointType(
            model.joint_type[body]).name.lower())
    joint_axis = np.asarray(model.joint_axis[body], float)
    if np.linalg.norm(np.cross(axis, joint_axis)) > 1e-9:
        r.fail(el, f"the wheel's spin axis is not the axis {joint_axis.tolist()} of its joint "
                   f"'{model.joint_name[body]}'", axis.tolist())
    for g in (g for g in model.geometries if g.body == body):
        if g.role == "collision":   # the contact stage would press it on the ground too: λ < 0, energy gained
            r.fail(el, f"the wheel '{link}' has a collision {g.kind} ({g.source or 'in its robot file'}): its rolling "
                       f"constraint is its contact with the ground; give a wheel visual shapes only", g.name)
        disk = (g.kind == "cylinder" and abs(g.size[0] - radius) <= 1e-9 * radius
                and np.linalg.norm(np.cross(g.R[:, 2], axis)) <= 1e-9 and np.linalg.norm(g.p) <= 1e-9)
        if not disk:
            r.fail(el, f"the wheel '{link}' has a {g.role} {g.kind} ({g.source or 'in its robot file'}): a wheel's "
                       f"shapes must be disks (cylinders of radius {radius:g} about its axis, at its origin)",
                   (g.kind, tuple(float(x) for x in g.size)))


def _flexible_model(r, elements, robot, floating):
    """The robot with a sole plate hanging by a passive 3-DOF bush under each ``<Flexibility link kz cz kx cx
    ky cy plate>`` link (engine/model/flexibility.py; missing values take its DEFAULTS)."""
    from engine.model.flexibility import DEFAULTS, insert_flexibility
    from engine.model.urdf import read_urdf
    desc = read_urdf(robot)
    seen = {}
    for f in elements:
        r.check_attributes(f, {"link", *DEFAULTS})
        link = r.string(f, "link", required=True)
        if link not in desc.links:
            r.fail(f, f"<Flexibility> link is not a link of {robot.name}{did_you_mean(link, desc.links)}", link)
        if desc.links[link].mass <= 0.0:
            r.fail(f, f"<Flexibility> link {link!r} has no mass to share with its sole plate", link)
        if link in seen:
            r.fail(f, f"link {link!r} is already flexible (line {seen[link]})", link)
        seen[link] = f.sourceline
        gains = {k: r.number(f, k, default=v, nonnegative=True) for k, v in DEFAULTS.items()}
        if not 0.0 < gains["plate"] < 1.0:
            r.fail(f, "<Flexibility> plate (the sole plate's share of the link's mass) must lie in (0, 1)",
                   gains["plate"])
        insert_flexibility(desc, link, gains, f.sourceline)
    return compile_model(desc, floating)


def _bool_text(r, el):
    text = (el.text or "true").strip().lower()
    if text not in ("true", "false", "1", "0"):
        r.fail(el, "<FloatingBase> must be true or false", text)
    return text in ("true", "1")


def _initial_joint(r, el, model, q0, v0):
    """``<Joint name="knee" value="0.3" velocity="1.5"/>`` sets the initial configuration of one joint (nq values)
    and, optionally, its initial velocity (nv values: a free joint's (v, ω) in its body frame)."""
    r.check_attributes(el, {"name", "value", "velocity"})
    name = r.string(el, "name", required=True)
    try:
        joint = model.joint(name)
    except KeyError:
        r.fail(el, f"the robot has no joint '{name}'{did_you_mean(name, [j.name for j in model.joints])}", name)
    if el.get("value") is not None:
        value = r.floats(el, "value", joint.nq, required=True)
        if joint.type in (JointType.SPHERICAL, JointType.FREE):
            quat = value[-4:]
            if abs(np.linalg.norm(quat) - 1.0) > 1e-6:
                r.fail(el, f"joint '{name}': the quaternion (x, y, z, w) must have unit norm", quat.tolist())
        q0[joint.idx_q:joint.idx_q + joint.nq] = value
    if el.get("velocity") is not None:
        v0[joint.idx_v:joint.idx_v + joint.nv] = r.floats(el, "velocity", joint.nv, required=True)


def _material(r, el, materials):
    name = _text(r, el, "Material", "default")
    if name not in materials:
        r.fail(el.find("Material"), f"undefined material '{name}'{did_you_mean(name, materials)}", name)
    return name


def _body(r, el, path, materials):
    """A ``Body``: mass 0 → a static body; mass > 0 → a free-floating single-body multibody."""
    r.check_attributes(el, {"id", "name"})
    r.check_children(el, BODY_TAGS)
    name = el.get("name") or _text(r, el, "Label") or f"body{el.get('id', len(el.getparent()))}"
    R, p = _placement(r, el)
    material = _material(r, el, materials)
    geometries = _body_geometries(r, el, path, name, material)
    mass_el = el.find("Mass")
    mass = r.number(mass_el, None, text=True, default=0.0, nonnegative=True) if mass_el is not None else 0.0
    if mass == 0.0:
        placed = tuple(replace(g, body=-1, R=R @ g.R, p=R @ g.p + p) for g in geometries)
        return U.StaticBody(name=name, geometries=placed)
    com = r.floats(el.find("CoM"), None, 3, text=True) if el.find("CoM") is not None else np.zeros(3)
    inertia_el = el.find("Inertia")
    if inertia_el is not None:
        inertia = r.floats(inertia_el, None, 9, text=True).reshape(3, 3)
    else:
        inertia = _shape_inertia(r, el, geometries, mass)
    link = LinkSpec(name=name, line=el.sourceline, mass=mass, com=com, inertia=inertia, geometries=list(geometries))
    desc = RobotDescription(name=name, source=str(path), links={name: link}, floating_base=True)
    try:
        model = compile_model(desc)
    except ArticulaError as exc:
        raise UniverseError(exc.message, str(path), el.sourceline, exc.value) from None
    q0 = neutral(model)
    q0[:3], q0[3:7] = p, spatial.rotation_to_quaternion(R)
    v0 = np.zeros(6)
    for tag, sl in (("LinearVelocity", slice(0, 3)), ("AngularVelocity", slice(3, 6))):
        if el.find(tag) is not None:
            v0[sl] = R.T @ r.floats(el.find(tag), None, 3, text=True)  # given in the world, stored in body frame
    return U.MultiBodyInstance(name=name, model=model, R=np.eye(3), p=np.zeros(3), q0=q0, v0=v0)


def _body_geometries(r, el, path, name, material):
    rgba = tuple(r.floats(el.find("Color"), None, 4, text=True)) if el.find("Color") is not None \
        else (0.7, 0.7, 0.7, 1.0)
    shapes = []
    for tag, (attrs, n) in SHAPES.items():
        for s in el.findall(tag):
            r.check_attributes(s, {*attrs.split(), "xyz", "rpy"})
            if tag == "Box":
                size = r.floats(s, "size", n, required=True)
            else:
                size = np.array([r.number(s, a, required=True) for a in attrs.split()])
            if np.any(size <= 0.0):
                r.fail(s, f"<{tag}> dimensions must be > 0", size.tolist())
            gR = spatial.rotation_rpy(*r.floats(s, "rpy", 3, default=[0, 0, 0]))
            shapes.append(Geometry(name=f"{name}/{tag.lower()}{len(shapes)}", body=0, kind=tag.lower(),
                                   size=tuple(size), R=gR, p=r.floats(s, "xyz", 3, default=[0, 0, 0]),
                                   rgba=rgba, material=material))
    file_el = el.find("File")
    if file_el is not None:
        mesh = resolve_path((file_el.text or "").strip(), path)
        if mesh is None:
            r.fail(file_el, "mesh file not found (relative to the universe file, or package://)",
                   (file_el.text or "").strip())
        scale = r.floats(el.find("Scale"), None, 3, text=True) if el.find("Scale") is not None else np.ones(3)
        shapes.append(Geometry(name=f"{name}/mesh", body=0, kind="mesh", size=(), R=np.eye(3), p=np.zeros(3),
                               mesh_path=str(mesh), mesh_scale=tuple(scale), rgba=rgba, material=material,
                               source=f"{path}:{file_el.sourceline}"))
    return shapes


def _shape_inertia(r, el, geometries, mass):
    """Uniform-density inertia about the CoM for a body made of one primitive (no ``Inertia`` given)."""
    prims = [g for g in geometries if g.kind in ("box", "sphere", "cylinder")]
    if len(prims) != 1 or len(geometries) != 1:
        r.fail(el, "a mobile <Body> needs an <Inertia> unless it is a single Box, Sphere or Cylinder")
    g = prims[0]
    if g.kind == "box":
        x, y, z = g.size
        I = mass / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])
    elif g.kind == "sphere":
        I = 0.4 * mass * g.size[0] ** 2 * np.eye(3)
    else:
        rad, h = g.size
        side = mass * (3 * rad * rad + h * h) / 12.0
        I = np.diag([side, side, 0.5 * mass * rad * rad])
    return g.R @ I @ g.R.T


def _settings(r, el) -> dict:
    """The ``<Settings engine="...">`` children; ``sources``: the file:line of the engine, integrator and solver
    it sets (an engine that cannot run them names the line)."""
    out = {"contact": U.ContactSettings(), "sources": {}}
    if el is None:
        return out
    r.check_children(el, SETTINGS_TAGS)
    r.check_attributes(el, {"engine", "events", "rolling"})
    if el.get("events") is not None:
        if el.get("events") not in ("on", "off"):
            r.fail(el, "<Settings> 'events' must be on or off", el.get("events"))
        out["wheel_events"] = el.get("events") == "on"
    if el.get("rolling") is not None:
        if el.get("rolling") not in ("rk4", "abm4"):
            r.fail(el, "<Settings> 'rolling' (the integrator of wheels on the ground) must be rk4 or abm4",
                   el.get("rolling"))
        if el.get("rolling") == "abm4" and out.get("wheel_events"):
            r.fail(el, "<Settings> rolling=\"abm4\" is for wheels that stay on the ground; the event-driven loop "
                       "(events=\"on\") integrates with rk4", el.get("rolling"))
        out["rolling_integrator"] = el.get("rolling")
    where = lambda e: f"{r.path}:{e.sourceline}"  # noqa: E731
    if el.get("engine") is not None:
        from engine import engines
        try:
            engines.engine_class(el.get("engine"))
        except ValueError as exc:
            r.fail(el, str(exc), el.get("engine"))
        out["engine"], out["sources"]["engine"] = el.get("engine"), where(el)
    if el.find("Gravity") is not None:
        g = el.find("Gravity")
        r.check_attributes(g, {"x", "y", "z"})
        out["gravity"] = np.array([r.number(g, k, default=0.0) for k in "xyz"])
    if el.find("TimeStep") is not None:
        step = out["time_step"] = r.number(el.find("TimeStep"), None, text=True, positive=True)
        if not U.SANE_TIME_STEP[0] <= step <= U.SANE_TIME_STEP[1]:
            warnings.warn(f"{r.path}:{el.find('TimeStep').sourceline}: time step {step:g} s is outside the usual "
                          f"range [{U.SANE_TIME_STEP[0]:g}, {U.SANE_TIME_STEP[1]:g}] s", UserWarning, stacklevel=2)
    if el.find("Integrator") is not None:
        name = _text(r, el, "Integrator")
        if name not in INTEGRATORS:
            r.fail(el.find("Integrator"), f"unknown integrator{did_you_mean(name, INTEGRATORS)}", name)
        out["integrator"], out["sources"]["integrator"] = name, where(el.find("Integrator"))
    s = el.find("Solver")
    if s is not None:
        r.check_attributes(s, {"name", "tolerance", "max_iterations", "time_budget", "facets", "delassus",
                               "joint_friction", "joint_limits"})
        d = U.SolverSettings()
        from engine.contact.solvers import solver_name
        try:
            name = solver_name(r.string(s, "name", d.name))
        except ValueError as exc:
            r.fail(s, str(exc), s.get("name"))
        delassus = r.string(s, "delassus", d.delassus)
        if delassus not in DELASSUS_METHODS:
            r.fail(s, f"unknown Delassus method{did_you_mean(delassus, DELASSUS_METHODS)}", delassus)
        joint_friction = r.string(s, "joint_friction", d.joint_friction)
        if joint_friction not in ("constraint", "torque"):
            r.fail(s, f"joint_friction must be 'constraint' or 'torque'"
                      f"{did_you_mean(joint_friction, ('constraint', 'torque'))}", joint_friction)
        joint_limits = r.string(s, "joint_limits", d.joint_limits)
        if joint_limits not in ("none", "constraint"):
            r.fail(s, "joint_limits must be 'none' or 'constraint'"
                      + did_you_mean(joint_limits, ("none", "constraint")), joint_limits)
        if "constraint" in (joint_friction, joint_limits) and name == "lemke":
            r.fail(s, "the Lemke solver takes unilateral contacts only: joint rows (joint_friction or joint_limits "
                      "'constraint') need nonsmooth-newton, gauss-seidel-newton or gauss-seidel", name)
        out["solver"] = U.SolverSettings(
            name=name, tolerance=r.number(s, "tolerance", d.tolerance, positive=True),
            max_iterations=int(r.number(s, "max_iterations", d.max_iterations, positive=True)),
            time_budget=r.number(s, "time_budget", None, positive=True),
            facets=int(r.number(s, "facets", d.facets, positive=True)), delassus=delassus,
            joint_friction=joint_friction, joint_limits=joint_limits)
        out["sources"]["solver"] = where(s)
    c = el.find("Contact")
    if c is not None:
        r.check_attributes(c, {"margin", "max_points", "face_tolerance", "correction", "erp", "slop"})
        d = U.ContactSettings()
        correction = r.string(c, "correction", d.correction)
        if correction not in ("baumgarte", "none"):
            r.fail(c, "correction must be 'baumgarte' or 'none'", correction)
        out["contact"] = U.ContactSettings(
            margin=r.number(c, "margin", d.margin, nonnegative=True),
            max_points=int(r.number(c, "max_points", d.max_points, positive=True)),
            face_tolerance=r.number(c, "face_tolerance", d.face_tolerance, nonnegative=True), correction=correction,
            erp=r.number(c, "erp", d.erp, nonnegative=True), slop=r.number(c, "slop", d.slop, nonnegative=True))
    if el.find("Limits") is not None:
        out["limits"] = _limits(r, el.find("Limits"))
    return out


def _limits(r, el) -> U.LimitSettings:
    """``<Limits effort_limits="clamp|refuse|ignore" velocity_factor max_speed energy_jump wrench_factor
    device_budget/>``: effort limits and divergence bounds (engine/faults/limits.py)."""
    d = U.LimitSettings()
    names = ("velocity_factor", "max_speed", "energy_jump", "wrench_factor", "device_budget")
    r.check_attributes(el, {"effort_limits", *names})
    policy = r.string(el, "effort_limits", d.effort_limits)
    if policy not in U.EFFORT_POLICIES:
        r.fail(el, f"effort_limits must be one of {U.EFFORT_POLICIES}{did_you_mean(policy, U.EFFORT_POLICIES)}",
               policy)
    return U.LimitSettings(effort_limits=policy, **{k: r.number(el, k, getattr(d, k), positive=True) for k in names})


def _collision_pairs(r, el, contact: U.ContactSettings, labels) -> U.ContactSettings:
    """``<CollisionPairs default="all|none">`` with ``<Include a b/>`` / ``<Exclude a b/>`` children; a and b are
    body labels or ``label/link`` names."""
    if el is None:
        return contact
    r.check_attributes(el, {"default"})
    r.check_children(el, {"Include", "Exclude"})
    default = r.string(el, "default", "all")
    if default not in ("all", "none"):
        r.fail(el, "default must be 'all' or 'none'", default)
    pairs = {"Include": [], "Exclude": []}
    for tag in pairs:
        for p in el.findall(tag):
            r.check_attributes(p, {"a", "b"})
            a, b = r.string(p, "a", required=True), r.string(p, "b", required=True)
            for end in (a, b):
                if end.split("/")[0] not in labels:
                    r.fail(p, f"unknown body '{end}'{did_you_mean(end.split('/')[0], labels)}", end)
            pairs[tag].append((a, b))
    return replace(contact, default_pairs=default, include=tuple(pairs["Include"]), exclude=tuple(pairs["Exclude"]))


def _configurations(r, el):
    """(camera or None, lights). AMELIF's ``Camera`` ``Rotation``/``Translation`` are the world-to-eye
    transform x_eye = R x_world - t (OpenGL: glTranslate(-t), then glRotate(angle, axis)) of an eye looking
    along its -z with y up: the thesis's example puts that eye at t = (0, 1, 4), 1 m up and 4 m back in the
    y-up frame its 120° rotation makes of the z-up world. In the world the camera's axes are R^T's columns and
    its position R^T t."""
    camera, lights = None, []
    if el is None:
        return camera, (U.Light(),)
    r.check_children(el, {"Camera", "Light"})
    cam = el.find("Camera")
    if cam is not None:
        r.check_attributes(cam, {"fov"})
        r.check_children(cam, {"Rotation", "Translation", "LookAt"})
        R, p = _placement(r, cam)
        fov = r.number(cam, "fov", 45.0, positive=True)
        look = cam.find("LookAt")
        if look is not None:  # extension: aim the camera at a point, z up
            r.check_attributes(look, {"x", "y", "z"})
            target = np.array([r.number(look, k, default=0.0) for k in "xyz"])
            if np.linalg.norm(target - p) < 1e-9:
                r.fail(look, "the camera cannot look at its own position", target.tolist())
            camera = U.Camera(R=U.look_at(p, target), p=p, fov=fov, target=target)
        else:  # AMELIF: the eye transform (docs/universe-format.md, "The AMELIF camera"); look 1 m ahead
            camera = U.Camera(R=R.T, p=R.T @ p, fov=fov, target=R.T @ (p - np.array([0.0, 0.0, 1.0])))
    for light in el.findall("Light"):
        r.check_children(light, {"LightAttribute"})
        values = {}
        for a in light.findall("LightAttribute"):
            kind = r.string(a, "type", required=True)
            keys = {"position": "xyzw", "ambient": "rgba", "diffuse": "rgba", "specular": "rgba"}
            if kind not in keys:
                    r.fail(a, f"unknown LightAttribute type{did_you_mean(kind, keys)}", kind)
            r.check_attributes(a, {"type", *keys[kind]})
            values[kind] = tuple(r.number(a, k, default=1.0 if k in "aw" else 0.0) for k in keys[kind])
        lights.append(U.Light(**values))
    return camera, tuple(lights) or (U.Light(),)


def _plugin(r, el, kind, labels) -> U.PluginSpec:
    name = r.string(el, "plugin", required=True)
    target = el.get("target")
    if target is not None and target not in labels:
        r.fail(el, f"<{el.tag}> target is not a body of this universe{did_you_mean(target, labels)}", target)
    params = {k: v for k, v in el.attrib.items() if k not in ("plugin", "target")}
    return U.PluginSpec(kind=kind, name=name, params=params, target=target, source=f"{r.path}:{el.sourceline}")


def _plugin_module(r, el, path, trust):
    """``<PluginModule module="pkg.mod"/>`` or ``path="file.py"``: code, imported only when trusted."""
    r.check_attributes(el, {"module", "path"})
    if not trust:
        r.fail(el, "this scene imports plugin code; scenes are data — pass --trust-scene-plugins to allow it",
               el.get("module") or el.get("path"))
    from engine.plugins import import_plugin_module
    try:
        import_plugin_module(module=el.get("module"), path=(path.parent / el.get("path")) if el.get("path") else None)
    except ArticulaError as exc:
        r.fail(el, exc.message, exc.value)
