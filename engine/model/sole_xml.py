"""``<Sole>`` elements of a universe's ``<MultiBody>``: a deformable FEM sole glued under a link (seed 000 §3.8).

    <Sole link="leg_left_6_link" shape="box" size="0.22 0.13 0.02" h="0.01" surface="floor">
      <Translation x="-0.006" y="0" z="-0.1074"/>        the sole frame in the link frame: its top face, glued
      <Material E="3e6" nu="0.4"/>                       to the link, at z = 0; x forward, z up
    </Sole>

``shape``: ``box`` (scikit-fem's structured box), ``two-layer`` (a top layer over a rear and a front pad, two
``<Material>``: the layer's, then the pads'), ``round`` or ``bevel`` (the box with rounded or bevelled bottom
edges of ``radius``), or ``file`` with ``file="sole.msh"`` (any volume mesh meshio reads, ``scale`` to metres;
one ``<Material region="tag">`` per region of the file). The mesh, its stiffness and its condensation onto the
candidate contact nodes are built here, once (``engine.deformable.build_sole``, cached on disk); every fault is
a ``UniverseError`` or ``SoleError`` naming the universe file, the line and the value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.deformable import (THESIS_SOLE, Material, SoleMesh, bottom_surface, box_mesh, build_sole, mesh_regions,
                               read_mesh, rounded_sole, two_layer_sole)
from engine.deformable.sole import Sole
from engine.errors import did_you_mean
from engine.model.paths import resolve_path

SHAPES = ("box", "two-layer", "round", "bevel", "file")
SOLE_ATTRIBUTES = {"link", "shape", "size", "h", "radius", "file", "scale", "surface", "rear_pad", "front_pad"}
FAR = 1.0     # m: a sole whose top face centre lies further from its link's origin is a mistake


@dataclass(frozen=True, eq=False)
class SoleSpec:
    """A sole of multibody ``multibody`` on its body ``body`` (``link`` names the link or frame it was declared
    on): ``R``, ``p`` place the sole frame in the body frame; ``surface`` is its contact material (friction);
    ``sole`` the precomputed model (K_c, K_c⁻¹); ``thickness`` in m; ``source`` file:line."""

    multibody: str
    link: str
    body: int
    R: np.ndarray
    p: np.ndarray
    surface: str
    sole: Sole
    thickness: float
    source: str


def sole_specs(r, el, path, model, multibody: str, surface: str, materials: dict, placement) -> tuple:
    """The ``SoleSpec`` of every ``<Sole>`` child of the ``<MultiBody>`` element ``el``."""
    specs, seen = [], {}
    for s in el.findall("Sole"):
        spec = _sole(r, s, path, model, multibody, surface, materials, placement)
        if spec.link in seen:
            r.fail(s, f"link {spec.link!r} already has a sole (line {seen[spec.link]})", spec.link)
        seen[spec.link] = s.sourceline
        specs.append(spec)
    return tuple(specs)


def _sole(r, el, path, model, multibody, surface, materials, placement) -> SoleSpec:
    r.check_attributes(el, SOLE_ATTRIBUTES)
    r.check_children(el, {"Translation", "Rotation", "Material"})
    link = r.string(el, "link", required=True)
    if link not in model.frame_name:
        r.fail(el, f"<Sole> link is not a link of {multibody!r}{did_you_mean(link, model.frame_name)}", link)
    f = model.frame_index(link)
    body = int(model.frame_body[f])
    if body < 0:
        r.fail(el, f"<Sole> link {link!r} is the base of {multibody!r}, which does not move: put the sole on a "
                   f"moving link", link)
    R_ls, p_ls = placement(r, el)
    R, p = model.frame_R[f] @ R_ls, model.frame_R[f] @ p_ls + model.frame_p[f]
    if np.linalg.norm(p_ls) > FAR:
        r.fail(el, f"<Sole> is {np.linalg.norm(p_ls):.3g} m from its link {link!r} (more than {FAR:g} m): check "
                   f"its <Translation>", p_ls.tolist())
    surface = r.string(el, "surface", default=surface)
    if surface not in materials:
        r.fail(el, f"<Sole> surface material is not declared{did_you_mean(surface, materials)}", surface)
    mesh, band = _mesh(r, el, path)
    elastic = _materials(r, el, path, mesh)
    file, line = str(path), el.sourceline
    sole = build_sole(mesh, elastic, contact=bottom_surface(mesh, band), file=file, line=line)
    thickness = float(np.ptp(mesh.node_position[:, 2]))
    return SoleSpec(multibody, link, body, R, p, surface, sole, thickness, f"{file}:{line}")


def _mesh(r, el, path) -> tuple[SoleMesh, float]:
    """The sole's mesh and the height band (m) above its lowest point holding the candidate contact nodes."""
    shape = r.string(el, "shape", default="file" if r.has(el, "file") else "box")
    if shape not in SHAPES:
        r.fail(el, f"<Sole> shape must be one of {', '.join(SHAPES)}{did_you_mean(shape, SHAPES)}", shape)
    if shape == "file":
        reference = r.string(el, "file", required=True)
        mesh_path = resolve_path(reference, path)
        if mesh_path is None:
            r.fail(el, "<Sole> file not found (relative to the universe file, or package://)", reference)
        scale = r.number(el, "scale", default=1.0, positive=True)
        return read_mesh(mesh_path, scale, file=str(path), line=el.sourceline), 0.0
    size = tuple(r.floats(el, "size", n=3, default=THESIS_SOLE))
    if min(size) <= 0:
        r.fail(el, "<Sole> size (length width thickness, m) must be > 0", list(size))
    h = r.number(el, "h", default=0.01, positive=True)
    if shape == "box":
        return box_mesh(size, h), 0.0
    if shape == "two-layer":
        rear = r.number(el, "rear_pad", default=0.09, positive=True)
        front = r.number(el, "front_pad", default=0.05, positive=True)
        if rear + front > size[0]:
            r.fail(el, f"<Sole> the pads ({rear:g} + {front:g} m) are longer than the sole", size[0])
        return two_layer_sole(size[0], size[1], size[2] / 2, size[2] / 2, rear, front, h), 0.0
    radius = r.number(el, "radius", default=min(0.01, size[2] / 2), positive=True)
    if not radius < min(size[2], size[1] / 2):
        r.fail(el, "<Sole> radius must be below the thickness and half the width", radius)
    return rounded_sole(size, radius, "round" if shape == "round" else "bevel", h), radius


