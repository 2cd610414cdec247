"""Random kinematic trees for property tests: ``RobotDescription`` objects built in code, with random
topologies, joint types (revolute, prismatic, spherical, planar; optional free-flyer root), axes,
placements, physically valid inertias and optional geared rotors; and their Pinocchio twin (no rotors).
"""
from __future__ import annotations

import numpy as np

from engine import spatial
from engine.model.description import JointSpec, LinkSpec, RobotDescription, compile_model
from engine.model.model import JointType

JOINT_NV = {"revolute": 1, "prismatic": 1, "spherical": 3, "planar": 3}
ALL_KINDS = tuple(JOINT_NV)


def random_rotation(rng):
    quat = rng.normal(size=4)
    return spatial.quaternion_to_rotation(quat / np.linalg.norm(quat))


def random_unit(rng):
    u = rng.normal(size=3)
    return u / np.linalg.norm(u)


def random_inertia(rng, mass):
    """Rotational inertia at the CoM of a solid box with random sides in [0.1, 0.5] m, randomly turned:
    positive definite, and its principal moments satisfy the strict triangle inequality."""
    a, b, c = rng.uniform(0.1, 0.5, 3)
    principal = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R = random_rotation(rng)
    return R @ principal @ R.T


def random_tree(rng, nbodies=None, nv=None, kinds=ALL_KINDS, floating=True, rotors=True, chain_bias=0.5):
    """A random tree description (``rng``: numpy Generator or seed).

    Give ``nbodies`` (mobile bodies, free root included) or ``nv`` (total velocity dimension; joint kinds
    are then drawn among those that still fit).  ``chain_bias`` is the probability that a new body hangs
    from the last one (long chains) rather than from a uniformly drawn earlier one (bushy trees).
    Revolute and prismatic joints get a geared rotor (j_m, i_m, alpha, arbitrary axis) with probability
    1/2 when ``rotors``.
    """
    rng = np.random.default_rng(rng)
    desc = RobotDescription(name="random_tree", source="<random_tree>")
    names = ["base"]
    desc.links["base"] = _random_link(rng, "base")
    remaining = (nv - 6 if floating else nv) if nv is not None else None
    count = nbodies - (1 if floating else 0) if nbodies is not None else None
    while (remaining is not None and remaining > 0) or (count is not None and len(names) - 1 < count):
        choices = [k for k in kinds if remaining is None or JOINT_NV[k] <= remaining]
        kind = choices[rng.integers(len(choices))]
        parent = names[-1] if rng.random() < chain_bias else names[rng.integers(len(names))]
        name = f"link{len(names)}"
        desc.links[name] = _random_link(rng, name)
        desc.joints.append(_random_joint(rng, f"j{len(names):03d}", kind, parent, name, rotors))
        names.append(name)
        if remaining is not None:
            remaining -= JOINT_NV[kind]
    desc.floating_base = floating
    return desc


def random_model(rng, **kwargs):
    return compile_model(random_tree(rng, **kwargs))


def _random_link(rng, name):
    mass = rng.uniform(0.5, 5.0)
    return LinkSpec(name=name, mass=mass, com=rng.uniform(-0.2, 0.2, 3), inertia=random_inertia(rng, mass))


def _random_joint(rng, name, kind, parent, child, rotors):
    j = JointSpec(name=name, kind=kind, parent=parent, child=child, R=random_rotation(rng),
                  p=rng.uniform(-0.5, 0.5, 3), axis=random_unit(rng))
    if rotors and kind in ("revolute", "prismatic") and rng.random() < 0.5:
        j.rotor_inertia = rng.uniform(1e-5, 1e-4)  # small enough for any carrier to hold a few (J - J_m >= 0)
        j.rotor_transverse = rng.uniform(0.2, 1.0) * j.rotor_inertia
        j.gear_ratio = rng.choice([-1.0, 1.0]) * rng.uniform(1.0, 50.0)
        j.rotor_axis = random_unit(rng)
    return j


def to_pinocchio(model):
    """The same tree as a ``pinocchio.Model`` (same q and v ordering); rotors are not carried over."""
    import pinocchio as pin

    pm = pin.Model()
    ids = []
    for i in range(model.nbodies):
        t, axis = JointType(model.joint_type[i]), model.joint_axis[i]
        joint = {JointType.REVOLUTE: lambda: pin.JointModelRevoluteUnaligned(axis),
                 JointType.PRISMATIC: lambda: pin.JointModelPrismaticUnaligned(axis),
                 JointType.SPHERICAL: pin.JointModelSpherical, JointType.FREE: pin.JointModelFreeFlyer,
                 JointType.PLANAR: pin.JointModelPlanar}[t]()
        parent = 0 if model.body_parent[i] < 0 else ids[model.body_parent[i]]
        placement = pin.SE3(model.joint_placement_R[i], model.joint_placement_p[i])
        jid = pm.addJoint(parent, joint, placement, model.joint_name[i])
        pm.appendBodyToJoint(jid, pin.Inertia(model.body_mass[i], model.body_com[i], model.body_inertia_com[i]),
                             pin.SE3.Identity())
        ids.append(jid)
    return pm
