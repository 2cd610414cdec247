"""pybullet as a dynamics engine: the same universe on Bullet's Featherstone multibodies and contact solver.

The Simulation's loop, controllers, devices, sensors, faults, recorder and viewers are unchanged: each step this
engine receives the torques ``run.tau`` and body wrenches ``run.f_ext`` of every run, steps Bullet once (its
articulated-body dynamics, collision, sequential-impulse contact solve on a linearised cone and semi-implicit
Euler), and reads (q, v) back in Articula's convention, from which the Simulation recomputes the placements
with its own kinematics. The universe is written as URDFs from Articula's Models (engine/engines/bullet_model.py);
what Bullet cannot represent is refused when the engine is built.

Conventions at the boundary (tests/engines/test_pybullet_engine.py checks them against Bullet's link frames):

* Bullet's base pose and velocity are those of its inertial frame (centre of mass c_i, principal axes R_i):
  R = R_com R_iᵀ, p = p_com − R c_i; v_o = Rᵀ(v_com − ω × R c_i), ω_body = Rᵀ ω (Pinocchio's free flyer);
* revolute and prismatic coordinates are Articula's; a spherical joint's quaternion (x, y, z, w) and angular
  velocity (child frame) are Articula's too;
* friction: Bullet multiplies the two bodies' coefficients; each body gets √μ of its material so that a pair
  gets √(μ_a μ_b), Articula's rule (engine/collision/materials.py);
* joint damping, dry friction and springs are applied as torques evaluated at the start of the step, as
  Articula's rnea does (engine/dynamics/_kernels/rotors.py ``passive_force``); Bullet's own damping is zero.
  With ``<Solver joint_friction="constraint">`` the dry friction μ_d is instead each joint's velocity motor
  (target 0, maximum force μ_d): Bullet's own stiction, solved with its contacts as Articula's friction rows are.
"""
from __future__ import annotations

import math
import os
import sys
import tempfile
import warnings
import weakref

import numpy as np

from engine import plugins
from engine.collision.materials import material_table
from engine.collision.world import CollisionSettings, CollisionWorld
from engine.contact.stepping import ContactCounts, _pair_filter
from engine.engines.bullet_model import UrdfWriter, ignored, refusals
from engine.errors import UniverseError
from engine.model.model import JointType
from engine.spatial import quaternion_to_rotation, rotation_to_quaternion
from engine.state import ActiveContacts, freeze

MAX_JOINT_SPEED = 1e4      # rad/s: Bullet clamps joint speeds at 100 by default; Articula's limits are its own


class BulletMultibody:
    """One multibody in Bullet: its body id, the link of each Articula body, its joints' (link, idx_q, idx_v)."""

    def __init__(self, pb, client, body, mb, floating):
        self.id, self.mb, self.floating = body, mb, floating
        model = mb.model
        link = {pb.getJointInfo(body, j, physicsClientId=client)[12].decode(): j
                for j in range(pb.getNumJoints(body, physicsClientId=client))}
        self.link = np.array([-1 if (floating and b == 0) else link[model.body_name[b]]
                              for b in range(model.nbodies)], dtype=np.int64)
        kinds = [JointType(int(t)) for t in model.joint_type]
        one = [b for b in range(model.nbodies) if kinds[b] in (JointType.REVOLUTE, JointType.PRISMATIC)]
        self.joints = [int(self.link[b]) for b in one]
        self.joint_q = np.array([model.joint_idx_q[b] for b in one], dtype=np.int64)
        self.joint_v = np.array([model.joint_idx_v[b] for b in one], dtype=np.int64)
        self.spherical = [(int(self.link[b]), int(model.joint_idx_q[b]), int(model.joint_idx_v[b]))
                          for b in range(model.nbodies) if kinds[b] == JointType.SPHERICAL]
        info = pb.getDynamicsInfo(body, -1, physicsClientId=client)
        self.c_i, self.R_i = np.array(info[3]), quaternion_to_rotation(np.array(info[4]))
        spring = (model.dof_stiffness > 0.0) & np.isin(np.arange(model.nv), self.joint_v)
        self.spring_v = np.flatnonzero(spring)
        self.spring_q = np.array([self.joint_q[list(self.joint_v).index(k)] for k in self.spring_v], dtype=np.int64)


