"""The signals a user can plot, each a function of one Snapshot: joint positions, velocities and torques, the
wrench each joint transmits, contact forces and the required friction per body, energy, centre of mass (its
position, and its acceleration from the external forces) and ZMP, the user's force (mouse or haptic device), the
compression and load of deformable soles, the lean, heading, speed and ground force of wheels
(app/wheel_signals.py).

* Centre of mass of a multibody: c = sum_i m_i (R_i c_i + p_i) / sum_i m_i (body CoMs in the world).
* ZMP on flat ground: the centre of pressure of the contact forces whose normal is within 45 degrees of the
  vertical, p_zmp = sum_k f_n,k p_k / sum_k f_n,k (the two coincide for coplanar contacts).
* Contact forces on a body: the normal part f_n = f . n and the tangential part |f - f_n n|, summed over the
  contacts that involve it (the force on body b is -f along -n, so f_n is the same for both bodies).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine import JointType, plugins
from engine.dynamics.ground_reaction import heel_toe, joint_reactions
from engine.sensors import sensor_name

from app.wheel_signals import wheel_signals


@dataclass(frozen=True)
class Signal:
    """A plottable scalar: ``group`` (for the tree of signals), ``name``, ``unit`` and ``value(snapshot)``."""

    group: str
    name: str
    unit: str
    value: Callable

    @property
    def key(self) -> str:
        return f"{self.group}/{self.name}"


def catalogue(universe) -> list:
    """Every signal the universe offers: energy, then per multibody its joints' q, v and applied torques τ,
    base position, centre of mass and ZMP, then contact forces per body, the user's force and the readings of
    the universe's sensors."""
    signals = [Signal("energy", "kinetic", "J", lambda s: s.energy[0]),
               Signal("energy", "potential", "J", lambda s: s.energy[1]),
               Signal("energy", "total", "J", lambda s: s.energy[0] + s.energy[1])]
    for m, mb in enumerate(universe.multibodies):
        signals += _multibody_signals(m, mb, universe.gravity)
        signals += wheel_signals(m, mb, universe, Signal)
    bodies = [f"{mb.name}/{name}" for mb in universe.multibodies for name in mb.model.body_name]
    for name in bodies + [s.name for s in universe.statics]:
        signals += [Signal(f"contact/{name}", "normal force", "N", _contact_force(name, normal=True)),
                    Signal(f"contact/{name}", "tangential force", "N", _contact_force(name, normal=False)),
                    Signal(f"contact/{name}", "required friction", "", lambda s, name=name: required_friction(
                        s.contacts, name))]
    for m, mb in enumerate(universe.multibodies):
        signals += _foot_signals(m, mb)
        for b, body in enumerate(mb.model.body_name):
            name = f"{mb.name}/{body}"
            signals += [Signal(f"contact/{name}", f"CoP {axis} (body frame)", "m",
                               lambda s, m=m, b=b, name=name, k=k: centre_of_pressure(s, m, b, name)[k])
                        for k, axis in enumerate("xy")]
    signals.append(Signal("contact", "count", "", lambda s: float(len(s.contacts))))
    signals += [Signal("user force", axis, "N", lambda s, k=k: user_force(s)[k]) for k, axis in enumerate("xyz")]
    signals.append(Signal("user force", "magnitude", "N", lambda s: float(np.linalg.norm(user_force(s)))))
    for spec in universe.sensors:
        signals += _sensor_signals(spec)
    signals += _sole_signals(universe)
    return signals


