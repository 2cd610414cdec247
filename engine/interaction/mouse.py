"""The mouse as a haptic device: the device side of the GUI fallback (issue 7 item 1, ``mouse``).

The GUI (``app/``, Qt) calls these methods from its thread; the haptic thread reads and writes through the
Device protocol.  The proxy is a 3D point in the world (use an identity ``WorkspaceMap``):

* double-click on a body: ``place(point)`` puts the proxy on the picked surface point, then ``press()`` grabs;
* Ctrl+drag: ``drag(dx, dy, view_R)`` moves it in the camera plane, dx along the camera's right axis
  (``view_R[:, 0]``), dy along its up axis (``view_R[:, 1]``), in metres;
* Shift+drag or the wheel: ``push(dz, view_R)`` moves it along the viewing direction (``-view_R[:, 2]``,
  OpenGL cameras look down their -z), dz > 0 away from the viewer;
* the coupling force comes back through ``write``; ``force`` is what the GUI draws as an arrow and plots.

Velocity is the last GUI displacement over the time between the two GUI events, zero once the mouse rests for
``rest_time`` s.  No Qt here: engine/ never imports the GUI.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from engine.interaction.device import DeviceState, Workspace


class MouseDevice:
    """A proxy point set by the GUI; no force limit (nothing physical to protect), no torque output."""

    def __init__(self, position=(0.0, 0.0, 0.0), *, rate: float = 1000.0, rest_time: float = 0.1,
                 clock=time.monotonic):
        self.name, self.workspace, self.max_force, self.max_torque = "mouse", Workspace.unbounded(), np.inf, 0.0
        self.rate, self.rest_time, self._clock = rate, rest_time, clock
        self._lock = threading.Lock()
        self._p = np.array(position, dtype=float)
        self._v = np.zeros(3)
        self._moved = self._clock()
        self._buttons = 0
        self._force = np.zeros(3)

    def place(self, point) -> None:
        """Jump to ``point`` (world) without a velocity (a pick, not a motion)."""
        with self._lock:
            self._p = np.array(point, dtype=float)
            self._v = np.zeros(3)
            self._moved = self._clock()

    def drag(self, dx: float, dy: float, view_R) -> None:
        view_R = np.asarray(view_R, float)
        self._move(dx * view_R[:, 0] + dy * view_R[:, 1])

    def push(self, dz: float, view_R) -> None:
        self._move(-dz * np.asarray(view_R, float)[:, 2])

    def _move(self, delta) -> None:
        with self._lock:
            now = self._clock()
            dt = now - self._moved
            self._v = delta / dt if 0.0 < dt < self.rest_time else np.zeros(3)
            self._p = self._p + delta
            self._moved = now

    def press(self, mask: int = 1) -> None:
        with self._lock:
            self._buttons |= mask

    def release(self, mask: int = 1) -> None:
        with self._lock:
            self._buttons &= ~mask

    @property
    def position(self) -> np.ndarray:
        with self._lock:
            return self._p.copy()

    @property
    def force(self) -> np.ndarray:
        """The last force written by the coupling (world frame with an identity map), N."""
        with self._lock:
            return self._force.copy()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self.write(np.zeros(3))

    def read(self) -> DeviceState:
        with self._lock:
            now = self._clock()
            v = self._v if now - self._moved < self.rest_time else np.zeros(3)
            return DeviceState(now, np.eye(3), self._p, v, np.zeros(3), self._buttons)

    def write(self, force, torque=None) -> None:
        with self._lock:
            self._force = np.array(force, dtype=float)
