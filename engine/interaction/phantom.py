"""PHANToM / Touch devices (3D Systems, ex-Sensable) through ``pyOpenHaptics``, the binding of OpenHaptics' libHD.

The binding is imported lazily, in ``start``: importing it loads ``libHD.so`` with ctypes, so without OpenHaptics
nothing fails until a PHANToM is asked for, and then a ``DeviceError`` says what is missing (the application keeps
the mouse).  The loader finds ``libHD.so`` on its usual path (``LD_LIBRARY_PATH`` as set when the process started,
``/usr/lib``); ``library=`` or ``ARTICULA_LIBHD=/path/to/libHD.so`` names one explicitly: it is loaded first
(RTLD_GLOBAL) and then satisfies the binding's ``CDLL("libHD.so")`` by its soname.

Servo loop: the binding's ``hd_callback`` wraps ``_servo`` in hdBeginFrame/hdEndFrame and the OpenHaptics
scheduler calls it at the device rate (1 kHz) on its own thread, taking the GIL each time (see ``thread.py`` for
the switch interval that keeps it on time).  ``_servo`` publishes the pose and sends the newest force; the haptic
thread exchanges with it through two mailboxes.  OpenHaptics units are converted here: mm -> m, mm/s -> m/s,
the column-major 4x4 transform -> (R, p), N m -> mN m for 6-DOF torques.

Binding quirks handled here: ``init_device`` compares the handle with HD_BAD_HANDLE (an error code, not the
HD_INVALID_HANDLE libHD returns) and prints instead of raising, so the handle and ``hdGetError`` are checked here;
an HD error inside the servo loop makes the binding's callback return HD_CALLBACK_DONE, which stops the servo
loop: ``read`` then reports the device as stale and the coupling stops.
"""
from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from engine.interaction.device import DeviceError, DeviceState, Workspace
from engine.interaction.mailbox import Mailbox

INSTALL_HINT = ("Install the OpenHaptics SDK for Linux and the Touch/PHANToM device driver (3D Systems), then make "
                "libHD.so visible: start Articula with LD_LIBRARY_PATH=<openhaptics>/lib, or set "
                "ARTICULA_LIBHD=/path/to/libHD.so. The mouse device works without it.")
_ERRORS = ("HD_INVALID_ENUM", "HD_INVALID_VALUE", "HD_INVALID_OPERATION", "HD_BAD_HANDLE", "HD_WARM_MOTORS",
           "HD_EXCEED_MAX_FORCE", "HD_EXCEEDED_MAX_FORCE_IMPULSE", "HD_EXCEEDED_MAX_VELOCITY", "HD_FORCE_ERROR",
           "HD_DEVICE_FAULT", "HD_DEVICE_ALREADY_INITIATED", "HD_COMM_ERROR", "HD_COMM_CONFIG_ERROR",
           "HD_TIMER_ERROR", "HD_ILLEGAL_BEGIN", "HD_ILLEGAL_END", "HD_FRAME_ERROR", "HD_INVALID_PRIORITY",
           "HD_SCHEDULER_FULL", "HD_INVALID_LICENSE")