def _foot_signals(m, mb) -> list:
    """Per body with one heel point and one toe point — its frames named ``*heel*`` all at one place (a fixed
    joint and its child link share it), and so those named ``*toe*`` — a two-point foot (seed 003 §5.C: BIP's
    front foot): its heel and toe normal forces, the centre of pressure along the sole from the heel and its
    margin min(x_cop, l − x_cop), positive while the CoP is strictly inside the foot."""
    model, out = mb.model, []
    for b, body in enumerate(model.body_name):
        on = [f for f in range(len(model.frame_name)) if model.frame_body[f] == b]
        heel, toe = (_one_point(model, [f for f in on if word in model.frame_name[f]]) for word in ("heel", "toe"))
        if heel is None or toe is None:
            continue
        support = FootSupport(m, b, f"{mb.name}/{body}", heel, toe)
        group = f"{mb.name}/{body}"
        out += [Signal(group, "heel normal force", "N", lambda s, f=support: f(s)[0]),
                Signal(group, "toe normal force", "N", lambda s, f=support: f(s)[1]),
                Signal(group, "CoP from heel", "m", lambda s, f=support: f(s)[2]),
                Signal(group, "CoP margin", "m", lambda s, f=support: min(f(s)[2], f.length - f(s)[2]))]
    return out


def _one_point(model, frames):
    """The body-frame point where all of ``frames`` are, None if there is none or several."""
    points = model.frame_p[frames] if frames else np.empty((0, 3))
    return points[0] if len(points) and np.allclose(points, points[0], rtol=0, atol=1e-12) else None


class FootSupport:
    """``heel_toe`` of one foot at a snapshot: (N_heel, N_toe, x_cop) from the contacts on body ``name``."""

    def __init__(self, m, b, name, heel, toe):
        self.m, self.b, self.name = m, b, name
        self.heel, self.toe = np.asarray(heel, float), np.asarray(toe, float)
        self.length = float(np.linalg.norm(self.toe - self.heel))

    def __call__(self, snapshot):
        c = snapshot.contacts
        on = np.array([self.name in (a, o) for a, o in zip(c.body_a, c.body_b)], dtype=bool).reshape(-1)
        R, p = snapshot.body_R[self.m][self.b], snapshot.body_p[self.m][self.b]
        return heel_toe(np.asarray(c.point, float).reshape(-1, 3)[on], np.asarray(c.force, float).reshape(-1, 3)[on],
                        np.asarray(c.normal, float).reshape(-1, 3)[on], R @ self.heel + p, R @ self.toe + p)


def _sole_signals(universe) -> list:
    """Per deformable sole: its compression (the contact nodes' displacement along the sole's z, largest and
    mean, mm), the total normal force on it (N) and the number of loaded nodes."""
    out = []
    specs = [spec for mb in universe.multibodies for spec in mb.soles]
    for k, spec in enumerate(specs):
        group = f"sole/{spec.multibody}/{spec.link}"
        out += [Signal(group, "compression max", "mm", lambda s, k=k: 1e3 * float(s.soles[k].displacement[:, 2].max())),
                Signal(group, "compression mean", "mm",
                       lambda s, k=k: 1e3 * float(s.soles[k].displacement[:, 2].mean())),
                Signal(group, "normal force", "N", lambda s, k=k: float(s.soles[k].force[:, 2].sum())),
                Signal(group, "loaded nodes", "", lambda s, k=k: float(np.count_nonzero(s.soles[k].force[:, 2] > 0)))]
    return out


def _sensor_signals(spec) -> list:
    """The components of what a sensor plugin declares in ``signals`` (name: (unit, size)); NaN before its first
    reading."""
    name = sensor_name(spec.target, spec.params.get("body") or spec.params.get("joint") or spec.name,
                       spec.params.get("name"))
    out = []
    for signal, (unit, size) in getattr(plugins.get("sensor", spec.name), "signals", {}).items():
        for k in range(size):
            out.append(Signal(f"sensor/{name}", f"{signal}[{k}]" if size > 1 else signal, unit,
                              lambda s, name=name, signal=signal, k=k: _reading(s, name, signal, k)))
    return out


def _reading(snapshot, name, signal, k) -> float:
    reading = snapshot.measurements.get(name)
    return float(np.ravel(reading[signal])[k]) if reading is not None else float("nan")


def user_force(snapshot) -> np.ndarray:
    """Sum of the external forces applied by the user (mouse or haptic device coupling, eq. 3.64), world, N."""
    return sum((np.asarray(w[:3], float) for _, _, w, _ in snapshot.external), np.zeros(3))