@plugins.register("pybullet")
class PybulletEngine:
    """Bullet's dynamics and contacts for a ``Simulation`` (DIRECT mode: no window of its own)."""

    kind = "engine"
    name = "pybullet"

    def __init__(self, sim):
        universe = sim.universe
        refused = refusals(universe)
        if refused:
            raise UniverseError("the pybullet engine cannot run this universe: it has " + "; ".join(refused),
                                universe.source, value="pybullet")
        for what in ignored(universe):
            warnings.warn(f"pybullet engine: {what}", UserWarning, stacklevel=3)
        try:
            pybullet = _import_pybullet()
        except ImportError as exc:
            raise UniverseError(f"the pybullet engine needs the pybullet package ({exc})", universe.source,
                                value="pybullet") from None
        self.sim, self.pb = sim, pybullet
        self.friction_motors = universe.solver.joint_friction == "constraint"   # stiction: Bullet's joint motors
        self.client = pybullet.connect(pybullet.DIRECT)
        weakref.finalize(self, _disconnect, pybullet, self.client)
        c = universe.contact
        self.world = CollisionWorld(universe.multibodies, universe.statics, universe.materials,
                                    CollisionSettings(margin=c.margin, max_contacts_per_pair=c.max_points,
                                                      face_tolerance=c.face_tolerance, filter=_pair_filter(universe)))
        with tempfile.TemporaryDirectory(prefix="articula-bullet-") as folder:   # Bullet reads its files at load
            self._build(universe, folder)
        self.counts, self._contacts = ContactCounts(), ActiveContacts()

    # ---- the world in Bullet ---------------------------------------------------------------------------------
    def _build(self, universe, folder):
        pb, cid, world = self.pb, self.client, self.world
        pb.setGravity(*universe.gravity, physicsClientId=cid)
        pb.setTimeStep(self.sim.dt, physicsClientId=cid)
        pb.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=cid)
        writer = UrdfWriter(folder, self._pieces)
        flags = pb.URDF_USE_INERTIA_FROM_FILE | pb.URDF_USE_SELF_COLLISION | \
            pb.URDF_USE_SELF_COLLISION_INCLUDE_PARENT | pb.URDF_MAINTAIN_LINK_ORDER
        self.multibodies, base_bodies = [], []
        for mb in universe.multibodies:
            path, floating, base_geometries = writer.multibody(mb)
            body = pb.loadURDF(str(path), mb.p.tolist(), _quat(mb.R), useFixedBase=not floating, flags=flags,
                               physicsClientId=cid)
            self.multibodies.append(BulletMultibody(pb, cid, body, mb, floating))
            base_bodies.append(pb.loadURDF(str(writer.static(mb.name, base_geometries)), mb.p.tolist(), _quat(mb.R),
                                           useFixedBase=True, physicsClientId=cid) if base_geometries else None)
        statics = [pb.loadURDF(str(writer.static(st.name, [g for g in st.geometries if g.role == "collision"])),
                               useFixedBase=True, physicsClientId=cid) for st in universe.statics]
        # each collision object of Articula's world as (Bullet body, link)
        self.objects = []
        for o in world.objects:
            if o.multibody < 0:
                self.objects.append((statics[o.body], -1))
            elif o.body < 0:
                self.objects.append((base_bodies[o.multibody], -1))
            else:
                bm = self.multibodies[o.multibody]
                self.objects.append((bm.id, int(bm.link[o.body])))
        self._close_loops()
        self.object_of = {key: i for i, key in enumerate(self.objects)}
        offset = self.sim.bodies.offset                   # the row of each moving object in WorldBodies, else -1
        self.object_row = np.array([offset[o.multibody] + o.body if o.multibody >= 0 and o.body >= 0 else -1
                                    for o in world.objects], dtype=np.int64)
        self.object_multibody = np.array([o.multibody for o in world.objects], dtype=np.int64)
        self.object_names = [o.name for o in world.objects]
        self._materials(universe)
        self._filter_pairs()
        for bm in self.multibodies:
            for link in [-1] + list(range(pb.getNumJoints(bm.id, physicsClientId=cid))):
                pb.changeDynamics(bm.id, link, linearDamping=0.0, angularDamping=0.0, jointDamping=0.0,
                                  maxJointVelocity=MAX_JOINT_SPEED, physicsClientId=cid)
            dry = bm.mb.model.dof_friction[bm.joint_v] if self.friction_motors else np.zeros(len(bm.joints))
            pb.setJointMotorControlArray(bm.id, bm.joints, pb.VELOCITY_CONTROL, targetVelocities=[0.0] * len(dry),
                                         forces=dry.tolist(), physicsClientId=cid)   # stiction, or motors off
            for j, _, _ in bm.spherical:
                pb.setJointMotorControlMultiDof(bm.id, j, pb.POSITION_CONTROL, targetPosition=[0, 0, 0, 1],
                                                positionGain=0.0, velocityGain=0.0, force=[0.0, 0.0, 0.0],
                                                physicsClientId=cid)

    def _close_loops(self):
        """Each point closure (seed 003 §5.A) as a Bullet point-to-point constraint between its two anchors."""
        pb, cid = self.pb, self.client
        for bm in self.multibodies:
            for c in bm.mb.model.closures:
                link_a, anchor_a = self._anchor(bm, c.body_a, c.p_a)
                link_b, anchor_b = self._anchor(bm, c.body_b, c.p_b)
                constraint = pb.createConstraint(bm.id, link_a, bm.id, link_b, pb.JOINT_POINT2POINT, [0, 0, 0],
                                                 anchor_a, anchor_b, physicsClientId=cid)
                pb.changeConstraint(constraint, maxForce=1e9, physicsClientId=cid)

    def _anchor(self, bm, body, p):
        """(Bullet link, the point ``p`` of Articula's body frame in the link's inertial frame): Bullet places
        constraint anchors relative to a link's centre of mass and principal axes."""
        link = -1 if body < 0 else int(bm.link[body])
        info = self.pb.getDynamicsInfo(bm.id, link, physicsClientId=self.client)
        c_i, R_i = np.array(info[3]), quaternion_to_rotation(np.array(info[4]))
        if body < 0 and bm.floating:           # the base frame of a floating multibody is the world's
            return -1, (bm.mb.R @ p + bm.mb.p).tolist()
        return link, (R_i.T @ (np.asarray(p, float) - c_i)).tolist()

    def _pieces(self, g):
        """The convex pieces (vertices, geometry frame) Articula's collision made of mesh geometry ``g``."""
        w, s = self.world, self.world.shapes
        return [s.verts[s.vert_start[k]:s.vert_start[k] + s.vert_count[k]]
                for k in range(len(w.shape_geometry)) if w.geometries[w.shape_geometry[k]] is g]

    def _materials(self, universe):
        """Each collision object's friction √μ (Bullet multiplies a pair's); its geometries must agree."""
        table = material_table(universe.materials)
        self.object_mu = np.zeros(len(self.objects))
        for i, (body, link) in enumerate(self.objects):
            names = {self.world.geometries[g].material for g in self.world.shape_geometry[self.world.shape_object == i]}
            if len({table[n][0] for n in names}) > 1:
                raise UniverseError(f"the pybullet engine cannot run this universe: '{self.world.objects[i].name}' "
                                    f"has geometries of different materials {sorted(names)}; Bullet has one "
                                    f"friction per body", universe.source, value=sorted(names))
            self.object_mu[i] = table[names.pop()][0]
            self.pb.changeDynamics(body, link, lateralFriction=math.sqrt(self.object_mu[i]), restitution=0.0,
                                   physicsClientId=self.client)

    def _filter_pairs(self):
        """Bullet collides only the pairs Articula tracks (engine/collision/filters.py)."""
        tracked = {tuple(sorted(map(int, pair))) for pair in self.world.tables.pair_object}
        objects = self.world.objects
        for i in range(len(objects)):
            for j in range(i + 1, len(objects)):
                if (objects[i].mobile or objects[j].mobile) and (i, j) not in tracked:
                    (ba, la), (bb, lb) = self.objects[i], self.objects[j]
                    self.pb.setCollisionFilterPair(ba, bb, la, lb, 0, physicsClientId=self.client)

    # ---- state -----------------------------------------------------------------------------------------------
    def load(self, warm_start):
        """Bullet's state from the runs' (q, v); Bullet keeps no warm start Articula can restore."""
        pb, cid = self.pb, self.client
        for run, bm in zip(self.sim.runs, self.multibodies):
            q, v = run.q, run.v
            if bm.floating:
                R, p = _root_placement(bm.mb, q)
                pb.resetBasePositionAndOrientation(bm.id, p + R @ bm.c_i, _quat(R @ bm.R_i), physicsClientId=cid)
                pb.resetBaseVelocity(bm.id, R @ (v[:3] + _cross(v[3:6], bm.c_i)), R @ v[3:6], physicsClientId=cid)
            for j, iq, iv in zip(bm.joints, bm.joint_q, bm.joint_v):
                pb.resetJointState(bm.id, j, q[iq], v[iv], physicsClientId=cid)
            for j, iq, iv in bm.spherical:
                pb.resetJointStateMultiDof(bm.id, j, q[iq:iq + 4].tolist(), v[iv:iv + 3].tolist(), physicsClientId=cid)
        if warm_start is None:
            self.counts, self._contacts = ContactCounts(), ActiveContacts()

    def warm_start(self):
        return None

    # ---- the step --------------------------------------------------------------------------------------------
    def step(self, dt):
        sim, pb, cid = self.sim, self.pb, self.client
        with sim.timer.stage("dynamics"):   # Bullet's step: its dynamics, collision, contact solve, integration
            for run, bm in zip(sim.runs, self.multibodies):
                self._apply(run, bm)
            pb.stepSimulation(physicsClientId=cid)
        with sim.timer.stage("integration"):   # (q, v) in Articula's convention; the kinematics of the new state
            for run, bm in zip(sim.runs, self.multibodies):
                np.copyto(run.a, run.v)
                self._read(run, bm)
                sim.check_finite(run.q, "integration", run, "configuration q")
                sim.check_speed(run.v, "integration", run, "velocity v")
                np.subtract(run.v, run.a, out=run.a)
                run.a /= dt
            sim.refresh_kinematics()
            self._read_contacts()
            for run in sim.runs:
                sim.check_energy(run)

    def _apply(self, run, bm):
        """τ (with the joints' passive torques) on Bullet's motors; root torques and external wrenches as forces."""
        pb, cid, model = self.pb, self.client, run.model
        tau = run.tau - _passive(model, bm, run.q, run.v, dry=not self.friction_motors)
        pb.setJointMotorControlArray(bm.id, bm.joints, pb.TORQUE_CONTROL, forces=tau[bm.joint_v].tolist(),
                                     physicsClientId=cid)
        for j, _, iv in bm.spherical:
            pb.setJointMotorControlMultiDof(bm.id, j, pb.TORQUE_CONTROL, force=tau[iv:iv + 3].tolist(),
                                            physicsClientId=cid)
        wrenches = run.f_ext.copy()                       # body frames, at the body origins
        if bm.floating:
            wrenches[0] += tau[:6]
        for b in np.flatnonzero(np.any(wrenches != 0.0, axis=1)):
            R, p = run.R_world[b], run.p_world[b]
            link = int(bm.link[b])
            pb.applyExternalForce(bm.id, link, (R @ wrenches[b, :3]).tolist(), p.tolist(), pb.WORLD_FRAME,
                                  physicsClientId=cid)
            pb.applyExternalTorque(bm.id, link, (R @ wrenches[b, 3:]).tolist(), pb.WORLD_FRAME, physicsClientId=cid)

    def _read(self, run, bm):
        pb, cid, q, v = self.pb, self.client, run.q, run.v
        if bm.floating:
            p_com, orn = pb.getBasePositionAndOrientation(bm.id, physicsClientId=cid)
            v_com, w = (np.array(x) for x in pb.getBaseVelocity(bm.id, physicsClientId=cid))
            R = quaternion_to_rotation(np.array(orn)) @ bm.R_i.T
            p = np.array(p_com) - R @ bm.c_i
            mb = bm.mb
            quat = rotation_to_quaternion(mb.R.T @ R)
            q[:3], q[3:7] = mb.R.T @ (p - mb.p), quat if quat @ q[3:7] >= 0.0 else -quat   # the sign q had
            v[:3], v[3:6] = R.T @ (v_com - _cross(w, R @ bm.c_i)), R.T @ w
        if bm.joints:
            states = pb.getJointStates(bm.id, bm.joints, physicsClientId=cid)
            q[bm.joint_q] = [s[0] for s in states]
            v[bm.joint_v] = [s[1] for s in states]
        for j, iq, iv in bm.spherical:
            position, velocity = pb.getJointStateMultiDof(bm.id, j, physicsClientId=cid)[:2]
            q[iq:iq + 4], v[iv:iv + 3] = position, velocity

    def _read_contacts(self):
        """Bullet's contact points as ActiveContacts (the force on a: normal and two friction forces) and each
        run's contact wrenches ``f_contact`` (body frames, at the body origins)."""
        sim, objects = self.sim, self.world.objects
        points = [c for c in self.pb.getContactPoints(physicsClientId=self.client)
                  if (c[1], c[3]) in self.object_of and (c[2], c[4]) in self.object_of]
        n = len(points)
        a = np.array([self.object_of[(c[1], c[3])] for c in points], dtype=np.int64)
        b = np.array([self.object_of[(c[2], c[4])] for c in points], dtype=np.int64)
        rows = np.array([c[5] + c[6] + c[7] + c[11] + c[13] + (c[8], c[9], c[10], c[12]) for c in points],
                        dtype=float).reshape(n, 19)
        point = 0.5 * (rows[:, 0:3] + rows[:, 3:6])                      # midway between the two witnesses
        normal = rows[:, 6:9]                                            # on b, pointing towards a
        force = rows[:, 16, None] * normal + rows[:, 17, None] * rows[:, 9:12] + rows[:, 18, None] * rows[:, 12:15]
        depth = -rows[:, 15]
        wrench = self.sim.bodies.wrench                                  # world axes, at the body origins
        wrench[:] = 0.0
        for side, sign in ((a, 1.0), (b, -1.0)):
            g = self.object_row[side]
            on = g >= 0
            f = sign * force[on]
            np.add.at(wrench[:, :3], g[on], f)
            np.add.at(wrench[:, 3:], g[on], np.cross(point[on] - sim.bodies.p[g[on]], f))
        for run in sim.runs:
            rows_ = slice(run.offset, run.offset + run.model.nbodies)
            R, w = sim.bodies.R[rows_], wrench[rows_]
            run.f_contact[:, :3] = np.einsum("bji,bj->bi", R, w[:, :3])   # Rᵀ f
            run.f_contact[:, 3:] = np.einsum("bji,bj->bi", R, w[:, 3:])
            run.in_contact = bool(np.any(w))
        names = self.object_names
        self._contacts = ActiveContacts(point=freeze(point), normal=freeze(normal), force=freeze(force),
                                        depth=freeze(depth), mu=freeze(np.sqrt(self.object_mu[a] * self.object_mu[b])),
                                        body_a=tuple(names[i] for i in a), body_b=tuple(names[i] for i in b))
        if n:
            self.counts.steps += 1
            self.counts.contacts += n
            mb = self.object_multibody
            self.counts.self_contacts += int(np.count_nonzero((mb[a] == mb[b]) & (mb[a] >= 0)))
            self.counts.max_contacts = max(self.counts.max_contacts, n)

    # ---- reports ---------------------------------------------------------------------------------------------
    def contacts(self) -> ActiveContacts:
        return self._contacts

    def solver_stats(self) -> dict:
        """Bullet reports no iterations or residual of its solve: only the contact count."""
        return {"groups": (), "iterations": 0, "residual": float("nan"), "delassus": "bullet",
                "unconverged_steps": 0, "contacts": len(self._contacts)}

    def contact_report(self):
        return self.counts

    def sole_states(self) -> tuple:
        return ()

    def closure_forces(self) -> tuple:
        """Bullet's point-to-point constraints do not report their force in a documented frame: none."""
        return ()


