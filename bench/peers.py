"""The peer engines of bench/contact.py parts (b), (d) and (e): MuJoCo and pybullet on the same robot, ground and
cubes as ours, stepped at 1 ms.

MuJoCo loads example-robot-data's Talos URDF through its own URDF compiler (collision meshes only, copied under
flat names because MuJoCo keeps only a mesh's file name; it collides their convex hulls), then a free joint is
added to the root body and a ground plane to the world. Every geom gets the friction 0.9 of our scenes. Its
default solver is kept (Newton, pyramidal cone, 100 iterations, tolerance 1e-8). Self-collisions follow our
default pair filter (collision/filters.py): not parent and child, and not touching (within 5 mm) in the neutral
pose — MuJoCo's hulls of the hip, knee and wrist links overlap by up to 9 cm there and would throw the robot.
"""
from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from time import perf_counter

import numpy as np

from engine.model.paths import example_robot_data_dir

TALOS_URDF = "talos_data/robots/talos_reduced.urdf"
FRICTION = 0.9


def mujoco_talos(tmp, model):
    """(MjModel, joint map) of Talos with a free joint over a ground plane; the map lists (qposadr, dofadr,
    our idx_q, our idx_v) of each of our 1-dof joints."""
    import mujoco
    erd, tmp = example_robot_data_dir(), Path(tmp)
    root = ET.parse(erd / TALOS_URDF).getroot()
    for tag in ("gazebo", "transmission"):
        for element in root.findall(tag):
            root.remove(element)
    for link in root.findall("link"):
        for visual in link.findall("visual"):
            link.remove(visual)
    for mesh in root.iter("mesh"):
        relative = mesh.get("filename").split("talos_data/meshes/")[1]
        flat = relative.replace("/", "_")
        shutil.copy(erd / "talos_data/meshes" / relative, tmp / flat)
        mesh.set("filename", flat)
    extension = ET.SubElement(root, "mujoco")
    ET.SubElement(extension, "compiler", meshdir=str(tmp), discardvisual="true", balanceinertia="true",
                  fusestatic="false", strippath="true")
    (tmp / "talos.urdf").write_text(ET.tostring(root, encoding="unicode"))
    mujoco.mj_saveLastXML(str(tmp / "talos.xml"), mujoco.MjModel.from_xml_path(str(tmp / "talos.urdf")))
    mjcf = ET.parse(tmp / "talos.xml")
    world = mjcf.getroot().find("worldbody")
    world.find("body").insert(0, ET.Element("freejoint", name="root"))
    world.insert(0, ET.Element("geom", name="ground", type="plane", size="0 0 1"))
    option = mjcf.getroot().find("option")
    if option is None:
        option = ET.SubElement(mjcf.getroot(), "option")
    option.set("timestep", "0.001")
    mjcf.write(tmp / "talos_free.xml")
    contact = mjcf.getroot().find("contact")
    if contact is None:
        contact = ET.SubElement(mjcf.getroot(), "contact")
    for a, b in _touching_in_neutral_pose(mujoco.MjModel.from_xml_path(str(tmp / "talos_free.xml"))):
        ET.SubElement(contact, "exclude", body1=a, body2=b)
    mjcf.write(tmp / "talos_free.xml")
    m = mujoco.MjModel.from_xml_path(str(tmp / "talos_free.xml"))
    m.geom_friction[:, 0] = FRICTION
    joints = [(m.joint(j.name).qposadr[0], m.joint(j.name).dofadr[0], j.idx_q, j.idx_v)
              for j in model.joints if j.nv == 1]
    return m, joints


def _touching_in_neutral_pose(m, margin=0.005):
    """Names of the robot's body pairs with geoms within ``margin`` in the neutral pose, base lifted off the
    ground."""
    import mujoco
    m.geom_margin[:] = margin
    d = mujoco.MjData(m)
    d.qpos[2], d.qpos[3] = 2.0, 1.0
    mujoco.mj_forward(m, d)
    bodies = m.geom_bodyid[d.contact.geom[:d.ncon]]
    return sorted({(m.body(a).name, m.body(b).name) for a, b in bodies if a > 0 and b > 0})


class MujocoTalos:
    """Talos in MuJoCo from our initial state; ``controller`` (our ``StancePD`` or None) sets the joint torques
    from MuJoCo's state before each step, untimed."""

    def __init__(self, tmp, sim, controller=None):
        import mujoco
        self.mujoco, run = mujoco, sim.runs[0]
        self.m, self.joints = mujoco_talos(tmp, run.model)
        self.d = mujoco.MjData(self.m)
        q0 = run.instance.q0
        self.d.qpos[:3], self.d.qpos[3:7] = q0[:3], np.r_[q0[6], q0[3:6]]       # (x, y, z, w)
        for qa, _, iq, _ in self.joints:
            self.d.qpos[qa] = q0[iq]
        mujoco.mj_forward(self.m, self.d)
        self.controller, self.q, self.v = controller, q0.copy(), np.zeros(run.model.nv)
        self.start = self.positions()

    def step(self):
        if self.controller is not None:
            for qa, da, iq, iv in self.joints:
                self.q[iq], self.v[iv] = self.d.qpos[qa], self.d.qvel[da]
            tau = self.controller.control(0.0, self.q, self.v)
            for _, da, _, iv in self.joints:
                self.d.qfrc_applied[da] = tau[iv]
        t0 = perf_counter()
        self.mujoco.mj_step(self.m, self.d)
        return perf_counter() - t0

    def contacts(self):
        """(contacts, self-contacts) of the last step."""
        n = self.d.ncon
        bodies = self.m.geom_bodyid[self.d.contact.geom[:n]] if n else np.zeros((0, 2), int)
        return n, int(np.count_nonzero(np.all(bodies > 0, axis=1)))

    def base_height(self):
        return float(self.d.qpos[2])

    def positions(self):
        """Base and the two ankles (leg_*_6_link origins), world frame."""
        feet = [self.d.xpos[self.m.body(name).id] for name in ("leg_left_6_link", "leg_right_6_link")]
        return np.array([self.d.qpos[:3]] + feet)


