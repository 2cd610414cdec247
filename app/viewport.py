"""The 3D view of a universe: bodies with their colours, the ground grid, the universe's camera and lights,
overlays (frames, centres of mass, joint axes, contacts with force arrows and friction cones).

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

BACKGROUND = (40, 44, 52)
COLLISION_RGBA = (0.25, 0.95, 0.55, 0.35)


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
        self.grid = None
        self.snapshot = None                              # the snapshot shown
        self.vertical_fov = 45.0                          # degrees, the OpenGL (gluPerspective) convention
        self._offsets = ()                                # stacked index of each multibody's base frame
        self._nstacked = 0
        self.interaction = None                           # app.interaction.Interaction (mouse as a device)

    def devicePixelRatioF(self):
        return self.devicePixelRatio()

    # ---- building -------------------------------------------------------------------------------------------
    def set_universe(self, universe):
        """Replace the scene by the universe's bodies, ground grid, camera and lights (meshes cached)."""
        if self.isValid():
            self.makeCurrent()
            for item, _ in self.layers["visual"] + self.layers["collision"]:
                item.release_gl()
        self.clear()
        self.universe, self.snapshot = universe, None
        lighting = Lighting(universe.lights)
        groups = _stacked_geometries(universe)
        counts = [mb.model.nbodies + 1 for mb in universe.multibodies]
        self._offsets = tuple(np.cumsum([0] + counts)[:-1])
        self._nstacked = sum(counts) + 1
        for role in self.layers:
            self.layers[role] = self._build_layer(groups[role], lighting, translucent=role == "collision")
        self.set_layer_visible("collision", False)
        self.grid = _ground_grid(universe)
        self.addItem(self.grid)
        self.overlays = Overlays(self, universe, force_scale=_force_scale(universe))
        self.reset_camera()

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

    def reset_camera(self):
        """Back to the universe's camera: eye at ``camera.p`` looking at ``camera.target``."""
        camera = self.universe.camera
        eye, target = np.asarray(camera.p, float), np.asarray(camera.target, float)
        d = eye - target
        distance = float(np.linalg.norm(d)) or 1.0
        self.vertical_fov = float(camera.fov)
        self.setCameraParams(center=QtGui.QVector3D(*target), distance=distance,
                             fov=horizontal_fov(self.vertical_fov, self.width(), self.height()),
                             elevation=degrees(asin(np.clip(d[2] / distance, -1.0, 1.0))),
                             azimuth=degrees(atan2(d[1], d[0])))

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
        R, p = stacked_placements(snapshot)
        for items in self.layers.values():
            for item, first in items:
                item.set_placements(R[first:first + item.nbodies], p[first:first + item.nbodies])
        bodies = np.ones(len(R), dtype=bool)
        bodies[list(self._offsets) + [len(R) - 1]] = False
        self.overlays.update(snapshot, R[bodies], p[bodies])
        self.update()

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


def stacked_placements(snapshot):
    """World placements of all drawn frames, stacked: per multibody its base then its bodies; the world last."""
    R, p = [], []
    for base_R, base_p, body_R, body_p in zip(snapshot.base_R, snapshot.base_p, snapshot.body_R, snapshot.body_p):
        R += [np.asarray(base_R)[None], np.asarray(body_R).reshape(-1, 3, 3)]
        p += [np.asarray(base_p)[None], np.asarray(body_p).reshape(-1, 3)]
    return np.concatenate(R + [np.eye(3)[None]]), np.concatenate(p + [np.zeros((1, 3))])


def _stacked_geometries(universe):
    """{role: [(stacked index, Triangles in that frame, rgba)]}. A body without visual geometry shows its
    collision geometry instead; the collision layer leaves planes out (they would hide the ground)."""
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
    layers["visual"] += [(index, geometry_triangles(g), g.rgba) for g in visual]
    layers["collision"] += [(index, geometry_triangles(g), COLLISION_RGBA) for g in geoms
                            if g.role == "collision" and g.kind != "plane"]


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
