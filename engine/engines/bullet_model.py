"""A universe as pybullet sees it: URDF files written from Articula's Models, and what Bullet cannot represent.

Each multibody becomes one URDF written from its ``Model`` (not from the file it came from, so a robot XML, a
flexible joint or an avatar loads the same way): one link per body with its mass, centre of mass and inertia
about it (Bullet diagonalises the tensor), one joint per body with its placement and axis, no joint limits
(Articula does not enforce them either), and its collision geometries. A mesh on a moving body is written as
the convex pieces Articula's collision uses (its hull, or its convex decomposition), so both engines collide
the same solids; a mesh on a static body is Bullet's concave triangle mesh. Static bodies and the geometries
fixed to a multibody's base frame become fixed-base URDFs.

``refusals(universe)`` lists, with the file and line that declares them, the features Bullet has no
counterpart for; the engine refuses such a universe rather than dropping them silently. ``ignored(universe)``
lists the settings of Articula's own contact stage a universe sets (its ``<Solver>``: the exact Coulomb cone,
tolerance, iterations): they are numerical choices of the other engine, so Bullet runs the scene with its own
solver and says so in a warning.
"""
from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from engine.model.model import JointType

URDF_JOINT = {JointType.REVOLUTE: "continuous", JointType.PRISMATIC: "prismatic", JointType.SPHERICAL: "spherical"}
BASE_LINK = "__articula_base__"
MESH_FORMATS = (".stl", ".obj")     # read by Bullet itself; other formats are converted to .obj with trimesh


def refusals(universe) -> list:
    """The features of ``universe`` pybullet cannot run, each as 'what (file:line)'."""
    out = []
    src = universe.sources
    if universe.integrator.replace("-", "_") != "semi_implicit_euler":
        out.append(f"the integrator '{universe.integrator}' ({src.get('integrator', universe.source)}): "
                   f"Bullet integrates with semi-implicit Euler only")
    for name, material in universe.materials.items():
        if isinstance(name, tuple):
            out.append(f"the friction of the pair of materials {name}: Bullet combines per-body values")
        elif material.restitution > 0.0:
            out.append(f"the restitution {material.restitution:g} of material '{name}' "
                       f"({src.get('material:' + name, universe.source)}): Bullet multiplies the restitutions "
                       f"of a pair where Articula takes the larger")
    for mb in universe.multibodies:
        out += _model_refusals(mb)
    return out


def ignored(universe) -> list:
    """The settings of ``universe`` that only Articula's contact stage reads, each as 'what (file:line)'."""
    if "solver" not in universe.sources:
        return []
    return [f"the contact solver '{universe.solver.name}' ({universe.sources['solver']}) is Articula's: Bullet "
            f"solves its contacts itself (sequential impulses on a linearised friction cone, not the exact "
            f"Coulomb cone)"]


def _model_refusals(mb) -> list:
    model, out = mb.model, []
    where = model.source
    for spec in mb.soles:
        out.append(f"the FEM sole under '{mb.name}/{spec.link}' ({spec.source}): Bullet has no deformable "
                   f"contact in its multibodies")
    for w in mb.wheels:
        out.append(f"the rolling wheel '{mb.name}/{model.body_name[w.body]}' ({w.source}): Bullet has no ideal "
                   f"rolling-without-slipping constraint")
    for c in model.closures:
        if c.kind != "point":
            out.append(f"the {c.kind} closure '{c.name}' of '{mb.name}' ({where}): Bullet's multibody constraints "
                       f"close a loop at a point only")
    roots = [b for b in range(model.nbodies) if model.body_parent[b] < 0]
    for b in range(model.nbodies):
        kind, name = JointType(int(model.joint_type[b])), model.joint_name[b]
        if kind == JointType.FREE and (b != 0 or len(roots) > 1):
            out.append(f"the free joint '{name}' of '{mb.name}' ({where}): Bullet floats the root of a "
                       f"multibody only, and a multibody has one root")
        elif kind == JointType.PLANAR:
            out.append(f"the planar joint '{name}' of '{mb.name}' ({where}): Bullet has no planar joint")
    for k in range(model.nv):
        joint = model.joint_name[model.dof_joint[k]]
        if model.dof_rotor_inertia[k] > 0.0 or model.dof_rotor_transverse[k] > 0.0:
            out.append(f"the motor rotor of joint '{joint}' of '{mb.name}' ({where}): Bullet has no geared "
                       f"rotor inertia")
        kind = JointType(int(model.joint_type[model.dof_joint[k]]))
        if kind == JointType.SPHERICAL and model.dof_stiffness[k] > 0.0:
            out.append(f"the spring of the spherical joint '{joint}' of '{mb.name}' ({where})")
    for g in model.geometries:
        if g.role == "collision" and g.kind == "plane" and g.body >= 0:
            out.append(f"the plane '{g.name}' on the moving body '{model.body_name[g.body]}' of '{mb.name}' "
                       f"({g.source or where}): Bullet's planes are static")
    return out


def _origin(R, p) -> str:
    rpy = Rotation.from_matrix(np.asarray(R, float)).as_euler("xyz")    # URDF: fixed axes x, y, z
    return f'<origin xyz="{_v(p)}" rpy="{_v(rpy)}"/>'


