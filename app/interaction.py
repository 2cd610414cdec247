"""Haptic interaction in the GUI: the mouse as a device in the 3D view, and the devices a universe declares
(issue 7 item 1; seed 000 §2 "Haptic integration").

Every device, the mouse included, runs the same haptic session (1 kHz tick, attach coupling k_v = sqrt(2 m k_p),
safety guard, recording) with its ``PhysicsPort`` called by the physics thread before each step
(``PhysicsThread.inputs``); the coupling wrench enters the free dynamics as a known external wrench (eq. 3.64),
so the view draws it with the external-force arrows and the plots offer it as "user force".  By default each
session ticks in its own process (``engine.interaction.process``: with the GUI and the physics in this process,
an in-process haptic thread missed 1 kHz; ``bench/haptics.py --gui`` compares both); ``backend="thread"`` keeps
it on a thread of this process.

The mouse, in the 3D view:
  * double-click a body: a ray through the pixel picks the drawn triangles at the snapshot shown; the proxy is
    placed on the hit point and grasps the body there (attach mode); a double-click on empty space (or on a
    static body) lets go, and so does Escape;
  * Ctrl + left drag moves the proxy in the camera plane, Shift + left drag along the viewing direction (drag
    up: away from the eye), both at the proxy's depth so the proxy follows the pointer; the wheel moves it in
    depth *while a body is grasped* (otherwise the wheel zooms as always);
  * releasing the button that dragged the proxy drops the body (one stroke carries it).
Without a grasp every mouse gesture is the camera's.  The mouse session's haptic thread runs only while the
mouse holds a body.  A declared device that cannot start (no OpenHaptics, no device) is reported in the log
and the mouse stays available; so is a device failing while it runs (the coupling stops, the app does not).
"""
from __future__ import annotations

from math import radians, tan
from pathlib import Path

import numpy as np
import pyqtgraph.opengl as gl
from PySide6 import QtCore

from app.scene_meshes import geometry_triangles
from engine.errors import ArticulaError
from engine.interaction import SimulationBody, ray_triangles, session_for, simulation_port
from engine.interaction.devices import session_settings
from engine.interaction.process import process_session_for
from engine.interaction.scene_proximity import SceneProximity
from engine.interaction.shared import SharedPlacements
from engine.model.universe import PluginSpec

WHEEL_STEP = 0.02          # fraction of the proxy's depth moved per wheel notch (120 eighths of a degree)
STOP_AFTER_RELEASE_MS = 200  # the mouse's haptic thread runs on until the physics has seen the release
MARKER_PERIOD_MS = 33
BACKENDS = ("process", "thread")


def view_ray(view, x: float, y: float):
    """(eye, unit direction, camera axes R) of the ray through the logical pixel (x, y) of a pyqtgraph view.
    R's columns are the camera's right, up and backward axes in the world (the camera looks along -R[:, 2]);
    pyqtgraph's ``fov`` is horizontal: a pixel at u = 2x/w - 1, v = 1 - 2y/h looks along
    R (u tan(fov/2), v tan(fov/2) h/w, -1)."""
    V = np.array(view.viewMatrix().copyDataTo(), float).reshape(4, 4)      # world -> camera, row-major
    R = V[:3, :3].T
    eye = -R @ V[:3, 3]
    w, h = max(view.width(), 1), max(view.height(), 1)
    t = tan(radians(view.opts["fov"]) / 2.0)
    d = R @ np.array([(2.0 * x / w - 1.0) * t, (1.0 - 2.0 * y / h) * t * h / w, -1.0])
    return eye, d / np.linalg.norm(d), R


def body_triangles(universe):
    """[(key, vertices (n, 3), faces (m, 3))] in body frames: (multibody, body) of every mobile body, and None
    for the static world (it hides what is behind it but cannot be grasped)."""
    out = []
    for m, mb in enumerate(universe.multibodies):
        for b in range(mb.model.nbodies):
            geoms = [g for g in mb.model.geometries if g.body == b]
            shown = [g for g in geoms if g.role == "visual"] or [g for g in geoms if g.role == "collision"]
            out += _merged((m, b), [g for g in shown if g.kind != "plane"])
    return out + _merged(None, [g for s in universe.statics for g in s.geometries if g.kind != "plane"])