def _passive(model, bm, q, v, dry=True):
    """The joints' passive torques τ_p = ξ_v q̇ + q_s sign(q̇) + k (q − q_ref) (seed 002 eq. (3), as Articula's
    rnea adds them), for every dof; zero for a model without them. ``dry=False``: without q_s sign(q̇) (Bullet's
    velocity motors hold the dry friction)."""
    tau = model.dof_damping * v + (model.dof_friction * np.sign(v) if dry else 0.0)
    if len(bm.spring_v):
        tau[bm.spring_v] += model.dof_stiffness[bm.spring_v] * (q[bm.spring_q] -
                                                                model.dof_spring_reference[bm.spring_v])
    return tau


def _cross(a, b):
    """a × b of two 3-vectors (numpy's cross costs 30 µs on them)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _root_placement(mb, q):
    """(R, p) of the floating root body in the world: the base frame (mb.R, mb.p) times the free joint's q."""
    R_q = quaternion_to_rotation(q[3:7])
    return mb.R @ R_q, mb.R @ q[:3] + mb.p


def _quat(R) -> list:
    return rotation_to_quaternion(np.asarray(R, float)).tolist()


def _import_pybullet():
    """``import pybullet``, without the build-time line its C module writes to standard error."""
    if "pybullet" in sys.modules:
        return sys.modules["pybullet"]
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            import pybullet
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return pybullet


def _disconnect(pb, client):
    try:
        pb.disconnect(physicsClientId=client)
    except Exception:          # already gone (interpreter shutdown)
        pass
