"""Human avatar generator: a full-body robot XML from stature, mass and sex, with de Leva's segment tables
(seed 004 §5.8, "anthropometric human avatar"; issue 14).

    articula avatar --height 1.75 --mass 70 --sex m -o avatar.xml [--scene avatar_scene.xml]

Segment parameters: P. de Leva, "Adjustments to Zatsiorsky–Seluyanov's segment inertia parameters",
J. Biomech. 29(9):1223–1230, 1996, Table 4 (joint-centre endpoints).  Per segment and sex: the mean segment
length of the sample (mm), the mass (% of body mass), the centre of mass along the segment from its first
endpoint and the radii of gyration about the sagittal (antero-posterior), transverse (medio-lateral) and
longitudinal axes through the centre of mass, all three in % of the segment length.  The radii are about the
centre of mass already, so I_G = m (r L)² per axis; the proximal-axis conversion I_G = I_O − m (a² + b²) is the
one Chessé's tables need (assets/robots/rabbit.xml, bip_sagittal.xml).  Lengths are scaled by height /
(mean stature of the sample); masses by the body mass (the female fractions sum to 99.99 %: they are
normalised so the segments add up to the requested mass).

The robot (our choices, documented in docs/models.md): a free-flying trunk (CERV–MIDH, frame at the mid-hip
point MIDH, x forward, y left, z up); spherical neck, shoulders, wrists, hips and ankles (quaternions); revolute
elbows and knees (positive = flexion).  Shoulder joint centres sit 10 % of the trunk length below CERV and
0.20 × height apart, hip joint centres 0.10 × height apart (de Leva gives no breadths).  The ankle sits above the
point of the sole at 20 % of the foot length from the heel.  Each segment carries a collision capsule between
its endpoints whose radius is that of a cylinder of the segment's mass and length at 1000 kg/m³.  q = 0 stands
upright, arms along the body, feet flat on z = 0 when the trunk frame is at the hip height.

``avatar_scene_xml`` writes a universe with the avatar pinned by its pelvis (a mannequin stand) under a joint PD
with gravity compensation on every joint axis (``pd`` with ``spherical="1"``): per-axis gains
kp = ω² M_kk, kd = 2 ζ ω M_kk with M_kk the joint-space inertia of axis k at q = 0 (ω = 2π·2 Hz, ζ = 1).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import ArticulaError, ModelError, did_you_mean

# de Leva 1996, Table 4: length (mm), mass (%), CoM (% from the first endpoint), radii of gyration
# sagittal, transverse, longitudinal (% of length).  Endpoints: head VERT–CERV, trunk CERV–MIDH, upper arm
# SJC–EJC, forearm EJC–WJC, hand WJC–MET3, thigh HJC–KJC, shank KJC–LMAL, foot HEEL–TTIP.
DE_LEVA = {
    "m": {"head": (242.9, 6.94, 50.02, 30.3, 31.5, 26.1), "trunk": (603.3, 43.46, 51.38, 32.8, 30.6, 16.9),
          "upper_arm": (281.7, 2.71, 57.72, 28.5, 26.9, 15.8), "forearm": (268.9, 1.62, 45.74, 27.6, 26.5, 12.1),
          "hand": (86.2, 0.61, 79.00, 62.8, 51.3, 40.1), "thigh": (422.2, 14.16, 40.95, 32.9, 32.9, 14.9),
          "shank": (434.0, 4.33, 44.59, 25.5, 24.9, 10.3), "foot": (258.1, 1.37, 44.15, 25.7, 24.5, 12.4)},
    "f": {"head": (243.7, 6.68, 48.41, 27.1, 29.5, 26.1), "trunk": (614.8, 42.57, 49.64, 30.7, 29.2, 14.7),
          "upper_arm": (275.1, 2.55, 57.54, 27.8, 26.0, 14.8), "forearm": (264.3, 1.38, 45.59, 26.1, 25.7, 9.4),
          "hand": (78.0, 0.56, 74.74, 53.1, 45.4, 33.5), "thigh": (368.5, 14.78, 36.12, 36.9, 36.4, 16.2),
          "shank": (432.3, 4.81, 44.16, 27.1, 26.7, 9.3), "foot": (228.3, 1.29, 40.14, 29.9, 27.9, 13.9)},
}
SAMPLE_STATURE_MM = {"m": 1741.0, "f": 1735.0}  # mean statures of the samples (73.0 kg, 61.9 kg), de Leva 1996
SEGMENTS = tuple(DE_LEVA["m"])
DENSITY = 1000.0                # kg/m³, for the capsule radii only
SHOULDER_DROP = 0.10            # shoulder joint centres below CERV, fraction of the trunk length
SHOULDER_WIDTH, HIP_WIDTH = 0.20, 0.10   # joint-centre distances, fractions of the height
HEEL_BACK = 0.20                # the ankle above the sole point at this fraction of the foot from the heel
PD_HZ, PD_ZETA = 2.0, 1.0


@dataclass(frozen=True)
class Segment:
    """One body segment: ``length`` (m), ``mass`` (kg), ``com`` (m from the first endpoint), principal
    inertia about the CoM (sagittal, transverse, longitudinal axes; kg m²) and capsule ``radius`` (m)."""

    name: str
    length: float
    mass: float
    com: float
    inertia: tuple
    radius: float


def segments(height: float, mass: float, sex: str, lengths=None) -> dict:
    """The eight segment types of a person, from de Leva's table for ``sex`` ('m' or 'f') scaled to ``height``
    (m) and ``mass`` (kg); ``lengths`` overrides some segment lengths (m).  Non-physical input raises
    ``ModelError`` naming the option and the value."""
    lengths = dict(lengths or {})
    _check_person(height, mass, sex, lengths)
    table, scale = DE_LEVA[sex], height / (SAMPLE_STATURE_MM[sex] / 1000.0)
    total = sum(row[1] * (1 if name in ("head", "trunk") else 2) for name, row in table.items())
    out = {}
    for name, (length_mm, mass_pct, com_pct, *radii) in table.items():
        L = lengths.get(name, scale * length_mm / 1000.0)
        m = mass * mass_pct / total
        out[name] = Segment(name, L, m, com_pct / 100.0 * L, tuple(m * (r / 100.0 * L) ** 2 for r in radii),
                            math.sqrt(m / (DENSITY * math.pi * L)))
    stack = sum(out[n].length for n in ("head", "trunk", "thigh", "shank"))
    if stack + out["foot"].radius >= height:
        raise ModelError(f"head + trunk + thigh + shank ({stack:.3f} m) leave no room for the feet in a body of "
                         f"--height {height} m; shorten a segment with --length", value=lengths)
    return out


def _check_person(height, mass, sex, lengths):
    if not (math.isfinite(height) and height > 0.0):
        raise ModelError("--height must be a positive number of metres", value=height)
    if not (math.isfinite(mass) and mass > 0.0):
        raise ModelError("--mass must be a positive number of kilograms", value=mass)
    if sex not in DE_LEVA:
        raise ModelError("--sex must be 'm' or 'f' (de Leva's male and female tables)", value=sex)
    for name, L in lengths.items():
        if name not in SEGMENTS:
            raise ModelError(f"--length: unknown segment '{name}'{did_you_mean(name, SEGMENTS)}; segments: "
                             f"{', '.join(SEGMENTS)}", value=name)
        if not (math.isfinite(L) and L > 0.0):
            raise ModelError(f"--length {name} must be a positive number of metres", value=L)
        if L >= height:
            raise ModelError(f"--length {name} = {L} m is longer than the body (--height {height} m)", value=L)


# ---- the robot XML -------------------------------------------------------------------------------------------

def avatar_xml(height: float, mass: float, sex: str, lengths=None, name: str = "avatar") -> str:
    """The avatar as Articula robot XML (URDF + spherical joints): see the module docstring."""
    s = segments(height, mass, sex, lengths)
    L = {n: seg.length for n, seg in s.items()}
    foot = s["foot"]
    ankle_height = height - (L["head"] + L["trunk"] + L["thigh"] + L["shank"])
    foot_axis_z = foot.radius - ankle_height       # the HEEL-TTIP line in the ankle frame: the sole on the ground
    shoulder_z = (1.0 - SHOULDER_DROP) * L["trunk"]
    links = [_link("trunk", s["trunk"], start=(0, 0, L["trunk"]), end=(0, 0, 0)),      # CERV -> MIDH
             _link("head", s["head"], start=(0, 0, L["head"]), end=(0, 0, 0))]          # VERT -> CERV
    joints = [_joint("neck", "spherical", "trunk", "head", (0, 0, L["trunk"]))]
    for side, sign in (("left", 1.0), ("right", -1.0)):
        arm = [("upper_arm", "shoulder", "trunk", (0, sign * SHOULDER_WIDTH * height / 2, shoulder_z)),
               ("forearm", "elbow", "upper_arm", (0, 0, -L["upper_arm"])),
               ("hand", "wrist", "forearm", (0, 0, -L["forearm"]))]
        leg = [("thigh", "hip", "trunk", (0, sign * HIP_WIDTH * height / 2, 0)),
               ("shank", "knee", "thigh", (0, 0, -L["thigh"]))]
        for seg, joint, parent, origin in arm + leg:
            links.append(_link(f"{side}_{seg}", s[seg], start=(0, 0, 0), end=(0, 0, -L[seg])))
            parent = parent if parent == "trunk" else f"{side}_{parent}"
            if joint in ("elbow", "knee"):   # flexion: forearm forward (about -y), shank backward (about +y)
                axis = (0, -1, 0) if joint == "elbow" else (0, 1, 0)
                joints.append(_joint(f"{side}_{joint}", "revolute", parent, f"{side}_{seg}", origin, axis,
                                     limits=(0.0, 2.6 if joint == "elbow" else 2.4)))
            else:
                joints.append(_joint(f"{side}_{joint}", "spherical", parent, f"{side}_{seg}", origin))
        heel, toe = (-HEEL_BACK * foot.length, 0, foot_axis_z), ((1 - HEEL_BACK) * foot.length, 0, foot_axis_z)
        links.append(_link(f"{side}_foot", foot, start=heel, end=toe))
        joints.append(_joint(f"{side}_ankle", "spherical", f"{side}_shank", f"{side}_foot", (0, 0, -L["shank"])))
    header = (f"<!-- Generated by `articula avatar` (engine/model/avatar.py) for a height of {height:g} m, a mass of "
              f"{mass:g} kg, sex {sex}: de Leva 1996 Table 4, {len(links)} segments{_overrides(lengths)}. Frames, "
              f"joints and capsules: docs/models.md. -->")
    return "\n".join(['<?xml version="1.0"?>', header, f'<robot name="{name}" floating_base="true">',
                      '  <material name="skin"><color rgba="0.87 0.72 0.6 1"/></material>',
                      *links, *joints, "</robot>", ""])


def _overrides(lengths) -> str:
    return "".join(f", {name} length {L:g} m" for name, L in sorted((lengths or {}).items()))


def _link(name, seg: Segment, start, end) -> str:
    """A segment from ``start`` to ``end`` (its first and second endpoints, link frame): CoM at ``com`` along
    it, principal axes (sagittal x, transverse y, longitudinal along the segment), capsule between the ends."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    axis = (end - start) / seg.length
    c = start + seg.com * axis
    I_sag, I_trans, I_long = seg.inertia
    I = np.diag([I_sag, I_trans, I_long]) if abs(axis[2]) > 0.5 else np.diag([I_long, I_trans, I_sag])
    mid = (start + end) / 2
    capsule = max(seg.length - 2 * seg.radius, 0.0)
    rpy = "0 0 0" if abs(axis[2]) > 0.5 else "0 1.5707963267948966 0"   # capsules lie along z; feet along x
    return (f'  <link name="{name}">\n'
            f'    <inertial><origin xyz="{_v(c)}"/><mass value="{_n(seg.mass)}"/>\n'
            f'      <inertia ixx="{_n(I[0, 0])}" ixy="0" ixz="0" iyy="{_n(I[1, 1])}" iyz="0" izz="{_n(I[2, 2])}"/>'
            f'</inertial>\n'
            f'    <visual><origin xyz="{_v(mid)}" rpy="{rpy}"/><geometry><capsule radius="{_n(seg.radius)}" '
            f'length="{_n(capsule)}"/></geometry><material name="skin"/></visual>\n'
            f'    <collision name="{name}"><origin xyz="{_v(mid)}" rpy="{rpy}"/><geometry><capsule '
            f'radius="{_n(seg.radius)}" length="{_n(capsule)}"/></geometry></collision>\n'
            f'  </link>')


