"""A robot description as the loaders read it (links, joints, closures, with their source lines), and its
compilation into a flat, immutable ``Model``: tree ordering, fixed-joint merging, validation."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from engine import spatial
from engine.errors import ModelError, ModelWarning
from engine.model.data import Data
from engine.model.model import JOINT_NQ, JOINT_NV, Closure, Geometry, Joint, JointType, Model, neutral

JOINT_KINDS = {"revolute": JointType.REVOLUTE, "continuous": JointType.REVOLUTE,
               "prismatic": JointType.PRISMATIC, "spherical": JointType.SPHERICAL, "ball": JointType.SPHERICAL,
               "floating": JointType.FREE, "free": JointType.FREE, "planar": JointType.PLANAR, "fixed": None}


@dataclass
class LinkSpec:
    name: str
    line: int | None = None
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # about the CoM, link frame
    geometries: list = field(default_factory=list)  # Geometry with body=-1 (placeholder), link frame


@dataclass
class JointSpec:
    name: str
    kind: str
    parent: str
    child: str
    line: int | None = None
    R: np.ndarray = field(default_factory=lambda: np.eye(3))
    p: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    rotor_inertia: float = 0.0
    rotor_transverse: float = 0.0
    rotor_axis: np.ndarray | None = None  # parent (carrier) frame; defaults to the joint axis
    gear_ratio: float = 1.0
    stiffness: float = 0.0
    spring_reference: float = 0.0
    mimic: bool = False  # URDF <mimic>: read, simulated as an independent joint (as Pinocchio does)
    passive: bool = False  # no motor: a spring-damper only (a flexible bush); controllers give it no torque


@dataclass
class ClosureSpec:
    name: str
    kind: str
    link_a: str
    R_a: np.ndarray
    p_a: np.ndarray
    link_b: str
    R_b: np.ndarray
    p_b: np.ndarray
    line: int | None = None
    assembled: dict = field(default_factory=dict)  # joint name -> (value, line): where the loop must close
    tolerance: float = 1e-6                        # m (anchor gap) and rad (hinge axes) for that check


@dataclass
class RobotDescription:
    name: str
    source: str
    links: dict = field(default_factory=dict)   # name -> LinkSpec (insertion order kept)
    joints: list = field(default_factory=list)  # JointSpec
    closures: list = field(default_factory=list)  # ClosureSpec
    floating_base: bool = False                  # what the file says when the caller does not choose


def _fail(desc, message, line, value=None):
    raise ModelError(message, desc.source, line, value)


def _check_finite(desc, link: LinkSpec):
    values = np.concatenate([[link.mass], link.com, link.inertia.ravel()])
    if not np.all(np.isfinite(values)):
        _fail(desc, f"link '{link.name}': mass, centre of mass and inertia must be finite", link.line,
              values[~np.isfinite(values)][0])
    if link.mass < 0.0:
        _fail(desc, f"link '{link.name}': negative mass", link.line, link.mass)


def _check_inertia(desc, name, line, mass, I):
    """A mobile body (after welding its fixed children) needs an inertia that is symmetric, positive
    semi-definite and satisfies the triangle inequality on its principal moments (I1 + I2 >= I3)."""
    if not np.allclose(I, I.T, atol=1e-12 + 1e-9 * np.abs(I).max()):
        _fail(desc, f"link '{name}': inertia matrix is not symmetric", line, I.tolist())
    eig = np.linalg.eigvalsh(I)
    tol = 1e-9 * max(eig.max(), 0.0) + 1e-15
    if eig.min() < -tol:
        _fail(desc, f"link '{name}': inertia is not positive semi-definite (eigenvalues {eig.round(9).tolist()})",
              line, I.tolist())
    if eig[0] + eig[1] < eig[2] - max(tol, 1e-6 * eig[2]):
        _fail(desc, f"link '{name}': principal moments violate the triangle inequality "
                    f"I1 + I2 >= I3 ({eig.round(9).tolist()})", line, I.tolist())


def compile_model(desc: RobotDescription, floating_base: bool | None = None) -> Model:
    """Order the tree, merge fixed joints, validate, and produce the flat ``Model``.

    ``floating_base``: True mounts the root link on a free-flyer joint; None keeps what the file says
    (URDF: fixed; robot XML: its ``floating_base`` attribute).
    """
    children, parent_of = {}, {}
    for j in desc.joints:
        for end in (j.parent, j.child):
            if end not in desc.links:
                _fail(desc, f"joint '{j.name}' refers to an undefined link '{end}'", j.line, end)
        if j.child in parent_of:
            _fail(desc, f"link '{j.child}' has two parent joints ('{parent_of[j.child].name}' and '{j.name}')",
                  j.line, j.child)
        parent_of[j.child] = j
        children.setdefault(j.parent, []).append(j)
    roots = [name for name in desc.links if name not in parent_of]
    if not roots:
        first = desc.joints[0] if desc.joints else None
        _fail(desc, "the kinematic graph has a cycle: every link has a parent", first.line if first else None)
    if len(roots) > 1:
        _fail(desc, f"the links do not form one tree: {len(roots)} roots {roots[:5]}",
              desc.links[roots[1]].line, roots[1])
    root = roots[0]
    if floating_base is None:
        floating_base = desc.floating_base
    b = _TreeBuilder(desc)
    if floating_base:  # the root link rides a free-flyer joint (Pinocchio's convention)
        b.add_body(root, JointSpec(name="root_joint", kind="free", parent="", child=root), -1, np.eye(3), np.zeros(3))
    else:  # the root link is the base frame itself
        b.link_body[root] = (-1, np.eye(3), np.zeros(3))
        b.add_frame_for_link(root)
        b.merge_geometries(root)
    b.visit(root)
    seen = set(b.link_body)
    unreached = [n for n in desc.links if n not in seen]
    if unreached:
        l = desc.links[unreached[0]]
        _fail(desc, f"link '{l.name}' is not connected to the root '{root}' (cycle or disconnected tree)", l.line,
              l.name)
    for link in desc.links.values():
        _check_finite(desc, link)
    for name in b.welded_links():   # their inertias enter the dynamics only summed into a body: a warning
        link = desc.links[name]
        try:
            _check_inertia(desc, name, link.line, link.mass, np.asarray(link.inertia, float))
        except ModelError as exc:
            warnings.warn(f"{exc} (a fixed link: kept, summed into its body)", ModelWarning, stacklevel=3)
    model = b.finish(desc)
    for c, closure in zip(desc.closures, model.closures):
        if c.assembled:
            _check_assembled(desc, model, c, closure)
    return model


def _check_assembled(desc, model: Model, c: ClosureSpec, closure: Closure):
    """The closure's two anchors coincide (and a hinge's z axes align) at the configuration of its
    ``<assembled>`` joints, every other joint at its neutral value, within ``c.tolerance``: else a ModelError
    naming the gap. The gap is |x_a - x_b| (m); a hinge's misalignment is the angle between z_a and z_b (rad)."""
    from engine.dynamics import forward_kinematics  # the dynamics layer builds on the model layer

    q = neutral(model)
    names = {j.name: j for j in model.joints}
    for name, (value, line) in c.assembled.items():
        joint = names.get(name)
        if joint is None or joint.type not in (JointType.REVOLUTE, JointType.PRISMATIC):
            _fail(desc, f"closure '{c.name}': <assembled> names '{name}', which is not a revolute or prismatic "
                        f"joint of the robot", line, name)
        q[joint.idx_q] = value
    data = Data(model)
    forward_kinematics(model, data, q)
    anchors = []
    for body, R, p in ((closure.body_a, closure.R_a, closure.p_a), (closure.body_b, closure.R_b, closure.p_b)):
        oR, op = (data.oMi_R[body], data.oMi_p[body]) if body >= 0 else (np.eye(3), np.zeros(3))
        anchors.append((oR @ R, oR @ p + op))
    (Ra, pa), (Rb, pb) = anchors
    gap = float(np.linalg.norm(pa - pb))
    if gap > c.tolerance:
        _fail(desc, f"closure '{c.name}' does not close at its assembled configuration: its anchors are "
                    f"{gap:.6g} m apart (tolerance {c.tolerance:g} m)", c.line, gap)
    if c.kind == "hinge":
        za, zb = Ra[:, 2], Rb[:, 2]
        angle = float(np.arctan2(np.linalg.norm(np.cross(za, zb)), za @ zb))
        if angle > c.tolerance:
            _fail(desc, f"closure '{c.name}' does not close at its assembled configuration: its hinge axes are "
                        f"{angle:.6g} rad apart (tolerance {c.tolerance:g} rad)", c.line, angle)


