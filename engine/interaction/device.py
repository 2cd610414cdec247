"""The Device protocol every interaction device implements (seed 000 §2 "Haptic integration").

A device reports the pose of its end-effector in its own frame, in SI units (m, m/s, rad/s), and its buttons;
it takes a force (N) and, where it has 6 output DOF, a torque (N m), both in its own frame.  The thesis used a
PHANToM Omni, 6-DOF input and 3-DOF force feedback (seed 000 L1934); the same protocol serves the mouse and
scripted devices.  ``WorkspaceMap`` places the device frame in the world and scales its motion.

Threads: ``read`` and ``write`` are called by the haptic thread only; ``start``/``stop`` by the owner.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from engine.errors import ArticulaError


class DeviceError(ArticulaError):
    """A device is missing, cannot be initialised, or failed while running (the coupling stops, not the app)."""


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class DeviceState:
    """One reading of a device, in the device frame: ``t`` (s, ``time.monotonic`` clock when it was sampled),
    ``R`` (3, 3) and ``p`` (3,) the end-effector placement, ``v`` (3,) linear and ``w`` (3,) angular velocity,
    ``buttons`` a bit mask (bit 0 is the first button)."""
    t: float
    R: np.ndarray
    p: np.ndarray
    v: np.ndarray = field(default_factory=lambda: _frozen(np.zeros(3)))
    w: np.ndarray = field(default_factory=lambda: _frozen(np.zeros(3)))
    buttons: int = 0

    def __post_init__(self):
        for name in ("R", "p", "v", "w"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))


@dataclass(frozen=True)
class Workspace:
    """Axis-aligned box ``lower``..``upper`` (3,) (m, device frame) the end-effector can reach."""
    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self):
        lower, upper = _frozen(self.lower), _frozen(self.upper)
        if lower.shape != (3,) or upper.shape != (3,) or np.any(lower > upper):
            raise ValueError(f"workspace needs lower <= upper, two (3,) vectors (got {lower}, {upper})")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @classmethod
    def unbounded(cls) -> "Workspace":
        return cls(np.full(3, -np.inf), np.full(3, np.inf))

    def contains(self, p) -> bool:
        return bool(np.all(p >= self.lower) and np.all(p <= self.upper))


@runtime_checkable
class Device(Protocol):
    """What the haptic thread needs from a device.

    ``max_force`` is the maximum *continuous* force (N) the coupling may send; ``max_torque`` (N m) is 0 for a
    3-DOF-output device; ``rate`` (Hz) is the device's nominal servo rate.
    """
    name: str
    workspace: Workspace
    max_force: float
    max_torque: float
    rate: float

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def read(self) -> DeviceState: ...

    def write(self, force, torque=None) -> None: ...


@dataclass(frozen=True)
class WorkspaceMap:
    """World placement of the device frame and a motion scale ``s``: x_world = R (s x_dev) + p, R_world = R R_dev.

    Forces map back by the transpose, scaled so that power is the same on both sides:
    f_dev . v_dev = f_world . v_world  =>  f_dev = s R^T f_world  (torques: tau_dev = R^T tau_world).
    """
    R: np.ndarray = field(default_factory=lambda: np.eye(3))
    p: np.ndarray = field(default_factory=lambda: np.zeros(3))
    scale: float = 1.0

    def __post_init__(self):
        R = _frozen(self.R)
        if R.shape != (3, 3) or not np.allclose(R @ R.T, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
            raise ValueError(f"WorkspaceMap.R must be a rotation matrix (got {R.tolist()})")
        if not self.scale > 0:
            raise ValueError(f"WorkspaceMap.scale must be > 0 (got {self.scale!r})")
        object.__setattr__(self, "R", R)
        object.__setattr__(self, "p", _frozen(self.p))

    @classmethod
    def y_up(cls, p=(0.0, 0.0, 0.0), scale: float = 1.0) -> "WorkspaceMap":
        """OpenHaptics' frame (x right, y up, z towards the user) seen by a user facing -x of a z-up world:
        x_dev -> y_world, y_dev -> z_world, z_dev -> x_world."""
        return cls(np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), np.asarray(p, float), scale)

    def pose(self, state: DeviceState):
        """World (R, p, v, w) of the device end-effector."""
        s = self.scale
        return self.R @ state.R, self.R @ (s * state.p) + self.p, s * (self.R @ state.v), self.R @ state.w

    def force_to_device(self, force_world, torque_world):
        """(f_dev, tau_dev) = (s R^T f, R^T tau)."""
        return self.scale * (self.R.T @ force_world), self.R.T @ torque_world