def _joint(name, kind, parent, child, origin, axis=None, limits=None) -> str:
    extra = f'<axis xyz="{_v(axis)}"/>' if axis is not None else ""
    if limits is not None:
        extra += f'<limit lower="{limits[0]:g}" upper="{limits[1]:g}"/>'
    return (f'  <joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{_v(origin)}"/>{extra}</joint>')


def _v(x) -> str:
    return " ".join(_n(c) for c in x)


def _n(x) -> str:
    """A number written so that it reads back exactly (shortest round-trip form; no negative zero)."""
    return repr(float(x) + 0.0)


# ---- the scene -----------------------------------------------------------------------------------------------

def pd_gains(model) -> tuple:
    """Per-axis PD gains (kp, kd), (nv,) each: kp = ω² M_kk, kd = 2 ζ ω M_kk with M_kk the joint-space inertia
    of axis k at q = 0 (the subtree's inertia about that axis, every other joint locked); 0 on the free flyer."""
    from engine.dynamics import crba
    from engine.model.model import JointType, neutral
    M = crba(model, model.create_data(), neutral(model))
    w = 2.0 * math.pi * PD_HZ
    driven = model.joint_type[model.dof_joint] != JointType.FREE
    return w * w * np.diag(M) * driven, 2.0 * PD_ZETA * w * np.diag(M) * driven


