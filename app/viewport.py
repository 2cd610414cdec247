"""The 3D view of a universe: bodies with their colours, the ground grid, the universe's camera and lights,
overlays (frames, centres of mass, joint axes, contacts with force arrows and friction cones).

A scene opens framed: from the universe's ``<Camera>`` when it has one, else looking at the whole scene
(``frame_all``: the camera backs off along its viewing direction until every corner of the scene's bounding box,
``scene_box``, is inside the field of view). The contact glyphs are sized from that box too.

Drawing is built once per universe and only moved afterwards: the bodies of all multibodies are stacked
(each multibody contributes its base frame then its bodies; the static world comes last) and drawn by a few
``BodyMeshItem``s that receive the stacked world placements of a Snapshot. Mouse: left drag orbits, middle or
shift + left drag pans, right drag or the wheel zooms; a double-click grasps a body with the mouse device, then
Ctrl/Shift + drag and the wheel move it (``app.interaction``, which the event handlers below delegate to).
"""
from __future__ import annotations

from math import asin, atan, atan2, degrees, radians, tan

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from pyqtgraph.opengl.GLViewWidget import GLViewMixin
from PySide6 import QtCore, QtGui
from PySide6.QtOpenGL import QOpenGLFramebufferObject, QOpenGLFramebufferObjectFormat, QOpenGLWindow

from app.gl_bodies import MAX_BODIES, BodyMeshItem, Lighting
from app.overlays import Overlays
from app.scene_meshes import geometry_triangles, plane_extent
from app.soles_view import SoleMeshes

BACKGROUND = (40, 44, 52)
COLLISION_RGBA = (0.25, 0.95, 0.55, 0.35)
DEFAULT_VIEW = (-45.0, 25.0)   # azimuth, elevation (degrees) of a universe without a camera: from (1, -1, 0.66)
FRAME_MARGIN = 1.08            # frame_all leaves this much room around the scene's box
PLANE_BORDER = 0.1             # a plane is framed as the bodies' footprint on it, widened by this x the box diagonal
CONTACT_GLYPH = 0.006          # contact glyph radius per metre of the scene box's diagonal (times the View setting)


