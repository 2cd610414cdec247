"""What the viewport draws over the bodies: link frames, centres of mass, joint axes, contact points with their
force arrows and friction cones (seed 000 Fig 5.1: a cone per contact, its height following the normal force),
each robot's support polygon with its ZMP (seed 004 §2.5, seed 003 §5.C), and the user's or a device's
external forces.

The geometry is computed by plain numpy functions (``frame_axes``, ``arrows``, ``friction_cones``, ...) from a
Snapshot, then handed to a few pyqtgraph items that are updated in place each frame. Contact points are small
icosahedra of ``glyph_radius`` metres (the viewport sizes them from the scene), drawn over the bodies.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
from scipy.spatial import ConvexHull, QhullError
import trimesh
from OpenGL import GL

from app.signals import centre_of_mass, zmp
from engine import JointType

AXIS_COLORS = np.array([[0.95, 0.2, 0.2, 1.0], [0.2, 0.85, 0.2, 1.0], [0.25, 0.45, 1.0, 1.0]])
CONE_SEGMENTS = 16
FRAME_SIZE = 0.12   # m, length of the drawn link frame axes
ICOSAHEDRON = trimesh.creation.icosahedron()      # unit circumradius: 12 vertices, 20 faces
ON_TOP = {GL.GL_DEPTH_TEST: False, GL.GL_BLEND: False, GL.GL_CULL_FACE: False}   # seen through the bodies


def frame_axes(R, p, length):
    """Line segments (x red, y green, z blue) of frames (R (n, 3, 3), p (n, 3)): positions (6n, 3), colours."""
    tips = p[:, None, :] + length * np.transpose(R, (0, 2, 1))          # (n, 3 axes, 3)
    pos = np.stack([np.repeat(p[:, None, :], 3, axis=1), tips], axis=2)  # (n, 3, 2, 3)
    colors = np.broadcast_to(AXIS_COLORS[None, :, None, :], (len(p), 3, 2, 4))
    return pos.reshape(-1, 3), colors.reshape(-1, 4)


def arrows(origins, vectors, head=0.2):
    """Line segments of arrows from ``origins`` along ``vectors`` (n, 3): a shaft and two head barbs each."""
    origins, vectors = np.asarray(origins, float).reshape(-1, 3), np.asarray(vectors, float).reshape(-1, 3)
    tips = origins + vectors
    side = np.cross(vectors, _any_perpendicular(vectors))
    back = -head * vectors
    barbs = [tips + back + 0.5 * head * side, tips + back - 0.5 * head * side]
    return np.stack([origins, tips, tips, barbs[0], tips, barbs[1]], axis=1).reshape(-1, 3)


def glyphs(points, radius):
    """Icosahedra of circumradius ``radius`` centred on ``points`` (n, 3): vertices (12 n, 3), faces (20 n, 3)."""
    points = np.asarray(points, float).reshape(-1, 3)
    vertices = points[:, None, :] + radius * ICOSAHEDRON.vertices[None, :, :]
    faces = ICOSAHEDRON.faces[None, :, :] + len(ICOSAHEDRON.vertices) * np.arange(len(points))[:, None, None]
    return vertices.reshape(-1, 3), faces.reshape(-1, 3)


def friction_cones(points, axes, heights, mu, segments=CONE_SEGMENTS):
    """Lateral surfaces of Coulomb cones: apex at each point, opening along the unit ``axes`` with half-angle
    atan(mu), ``heights`` long (so the rim radius is mu * height). Returns vertices (n (s + 1), 3), faces. A
    contact with μ = ∞ (a rolling wheel: no slip) has no cone to draw and is left out."""
    finite = np.isfinite(np.asarray(mu, float)).reshape(-1)
    points = np.asarray(points, float).reshape(-1, 3)[finite]
    axes = np.asarray(axes, float).reshape(-1, 3)[finite]
    heights, mu = np.asarray(heights, float).reshape(-1)[finite], np.asarray(mu, float).reshape(-1)[finite]
    u = _any_perpendicular(axes)
    w = np.cross(axes, u)
    angle = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    radius = (np.asarray(mu, float) * heights)[:, None, None]
    rim = (points + heights[:, None] * axes)[:, None, :] + radius * (
        np.cos(angle)[None, :, None] * u[:, None, :] + np.sin(angle)[None, :, None] * w[:, None, :])
    vertices = np.concatenate([points[:, None, :], rim], axis=1).reshape(-1, 3)
    k = np.arange(segments)
    one = np.stack([np.zeros(segments, int), 1 + k, 1 + (k + 1) % segments], axis=1)   # apex, rim k, rim k+1
    faces = (one[None, :, :] + (segments + 1) * np.arange(len(points))[:, None, None]).reshape(-1, 3)
    return vertices, faces


def cone_heights(forces, normals, scale):
    """Cone heights proportional to the normal forces (seed 000 Fig 5.1): scale * max(f . n, 0)."""
    return scale * np.maximum(np.einsum("ni,ni->n", forces, normals), 0.0)


def _any_perpendicular(v):
    """A unit vector orthogonal to each row of v (n, 3) (zero rows give an arbitrary unit vector)."""
    trial = np.where(np.abs(v[:, [0]]) < 0.9 * np.linalg.norm(v, axis=1, keepdims=True),
                     np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
    u = np.cross(v, trial)
    n = np.linalg.norm(u, axis=1, keepdims=True)
    return np.where(n > 0.0, u / np.where(n > 0.0, n, 1.0), np.array([[0.0, 0.0, 1.0]]))


def joint_axes(model, R, p, length):
    """Segments along the axis of each revolute or prismatic joint, centred on its body origin."""
    moving = np.flatnonzero(np.isin(model.joint_type, (JointType.REVOLUTE, JointType.PRISMATIC)))
    direction = np.einsum("nij,nj->ni", R[moving], model.joint_axis[moving])
    return np.stack([p[moving] - length * direction, p[moving] + length * direction], axis=1).reshape(-1, 3)


def contact_view(contacts, static_names):
    """Contacts seen from the mobile body: (points, unit normals, forces on it, mu); a contact whose body a is
    static (the ground) is turned round so that normal and force point into the mobile body b."""
    flip = np.array([name in static_names for name in contacts.body_a], dtype=bool)
    sign = np.where(flip, -1.0, 1.0)[:, None]
    return (np.asarray(contacts.point, float), sign * np.asarray(contacts.normal, float),
            sign * np.asarray(contacts.force, float), np.asarray(contacts.mu, float))


def support_polygons(contacts, prefixes):
    """Per multibody (``prefixes``: "name/" of its bodies) with at least one loaded near-vertical contact: the
    edges (pairs of points) of the convex hull of those contacts' points on the horizontal plane at their mean
    height (the support polygon; a segment or a point when they are aligned or one), and its ZMP
    (``signals.zmp``, the centre of pressure). Returns (edge points (2k, 3), ZMP points (m, 3))."""
    points, normals = np.asarray(contacts.point, float), np.asarray(contacts.normal, float)
    force = np.asarray(contacts.force, float)
    edges, zmps = [], []
    for prefix in prefixes:
        ours = np.array([a.startswith(prefix) or b.startswith(prefix) for a, b in zip(contacts.body_a,
                                                                                      contacts.body_b)], bool)
        loaded = ours & (np.abs(normals[:, 2]) > np.sqrt(0.5)) & (np.abs(np.einsum("ni,ni->n", force, normals)) > 0)
        if not loaded.any():
            continue
        xy, height = points[loaded, :2], points[loaded, 2].mean()
        ring = _hull(xy)
        ring = np.c_[ring, np.full(len(ring), height)]
        edges.append(np.stack([ring, np.roll(ring, -1, axis=0)], axis=1).reshape(-1, 3))
        zmps.append(zmp(contacts, prefix))
    return (np.concatenate(edges) if edges else np.zeros((0, 3))), np.array(zmps).reshape(-1, 3)


def _hull(xy):
    """The convex hull of 2D points, counter-clockwise (scipy's Qhull); collinear points give the segment's two
    ends, one point itself."""
    pts = np.unique(xy, axis=0)
    if len(pts) >= 3:
        try:
            return pts[ConvexHull(pts).vertices]
        except QhullError:                                   # collinear: a segment
            pass
    if len(pts) < 2:
        return pts
    along = (pts - pts[0]) @ (pts[-1] - pts[0])
    return pts[[np.argmin(along), np.argmax(along)]]


class Overlays:
    """The overlay items of one viewport and their visibility switches (``set_visible(name, on)``)."""

    NAMES = ("link frames", "centre of mass", "joint axes", "contacts", "friction cones", "support polygon",
             "external forces")

    def __init__(self, view, universe, force_scale: float, glyph_radius: float = 0.01):
        self.universe = universe
        self.force_scale = force_scale                        # metres of arrow per newton
        self.glyph_radius = glyph_radius                      # metres, of a contact point's icosahedron
        self.static_names = {s.name for s in universe.statics}
        self.items = {
            "link frames": gl.GLLinePlotItem(mode="lines", width=2, antialias=True),
            "centre of mass": gl.GLScatterPlotItem(size=9, color=(1.0, 0.9, 0.1, 1.0), pxMode=True),
            "joint axes": gl.GLLinePlotItem(mode="lines", width=2, color=(1.0, 0.85, 0.1, 1.0)),
            "contacts": gl.GLMeshItem(color=(1.0, 0.3, 0.1, 1.0), smooth=False, glOptions=ON_TOP,
                                      computeNormals=False),
            "contact forces": gl.GLLinePlotItem(mode="lines", width=2, color=(1.0, 0.3, 0.1, 1.0)),
            "friction cones": gl.GLMeshItem(color=(0.2, 0.8, 1.0, 0.22), smooth=False, glOptions="translucent",
                                            computeNormals=False),
            "support polygon": gl.GLLinePlotItem(mode="lines", width=3, color=(0.2, 0.9, 0.3, 1.0),
                                                 glOptions=ON_TOP),
            "ZMP": gl.GLScatterPlotItem(size=12, color=(0.2, 0.9, 0.3, 1.0), pxMode=True, glOptions=ON_TOP),
            "external forces": gl.GLLinePlotItem(mode="lines", width=3, color=(0.9, 0.2, 0.9, 1.0)),
        }
        self.prefixes = [f"{mb.name}/" for mb in universe.multibodies]
        for item in self.items.values():
            item.setDepthValue(20)
            view.addItem(item)
        self.visible = {"link frames": False, "centre of mass": False, "joint axes": False, "contacts": True,
                        "friction cones": True, "support polygon": False, "external forces": True}
        for name, on in self.visible.items():
            self.set_visible(name, on)

    def set_visible(self, name, on: bool):
        self.visible[name] = bool(on)
        together = {"contacts": (name, "contact forces"), "support polygon": (name, "ZMP")}
        for item_name in together.get(name, (name,)):
            self.items[item_name].setVisible(bool(on))

    def update(self, snapshot, R, p):
        """Redraw the visible overlays from a Snapshot and the world placements (R, p) of all bodies, stacked
        multibody after multibody. An overlay without anything to draw is hidden (no draw call)."""
        models = [mb.model for mb in self.universe.multibodies]
        split = np.cumsum([m.nbodies for m in models])[:-1]
        Rs, ps = np.split(R, split), np.split(p, split)
        points, normals, forces, mu = contact_view(snapshot.contacts, self.static_names)
        scale = self.force_scale
        lines, dots = {}, {}
        if self.visible["link frames"]:
            lines["link frames"] = frame_axes(R, p, FRAME_SIZE)
        if self.visible["centre of mass"]:
            dots["centre of mass"] = [centre_of_mass(m, Ri, pi) for m, Ri, pi in zip(models, Rs, ps) if m.nbodies]
        if self.visible["joint axes"]:
            lines["joint axes"] = (np.concatenate([joint_axes(m, Ri, pi, 0.6 * FRAME_SIZE)
                                                   for m, Ri, pi in zip(models, Rs, ps)] + [np.zeros((0, 3))]),)
        if self.visible["contacts"]:
            vertices, faces = glyphs(points, self.glyph_radius)
            self.items["contacts"].setMeshData(vertexes=vertices, faces=faces)
            self.items["contacts"].setVisible(len(faces) > 0)
            lines["contact forces"] = (arrows(points, scale * forces),)
        if self.visible["support polygon"]:
            edges, dots["ZMP"] = support_polygons(snapshot.contacts, self.prefixes)
            lines["support polygon"] = (edges,)
        if self.visible["external forces"]:
            lines["external forces"] = (arrows([x for *_, x in snapshot.external],
                                               [scale * w[:3] for _, _, w, _ in snapshot.external]),)
        for name, (pos, *color) in lines.items():
            self._show(name, pos, **({"color": color[0]} if color else {}))
        for name, pos in dots.items():
            self._show(name, pos)
        if self.visible["friction cones"]:
            vertices, faces = friction_cones(points, normals, cone_heights(forces, normals, scale), mu)
            self.items["friction cones"].setMeshData(vertexes=vertices, faces=faces)
            self.items["friction cones"].setVisible(len(faces) > 0)

    def _show(self, name, pos, **kwargs):
        pos = np.asarray(pos, np.float32).reshape(-1, 3)
        self.items[name].setData(pos=pos, **kwargs)
        self.items[name].setVisible(len(pos) > 0)
