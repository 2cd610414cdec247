"""The compiled, immutable description of one multibody: a kinematic tree as flat numpy arrays.

Indexing (names carry what they index):

* ``body_*``  (nbodies,)  mobile bodies in tree order (a parent always comes before its children).
  Body ``i`` is attached to its parent ``body_parent[i]`` by joint ``i``; ``-1`` is the multibody's base
  frame (the world for a fixed-base robot; a free-flyer joint makes the root mobile).
  Links welded by fixed joints are merged into the body they are welded to (inertia and geometry); their
  frames survive in ``frame_*``.
* ``joint_*`` (nbodies,)  joint ``i`` is the joint of body ``i``; its configuration lives in
  ``q[joint_idx_q[i] : joint_idx_q[i] + joint_nq[i]]`` and its velocity in ``v[joint_idx_v[i] : ... + joint_nv[i]]``.
* ``dof_*``   (nv,)       one entry per velocity coordinate.
* ``frame_*`` (nframes,)  named frames (every URDF link and joint) rigidly attached to a body.
* ``geometries``          collision and visual shapes attached to bodies (``body == -1``: the base frame).

Frames and units: the body frame is the joint frame (URDF convention); joint placements are the
pose of the joint frame in the parent body frame at q = 0; inertias are about the body's centre of mass
expressed in the body frame (``body_inertia_com``) and, derived, the spatial inertia about the body origin
(``body_inertia``, see ``engine.spatial``). SI units throughout.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np


class JointType(IntEnum):
    """Joint types; ``S`` (the motion subspace in the body frame) is constant for all of them."""

    REVOLUTE = 0   # q = angle (rad), about joint_axis
    PRISMATIC = 1  # q = displacement (m), along joint_axis
    SPHERICAL = 2  # q = unit quaternion (x, y, z, w); v = angular velocity in the body frame
    FREE = 3       # q = (x, y, z, qx, qy, qz, qw); v = (linear, angular) in the body frame (Pinocchio)
    PLANAR = 4     # q = (x, y, cos t, sin t) in the joint's xy plane; v = (vx, vy, wz) in the body frame


JOINT_NQ = {JointType.REVOLUTE: 1, JointType.PRISMATIC: 1, JointType.SPHERICAL: 4, JointType.FREE: 7,
            JointType.PLANAR: 4}
JOINT_NV = {JointType.REVOLUTE: 1, JointType.PRISMATIC: 1, JointType.SPHERICAL: 3, JointType.FREE: 6,
            JointType.PLANAR: 3}


@dataclass(frozen=True)
class Joint:
    """A movable joint as the public API shows it: ``name``, ``type`` and where it lives in q and v."""

    name: str
    type: JointType
    body: int
    idx_q: int
    idx_v: int
    nq: int
    nv: int


@dataclass(frozen=True)
class Geometry:
    """A collision or visual shape rigidly attached to a body.

    ``kind`` and ``size``: ``box`` (full extents x, y, z), ``sphere`` (radius,), ``cylinder`` (radius, length
    along z), ``capsule`` (radius, length of the segment along z), ``plane`` (normal +z of its frame, no
    size), ``mesh`` (``mesh_path`` scaled by ``mesh_scale``).  ``R``, ``p``: placement in the body frame.
    """

    name: str
    body: int
    kind: str
    size: tuple
    R: np.ndarray
    p: np.ndarray
    role: str = "collision"              # "collision" or "visual"
    mesh_path: str | None = None
    mesh_scale: tuple = (1.0, 1.0, 1.0)
    rgba: tuple = (0.7, 0.7, 0.7, 1.0)
    material: str = "default"            # contact material name (friction, restitution)
    collision_mode: str = "mesh"         # for meshes: "mesh", "convex" (hull) or "decompose"
    source: str | None = None            # "file:line" of the element that declared it, for error messages


@dataclass(frozen=True)
class Closure:
    """A loop-closure joint between two bodies (seed 003 §5.A), enforced by the contact solver.

    ``kind``: ``point`` (3 constraints: the two anchor points coincide) or ``hinge`` (5 constraints: anchors
    coincide and the two z axes stay aligned).  Anchors are placements in each body's frame.
    """

    name: str
    kind: str
    body_a: int
    R_a: np.ndarray
    p_a: np.ndarray
    body_b: int
    R_b: np.ndarray
    p_b: np.ndarray


@dataclass(frozen=True, eq=False)
class Model:
    name: str
    source: str
    nq: int
    nv: int
    nbodies: int
    # bodies (nbodies,)
    body_name: tuple
    body_parent: np.ndarray          # int64, -1 = base frame
    body_mass: np.ndarray            # kg
    body_com: np.ndarray             # (nb, 3) m, body frame
    body_inertia_com: np.ndarray     # (nb, 3, 3) kg m^2 about the CoM, body frame
    body_inertia: np.ndarray         # (nb, 6, 6) spatial inertia about the body origin
    # joints (nbodies,)
    joint_name: tuple
    joint_type: np.ndarray           # int64, JointType
    joint_placement_R: np.ndarray    # (nb, 3, 3) parent body -> joint frame at q = 0
    joint_placement_p: np.ndarray    # (nb, 3)
    joint_axis: np.ndarray           # (nb, 3) unit axis (revolute/prismatic), joint frame
    joint_idx_q: np.ndarray
    joint_idx_v: np.ndarray
    joint_nq: np.ndarray
    joint_nv: np.ndarray
    # dofs (nv,)
    dof_joint: np.ndarray            # body/joint index of each velocity coordinate
    dof_S: np.ndarray                # (nv, 6) motion-subspace column in the body frame
    dof_damping: np.ndarray          # viscous friction N m s/rad (or N s/m), reflected to the joint
    dof_friction: np.ndarray         # dry (Coulomb) friction N m (or N), reflected to the joint
    dof_effort_limit: np.ndarray     # inf when none
    dof_velocity_limit: np.ndarray   # inf when none
    dof_rotor_inertia: np.ndarray    # j_m: rotor inertia about its axis (seed 002 §2.3), kg m^2
    dof_rotor_transverse: np.ndarray  # i_m: rotor inertia about an axis orthogonal to its axis
    dof_rotor_axis: np.ndarray       # (nv, 3) eps: rotor axis in the parent body frame (carrier)
    dof_gear_ratio: np.ndarray       # alpha: rotor speed relative to the carrier = alpha * qdot
    dof_stiffness: np.ndarray        # passive spring (flexible joints), N m/rad or N/m
    dof_spring_reference: np.ndarray  # q at which the spring is at rest
    dof_passive: np.ndarray          # bool: no motor (a flexible bush, <Flexibility>); controllers leave it alone
    # configuration limits (nq,)
    q_lower: np.ndarray
    q_upper: np.ndarray
    # frames
    frame_name: tuple
    frame_body: np.ndarray           # -1 = base frame
    frame_R: np.ndarray              # (nf, 3, 3) frame placement in its body frame
    frame_p: np.ndarray              # (nf, 3)
    geometries: tuple = ()           # Geometry
    closures: tuple = ()             # Closure
    joints: tuple = field(default=())  # Joint, the public view of the movable joints

    def create_data(self):
        """A fresh preallocated workspace for the algorithms."""
        from engine.model.data import Data
        return Data(self)

    def body_index(self, name: str) -> int:
        return self.body_name.index(name)

    def frame_index(self, name: str) -> int:
        return self.frame_name.index(name)

    def joint(self, name: str) -> Joint:
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(name)

    @property
    def total_mass(self) -> float:
        return float(self.body_mass.sum())

    def __repr__(self):
        return f"Model({self.name!r}, nq={self.nq}, nv={self.nv}, nbodies={self.nbodies}, source={self.source!r})"


def neutral(model: Model) -> np.ndarray:
    """The neutral configuration: zero joint values, identity quaternions, planar angle 0."""
    q = np.zeros(model.nq)
    for i in range(model.nbodies):
        k = model.joint_idx_q[i]
        t = model.joint_type[i]
        if t == JointType.SPHERICAL:
            q[k + 3] = 1.0
        elif t == JointType.FREE:
            q[k + 6] = 1.0
        elif t == JointType.PLANAR:
            q[k + 2] = 1.0
    return q
