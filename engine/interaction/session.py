"""A haptic session: device, haptic thread, attach/touch coupling, safety and recording; and its physics end.

    haptic thread: HapticSession.tick (1 kHz)            physics thread: PhysicsPort.update (every step)
      device.read ---------> HapticCommand ---- mailbox ---> grasp/release, apply the wrench (eq. 3.64 input)
      device.write <-------- PhysicsFeedback <-- mailbox ---- the grasped body's state, a heartbeat each step

Only latest-value mailboxes cross threads.  The physics thread alone touches the simulation; the haptic thread
alone touches the device.  A device fault stops the coupling (the physics releases the body), never the app.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine.interaction.coupling import (BodyFeedback, CouplingSettings, ForceGuard, SafetySettings, coupling_gains,
                                         coupling_wrench)
from engine.interaction.device import Device, DeviceError, WorkspaceMap
from engine.interaction.mailbox import Mailbox
from engine.interaction.port import HapticCommand, PhysicsPort
from engine.interaction.proximity import ProximityQuery
from engine.interaction.recording import SessionRecording
from engine.interaction.thread import HapticThread
from engine.interaction.touch import GodObject, TouchSettings

MODES = ("attach", "touch")
_ZERO3 = np.zeros(3)
_ZERO3.flags.writeable = False


@dataclass(frozen=True)
class SessionOutput:
    """For the GUI and plots: proxy and god-object (world), the coupling force on the proxy (world, N, what the
    arrow shows), the force sent to the device (device frame), the body wrench and whether the watchdog tripped."""
    t: float
    proxy: np.ndarray
    god: np.ndarray
    force_world: np.ndarray
    force_device: np.ndarray
    wrench: np.ndarray
    grasping: bool
    stale: bool


class HapticSession:
    """Runs one device in ``mode`` "attach" or "touch" on its own thread at ``rate`` (default: the device's).

    ``proximity`` (touch mode) answers closest-point queries on the current scene.  ``grasp_button`` is the
    button mask that grabs in attach mode.  ``clock`` must be the clock the device stamps its states with.
    """

    def __init__(self, device: Device, *, mode: str = "attach", workspace_map: WorkspaceMap = WorkspaceMap(),
                 coupling: CouplingSettings = CouplingSettings(), safety: SafetySettings = SafetySettings(),
                 touch: TouchSettings = TouchSettings(), proximity: ProximityQuery | None = None,
                 grasp_button: int = 1, rate: float | None = None, clock=time.monotonic):
        self.device, self.map, self.coupling, self.safety = device, workspace_map, coupling, safety
        self.grasp_button, self._clock = grasp_button, clock
        self.commands: Mailbox = Mailbox(clock)
        self.feedback: Mailbox = Mailbox(clock)
        self.output: Mailbox = Mailbox(clock)
        self.recording = SessionRecording()
        self.guard = ForceGuard(safety, device.max_force, device.max_torque)
        self.god = GodObject(proximity, touch) if proximity is not None else None
        self.thread = HapticThread(self.tick, rate or device.rate, name=f"haptic-{device.name}")
        self._mode, self._grasp, self._R0, self._last = None, None, np.eye(3), None
        self.mode = mode

    @property
    def mode(self) -> str:
        return self._next_mode

    @mode.setter
    def mode(self, mode: str) -> None:
        """Switch mode from any thread; the haptic thread applies it at its next tick."""
        if mode not in MODES:
            raise ValueError(f"haptic mode must be one of {MODES} (got {mode!r})")
        if mode == "touch" and self.god is None:
            raise ValueError("touch mode needs a proximity query (HapticSession(proximity=...))")
        self._next_mode = mode

    def _enter_mode(self) -> None:
        self._mode, self._grasp = self._next_mode, None
        self.guard.disengage()
        if self.god is not None:
            self.god.reset()

    @property
    def fault(self) -> BaseException | None:
        """The device error that stopped the coupling, if any."""
        return self.thread.error

    def physics_port(self, pick, body) -> PhysicsPort:
        """The physics-thread end; ``pick(point) -> key | None`` finds the body under a point, ``body(key)`` gives
        a ``GraspedBody`` (``SimulationBody(sim, multibody, body)`` for an engine Simulation)."""
        return PhysicsPort(self.commands, self.feedback, pick, body, watchdog=self.safety.watchdog, clock=self._clock)

    def start(self, threaded: bool = True) -> None:
        """Start the device, take its limits (a PHANToM reports them once opened), start the haptic thread;
        ``threaded=False``: the caller calls ``tick`` itself (headless lockstep runs, tests)."""
        self.device.start()
        self.guard.max_force, self.guard.max_torque = float(self.device.max_force), float(self.device.max_torque)
        if threaded:
            self.thread.start()

    def pause(self) -> None:
        """Stop ticking and zero the device force; the device stays open and ``start`` resumes."""
        self.thread.stop()
        self.device.write(_ZERO3, _ZERO3 if self.device.max_torque > 0 else None)

    @property
    def running(self) -> bool:
        return self.thread.running

    @property
    def rate(self) -> float:
        return self.thread.rate

    @property
    def on_error(self):
        """Called with the ``DeviceError`` that stops the coupling (from the haptic thread)."""
        return self.thread.on_error

    @on_error.setter
    def on_error(self, callback) -> None:
        self.thread.on_error = callback

    def summary(self):
        """``RateSummary`` of the haptic periods since the last start."""
        return self.thread.stats.summary()

    def stop(self) -> None:
        self.thread.stop()
        try:
            self.device.write(_ZERO3, _ZERO3 if self.device.max_torque > 0 else None)
        finally:
            self.device.stop()

    def release(self) -> None:
        """Tell the physics port to let go of the body (no grasp, zero wrench)."""
        self.commands.put(HapticCommand(None, None, False, np.zeros(6), _ZERO3, None))

    def tick(self) -> None:
        """One haptic step: read, couple, guard, write, post, record."""
        if self._mode != self._next_mode:
            self._enter_mode()
        now = self._clock()
        dt, self._last = (now - self._last if self._last is not None else 1.0 / self.thread.rate), now
        try:
            state = self.device.read()
        except Exception as exc:
            self._fail(exc)
        R, p, v, w = self.map.pose(state)
        letter = self.feedback.get()
        grasp = bool(state.buttons & self.grasp_button)
        age = max(now - letter.stamp if letter.stamp is not None else np.inf, now - state.t)
        stale = age > self.safety.watchdog
        if stale:
            self.guard.disengage()
            f_world, f, tau, wrench, god, body = _ZERO3, _ZERO3, _ZERO3, np.zeros(6), p, None
        elif self._mode == "attach":
            f_world, f, tau, wrench, god, body = self._attach(now, dt, state, R, p, v, w, grasp, letter.value.body)
        else:
            f_world, f, tau, wrench, god, body = self._touch(now, dt, state, p, v)
        try:
            self.device.write(f, tau if self.device.max_torque > 0 else None)
        except Exception as exc:
            self._fail(exc)
        self.commands.put(HapticCommand(R, p, grasp, wrench, god, body))
        self.recording.append(state, f, tau, wrench, letter.value.t if letter.value is not None else np.nan)
        self.output.put(SessionOutput(now, p, god, f_world, f, wrench, self._grasp is not None, stale))

    def _attach(self, now, dt, state, R, p, v, w, grasp, body: BodyFeedback | None):
        if not grasp or body is None:
            self._grasp = None
            self.guard.disengage()
            return _ZERO3, _ZERO3, _ZERO3, np.zeros(6), p, None
        if body.grasp != self._grasp:                              # a new grasp: R_0 = R_d^T R_b
            self._grasp, self._R0 = body.grasp, R.T @ body.R
            self.guard.disengage()
        if not self.guard.engaged:
            self.guard.restart(now)
        wrench = coupling_wrench(coupling_gains(self.coupling, body.mass), R @ self._R0, p, v, w, body)
        f_dev, tau_dev = self.map.force_to_device(-wrench[:3], -wrench[3:])
        gain = self.safety.force_gain
        f, tau, s = self.guard(now, dt, gain * f_dev, gain * tau_dev, state.v, state.w)
        return -s * wrench[:3], f, tau, s * wrench, body.point, None

    def _touch(self, now, dt, state, p, v):
        contact = self.god.update(p, v)
        if not self.guard.engaged:
            self.guard.restart(now)
        f_dev, _ = self.map.force_to_device(contact.force, _ZERO3)
        f, tau, s = self.guard(now, dt, self.safety.force_gain * f_dev, _ZERO3, state.v, state.w)
        reaction = np.concatenate([-s * contact.force, _ZERO3]) if contact.body is not None else np.zeros(6)
        return s * contact.force, f, tau, reaction, contact.god, contact.body

    def _fail(self, exc: Exception):
        """Release the body, try to zero the device, and stop the coupling with a DeviceError."""
        self.release()
        self.guard.disengage()
        try:
            self.device.write(_ZERO3, None)
        except Exception:  # the device is already failing; releasing the body above is what matters
            pass
        raise DeviceError(f"haptic device '{self.device.name}' failed, coupling stopped: {exc}") from exc
