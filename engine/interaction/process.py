"""A haptic session in its own process: the device and the 1 kHz tick out of the application's GIL.

Why (``thread.py`` has the measurements): in the whole application, the GUI and the physics driver run enough
Python that the in-process haptic thread missed 1 kHz (860-970 Hz, p99 2.5-5.3 ms) on a loaded 2-core machine,
while the same tick in a process beside it held 1000 Hz, p99 1.0 ms.

    parent (GUI, physics thread)                         child (this module's ``_serve``)
      PhysicsPort.update --- FEEDBACK slot (shared) ---->  HapticSession.tick at 1 kHz on a HapticThread:
                         <-- COMMAND slot (shared) -----    device.read, coupling, safety, device.write
      MouseDevice (shared proxy and force) <----------->   the same MouseDevice, unpickled
      recording  <-- events pipe: rows, ready, fault ---   rows of the tick, drained every DRAIN_PERIOD
      start/pause/mode/stop --- control pipe ---------->   (EOF: the parent is gone, the child stops)

The exchange is two ``SharedMailbox`` latest-value slots (seqlocks, ``shared.py``): the watchdog of the tick sees
the age of the physics feedback as in a thread, and zeroes the force after ``SafetySettings.watchdog``.  The
device is made in the child (a PHANToM opens there; a device failure ends the coupling, is sent to the parent and
raised there as a ``DeviceError``, never killing the application), or sent to it when it must be shared with the
parent (the mouse, made with ``shared=True``).  Touch mode's ``proximity`` is sent to the child once: a
``SceneProximity`` there reads the bodies' placements from a ``SharedPlacements`` the physics writes each step.
Children start from a *forkserver* (a clean process started once, with this module preloaded): the parent
holds Qt and numba threads, so it must never fork itself, and a fork of the server starts a session in tens of
milliseconds instead of a fresh interpreter's second (measured on the loaded 2-core machine: the first ``open``
1.4 s, the server importing numpy and the engine once; the next ones 16 ms).  ``bench/haptics.py --gui``
measured the whole application with the mouse holding the box (2 runs of 8-10 s per case, Xvfb, the machine
shared with other jobs):

    load average   haptic loop      mean rate    p99 period   max        physics real-time factor
    1.8-2.6        this process     996-999 Hz   1.02 ms      5-12 ms    0.75-0.79
                   thread           950-965 Hz   3.2-3.6 ms   10-13 ms   0.56-0.62
    1.5-1.7        this process     1000 Hz      1.01 ms      1.4-1.7 ms 0.95-1.00
                   thread           993-994 Hz   1.65-1.70 ms 5.2-5.3 ms 0.75-0.92

The physics also ran closer to real time beside the process than beside the thread (no 1 kHz GIL hand-over).
"""
from __future__ import annotations

import functools
import multiprocessing as mp
import os
import queue
import threading

import numpy as np

from engine import plugins
from engine.interaction.coupling import CouplingSettings, SafetySettings
from engine.interaction.device import Device, DeviceError, WorkspaceMap
from engine.interaction.devices import device_spec, session_settings
from engine.interaction.port import PhysicsPort
from engine.interaction.recording import RingLog, SessionRecording
from engine.interaction.session import MODES, HapticSession
from engine.interaction.shared import COMMAND, FEEDBACK, SharedMailbox
from engine.interaction.thread import PeriodStats, RateSummary
from engine.interaction.touch import TouchSettings

DRAIN_PERIOD = 0.02        # s between two batches of recorded rows (and checks of the parent)
START_TIMEOUT = 60.0       # s for a child to open its device (the first start also starts the forkserver)
_ZERO3 = np.zeros(3)


