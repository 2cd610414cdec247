"""Deformable soles in the 3D view: each sole's surface, its nodes displaced by the snapshot's U_c (every node
recovered with ``Sole.displacement``, eq. 4.22) times a magnification, coloured by contact pressure.

The pressure of a contact node is its normal force (the sole frame's z) over its tributary area — a third of the
area of each bottom triangle it belongs to; nodes off the ground keep the sole's colour. The colour runs from the
sole's grey-blue (no pressure) to red at the largest pressure of the frame; ``pressure_range`` gives it in Pa.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl

SOLE_RGBA = np.array([0.45, 0.55, 0.75, 1.0])
LOADED_RGBA = np.array([0.95, 0.15, 0.05, 1.0])
MAGNIFICATIONS = (1.0, 10.0, 100.0)


def tributary_areas(sole) -> np.ndarray:
    """(c,) area (m²) carried by each candidate contact node: a third of each bottom triangle it belongs to."""
    corners = sole.mesh.node_position[sole.contact_node][sole.contact_triangle]
    area = 0.5 * np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]), axis=1)
    out = np.zeros(len(sole.contact_node))
    np.add.at(out, sole.contact_triangle, np.repeat(area[:, None] / 3.0, 3, axis=1))
    return out


def node_pressure(state, areas) -> np.ndarray:
    """(c,) contact pressure (Pa) of each candidate node: its normal force over its area, 0 when pulled."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(areas > 0, np.maximum(state.force[:, 2], 0.0) / areas, 0.0)


class SoleMeshes:
    """One mesh item per sole of the universe (``update(snapshot)``, ``magnification``)."""

    def __init__(self, view, universe):
        self.specs = [spec for mb in universe.multibodies for spec in mb.soles]
        self.magnification = 1.0
        self.pressure_range = 0.0
        self.areas = [tributary_areas(spec.sole) for spec in self.specs]
        self.items = []
        for spec in self.specs:
            item = gl.GLMeshItem(smooth=True, shader="shaded", glOptions="opaque", computeNormals=True)
            item.setDepthValue(5)
            view.addItem(item)
            self.items.append(item)

    def update(self, snapshot):
        """Redraw every sole from the snapshot's ``SoleState``s."""
        pressures = [node_pressure(state, areas) for state, areas in zip(snapshot.soles, self.areas)]
        self.pressure_range = max([float(p.max()) for p in pressures if len(p)] + [0.0])
        for spec, state, pressure, item in zip(self.specs, snapshot.soles, pressures, self.items):
            sole = spec.sole
            U = sole.displacement(state.displacement.ravel()) if state.displacement.any() else 0.0
            x = (sole.mesh.node_position + self.magnification * U) @ state.R.T + state.p
            colours = np.tile(SOLE_RGBA, (len(x), 1))
            if self.pressure_range > 0.0:
                share = (pressure / self.pressure_range)[:, None]
                colours[sole.contact_node] = (1.0 - share) * SOLE_RGBA + share * LOADED_RGBA
            item.setMeshData(vertexes=x.astype(np.float32), faces=sole.mesh.boundary,
                             vertexColors=colours.astype(np.float32))

    def release(self, view):
        for item in self.items:
            view.removeItem(item)
        self.items = []
