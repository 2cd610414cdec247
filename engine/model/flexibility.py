"""Flexible joints inserted from a universe file (seed 000 §3.7, thesis §4.2, eq. 4.3): HRP-2's ankle holds three
rubber bushes with dampers between the ankle and the sole plate; Nakaoka et al. (2007) model them as a virtual
passive joint with 3 DOF — a prismatic joint along z and revolute joints about x and y, each a spring-damper:

    f_z = −k_z q_z − c_z q̇_z,     τ_x = −k_x q_x − c_x q̇_x,     τ_y = −k_y q_y − c_y q̇_y        (4.3)

``insert_flexibility(desc, link, ...)`` splits ``link`` (a foot) in a robot description before it is compiled,
without editing the robot file: a **sole plate** ``<link>_sole_plate`` takes the link's collision shapes and a
fraction ``plate`` of its mass and inertia (same centre of mass), and hangs from the link through
``<link>_flex_z`` (prismatic along the link frame's z), ``<link>_flex_x`` and ``<link>_flex_y`` (revolute about
its x and y), at the link frame's origin and with two massless bodies between them: at zero deflection every
frame and shape is where it was, and the robot's mass and inertia are unchanged. The links welded to the link
(fixed joints: Talos's ``left_sole_link``, 10 g, under ``leg_left_6_link``) go with the plate: they mark the
sole, beyond the bush (the walking controller's contact and swing-foot tasks are on them). The plate must carry
mass: with the bush between massless bodies, the parent joint and the bush's rotation about the same axis would
move no mass (a singular mass matrix). The three joints are passive (``dof_passive``: controllers give them no torque),
their springs at rest at 0, without limits.

The thesis takes its gains from Nakaoka et al.'s identification on HRP-2 and does not print them. The defaults
(``DEFAULTS``) are our choice: for HRP-2 (58 kg) standing on two such ankles, k_z = 2e5 N/m gives a vertical
frequency √(2 k_z / m) / 2π = 13 Hz; k_x = k_y = 2000 N m/rad on two feet hold a 58 kg mass 0.8 m high
(m g h = 455 N m/rad) against tipping with 9× margin (Talos, 93 kg, CoM 1 m: 4.4×). The bush's springs and
dampers are integrated explicitly, like every joint force, so the plate's own oscillation must stay resolved by
the time step: with half of Talos's foot as the plate (0.8 kg; 0.005 and 0.0067 kg m² about the bush's x and y
axes) ω δt = 0.5 (z) and 0.63 (x) at δt = 1 ms, and the dampers c_z = 400 N s/m, c_x = c_y = 2.5 N m s/rad
(damping ratios 0.5 and 0.4) keep c δt / m below 1. Stiffer bushes, stronger dampers or a lighter plate need a
smaller time step; past it the run stops with a DivergenceError naming the bush joint.
"""
from __future__ import annotations

import numpy as np

from engine.model.description import JointSpec, LinkSpec, RobotDescription

DEFAULTS = {"kz": 2e5, "cz": 400.0, "kx": 2e3, "cx": 2.5, "ky": 2e3, "cy": 2.5, "plate": 0.5}
AXES = (("z", "prismatic", (0.0, 0.0, 1.0)), ("x", "revolute", (1.0, 0.0, 0.0)), ("y", "revolute", (0.0, 1.0, 0.0)))


def insert_flexibility(desc: RobotDescription, link: str, gains: dict, line=None) -> list[str]:
    """Split ``link`` into itself and a sole plate hanging from it by the passive 3-DOF bush (module
    docstring); ``gains``: kz, cz, kx, cx, ky, cy (SI) and ``plate`` (the plate's share of the link's mass, in
    (0, 1)). Returns the names of the three new joints."""
    foot, share = desc.links[link], gains["plate"]
    plate = LinkSpec(f"{link}_sole_plate", line=line, mass=share * foot.mass, com=foot.com.copy(),
                     inertia=share * foot.inertia, geometries=[g for g in foot.geometries if g.role == "collision"])
    foot.mass, foot.inertia = (1.0 - share) * foot.mass, (1.0 - share) * foot.inertia
    foot.geometries = [g for g in foot.geometries if g.role != "collision"]
    for joint in desc.joints:               # what is welded under the link is the sole's (module docstring)
        if joint.parent == link and joint.kind == "fixed":
            joint.parent = plate.name
    chain = [link, f"{link}_flex_zx", f"{link}_flex_xy", plate.name]
    for name in chain[1:3]:
        desc.links[name] = LinkSpec(name, line=line)
    desc.links[plate.name] = plate
    names = []
    for k, (axis, kind, vector) in enumerate(AXES):
        name = f"{link}_flex_{axis}"
        desc.joints.append(JointSpec(name, kind, chain[k], chain[k + 1], line=line, axis=np.array(vector),
                                     stiffness=gains[f"k{axis}"], damping=gains[f"c{axis}"], passive=True))
        names.append(name)
    return names