class BulletFalling:
    """Talos in pybullet (DIRECT, 1 ms) from our initial state, motors off, dropping on the plane of
    pybullet_data; ``self_collision``: between links that are not ancestors of one another
    (URDF_USE_SELF_COLLISION_EXCLUDE_ALL_PARENTS: with EXCLUDE_PARENT only, Talos's overlapping hip meshes
    throw it 60 m up)."""

    def __init__(self, sim, self_collision=True):
        import pybullet as pb
        import pybullet_data
        self.pb, run = pb, sim.runs[0]
        self.c = c = pb.connect(pb.DIRECT)
        pb.setGravity(0, 0, -9.81, physicsClientId=c)
        pb.setTimeStep(0.001, physicsClientId=c)
        pb.loadURDF(str(Path(pybullet_data.getDataPath()) / "plane.urdf"), physicsClientId=c)
        q0 = run.instance.q0
        flags = pb.URDF_USE_INERTIA_FROM_FILE
        if self_collision:
            flags |= pb.URDF_USE_SELF_COLLISION | pb.URDF_USE_SELF_COLLISION_EXCLUDE_ALL_PARENTS
        self.robot = pb.loadURDF(str(example_robot_data_dir() / TALOS_URDF), q0[:3], q0[3:7], flags=flags,
                                 physicsClientId=c)
        for j in range(pb.getNumJoints(self.robot, physicsClientId=c)):
            pb.changeDynamics(self.robot, j, lateralFriction=FRICTION, physicsClientId=c)
        pb.changeDynamics(self.robot, -1, lateralFriction=FRICTION, physicsClientId=c)
        pb.changeDynamics(0, -1, lateralFriction=FRICTION, physicsClientId=c)
        index = {pb.getJointInfo(self.robot, j, physicsClientId=c)[1].decode(): j
                 for j in range(pb.getNumJoints(self.robot, physicsClientId=c))}
        joints = [(index[j.name], j.idx_q) for j in run.model.joints if j.nv == 1 and j.name in index]
        for j, iq in joints:
            pb.resetJointState(self.robot, j, q0[iq], physicsClientId=c)
        pb.setJointMotorControlArray(self.robot, [j for j, _ in joints], pb.VELOCITY_CONTROL,
                                     forces=[0.0] * len(joints), physicsClientId=c)

    def step(self):
        t0 = perf_counter()
        self.pb.stepSimulation(physicsClientId=self.c)
        return perf_counter() - t0

    def contacts(self):
        points = self.pb.getContactPoints(bodyA=self.robot, physicsClientId=self.c)
        own = sum(1 for p in points if p[1] == p[2] == self.robot)
        return len(points), own

    def base_height(self):
        return float(self.pb.getBasePositionAndOrientation(self.robot, physicsClientId=self.c)[0][2])


def mujoco_cubes(n, spacing, z=0.05):
    """MuJoCo: n free 0.1 m cubes of 1 kg resting on a plane (their centres at height z), ``spacing`` apart."""
    import mujoco
    bodies = "".join(f'<body pos="{i * spacing} 0 {z}"><freejoint/><geom type="box" size="0.05 0.05 0.05" '
                     f'mass="1" friction="{FRICTION}"/></body>' for i in range(n))
    m = mujoco.MjModel.from_xml_string(f'<mujoco><option timestep="0.001"/><worldbody><geom type="plane" '
                                       f'size="0 0 1" friction="{FRICTION}"/>{bodies}</worldbody></mujoco>')
    d = mujoco.MjData(m)

    def step():
        t0 = perf_counter()
        mujoco.mj_step(m, d)
        return perf_counter() - t0
    return step, lambda: d.ncon


def bullet_cubes(n, spacing, z=0.05):
    """pybullet: the same cubes on the plane of pybullet_data."""
    import pybullet as pb
    import pybullet_data
    c = pb.connect(pb.DIRECT)
    pb.setGravity(0, 0, -9.81, physicsClientId=c)
    pb.setTimeStep(0.001, physicsClientId=c)
    plane = pb.loadURDF(str(Path(pybullet_data.getDataPath()) / "plane.urdf"), physicsClientId=c)
    pb.changeDynamics(plane, -1, lateralFriction=FRICTION, physicsClientId=c)
    shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.05] * 3, physicsClientId=c)
    for i in range(n):
        body = pb.createMultiBody(1.0, shape, basePosition=[i * spacing, 0, z], physicsClientId=c)
        pb.changeDynamics(body, -1, lateralFriction=FRICTION, physicsClientId=c)

    def step():
        t0 = perf_counter()
        pb.stepSimulation(physicsClientId=c)
        return perf_counter() - t0
    return step, lambda: len(pb.getContactPoints(physicsClientId=c))