class _TreeBuilder:
    """Depth-first walk that lays the tree out in flat arrays and welds fixed-joint children (iterative: a
    chain of any length loads)."""

    def __init__(self, desc):
        self.desc = desc
        self.link_body = {}        # link name -> (body index or -1, R, p of link frame in body frame)
        self.bodies = []           # dicts with the body's arrays, in tree order
        self.frames = []           # (name, body, R, p)
        self.frame_names = set()
        self.geometries = []
        self.children = {}         # link name -> child joints sorted by name
        for j in desc.joints:
            self.children.setdefault(j.parent, []).append(j)
        for joints in self.children.values():
            joints.sort(key=lambda j: j.name)

    def add_body(self, link_name, joint: JointSpec, parent_body, R_parent, p_parent):
        kind = JOINT_KINDS[joint.kind]
        axis = np.asarray(joint.axis, dtype=float)
        n = np.linalg.norm(axis)
        if kind in (JointType.REVOLUTE, JointType.PRISMATIC):
            if not np.all(np.isfinite(axis)) or n < 1e-12:
                _fail(self.desc, f"joint '{joint.name}': axis has zero length", joint.line, axis.tolist())
            axis = axis / n
        # joint placement in the parent *body* frame: (link frame in body) * (joint origin in link)
        R, p = spatial.compose(R_parent, p_parent, joint.R, joint.p)
        link = self.desc.links[link_name]
        index = len(self.bodies)
        self.bodies.append(dict(name=link_name, joint=joint, type=kind, parent=parent_body, R=R, p=p, axis=axis,
                                mass=link.mass, com=np.array(link.com, float), inertia=np.array(link.inertia, float)))
        self.link_body[link_name] = (index, np.eye(3), np.zeros(3))
        self.add_frame(joint.name, index, np.eye(3), np.zeros(3))
        self.add_frame_for_link(link_name)
        self.merge_geometries(link_name)
        return index

    def welded_links(self):
        """The links that are not a body of their own: the fixed root and the links welded by fixed joints."""
        return [name for name, (body, _, _) in self.link_body.items()
                if body < 0 or self.bodies[body]["name"] != name]

    def add_frame(self, name, body, R, p):
        self.frames.append((name, body, R, p))
        self.frame_names.add(name)

    def add_frame_for_link(self, name):
        body, R, p = self.link_body[name]
        if name not in self.frame_names:
            self.add_frame(name, body, R, p)

    def merge_geometries(self, link_name):
        body, R, p = self.link_body[link_name]
        for g in self.desc.links[link_name].geometries:
            gR, gp = spatial.compose(R, p, g.R, g.p)
            self.geometries.append(_with(g, body=body, R=gR, p=gp))

    def visit(self, root):
        """Every link below ``root``, depth first, children in name order: the order urdfdom, hence Pinocchio,
        uses, so q vectors compare index by index with the ecosystem."""
        stack = list(reversed(self.children.get(root, [])))
        while stack:
            joint = stack.pop()
            body, R, p = self.link_body[joint.parent]
            if joint.kind == "fixed":
                # weld: the child link frame is rigid in the parent's body frame
                cR, cp = spatial.compose(R, p, joint.R, joint.p)
                self.link_body[joint.child] = (body, cR, cp)
                self.add_frame(joint.name, body, cR, cp)
                self.add_frame_for_link(joint.child)
                self.merge_geometries(joint.child)
                if body >= 0:
                    self._weld_inertia(body, joint.child, cR, cp)
            else:
                self.add_body(joint.child, joint, body, R, p)
            stack.extend(reversed(self.children.get(joint.child, [])))

    def _weld_inertia(self, body, link_name, R, p):
        link = self.desc.links[link_name]
        if link.mass == 0.0:
            return
        b = self.bodies[body]
        m, c, I = spatial.transform_inertia(R, p, link.mass, np.asarray(link.com, float), link.inertia)
        b["mass"], b["com"], b["inertia"] = spatial.combine_inertias(b["mass"], b["com"], b["inertia"], m, c, I)

    def finish(self, desc) -> Model:
        nb = len(self.bodies)
        types = np.array([int(b["type"]) for b in self.bodies], dtype=np.int64)
        nqs = np.array([JOINT_NQ[JointType(t)] for t in types], dtype=np.int64)
        nvs = np.array([JOINT_NV[JointType(t)] for t in types], dtype=np.int64)
        idx_q = np.concatenate([[0], np.cumsum(nqs)[:-1]]).astype(np.int64) if nb else np.zeros(0, np.int64)
        idx_v = np.concatenate([[0], np.cumsum(nvs)[:-1]]).astype(np.int64) if nb else np.zeros(0, np.int64)
        nq, nv = int(nqs.sum()), int(nvs.sum())
        carries = _mass_below(self.bodies)
        for i, b in enumerate(self.bodies):
            line = desc.links[b["name"]].line
            if b["mass"] <= 0.0 and not carries[i]:
                _fail(desc, f"link '{b['name']}' is mobile but has zero mass", line, b["mass"])
            _check_inertia(desc, b["name"], line, b["mass"], b["inertia"])
            if b["type"] in (JointType.FREE, JointType.SPHERICAL) and not carries[i] \
                    and np.linalg.eigvalsh(b["inertia"]).min() <= 0.0:
                _fail(desc, f"link '{b['name']}' turns freely on a {b['type'].name.lower()} joint and needs a "
                            f"positive definite inertia", line, b["inertia"].tolist())
        dof = {k: np.zeros(nv) for k in ("damping", "friction", "rotor_inertia", "rotor_transverse",
                                         "stiffness", "spring_reference")}
        dof_effort, dof_velocity = np.full(nv, np.inf), np.full(nv, np.inf)
        dof_gear, dof_rotor_axis = np.ones(nv), np.zeros((nv, 3))
        dof_joint, dof_S, dof_passive = np.zeros(nv, np.int64), np.zeros((nv, 6)), np.zeros(nv, dtype=bool)
        q_lower, q_upper = np.full(nq, -np.inf), np.full(nq, np.inf)
        for i, b in enumerate(self.bodies):
            j, t, kv, kq = b["joint"], JointType(types[i]), idx_v[i], idx_q[i]
            dof_joint[kv:kv + nvs[i]] = i
            dof_S[kv:kv + nvs[i]] = _motion_subspace(t, b["axis"])
            if t in (JointType.REVOLUTE, JointType.PRISMATIC):
                for key in dof:
                    dof[key][kv] = getattr(j, key)
                dof_effort[kv], dof_velocity[kv], dof_gear[kv] = j.effort, j.velocity, j.gear_ratio
                dof_passive[kv] = j.passive
                axis_parent = b["R"] @ b["axis"]
                dof_rotor_axis[kv] = axis_parent if j.rotor_axis is None else _unit(j.rotor_axis)
                if j.kind != "continuous":
                    q_lower[kq], q_upper[kq] = j.lower, j.upper
            elif t == JointType.FREE:
                q_lower[kq + 3:kq + 7], q_upper[kq + 3:kq + 7] = -1.0, 1.0
        body_inertia = np.array([spatial.spatial_inertia(b["mass"], b["com"], b["inertia"]) for b in self.bodies])
        joints = tuple(Joint(b["joint"].name, JointType(types[i]), i, int(idx_q[i]), int(idx_v[i]), int(nqs[i]),
                             int(nvs[i])) for i, b in enumerate(self.bodies))
        closures = tuple(self._closure(c) for c in desc.closures)
        ro = _readonly
        return Model(
            name=desc.name, source=desc.source, nq=nq, nv=nv, nbodies=nb,
            body_name=tuple(b["name"] for b in self.bodies),
            body_parent=ro(np.array([b["parent"] for b in self.bodies], dtype=np.int64)),
            body_mass=ro(np.array([b["mass"] for b in self.bodies], dtype=float)),
            body_com=ro(np.array([b["com"] for b in self.bodies], dtype=float).reshape(nb, 3)),
            body_inertia_com=ro(np.array([b["inertia"] for b in self.bodies], dtype=float).reshape(nb, 3, 3)),
            body_inertia=ro(body_inertia.reshape(nb, 6, 6)),
            joint_name=tuple(b["joint"].name for b in self.bodies), joint_type=ro(types),
            joint_placement_R=ro(np.array([b["R"] for b in self.bodies], dtype=float).reshape(nb, 3, 3)),
            joint_placement_p=ro(np.array([b["p"] for b in self.bodies], dtype=float).reshape(nb, 3)),
            joint_axis=ro(np.array([b["axis"] for b in self.bodies], dtype=float).reshape(nb, 3)),
            joint_idx_q=ro(idx_q), joint_idx_v=ro(idx_v), joint_nq=ro(nqs), joint_nv=ro(nvs),
            dof_joint=ro(dof_joint), dof_S=ro(dof_S), dof_damping=ro(dof["damping"]),
            dof_friction=ro(dof["friction"]), dof_effort_limit=ro(dof_effort), dof_velocity_limit=ro(dof_velocity),
            dof_rotor_inertia=ro(dof["rotor_inertia"]), dof_rotor_transverse=ro(dof["rotor_transverse"]),
            dof_rotor_axis=ro(dof_rotor_axis), dof_gear_ratio=ro(dof_gear), dof_stiffness=ro(dof["stiffness"]),
            dof_spring_reference=ro(dof["spring_reference"]), dof_passive=ro(dof_passive), q_lower=ro(q_lower),
            q_upper=ro(q_upper),
            frame_name=tuple(f[0] for f in self.frames),
            frame_body=ro(np.array([f[1] for f in self.frames], dtype=np.int64)),
            frame_R=ro(np.array([f[2] for f in self.frames], dtype=float).reshape(-1, 3, 3)),
            frame_p=ro(np.array([f[3] for f in self.frames], dtype=float).reshape(-1, 3)),
            geometries=tuple(self.geometries), closures=closures, joints=joints)

    def _closure(self, c: ClosureSpec) -> Closure:
        ends = []
        for link, R, p in ((c.link_a, c.R_a, c.p_a), (c.link_b, c.R_b, c.p_b)):
            if link not in self.link_body:
                _fail(self.desc, f"closure '{c.name}' refers to an undefined link '{link}'", c.line, link)
            body, lR, lp = self.link_body[link]
            ends.append((body, *spatial.compose(lR, lp, R, p)))
        if c.kind not in ("point", "hinge"):
            _fail(self.desc, f"closure '{c.name}': kind must be 'point' or 'hinge'", c.line, c.kind)
        (ba, Ra, pa), (bb, Rb, pb) = ends
        return Closure(c.name, c.kind, ba, Ra, pa, bb, Rb, pb)