def avatar_scene_xml(robot_path, robot_file: str, height: float) -> str:
    """A universe with the avatar at ``robot_file`` (as written in the scene, relative to it) pinned by its
    pelvis on a stand at hip height above a ground plane, under the per-axis PD of ``pd_gains``."""
    from engine.model import load_model
    model = load_model(robot_path, floating_base=False)
    kp, kd = pd_gains(load_model(robot_path, floating_base=True))
    kp, kd = kp[6:], kd[6:]                        # the pinned model has no free flyer
    hip = _sole_clearance(model) + 0.01
    return "\n".join([
        '<?xml version="1.0"?>',
        f"<!-- The avatar of `articula avatar` ({Path(robot_file).name}) on a mannequin stand: the pelvis is pinned "
        f"at hip height, a joint PD with gravity compensation (pd, spherical=\"1\": every axis of the spherical "
        f"joints too) holds q = 0, standing upright. Per-axis gains kp = w^2 M_kk, kd = 2 zeta w M_kk (w = 2 pi "
        f"{PD_HZ:g} Hz, zeta = {PD_ZETA:g}), engine/model/avatar.py; format: docs/universe-format.md. -->",
        '<Universe name="avatar">',
        "  <Settings><TimeStep>0.001</TimeStep></Settings>",
        f'  <MultiBody name="avatar"><File>{robot_file}</File><FloatingBase>false</FloatingBase>',
        f'    <Translation x="0" y="0" z="{_n(hip)}"/></MultiBody>',
        '  <Body name="ground"><Plane/><Mass>0</Mass><Color>0.55 0.6 0.65 1</Color></Body>',
        f'  <Controller plugin="pd" target="avatar" spherical="1" gravity_compensation="1"\n'
        f'              kp="{_v(kp)}"\n              kd="{_v(kd)}"/>',
        "  <Configurations><Camera fov=\"45\"><Translation x=\"3\" y=\"-2\" z=\"1.5\"/>"
        f'<LookAt x="0" y="0" z="{height / 2:.3g}"/></Camera></Configurations>',
        "</Universe>", ""])