def context():
    """The multiprocessing context of haptic processes: a forkserver preloading this module."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["__main__", __name__])
    return ctx


class ProcessSession:
    """A ``HapticSession`` run by a child process; the same interface as the in-process one.

    ``device`` is a picklable device (``MouseDevice(shared=True)``) or a zero-argument callable that makes the
    device in the child (``functools.partial(PhantomDevice, library=...)``).  ``open()`` starts the child and
    opens the device, ``start()`` starts ticking (opening first if needed), ``pause()`` stops ticking with the
    force at zero, ``stop()`` ends the child.  ``recording`` receives every tick's row; ``fault`` is the
    ``DeviceError`` that stopped the coupling, also passed to ``on_error`` (called from a listener thread).
    """

    def __init__(self, device, *, mode: str = "attach", workspace_map: WorkspaceMap = WorkspaceMap(),
                 coupling: CouplingSettings = CouplingSettings(), safety: SafetySettings = SafetySettings(),
                 touch: TouchSettings = TouchSettings(), proximity=None, grasp_button: int = 1,
                 rate: float | None = None, name: str | None = None, on_error=None):
        if mode not in MODES:
            raise ValueError(f"haptic mode must be one of {MODES} (got {mode!r})")
        if mode == "touch" and proximity is None:
            raise ValueError("touch mode needs a proximity query (ProcessSession(proximity=...))")
        made_here = isinstance(device, Device)
        self.device, self._device = (device if made_here else None), device
        self.name = name or (device.name if made_here else getattr(device, "func", device).__name__)
        self.safety, self.on_error, self._mode = safety, on_error, mode
        self.rate = float(rate or (device.rate if made_here else 1000.0))
        self._settings = dict(mode=mode, workspace_map=workspace_map, coupling=coupling, safety=safety, touch=touch,
                              proximity=proximity, grasp_button=grasp_button, rate=self.rate)
        self.commands, self.feedback = SharedMailbox(COMMAND), SharedMailbox(FEEDBACK)
        self.recording = SessionRecording()
        self.lost_rows = 0                        # rows the child's ring overwrote before this process read them
        self.fault: DeviceError | None = None
        self.info: dict = {}
        self.running = False
        self._process = self._control = self._listener = None
        self._stopping = False
        self._ready, self._replies = threading.Event(), queue.Queue()

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"haptic mode must be one of {MODES} (got {mode!r})")
        if mode == "touch" and self._settings["proximity"] is None:
            raise ValueError("touch mode needs a proximity query (ProcessSession(proximity=...))")
        self._mode = self._settings["mode"] = mode
        self._send("mode", mode)

    def physics_port(self, pick, body) -> PhysicsPort:
        """The physics-thread end, as ``HapticSession.physics_port``."""
        return PhysicsPort(self.commands, self.feedback, pick, body, watchdog=self.safety.watchdog)

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def open(self) -> None:
        """Start the child, which makes and opens the device (returns at once; ``start`` waits for it)."""
        if self._process is not None:
            return
        ctx = context()
        control_read, control_write = ctx.Pipe(duplex=False)
        events_read, events_write = ctx.Pipe(duplex=False)
        self._ready.clear()
        self.fault, self.running, self._stopping = None, False, False
        self._process = ctx.Process(target=_serve, name=f"haptic-{self.name}", daemon=True,
                                    args=(self._device, self._settings, self.commands, self.feedback, control_read,
                                          events_write, os.getpid()))
        self._process.start()
        control_read.close()                      # the child's ends: closed here, so their EOF means the child
        events_write.close()                      # (or this process) is gone
        self._control = control_write
        self._listener = threading.Thread(target=self._listen, args=(events_read,), name=f"haptic-{self.name}-events",
                                          daemon=True)
        self._listener.start()

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Open if needed, wait for the device, start ticking; a device that cannot open raises ``DeviceError``."""
        self.open()
        if not self._ready.wait(timeout):
            raise DeviceError(f"haptic process of '{self.name}' did not open its device within {timeout} s")
        if self.fault is not None:
            raise self.fault
        self._send("run")
        self.running = True

    def pause(self) -> None:
        """Stop ticking, force to zero; ``start`` resumes."""
        self._send("pause")
        self.running = False

    def summary(self, timeout: float = 5.0) -> RateSummary:
        """``RateSummary`` of the child's haptic periods since the last start."""
        if not self.alive:
            return self.info.get("summary", PeriodStats().summary())
        self._send("summary")
        return self._replies.get(timeout=timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """End the child (the device is zeroed and closed there) and collect its last rows."""
        if self._process is None:
            return
        self._stopping = True
        self._send("stop")
        self._process.join(timeout)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout)
        self._listener.join(timeout)
        self._control.close()
        self._process = self._control = None
        self.running = False

    def _send(self, *message) -> None:
        if self._control is not None:
            try:
                self._control.send(message)
            except (BrokenPipeError, OSError):     # the child is gone: ``fault`` or ``stop`` says why
                pass

    def _listen(self, events) -> None:
        """Listener thread: rows into the recording, the child's answers and faults."""
        while True:
            try:
                kind, payload = events.recv()
            except (EOFError, OSError):
                break
            if kind == "rows":
                self.recording.extend(payload)
            elif kind == "ready":
                self.info.update(payload)
                self._ready.set()
            elif kind == "summary":
                self._replies.put(payload)
            elif kind == "lost":
                self.lost_rows += payload
            elif kind == "stopped":
                self.info["summary"] = payload
            elif kind == "fault":
                self._report(payload)
        events.close()
        if not self._stopping and self.fault is None:
            self._report(f"the haptic process of '{self.name}' ended unexpectedly; the coupling stopped")

    def _report(self, message: str) -> None:
        self.fault, self.running = DeviceError(message), False
        self._ready.set()
        if self.on_error is not None:
            self.on_error(self.fault)