class Viewport(GLViewMixin, QOpenGLWindow):
    """``set_universe(universe)`` builds the scene, ``show_snapshot(snapshot)`` moves it.

    A QOpenGLWindow (embedded with ``QWidget.createWindowContainer``) rather than a QOpenGLWidget: it renders
    straight to its own surface, without the offscreen composition a QOpenGLWidget costs under a software
    OpenGL (three times the per-frame cost of an empty view under Xvfb and Mesa llvmpipe).
    ``files_dropped(paths)`` is emitted when files are dropped on the view.
    """

    files_dropped = QtCore.Signal(list)

    def __init__(self):
        super().__init__()
        surface = QtGui.QSurfaceFormat()
        surface.setDepthBufferSize(24)
        self.setFormat(surface)
        self.setBackgroundColor(BACKGROUND)
        self.universe = None
        self.layers = {"visual": [], "collision": []}   # role -> [(BodyMeshItem, first stacked index)]
        self.overlays = None
        self.soles = None                                 # app.soles_view.SoleMeshes
        self.grid = None
        self.lighting = None                              # app.gl_bodies.Lighting of the universe
        self.snapshot = None                              # the snapshot shown
        self.vertical_fov = 45.0                          # degrees, the OpenGL (gluPerspective) convention
        self.scene_size = 1.0                             # m, the diagonal of the scene's box when it opened
        self.glyph_scale = 1.0                            # the View ▸ Contact glyph size factor
        self._offsets = ()                                # stacked index of each multibody's base frame
        self._nstacked = 0
        self._extents = ([], [])                          # (solids, planes) of the drawn geometry (scene_box)
        self._framed = False                              # the scene has been framed once (first snapshot)
        self.interaction = None                           # app.interaction.Interaction (mouse as a device)

    def devicePixelRatioF(self):
        return self.devicePixelRatio()

    # ---- building -------------------------------------------------------------------------------------------
    def set_universe(self, universe):
        """Replace the scene by the universe's bodies, ground grid, camera and lights (meshes cached)."""
        if self.isValid():
            self.makeCurrent()
            for item in self.items:
                if isinstance(item, BodyMeshItem):
                    item.release_gl()
        self.clear()
        self.universe, self.snapshot, self._framed = universe, None, False
        self.lighting = lighting = Lighting(universe.lights)
        groups = _stacked_geometries(universe)
        counts = [mb.model.nbodies + 1 for mb in universe.multibodies]
        self._offsets = tuple(np.cumsum([0] + counts)[:-1])
        self._nstacked = sum(counts) + 1
        for role in self.layers:
            self.layers[role] = self._build_layer([(i, geometry_triangles(g), rgba) for i, g, rgba in groups[role]],
                                                  lighting, translucent=role == "collision")
        self._extents = _extents(groups["visual"])
        self.set_layer_visible("collision", False)
        self.grid = _ground_grid(universe)
        self.addItem(self.grid)
        self.overlays = Overlays(self, universe, force_scale=_force_scale(universe))
        self.soles = SoleMeshes(self, universe)

    def _build_layer(self, geometries, lighting, translucent):
        """One BodyMeshItem per block of MAX_BODIES stacked bodies; ``geometries`` is [(stacked index, geom,
        rgba)]."""
        items = []
        for first in range(0, self._nstacked, MAX_BODIES):
            block = [(i - first, tri, rgba) for i, tri, rgba in geometries if first <= i < first + MAX_BODIES]
            if not block:
                continue
            item = BodyMeshItem(*_merge(block), nbodies=min(MAX_BODIES, self._nstacked - first),
                                lighting=lighting, translucent=translucent)
            item.setDepthValue(10 if translucent else 0)
            self.addItem(item)
            items.append((item, first))
        return items

    def add_translucent_bodies(self, alpha: float):
        """Translucent copies (opacity ``alpha``) of the moving bodies' visual geometry, added to the view (the
        static world left out): [(BodyMeshItem, first stacked index)], to place with ``set_placements``."""
        moving = [(i, geometry_triangles(g), (*rgba[:3], alpha))
                  for i, g, rgba in _stacked_geometries(self.universe)["visual"] if i < self._nstacked - 1]
        return self._build_layer(moving, self.lighting, translucent=True)

    @staticmethod
    def place_bodies(items, snapshot):
        """Move items of ``add_translucent_bodies`` to the placements of ``snapshot``."""
        _place(items, *stacked_placements(snapshot))

    def remove_bodies(self, items):
        """Take items of ``add_translucent_bodies`` out of the view and free their OpenGL resources."""
        if self.isValid():
            self.makeCurrent()
        for item, _ in items:
            item.release_gl()
            self.removeItem(item)

    # ---- camera ---------------------------------------------------------------------------------------------
    def scene_box(self):
        """(lo, hi): the world box of the drawn scene in the snapshot shown (``scene_box`` below)."""
        return scene_box(*self._extents, *stacked_placements(self.snapshot))

    def reset_camera(self):
        """Back to the universe's camera (eye at ``camera.p`` looking at ``camera.target``, orbiting about the
        point of that line nearest the scene's centre), or, for a universe without one, ``frame_all`` from
        ``DEFAULT_VIEW``. Nothing happens before the first snapshot (the scene's placements are unknown)."""
        if self.snapshot is None:
            return
        camera = self.universe.camera
        if camera is None:
            self.frame_all(*DEFAULT_VIEW, vertical_fov=45.0)
            return
        eye, target = np.asarray(camera.p, float), np.asarray(camera.target, float)
        ahead = (target - eye) / np.linalg.norm(target - eye)
        lo, hi = self.scene_box()
        depth = float(ahead @ ((lo + hi) / 2.0 - eye))
        distance = depth if depth > 0.0 else float(np.linalg.norm(target - eye))
        self.vertical_fov = float(camera.fov)
        self.setCameraParams(center=QtGui.QVector3D(*(eye + distance * ahead)), distance=distance,
                             fov=horizontal_fov(self.vertical_fov, self.width(), self.height()),
                             elevation=degrees(asin(np.clip(-ahead[2], -1.0, 1.0))),
                             azimuth=degrees(atan2(-ahead[1], -ahead[0])))

    def frame_all(self, azimuth=None, elevation=None, vertical_fov=None):
        """Look at the centre of the scene's box from the current direction (or the given one, degrees) and as
        close as lets the whole box inside the field of view (``fit_distance``)."""
        if self.snapshot is None:
            return
        if vertical_fov is not None:
            self.vertical_fov = float(vertical_fov)
        azimuth = self.opts["azimuth"] if azimuth is None else azimuth
        elevation = self.opts["elevation"] if elevation is None else elevation
        fov = horizontal_fov(self.vertical_fov, self.width(), self.height())
        lo, hi = self.scene_box()
        distance = fit_distance(lo, hi, orbit_axes(azimuth, elevation), self.vertical_fov, fov)
        self.setCameraParams(center=QtGui.QVector3D(*((lo + hi) / 2.0)), distance=distance, fov=fov,
                             elevation=elevation, azimuth=azimuth)

    def set_contact_glyph_scale(self, factor: float):
        """View ▸ Contact glyph size: the glyph radius is ``CONTACT_GLYPH`` x scene diagonal x ``factor``."""
        self.glyph_scale = float(factor)
        if self.snapshot is not None:
            self.overlays.glyph_radius = CONTACT_GLYPH * self.scene_size * self.glyph_scale
            self.show_snapshot(self.snapshot)

    def resizeGL(self, w, h):
        """Keep the universe camera's vertical field of view (pyqtgraph's ``fov`` is the horizontal one)."""
        self.opts["fov"] = horizontal_fov(self.vertical_fov, w, h)

    def paintGL(self, *args, **kwargs):
        """Draw, then wait for the drawing to finish (``glFinish``, a ctypes call that releases the GIL): a
        software OpenGL (Mesa llvmpipe) rasterizes when the frame is flushed, which would otherwise happen in
        the buffer swap Qt makes while this thread holds the GIL, stalling the physics thread ~10 ms a frame."""
        super().paintGL(*args, **kwargs)
        GL.glFinish()

    # ---- updating -------------------------------------------------------------------------------------------
    def show_snapshot(self, snapshot):
        """Move every body to its placement in ``snapshot`` and redraw the overlays."""
        self.snapshot = snapshot
        if not self._framed:  # the first snapshot of a universe: its placements give the scene's box
            self._framed = True
            lo, hi = self.scene_box()
            self.scene_size = max(float(np.linalg.norm(hi - lo)), 1e-3)
            self.overlays.glyph_radius = CONTACT_GLYPH * self.scene_size * self.glyph_scale
            self.reset_camera()
        R, p = stacked_placements(snapshot)
        for items in self.layers.values():
            _place(items, R, p)
        bodies = np.ones(len(R), dtype=bool)
        bodies[list(self._offsets) + [len(R) - 1]] = False
        self.overlays.update(snapshot, R[bodies], p[bodies])
        if snapshot.soles:
            self.soles.update(snapshot)
        self.update()

    def set_sole_magnification(self, factor: float):
        """View ▸ Sole deformation: the soles' node displacements drawn ``factor`` times larger."""
        self.soles.magnification = float(factor)
        if self.snapshot is not None:
            self.show_snapshot(self.snapshot)

    def set_overlay_visible(self, name, on: bool):
        """Show or hide an overlay (``Overlays.NAMES``), redrawn at once from the snapshot shown."""
        self.overlays.set_visible(name, on)
        if self.snapshot is not None:
            self.show_snapshot(self.snapshot)

    def scale_forces(self, factor: float):
        self.overlays.force_scale *= factor
        if self.snapshot is not None:
            self.show_snapshot(self.snapshot)

    def set_layer_visible(self, role, on: bool):
        for item, _ in self.layers[role]:
            item.setVisible(bool(on))

    def highlight(self, multibody: int | None, body: int | None):
        """Tint one body (``body`` -1 is the multibody's base frame); None clears."""
        index = -1 if multibody is None else self._offsets[multibody] + 1 + (body if body is not None else -1)
        for items in self.layers.values():
            for item, first in items:
                item.set_highlight(index - first if first <= index < first + item.nbodies else -1)

    def render_image(self, size=None) -> QtGui.QImage:
        """Draw the scene now into an offscreen framebuffer of ``size`` (w, h), the view's size by default."""
        w, h = size or (self.width(), self.height())
        self.makeCurrent()
        fmt = QOpenGLFramebufferObjectFormat()
        fmt.setAttachment(QOpenGLFramebufferObject.Attachment.CombinedDepthStencil)
        fbo = QOpenGLFramebufferObject(w, h, fmt)
        fbo.bind()
        GL.glViewport(0, 0, w, h)
        fov, self.opts["fov"] = self.opts["fov"], horizontal_fov(self.vertical_fov, w, h)
        try:
            self.paint(region=(0, 0, w, h), viewport=(0, 0, w, h))
        finally:
            self.opts["fov"] = fov
            fbo.release()
        return fbo.toImage()

    def grab_array(self, size=None) -> np.ndarray:
        """The scene drawn now (``render_image``) as an (h, w, 3) uint8 RGB array."""
        image = self.render_image(size).convertToFormat(QtGui.QImage.Format.Format_RGB888)
        rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
        return rows[:, :3 * image.width()].reshape(image.height(), image.width(), 3).copy()

    # ---- mouse and drops ---------------------------------------------------------------------------------
    def mousePressEvent(self, ev):
        super().mousePressEvent(ev)
        if self.interaction is not None:
            self.interaction.press(ev.position().x(), ev.position().y())

    def mouseDoubleClickEvent(self, ev):
        pos = ev.position()
        if not (self.interaction is not None and ev.button() == QtCore.Qt.MouseButton.LeftButton
                and self.interaction.double_click(pos.x(), pos.y())):
            super().mouseDoubleClickEvent(ev)

    def mouseReleaseEvent(self, ev):
        if self.interaction is not None:
            self.interaction.button_released()
        super().mouseReleaseEvent(ev)

    def wheelEvent(self, ev):
        if not (self.interaction is not None and self.interaction.wheel(ev.angleDelta().y() / 120.0)):
            super().wheelEvent(ev)

    def keyPressEvent(self, ev):
        if not (ev.key() == QtCore.Qt.Key.Key_Escape and self.interaction is not None
                and self.interaction.release()):
            super().keyPressEvent(ev)

    def mouseMoveEvent(self, ev):
        pos = ev.position()
        if self.interaction is not None and self.interaction.move(pos.x(), pos.y(), ev.buttons(), ev.modifiers()):
            self.mousePos = pos
            return
        diff = pos - getattr(self, "mousePos", pos)
        buttons, shift = ev.buttons(), ev.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier
        if buttons == QtCore.Qt.MouseButton.RightButton:
            self.mousePos = pos
            self.opts["distance"] *= 1.01 ** diff.y()
            self.update()
        elif buttons == QtCore.Qt.MouseButton.LeftButton and shift:
            self.mousePos = pos
            self.pan(diff.x(), diff.y(), 0, relative="view")
        else:
            super().mouseMoveEvent(ev)

    def event(self, ev):
        """Files dragged onto the view (a native window: the main window does not see these drops)."""
        kind = ev.type()
        if kind in (QtCore.QEvent.Type.DragEnter, QtCore.QEvent.Type.DragMove) and ev.mimeData().hasUrls():
            ev.acceptProposedAction()
            return True
        if kind == QtCore.QEvent.Type.Drop and ev.mimeData().hasUrls():
            self.files_dropped.emit([u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()])
            ev.acceptProposedAction()
            return True
        return super().event(ev)