def _v(x) -> str:
    return " ".join(repr(float(a)) for a in np.ravel(x))


class UrdfWriter:
    """Writes the URDFs of one universe into ``folder``; ``pieces(g)`` gives the convex pieces (vertices (n, 3)
    in the geometry frame) Articula's collision made of the mesh geometry ``g`` of a moving body."""

    def __init__(self, folder: Path, pieces):
        self.folder, self.pieces, self.count = Path(folder), pieces, 0

    def multibody(self, mb) -> tuple:
        """(path, floating, base_geometries): the URDF of multibody ``mb``; ``floating`` when its root body has
        a free joint (the URDF's base link is then body 0, else a fixed base link carries the roots)."""
        model = mb.model
        floating = model.nbodies > 0 and int(model.joint_type[0]) == JointType.FREE
        links, joints = [], []
        if not floating:
            links.append(self._link(BASE_LINK, 0.0, np.zeros(3), np.zeros((3, 3)), (), mobile=True))
        for b in range(model.nbodies):
            geoms = [g for g in model.geometries if g.role == "collision" and g.body == b]
            links.append(self._link(model.body_name[b], model.body_mass[b], model.body_com[b],
                                    model.body_inertia_com[b], geoms, mobile=True))
            if b == 0 and floating:
                continue
            parent = model.body_parent[b]
            kind = JointType(int(model.joint_type[b]))
            limit = '<limit lower="1" upper="-1" effort="0" velocity="0"/>' if kind == JointType.PRISMATIC else ""
            joints.append(f'<joint name={quoteattr(model.joint_name[b])} type="{URDF_JOINT[kind]}">'
                          f'<parent link={quoteattr(BASE_LINK if parent < 0 else model.body_name[parent])}/>'
                          f'<child link={quoteattr(model.body_name[b])}/>'
                          f'{_origin(model.joint_placement_R[b], model.joint_placement_p[b])}'
                          f'<axis xyz="{_v(model.joint_axis[b])}"/>{limit}</joint>')
        base = tuple(g for g in model.geometries if g.role == "collision" and g.body < 0)
        return self._write(mb.name, links + joints), floating, base

    def static(self, name, geometries) -> Path:
        """A fixed-base URDF of one link holding ``geometries`` (placed in the world frame)."""
        return self._write(name, [self._link(name, 0.0, np.zeros(3), np.zeros((3, 3)), geometries, mobile=False)])

    def _write(self, name, elements) -> Path:
        self.count += 1
        path = self.folder / f"{self.count:03d}.urdf"
        path.write_text(f"<robot name={quoteattr(name)}>\n" + "\n".join(elements) + "\n</robot>\n")
        return path

    def _link(self, name, mass, com, inertia, geometries, mobile) -> str:
        I = np.asarray(inertia, float).tolist()
        inertial = (f'<inertial><origin xyz="{_v(com)}"/><mass value="{float(mass)!r}"/><inertia '
                    f'ixx="{I[0][0]!r}" ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" iyy="{I[1][1]!r}" iyz="{I[1][2]!r}" '
                    f'izz="{I[2][2]!r}"/></inertial>')
        collisions = "".join(self._collisions(g, mobile) for g in geometries)
        concave = '' if mobile else ' concave="yes"'
        return f"<link name={quoteattr(name)}{concave}>{inertial}{collisions}</link>"

    def _collisions(self, g, mobile) -> str:
        origin = _origin(g.R, g.p)
        if g.kind == "mesh":
            if mobile:                                   # the convex pieces Articula collides
                return "".join(f'<collision>{origin}<geometry><mesh filename="{self._obj(v)}"/></geometry>'
                               f'</collision>' for v in self.pieces(g))
            return (f'<collision>{origin}<geometry><mesh filename="{self._mesh_file(g.mesh_path)}" '
                    f'scale="{_v(g.mesh_scale)}"/></geometry></collision>')
        size = g.size
        if g.kind != "plane" and (size[0] == 0.0 if g.kind == "capsule" else not np.all(size)):
            return ""                                    # no volume: Articula's collision skips it too
        shape = {"box": lambda: f'<box size="{_v(size)}"/>',
                 "sphere": lambda: f'<sphere radius="{_v(size[0])}"/>',
                 "cylinder": lambda: f'<cylinder radius="{_v(size[0])}" length="{_v(size[1])}"/>',
                 "capsule": lambda: f'<capsule radius="{_v(size[0])}" length="{_v(size[1])}"/>',
                 "plane": lambda: '<plane normal="0 0 1"/>'}[g.kind]()
        return f"<collision>{origin}<geometry>{shape}</geometry></collision>"

    def _obj(self, vertices) -> str:
        self.count += 1
        path = self.folder / f"piece_{self.count:04d}.obj"
        trimesh.convex.convex_hull(np.asarray(vertices, float)).export(path)
        return str(path)

    def _mesh_file(self, mesh_path) -> str:
        if Path(mesh_path).suffix.lower() in MESH_FORMATS:
            return str(mesh_path)
        self.count += 1
        path = self.folder / f"mesh_{self.count:04d}.obj"
        trimesh.load(mesh_path, force="mesh").export(path)
        return str(path)