def _multibody_signals(m, mb, gravity) -> list:
    model, out = mb.model, []
    for joint in model.joints:
        if joint.type == JointType.FREE:
            out += [Signal(f"{mb.name}/base", axis, "m", _entry("q", m, joint.idx_q + k))
                    for k, axis in enumerate("xyz")]
        if joint.type in (JointType.REVOLUTE, JointType.PRISMATIC):
            unit = "rad" if joint.type == JointType.REVOLUTE else "m"
            out += [Signal(f"{mb.name}/q", joint.name, unit, _entry("q", m, joint.idx_q)),
                    Signal(f"{mb.name}/v", joint.name, unit + "/s", _entry("v", m, joint.idx_v)),
                    Signal(f"{mb.name}/tau", joint.name, "N m" if unit == "rad" else "N",
                           _entry("tau", m, joint.idx_v))]
    for axis, k in (("x", 0), ("y", 1), ("z", 2)):
        out.append(Signal(f"{mb.name}/centre of mass", axis, "m",
                          lambda s, k=k: centre_of_mass(model, s.body_R[m], s.body_p[m])[k]))
    if model.joints[0].type == JointType.FREE:            # a fixed base takes forces the contacts do not list
        mass = float(model.body_mass.sum())
        out += [Signal(f"{mb.name}/centre of mass", f"acceleration {axis}", "m/s²",
                       lambda s, k=k: centre_of_mass_acceleration(s, m, mb.name, mass, gravity)[k])
                for k, axis in enumerate("xyz")]
    for axis, k in (("x", 0), ("y", 1)):
        out.append(Signal(f"{mb.name}/ZMP", axis, "m", lambda s, k=k: zmp(s.contacts, f"{mb.name}/")[k]))
    reactions = JointReactions(m, mb, gravity)
    for b, joint in enumerate(model.joints):
        if joint.type != JointType.FREE:
            out += [Signal(f"{mb.name}/joint reaction", f"{joint.name} force", "N",
                           lambda s, b=b: float(np.linalg.norm(reactions(s)[b, :3]))),
                    Signal(f"{mb.name}/joint reaction", f"{joint.name} moment", "N m",
                           lambda s, b=b: float(np.linalg.norm(reactions(s)[b, 3:])))]
            for convention in CONVENTIONS:
                out += [Signal(f"{mb.name}/joint reaction {convention}", f"{joint.name} {axis}",
                               "N" if k < 3 else "N m",
                               lambda s, b=joint.body, k=k, c=convention: reactions.screw(s, b, c)[k])
                        for k, axis in enumerate("XYZLMN")]
    for name, kind in ((c.name, c.kind) for c in model.closures):
        out += [Signal(f"{mb.name}/closure {name}", f"λ {axis}", "N", lambda s, name=name, k=k: _closure(s, m, name)[k])
                for k, axis in enumerate("xyz")]
        if kind == "hinge":
            out += [Signal(f"{mb.name}/closure {name}", f"moment e{k - 2}", "N m",
                           lambda s, name=name, k=k: _closure(s, m, name)[k]) for k in (3, 4)]
    return out


def _closure(snapshot, m: int, name: str) -> np.ndarray:
    """The force of closure ``name`` of multibody m in a snapshot (Snapshot.closures), NaN when absent."""
    for multibody, closure, force in snapshot.closures:
        if multibody == m and closure == name:
            return force
    return np.full(6, np.nan)


CONVENTIONS = ("EPRE", "EPRP", "PERE", "PERP")   # seed 004 §2.5: the joint-reaction screw's four conventions