def _merged(key, geoms):
    if not geoms:
        return []
    tris = [geometry_triangles(g) for g in geoms]
    offsets = np.cumsum([0] + [len(t.vertices) for t in tris])[:-1]
    return [(key, np.concatenate([t.vertices for t in tris]).astype(float),
             np.concatenate([t.faces.astype(np.int64) + o for t, o in zip(tris, offsets)]))]


def pick(bodies, snapshot, eye, direction):
    """(key, world point) of the nearest body hit by the ray at the snapshot's placements, or (None, None)."""
    best, hit = np.inf, (None, None)
    for key, vertices, faces in bodies:
        R, p = (np.eye(3), np.zeros(3)) if key is None else (snapshot.body_R[key[0]][key[1]],
                                                            snapshot.body_p[key[0]][key[1]])
        s, _ = ray_triangles(R.T @ (eye - p), R.T @ direction, vertices, faces)
        if s < best:
            best, hit = s, (key, eye + s * direction)
    return hit


def new_session(spec, base_dir, backend: str, proximity=None):
    """The haptic session of a ``<Device>`` spec: in its own process (opened: the child starts now) or, for
    ``backend="thread"``, on a thread of this process; ``proximity`` is touch mode's scene."""
    if backend == "thread":
        return session_for(spec, base_dir, proximity=proximity)
    session = process_session_for(spec, base_dir, proximity=proximity)
    session.open()
    return session