def _sole_clearance(model) -> float:
    """How far the lowest collision capsule reaches below the trunk frame at q = 0 (the stand's height, less
    the 1 cm that keeps the feet off the ground)."""
    from engine.dynamics import forward_kinematics
    from engine.model.model import neutral
    data = model.create_data()
    forward_kinematics(model, data, neutral(model))
    low = 0.0
    for g in model.geometries:
        if g.role != "collision" or g.kind != "capsule":
            continue
        R, p = data.oMi_R[g.body] @ g.R, data.oMi_R[g.body] @ g.p + data.oMi_p[g.body]
        radius, length = g.size
        low = min(low, p[2] - abs(R[2, 2]) * length / 2 - radius)
    return -low


# ---- command line --------------------------------------------------------------------------------------------

def add_avatar_parser(subparsers):
    """Register ``articula avatar`` on an argparse ``subparsers``; the parsed namespace's ``run(args)`` does the
    work (``return args.run(args)``), as ``avatar_command`` does."""
    p = subparsers.add_parser("avatar", help="generate a human avatar robot file (de Leva 1996 segment tables)",
                              description=__doc__.split("\n\n")[0])
    _add_options(p)
    p.set_defaults(run=_run)
    return p


def avatar_command(argv=None) -> int:
    """``articula avatar ARGS``: ``argv`` holds the arguments after ``avatar``.  Writes the robot XML (and the
    scene); returns 0, or 2 on bad input with the error on stderr."""
    parser = argparse.ArgumentParser(prog="articula avatar", description=__doc__.split("\n\n")[0])
    _add_options(parser)
    return _run(parser.parse_args(argv))


def _add_options(p):
    p.add_argument("--height", type=float, required=True, help="standing height, m")
    p.add_argument("--mass", type=float, required=True, help="body mass, kg")
    p.add_argument("--sex", required=True, help="m or f: de Leva's male or female table")
    p.add_argument("-o", "--output", default="avatar.xml", help="robot XML to write (default avatar.xml)")
    p.add_argument("--scene", help="also write a universe XML showing the avatar under joint PD")
    p.add_argument("--length", action="append", default=[], metavar="SEGMENT=METRES",
                   help=f"override a segment length (repeatable); segments: {', '.join(SEGMENTS)}")


def _run(args) -> int:
    try:
        out = Path(args.output)
        out.write_text(avatar_xml(args.height, args.mass, args.sex, _lengths(args.length)))
        print(f"wrote {out}")
        if args.scene:
            scene = Path(args.scene)
            relative = os.path.relpath(out.resolve(), scene.resolve().parent)
            scene.write_text(avatar_scene_xml(out, Path(relative).as_posix(), args.height))
            print(f"wrote {scene}")
    except ArticulaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


def _lengths(items) -> dict:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ModelError("--length takes SEGMENT=METRES, e.g. --length thigh=0.45", value=item) from None
    return out