class JointReactions:
    """The wrench each joint of multibody m transmits (parent on child, child frame; ``ground_reaction.
    joint_reactions``) at a snapshot's q, v and last-step acceleration, under its contact, user and loop-closure
    forces;
    computed once per snapshot for all the joint signals. ``screw(s, b, convention)``: the same at the joint of
    body b in seed 004's conventions (§2.5), about the joint's origin (the child frame's):

        EPRE  the action of the parent on the child, child-frame axes      (what ``joint_reactions`` gives)
        EPRP  the same action, parent-frame axes                           R_pc · EPRE
        PERE  the action of the child on the parent, child-frame axes      −EPRE
        PERP  the same, parent-frame axes                                  −R_pc · EPRE
    """

    def __init__(self, m, mb, gravity):
        self.m, self.prefix, self.model = m, f"{mb.name}/", mb.model
        self.data, self.gravity = mb.model.create_data(), mb.R.T @ np.asarray(gravity, float)
        self.names = {f"{mb.name}/{n}": b for b, n in enumerate(mb.model.body_name)}
        self.snapshot, self.value = None, None

    def __call__(self, snapshot) -> np.ndarray:
        if snapshot is not self.snapshot:
            m = self.m
            a = snapshot.a[m] if snapshot.a else np.zeros(self.model.nv)
            self.value = joint_reactions(self.model, self.data, snapshot.q[m], snapshot.v[m], a,
                                         self._wrenches(snapshot), self.gravity)
            self.snapshot = snapshot
        return self.value

    def screw(self, s, b: int, convention: str) -> np.ndarray:
        """(X, Y, Z, L, M, N) of the joint of body b in ``convention`` (class docstring)."""
        w = self(s)[b]
        if convention.endswith("RP"):
            parent = int(self.model.body_parent[b])
            R_parent = s.base_R[self.m] if parent < 0 else s.body_R[self.m][parent]
            R_pc = R_parent.T @ s.body_R[self.m][b]
            w = np.concatenate([R_pc @ w[:3], R_pc @ w[3:]])
        return -w if convention.startswith("PE") else w

    def _wrenches(self, s) -> np.ndarray:
        """The contact and user forces on the bodies, (nbodies, 6) in the body frames at their origins."""
        f = np.zeros((self.model.nbodies, 6))
        R, p = s.body_R[self.m], s.body_p[self.m]
        c = s.contacts
        for k in range(len(c)):
            for name, sign in ((c.body_a[k], 1.0), (c.body_b[k], -1.0)):
                b = self.names.get(name)
                if b is not None:
                    force = sign * np.asarray(c.force[k], float)
                    f[b, :3] += R[b].T @ force
                    f[b, 3:] += R[b].T @ np.cross(np.asarray(c.point[k], float) - p[b], force)
        for m, b, wrench, point in s.external:
            if m == self.m and b >= 0:
                f[b, :3] += R[b].T @ wrench[:3]
                f[b, 3:] += R[b].T @ (wrench[3:] + np.cross(point - p[b], wrench[:3]))
        closures = {name: force for m, name, force in s.closures if m == self.m}
        for c in self.model.closures:                  # λ on body a at its anchor, −λ on body b (world axes)
            if c.name not in closures:
                continue
            force = closures[c.name]
            axes = (R[c.body_a] @ c.R_a)[:, :2] if c.body_a >= 0 else (s.base_R[self.m] @ c.R_a)[:, :2]
            moment = axes @ force[3:5] if c.kind == "hinge" else np.zeros(3)
            for b, anchor, sign in ((c.body_a, c.p_a, 1.0), (c.body_b, c.p_b, -1.0)):
                if b >= 0:
                    arm = R[b] @ anchor
                    f[b, :3] += sign * (R[b].T @ force[:3])
                    f[b, 3:] += sign * (R[b].T @ (moment + np.cross(arm, force[:3])))
        return f


def _entry(field, m, index):
    return lambda snapshot: float(getattr(snapshot, field)[m][index])


def centre_of_mass(model, R, p) -> np.ndarray:
    """World centre of mass of a multibody from its body placements R (nb, 3, 3), p (nb, 3)."""
    mass = model.body_mass
    body_com = np.einsum("nij,nj->ni", R, model.body_com) + p
    return mass @ body_com / mass.sum()