def _mass_below(bodies) -> np.ndarray:
    """carries[i]: a descendant of body i has mass. A massless body is allowed only as an intermediate link
    (e.g. a virtual joint chain) with mobile descendants that carry mass; a massless leaf makes the mass matrix
    singular. Bodies are in tree order (a parent before its children), so one backward pass suffices."""
    carries = np.zeros(len(bodies), dtype=bool)
    for k in range(len(bodies) - 1, -1, -1):
        parent = bodies[k]["parent"]
        if parent >= 0:
            carries[parent] |= bodies[k]["mass"] > 0.0 or carries[k]
    return carries


def _motion_subspace(t, axis):
    """Columns of S (nv_j, 6) in the body frame, (linear, angular) order."""
    if t == JointType.REVOLUTE:
        return np.concatenate([np.zeros(3), axis])[None, :]
    if t == JointType.PRISMATIC:
        return np.concatenate([axis, np.zeros(3)])[None, :]
    if t == JointType.SPHERICAL:
        return np.hstack([np.zeros((3, 3)), np.eye(3)])
    if t == JointType.FREE:
        return np.eye(6)
    return np.array([[1.0, 0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1.0]])  # planar


def _unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _readonly(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _with(g: Geometry, **changes) -> Geometry:
    from dataclasses import replace
    return replace(g, **changes)