class Interaction:
    """The device sessions of the open scene and the mouse gestures of ``view`` (a ``Viewport``); ``backend``
    is where the haptic ticks run, one of ``BACKENDS``."""

    def __init__(self, view, log, backend: str = "process"):
        if backend not in BACKENDS:
            raise ValueError(f"haptic backend must be one of {BACKENDS} (got {backend!r})")
        self.view, self.log, self.backend = view, log, backend
        self.sessions, self.mouse, self.physics = [], None, None
        self.grasped = None              # (multibody, body) the mouse holds
        self._bodies, self._last, self._dragged = [], None, False
        self.marker = gl.GLScatterPlotItem(size=12, color=(0.2, 1.0, 1.0, 1.0), pxMode=True)
        self.marker.setDepthValue(30)
        self.marker.setVisible(False)
        self._timer = QtCore.QTimer(interval=MARKER_PERIOD_MS, timeout=self._refresh)
        self._stopper = QtCore.QTimer(singleShot=True, interval=STOP_AFTER_RELEASE_MS, timeout=self._idle)

    # ---- sessions ---------------------------------------------------------------------------------------
    def start(self, universe, sim, physics, recorder):
        """Open the sessions of a new scene: the mouse (configured by a ``<Device plugin="mouse">`` if any) and
        every other declared device, their ports on ``physics``, their recordings in ``recorder``."""
        self.stop()
        self.physics, base_dir = physics, Path(universe.source).parent
        self._bodies = body_triangles(universe)
        self.view.addItem(self.marker)
        specs = list(universe.devices)
        mouse_spec = next((s for s in specs if s.name == "mouse"), PluginSpec("device", "mouse"))
        self.mouse = new_session(mouse_spec, base_dir, self.backend)
        mouse_port = self.mouse.physics_port(lambda x: self.grasped, lambda key: SimulationBody(sim, *key))
        ports, names = [mouse_port], ["mouse"]
        placements = SharedPlacements.of(universe)   # touch mode's scene, written by the physics each step
        touching = False
        for spec in (s for s in specs if s.name != "mouse"):
            session = None
            try:
                touch = session_settings(spec)["mode"] == "touch"
                proximity = SceneProximity(universe, placements) if touch else None
                session = new_session(spec, base_dir, self.backend, proximity)
                port = simulation_port(session, sim)
                session.start()
            except (ArticulaError, OSError, ValueError) as exc:
                if session is not None:
                    session.stop()
                self.log.error(f"device '{spec.name}' is not available: {exc} — the mouse still works "
                               f"(double-click a body, then Ctrl/Shift + drag)")
                continue
            session.on_error = lambda exc, name=spec.name: self.log.error(f"device '{name}': {exc}")
            self.log.info(f"device '{spec.name}' started ({session.rate:g} Hz, {session.mode} mode, "
                          f"{self.backend})")
            self.sessions.append(session)
            ports.append(port)
            touching = touching or touch
            names.append(f"{spec.name}{len(names)}" if spec.name in names else spec.name)
        for name, session in zip(names, [self.mouse] + self.sessions):
            recorder.attach_device(name, session.recording)
        inputs = [lambda sim, port=port: port.update(sim.time) for port in ports]
        if touching:
            inputs.insert(0, lambda sim: placements.write(*sim.placements()))
        physics.inputs = tuple(inputs)
        self._timer.start()

    def stop(self):
        """End every session (forces to zero) and detach the ports."""
        self._timer.stop()
        self._stopper.stop()
        for session in self.sessions + ([self.mouse] if self.mouse else []):
            session.stop()
        if self.physics is not None:
            self.physics.inputs = ()
        if self.marker.view() is not None:
            self.view.removeItem(self.marker)
        self.sessions, self.mouse, self.physics, self.grasped = [], None, None, None

    # ---- mouse gestures (called by the Viewport's event handlers; True when consumed) ---------------------
    def double_click(self, x: float, y: float) -> bool:
        if self.mouse is None or self.view.snapshot is None:
            return False
        eye, direction, _ = view_ray(self.view, x, y)
        key, point = pick(self._bodies, self.view.snapshot, eye, direction)
        self.release()
        if key is None:
            return True
        self._stopper.stop()
        device = self.mouse.device
        device.place(point)
        self.grasped = key
        if not self.mouse.running:
            self.mouse.start()
        device.press()
        return True

    def press(self, x: float, y: float):
        self._last, self._dragged = (x, y), False

    def move(self, x: float, y: float, buttons, modifiers) -> bool:
        """Ctrl/Shift + left drag moves the proxy of a grasp; anything else is left to the camera."""
        mods = QtCore.Qt.KeyboardModifier
        if (self.grasped is None or buttons != QtCore.Qt.MouseButton.LeftButton
                or not modifiers & (mods.ControlModifier | mods.ShiftModifier)):
            return False
        last, self._last = self._last or (x, y), (x, y)
        dx, dy = x - last[0], y - last[1]
        scale, R = self._metres_per_pixel()
        if modifiers & mods.ShiftModifier:
            self.mouse.device.push(-dy * scale, R)
        else:
            self.mouse.device.drag(dx * scale, -dy * scale, R)
        self._dragged = True
        return True

    def button_released(self) -> bool:
        """The end of a proxy drag drops the body."""
        if self._dragged:
            self._dragged = False
            self.release()
            return True
        return False

    def wheel(self, notches: float) -> bool:
        """While a body is grasped the wheel moves the proxy in depth (away for a forward turn)."""
        if self.grasped is None:
            return False
        eye, _, R = view_ray(self.view, 0.0, 0.0)
        depth = float((self.mouse.device.position - eye) @ -R[:, 2])
        self.mouse.device.push(WHEEL_STEP * notches * depth, R)
        return True

    def release(self) -> bool:
        """Let go of the body the mouse holds (Escape, a double-click on nothing, the end of a drag)."""
        if self.grasped is None:
            return False
        self.mouse.device.release()
        self.grasped = None
        self._stopper.start()
        return True

    def _metres_per_pixel(self):
        """At the proxy's depth z along the view: 2 z tan(fov/2) / w metres per pixel; and the camera axes."""
        eye, _, R = view_ray(self.view, 0.0, 0.0)
        depth = max(float((self.mouse.device.position - eye) @ -R[:, 2]), 1e-3)
        return 2.0 * depth * tan(radians(self.view.opts["fov"]) / 2.0) / max(self.view.width(), 1), R

    def _idle(self):
        if self.grasped is None and self.mouse is not None:
            self.mouse.pause()

    def _refresh(self):
        """The proxy marker while the mouse holds a body."""
        shown = self.grasped is not None and self.mouse is not None
        if shown:
            self.marker.setData(pos=np.asarray(self.mouse.device.position, np.float32).reshape(1, 3))
        if shown != self.marker.visible():
            self.marker.setVisible(shown)