def centre_of_mass_acceleration(snapshot, m: int, name: str, mass: float, gravity) -> np.ndarray:
    """c̈ = g + (Σ contact forces on the bodies of multibody m, named "name/…", + the user's forces on it) / M, world,
    m/s²: Newton's law for the whole multibody (its joint torques, loop closures and self-contacts are internal
    and cancel; seed 004 §2.5), over the last step, with the forces the step held. The thesis's impact measure
    (§4.4: the vertical acceleration at the impacts of a drop or a gait)."""
    c = snapshot.contacts
    prefix = f"{name}/"
    sign = np.array([a.startswith(prefix) for a in c.body_a], float) - np.array([b.startswith(prefix)
                                                                                 for b in c.body_b], float)
    force = sign @ np.asarray(c.force, float).reshape(-1, 3)
    for mb, _, wrench, _ in snapshot.external:
        if mb == m:
            force = force + np.asarray(wrench[:3], float)
    return np.asarray(gravity, float) + force / mass


def centre_of_pressure(snapshot, m: int, b: int, name: str) -> np.ndarray:
    """Centre of pressure of the contacts on body b of multibody m (named ``name``) in the body's frame,
    Σ f_n,i x_i / Σ f_n,i (seed 003 §5.C: where the foot is pressed, which must stay inside its sole); NaN
    without a pressing contact."""
    c = snapshot.contacts
    on = np.array([name in (a, o) for a, o in zip(c.body_a, c.body_b)], dtype=bool).reshape(-1)
    fn = np.abs(np.einsum("ni,ni->n", np.asarray(c.force, float).reshape(-1, 3),
                          np.asarray(c.normal, float).reshape(-1, 3)))[on]
    if fn.sum() <= 0.0:
        return np.full(3, np.nan)
    x = fn @ np.asarray(c.point, float).reshape(-1, 3)[on] / fn.sum()
    return snapshot.body_R[m][b].T @ (x - snapshot.body_p[m][b])


def zmp(contacts, prefix: str = "") -> np.ndarray:
    """Centre of pressure (x, y, z) of the near-vertical contact forces on bodies named ``prefix...`` (the
    collision names a multibody's bodies "multibody/body"); NaN without such a contact."""
    normal = np.asarray(contacts.normal, float).reshape(-1, 3)
    ours = np.array([a.startswith(prefix) or b.startswith(prefix) for a, b in zip(contacts.body_a, contacts.body_b)],
                    dtype=bool).reshape(-1)
    vertical = (np.abs(normal[:, 2]) > np.sqrt(0.5)) & ours
    fn = np.abs(np.einsum("ni,ni->n", np.asarray(contacts.force, float).reshape(-1, 3), normal))[vertical]
    if fn.sum() <= 0.0:
        return np.full(3, np.nan)
    return fn @ np.asarray(contacts.point, float).reshape(-1, 3)[vertical] / fn.sum()


def contact_forces_on(contacts, name: str):
    """(normal, tangential) force magnitudes summed over the contacts that involve body ``name``."""
    involved = np.array([a == name or b == name for a, b in zip(contacts.body_a, contacts.body_b)], dtype=bool)
    if not involved.any():
        return 0.0, 0.0
    f = np.asarray(contacts.force, float)[involved]
    n = np.asarray(contacts.normal, float)[involved]
    fn = np.einsum("ni,ni->n", f, n)
    tangential = np.linalg.norm(f - fn[:, None] * n, axis=1)
    return float(fn.sum()), float(tangential.sum())


def required_friction(contacts, name: str) -> float:
    """|Σ f_t| / Σ f_n of the contacts that involve body ``name``: the least friction coefficient its support
    needs (seed 003 §5.C; the contacts' normals taken as one, that of the largest force); NaN without load."""
    involved = np.array([a == name or b == name for a, b in zip(contacts.body_a, contacts.body_b)], dtype=bool)
    if not involved.any():
        return float("nan")
    f = np.asarray(contacts.force, float)[involved]
    n = np.asarray(contacts.normal, float)[involved][np.argmax(np.linalg.norm(f, axis=1))]
    total = f.sum(axis=0)
    fn = float(total @ n)
    return float(np.linalg.norm(total - fn * n) / fn) if fn > 0.0 else float("nan")


def _contact_force(name, normal: bool):
    return lambda s: contact_forces_on(s.contacts, name)[0 if normal else 1]