def _serve(device, settings, commands, feedback, control, events, parent_pid) -> None:
    """The child: open the device, then serve the control pipe and stream the recording until told to stop or
    until the parent is gone."""
    try:
        session = HapticSession(device if isinstance(device, Device) else device(), **settings)
        session.commands, session.feedback = commands, feedback
        session.recording = SessionRecording(log=RingLog(SessionRecording.WIDTH))
        session.start(threaded=False)
    except Exception as exc:  # any failure to open is reported, never raised into the parent
        events.send(("fault", f"haptic device could not be opened: {exc}"))
        return
    events.send(("ready", {"name": session.device.name, "max_force": float(session.device.max_force)}))
    taken, reported = 0, False
    try:
        while _parent_alive(parent_pid):
            if control.poll(DRAIN_PERIOD) and not _obey(session, control.recv(), events):
                break
            taken = _stream(session.recording, taken, events)
            if session.fault is not None and not reported:
                events.send(("fault", str(session.fault)))
                reported = True
    except (EOFError, BrokenPipeError, OSError):  # the parent closed its end: it stopped or died
        pass
    finally:
        _close(session, events, taken)


def _obey(session: HapticSession, message, events) -> bool:
    """Apply one control message; False to stop."""
    kind = message[0]
    if kind == "run" and session.fault is None:
        session.thread.start()
    elif kind == "pause":
        session.pause()
    elif kind == "mode":
        session.mode = message[1]
    elif kind == "summary":
        events.send(("summary", session.summary()))
    return kind != "stop"


def _stream(recording: SessionRecording, taken: int, events) -> int:
    rows, taken, lost = recording.take(taken)
    if lost:
        events.send(("lost", lost))
    if len(rows):
        events.send(("rows", rows))
    return taken


def _close(session: HapticSession, events, taken: int) -> None:
    try:
        session.stop()
    except Exception:  # the device may be what failed; the coupling zeroed its force when it stopped
        pass
    try:
        _stream(session.recording, taken, events)
        events.send(("stopped", session.summary()))
    except (BrokenPipeError, OSError):
        pass


def _parent_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def make_device(spec, base_dir: str):
    """Child side of ``process_session_for``: the device plugin of a ``<Device>`` spec."""
    return plugins.create(spec, base_dir=base_dir)


def process_session_for(spec, base_dir=".", proximity=None, on_error=None) -> ProcessSession:
    """The ``ProcessSession`` of a ``<Device>`` spec: the mouse is made here with shared state (the GUI moves
    it), any other device in the child.  Bad parameters raise ``UniverseError`` here."""
    settings = session_settings(spec)
    if spec.name == "mouse":
        device = plugins.create(device_spec(spec), base_dir=str(base_dir), shared=True)
    else:
        device = functools.partial(make_device, device_spec(spec), str(base_dir))
    return ProcessSession(device, **settings, proximity=proximity, name=spec.name, on_error=on_error)