def _materials(r, el, path, mesh) -> list[Material]:
    """One ``Material`` per material index of the mesh: the ``<Material E nu [region]>`` children in order, or
    matched to a file's regions by ``region``."""
    items = el.findall("Material")
    if not items:
        r.fail(el, "<Sole> needs a <Material E=\"...\" nu=\"...\"/> (Young's modulus in Pa, Poisson's ratio)")
    needed = int(mesh.tet_material.max()) + 1
    if any(m.get("region") is not None for m in items):
        regions = [str(t) for t in mesh_regions(resolve_path(r.string(el, "file", required=True), path))]
        by_region = {}
        for m in items:
            region = r.string(m, "region", required=True)
            if region not in regions:
                r.fail(m, f"<Material> region is not a region of the sole's file (its regions: "
                          f"{', '.join(regions)})", region)
            by_region[region] = m
        missing = [t for t in regions if t not in by_region]
        if missing:
            r.fail(el, f"<Sole> has no <Material> for region(s) {', '.join(missing)}", missing)
        items = [by_region[t] for t in regions]
    if len(items) != needed:
        r.fail(el, f"<Sole> mesh has {needed} material region(s) but {len(items)} <Material> are given", len(items))
    out = []
    for m in items:
        r.check_attributes(m, {"E", "nu", "region", "name"})
        out.append(Material(r.number(m, "E", required=True), r.number(m, "nu", required=True),
                            m.get("name") or m.get("region") or "", file=str(path), line=m.sourceline))
    return out