def horizontal_fov(vertical_fov, width, height):
    """Horizontal field of view (degrees) of a view ``width`` x ``height`` with the given vertical one:
    tan(h / 2) = tan(v / 2) w / h."""
    return degrees(2.0 * atan(tan(radians(vertical_fov) / 2.0) * max(width, 1) / max(height, 1)))


def orbit_axes(azimuth, elevation):
    """Columns: the right, up and backward axes (world) of pyqtgraph's orbit camera at ``azimuth`` and
    ``elevation`` (degrees): it stands at centre + distance (cos e cos a, cos e sin a, sin e), z up."""
    a, e = radians(azimuth), radians(elevation)
    back = np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])
    right = np.array([-np.sin(a), np.cos(a), 0.0])
    return np.column_stack([right, np.cross(back, right), back])


def fit_distance(lo, hi, axes, vertical_fov, horizontal_fov, margin=FRAME_MARGIN):
    """Distance from the centre of the box (lo, hi) of a camera with these ``axes`` (right, up, back columns)
    and fields of view (degrees) that sees the whole box: a corner at offset o from the centre is at depth
    d - o.back, and inside the view shrunk by ``margin`` when |o.right| <= (d - o.back) tan(h / 2) / margin and
    |o.up| <= (d - o.back) tan(v / 2) / margin; d is the smallest distance that holds for the eight corners (the
    farthest-out corner then sits at 1 / margin of the half-view)."""
    o = (box_corners(lo, hi) - (lo + hi) / 2.0) @ axes
    tan_h, tan_v = tan(radians(horizontal_fov) / 2.0) / margin, tan(radians(vertical_fov) / 2.0) / margin
    d = np.max(o[:, 2] + np.maximum(np.abs(o[:, 0]) / tan_h, np.abs(o[:, 1]) / tan_v))
    return max(float(d), 1e-3)