def load_binding(library: str | None = None):
    """Import pyOpenHaptics' ``hd`` and ``hd_callback`` modules (loading libHD), or raise a ``DeviceError``."""
    library = library or os.environ.get("ARTICULA_LIBHD")
    if library:
        try:
            ctypes.CDLL(os.fspath(library), mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            raise DeviceError(f"cannot load the OpenHaptics library: {exc}. {INSTALL_HINT}", value=library) from exc
    try:
        from pyOpenHaptics import hd, hd_callback
    except ModuleNotFoundError as exc:
        raise DeviceError(f"the pyOpenHaptics package is not installed ({exc}): pip install pyOpenHaptics") from exc
    except OSError as exc:
        raise DeviceError(f"OpenHaptics' libHD.so was not found ({exc}). {INSTALL_HINT}") from exc
    return hd, hd_callback


def _error_name(hd, code: int) -> str:
    return next((name for name in _ERRORS if getattr(hd, name, None) == code), "unknown HD error")


class PhantomDevice:
    """A PHANToM Omni / Touch / Premium: pose in its frame (m), 3 (or 6) DOF force output.

    Limits (``workspace``, ``max_force`` continuous, ``max_torque``, ``rate``) are read from the device in
    ``start``; before that they are 0 so nothing can be sent.  ``read`` raises a ``DeviceError`` when the servo
    loop stopped or has not updated for ``stale_after`` s.
    """

    kind, stage = "device", "haptic"          # a plugin (engine.interaction.devices)

    def __init__(self, device_name: str = "Default Device", *, library: str | None = None,
                 stale_after: float = 0.1, clock=time.monotonic):
        self.name, self.library, self.stale_after, self._clock = device_name, library, stale_after, clock
        self.workspace, self.max_force, self.max_torque, self.rate = Workspace.unbounded(), 0.0, 0.0, 1000.0
        self.model, self._six_dof, self._vector = "", False, None
        self._hd = self._callback = self._handle = None
        self._state: Mailbox = Mailbox(clock)
        self._command: Mailbox = Mailbox(clock)
        self._error: BaseException | None = None

    def start(self, timeout: float = 1.0) -> None:
        hd, hd_callback = load_binding(self.library)
        handle = hd.init_device(self.name)
        self._check(hd, handle, "initialising")
        self._hd, self._handle = hd, handle
        try:
            self._read_limits(hd)
            hd.enable_force()
            self._callback = hd_callback.hd_callback(self._servo)  # keep a reference: libHD holds a raw pointer
            hd.start_scheduler()
            hd_callback.hdAsyncSheduler(self._callback)
            self._check(hd, handle, "starting the scheduler of")
            self._wait_for_servo(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_for_servo(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self._state.get().value is None and self._error is None and time.monotonic() < deadline:
            time.sleep(1e-3)
        if self._state.get().value is None:
            raise DeviceError(f"the OpenHaptics scheduler never ran the servo loop of '{self.name}' "
                              f"within {timeout} s", value=self._error)

    def _check(self, hd, handle, doing: str) -> None:
        code = hd._get_error().errorCode
        if handle is None or handle == 0xFFFFFFFF or code != hd.HD_SUCCESS:
            raise DeviceError(f"OpenHaptics failed {doing} haptic device '{self.name}': {_error_name(hd, code)} "
                              f"(0x{code:04x}). Is it plugged in and configured (Touch_Setup)? The mouse device "
                              f"still works.", value=handle)

    def _read_limits(self, hd) -> None:
        from pyOpenHaptics.hdu_matrix import hduVector3Dd
        box = 1e-3 * np.array(hd._get_doublev(hd.HD_USABLE_WORKSPACE_DIMENSIONS, ctypes.c_double * 6))
        self.workspace = Workspace(box[:3], box[3:])
        self.max_force = hd._get_doublev(hd.HD_NOMINAL_MAX_CONTINUOUS_FORCE, ctypes.c_double).value
        self.rate = float(hd._get_integerv(hd.HD_UPDATE_RATE, ctypes.c_int).value)
        self._six_dof = hd._get_integerv(hd.HD_OUTPUT_DOF, ctypes.c_int).value == 6
        if self._six_dof:
            self.max_torque = 1e-3 * hd._get_doublev(hd.HD_NOMINAL_MAX_TORQUE_CONTINUOUS_FORCE,
                                                     ctypes.c_double).value
        self._vector = hduVector3Dd
        self.model = f"{hd.get_vendor()} {hd.get_model()}"

    def _servo(self) -> None:
        """Scheduler thread, inside an HD frame: publish the pose, send the newest force."""
        hd = self._hd
        try:
            T = np.array(hd.get_transform())                      # column-major: T[3, :3] is the position (mm)
            v = np.array(hd._get_doublev(hd.HD_CURRENT_VELOCITY, self._vector))
            w = np.array(hd._get_doublev(hd.HD_CURRENT_ANGULAR_VELOCITY, self._vector))
            self._state.put(DeviceState(self._clock(), T[:3, :3].T, 1e-3 * T[3, :3], 1e-3 * v, w, hd.get_buttons()))
            command = self._command.get().value
            force, torque = (np.zeros(3), np.zeros(3)) if command is None else command
            hd.set_force(list(force))
            if self._six_dof:
                hd._set_doublev(hd.HD_CURRENT_TORQUE, list(1e3 * torque), self._vector)
        except Exception as exc:  # an exception must not cross the C callback; read() reports it
            self._error = exc

    def read(self) -> DeviceState:
        if self._error is not None:
            raise DeviceError(f"servo loop of '{self.name}' failed: {self._error}")
        state = self._state.get().value
        if state is None:
            raise DeviceError(f"haptic device '{self.name}' read before start()")
        age = self._clock() - state.t
        if age > self.stale_after:
            raise DeviceError(f"haptic device '{self.name}' stopped updating {1e3 * age:.0f} ms ago (the "
                              f"OpenHaptics servo loop ended: device fault or HD error)", value=age)
        return state

    def write(self, force, torque=None) -> None:
        self._command.put((np.array(force, float), np.zeros(3) if torque is None else np.array(torque, float)))

    def stop(self) -> None:
        if self._hd is None:
            return
        self._command.put((np.zeros(3), np.zeros(3)))
        self._hd.stop_scheduler()
        self._hd.close_device(self._handle)
        self._hd = None
