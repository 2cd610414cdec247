"""Where a geometry reaches in the world: used to drop a URDF robot on the ground."""
from __future__ import annotations

import itertools

import numpy as np


def geometry_points(g, R, p):
    """World points whose convex hull bounds geometry ``g`` placed at (R, p) (body placement), or None for
    unbounded shapes (planes). Spheres and capsules add their radius as ±radius along z."""
    gR, gp = R @ g.R, R @ g.p + p
    if g.kind == "box":
        corners = np.array(list(itertools.product(*[(-s / 2, s / 2) for s in g.size])))
        return corners @ gR.T + gp
    if g.kind == "sphere":
        return gp + np.array([[0, 0, -g.size[0]], [0, 0, g.size[0]]])
    if g.kind in ("cylinder", "capsule"):
        r, h = g.size
        ends = np.array([[0, 0, -h / 2], [0, 0, h / 2]]) @ gR.T + gp
        return np.vstack([ends + [0, 0, -r], ends + [0, 0, r]])
    if g.kind == "mesh":
        from engine.model.meshes import load_geometry_mesh
        return load_geometry_mesh(g, f"{g.role} geometry '{g.name}'").vertices @ gR.T + gp
    return None


def geometry_lowest_point(g, data):
    """Lowest world z of geometry ``g`` after forward kinematics in ``data`` (base frame = world), or None."""
    R, p = (np.eye(3), np.zeros(3)) if g.body < 0 else (data.oMi_R[g.body], data.oMi_p[g.body])
    points = geometry_points(g, R, p)
    return None if points is None else float(points[:, 2].min())