def box_corners(lo, hi):
    """The eight corners (8, 3) of the axis-aligned box (lo, hi)."""
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def scene_box(solids, planes, R, p):
    """World axis-aligned box (lo, hi) of the drawn geometry at the stacked placements (R, p): the corners of
    every solid's local box, ``solids`` [(stacked index, corners (8, 3))], placed; then each plane of ``planes``
    [(stacked index, R, p)] adds the solids' footprint on it (their box's corners projected along its normal)
    widened in the plane by ``PLANE_BORDER`` x the box's diagonal. A scene of planes alone is a 2 m square
    around the first plane's origin."""
    if solids:
        points = np.concatenate([corners @ R[i].T + p[i] for i, corners in solids])
        lo, hi = points.min(axis=0), points.max(axis=0)
        border = PLANE_BORDER * float(np.linalg.norm(hi - lo))
    else:
        lo = hi = R[planes[0][0]] @ planes[0][2] + p[planes[0][0]] if planes else np.zeros(3)
        border = 1.0
    corners = box_corners(lo, hi)
    extra = []
    for i, plane_R, plane_p in planes:
        Rw, pw = R[i] @ plane_R, R[i] @ plane_p + p[i]
        n = Rw[:, 2]
        foot = corners - np.outer((corners - pw) @ n, n)
        extra += [foot + sx * border * Rw[:, 0] + sy * border * Rw[:, 1] for sx in (-1, 1) for sy in (-1, 1)]
    if extra:
        extra = np.concatenate(extra)
        lo, hi = np.minimum(lo, extra.min(axis=0)), np.maximum(hi, extra.max(axis=0))
    return lo, hi


