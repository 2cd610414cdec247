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
from engine.interaction.shared import SharedSlot


class MouseDevice:
    """A proxy point set by the GUI; no force limit (nothing physical to protect), no torque output.

    ``shared=True`` keeps the proxy and the force in shared memory (``SharedSlot``), so that the device can be
    sent to a haptic process (``engine.interaction.process``) while the GUI keeps moving it here.  The GUI's
    calls are serialised by a lock of this process; the haptic side reads without waiting.
    """

    kind, stage = "device", "haptic"          # a plugin (engine.interaction.devices)

    def __init__(self, position=(0.0, 0.0, 0.0), *, rate: float = 1000.0, rest_time: float = 0.1,
                 shared: bool = False, clock=time.monotonic):
        self.name, self.workspace, self.max_force, self.max_torque = "mouse", Workspace.unbounded(), np.inf, 0.0
        self.rate, self.rest_time, self._clock = rate, rest_time, clock
        self._lock = threading.Lock()
        self._proxy = SharedSlot(8, shared)       # [p (3), v (3), time of the last move, buttons], GUI writes
        self._force = SharedSlot(3, shared)       # the coupling force, the haptic side writes
        self._set(np.array(position, dtype=float), np.zeros(3), self._clock(), 0)

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state):
        self.__dict__.update(state, _lock=threading.Lock())

    def _set(self, p, v, moved, buttons) -> None:
        self._proxy.write(np.concatenate([p, v, [moved, buttons]]), moved)

    def _get(self):
        row = self._proxy.read()[2]
        return row[:3], row[3:6], row[6], int(row[7])

    def place(self, point) -> None:
        """Jump to ``point`` (world) without a velocity (a pick, not a motion)."""
        with self._lock:
            self._set(np.array(point, dtype=float), np.zeros(3), self._clock(), self._get()[3])

    def drag(self, dx: float, dy: float, view_R) -> None:
        view_R = np.asarray(view_R, float)
        self._move(dx * view_R[:, 0] + dy * view_R[:, 1])

    def push(self, dz: float, view_R) -> None:
        self._move(-dz * np.asarray(view_R, float)[:, 2])

    def _move(self, delta) -> None:
        with self._lock:
            p, _, moved, buttons = self._get()
            now = self._clock()
            dt = now - moved
            self._set(p + delta, delta / dt if 0.0 < dt < self.rest_time else np.zeros(3), now, buttons)

    def press(self, mask: int = 1) -> None:
        with self._lock:
            p, v, moved, buttons = self._get()
            self._set(p, v, moved, buttons | mask)

    def release(self, mask: int = 1) -> None:
        with self._lock:
            p, v, moved, buttons = self._get()
            self._set(p, v, moved, buttons & ~mask)

    @property
    def position(self) -> np.ndarray:
        return self._get()[0].copy()

    @property
    def force(self) -> np.ndarray:
        """The last force written by the coupling (world frame with an identity map), N."""
        return self._force.read()[2].copy()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self.write(np.zeros(3))

    def read(self) -> DeviceState:
        p, v, moved, buttons = self._get()
        now = self._clock()
        return DeviceState(now, np.eye(3), p, v if now - moved < self.rest_time else np.zeros(3), np.zeros(3),
                           buttons)

    def write(self, force, torque=None) -> None:
        self._force.write(force, self._clock())