def stacked_placements(snapshot):
    """World placements of all drawn frames, stacked: per multibody its base then its bodies; the world last."""
    R, p = [], []
    for base_R, base_p, body_R, body_p in zip(snapshot.base_R, snapshot.base_p, snapshot.body_R, snapshot.body_p):
        R += [np.asarray(base_R)[None], np.asarray(body_R).reshape(-1, 3, 3)]
        p += [np.asarray(base_p)[None], np.asarray(body_p).reshape(-1, 3)]
    return np.concatenate(R + [np.eye(3)[None]]), np.concatenate(p + [np.zeros((1, 3))])


def _place(items, R, p):
    """Give each (BodyMeshItem, first stacked index) of ``items`` its rows of the stacked placements (R, p)."""
    for item, first in items:
        item.set_placements(R[first:first + item.nbodies], p[first:first + item.nbodies])


def _stacked_geometries(universe):
    """{role: [(stacked index, Geometry, rgba)]}. A body without visual geometry shows its collision geometry
    instead; the collision layer leaves planes out (they would hide the ground)."""
    layers = {"visual": [], "collision": []}
    offset = 0
    for mb in universe.multibodies:
        frames = [[g for g in mb.model.geometries if g.body == b] for b in range(-1, mb.model.nbodies)]
        for k, geoms in enumerate(frames):
            _add_frame(layers, offset + k, geoms)
        offset += len(frames)
    _add_frame(layers, offset, [g for body in universe.statics for g in body.geometries])
    return layers


def _add_frame(layers, index, geoms):
    visual = [g for g in geoms if g.role == "visual"] or [g for g in geoms if g.role == "collision"]
    layers["visual"] += [(index, g, g.rgba) for g in visual]
    layers["collision"] += [(index, g, COLLISION_RGBA) for g in geoms if g.role == "collision" and g.kind != "plane"]


def _extents(drawn):
    """(solids, planes) of ``scene_box`` from the drawn [(stacked index, Geometry, rgba)]: a solid by the eight
    corners of the box of its triangles in its body's frame, a plane by its placement in that frame."""
    solids, planes = [], []
    for index, g, _ in drawn:
        if g.kind == "plane":
            planes.append((index, np.asarray(g.R, float), np.asarray(g.p, float)))
            continue
        vertices = geometry_triangles(g).vertices
        solids.append((index, box_corners(vertices.min(axis=0).astype(float), vertices.max(axis=0).astype(float))))
    return solids, planes


def _merge(block):
    """Concatenate [(local body index, Triangles, rgba)] into the arrays of one BodyMeshItem."""
    vertices, normals, colors, body, faces, n = [], [], [], [], [], 0
    for index, tri, rgba in block:
        vertices.append(tri.vertices)
        normals.append(tri.normals)
        colors.append(np.broadcast_to(np.asarray(rgba, np.float32), (len(tri.vertices), 4)))
        body.append(np.full(len(tri.vertices), index, np.float32))
        faces.append(tri.faces + n)
        n += len(tri.vertices)
    return (np.concatenate(vertices), np.concatenate(normals), np.concatenate(colors), np.concatenate(body),
            np.concatenate(faces))


def _ground_grid(universe):
    """A 0.5 m grid over the ground plane (or a 10 m one at z = 0 when the universe has no plane)."""
    planes = [g for s in universe.statics for g in s.geometries if g.kind == "plane"]
    size = plane_extent(planes[0].size) if planes else (10.0, 10.0)
    grid = gl.GLGridItem(color=(255, 255, 255, 50))
    grid.setSize(*size)
    grid.setSpacing(0.5, 0.5)
    if planes:
        M = np.eye(4)
        M[:3, :3], M[:3, 3] = planes[0].R, planes[0].p + 1e-3 * planes[0].R[:, 2]
        grid.setTransform(QtGui.QMatrix4x4(*M.ravel()))
    return grid


def _force_scale(universe):
    """Metres of arrow per newton: the weight of the heaviest multibody spread over four contacts is 0.15 m."""
    g = float(np.linalg.norm(universe.gravity)) or 9.81
    heaviest = max([mb.model.total_mass for mb in universe.multibodies] + [1.0])
    return 0.15 / (heaviest * g / 4.0)
