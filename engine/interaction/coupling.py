"""Attach mode and the safety layer between any computed force and the device (seed 000 §2, issue 7 items 3-4).

Attach: a 6D spring-damper (a *virtual coupling*) between the device proxy and the grasped material point,
seed 000 eq. 3.63 with k_v = sqrt(2 m k_p).  On the body, at the grasped point x_b (world):

    f = k_p (x_d - x_b) + k_v (v_d - v_b)
    tau = k_r log(R_d R_0 R_b^T) + k_w (w_d - w_b),    R_0 = R_d^T R_b at the grasp

and the device receives the opposite.  The rotational gains are the translational ones seen at a lever arm l:
k_r = k_p l^2, k_w = sqrt(2 m l^2 k_r).  k_v = sqrt(2 m k_p) is damping ratio 1/sqrt(2) for the grasped mass
on the spring, so a held object settles without overshooting much (the thesis' 17.15 N plateau, seed 000 L1962).

Passivity (the choice, documented): the coupling is *damped* (above) and the device port is guarded by a
time-domain **passivity observer / controller** (Hannaford & Ryu 2002).  The observer sums the energy that has
flowed from the hand into the virtual world, E_n = sum_k -(f_k . v_k + tau_k . w_k) dt (f: force sent to the
device, v: device velocity); a passive world never has E_n < -E_budget.  When the next force would break that,
the controller adds exactly the damping that dissipates the excess, f <- f - a v, tau <- tau - a w,
a = (-E_budget - E_n) / (dt (|v|^2 + |w|^2)).  It only acts when the world would *return* more energy than it
got (sample-and-hold, delays, stale physics), so ordinary holding and lifting feel unchanged.  The observer
restarts with each grasp.

Safety, in order: ramp s(t) = 3 u^2 - 2 u^3, u = (t - t_grasp) / T_ramp (on the device force and the body
wrench); passivity controller; clamp |f| <= the device's maximum continuous force (direction kept); the session's
watchdog zeroes everything when the physics or the device data are older than ``watchdog`` seconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CouplingSettings:
    """k_p (N/m); k_v (N s/m, None: sqrt(2 m k_p), seed 000 eq. 3.63); ``lever`` l (m) scaling the rotational
    gains; ``rotational`` False gives a 3D (point) coupling."""
    k_p: float = 400.0
    k_v: float | None = None
    lever: float = 0.1
    rotational: bool = True

    def __post_init__(self):
        for name in ("k_p", "lever") + (("k_v",) if self.k_v is not None else ()):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0.0):
                raise ValueError(f"CouplingSettings.{name} must be finite and >= 0 (got {value!r})")


@dataclass(frozen=True)
class SafetySettings:
    """``force_gain`` scales the force rendered to the device (a PHANToM Omni gives 0.88 N continuous, a held
    object weighs more); ``ramp_time`` (s); ``watchdog`` (s) maximum age of physics and device data;
    ``passivity`` enables the controller; ``energy_budget`` (J) the energy the world may return beyond what it got.
    """
    force_gain: float = 1.0
    ramp_time: float = 0.1
    watchdog: float = 0.04
    passivity: bool = True
    energy_budget: float = 0.0

    def __post_init__(self):
        for name in ("force_gain", "ramp_time", "watchdog", "energy_budget"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0.0):
                raise ValueError(f"SafetySettings.{name} must be finite and >= 0 (got {value!r})")


@dataclass(frozen=True)
class BodyFeedback:
    """The grasped body as the physics published it (world frame): ``grasp`` id, body orientation ``R``, the
    grasped ``point`` and its velocity ``v``, the body's angular velocity ``w``, its ``mass`` (kg)."""
    grasp: int
    R: np.ndarray
    point: np.ndarray
    v: np.ndarray
    w: np.ndarray
    mass: float


@dataclass(frozen=True)
class Gains:
    k_p: float
    k_v: float
    k_r: float
    k_w: float


def coupling_gains(settings: CouplingSettings, mass: float) -> Gains:
    """k_v = sqrt(2 m k_p) (seed 000 eq. 3.63); k_r = k_p l^2, k_w = sqrt(2 m l^2 k_r)."""
    k_v = np.sqrt(2.0 * mass * settings.k_p) if settings.k_v is None else settings.k_v
    if not settings.rotational:
        return Gains(settings.k_p, k_v, 0.0, 0.0)
    inertia = mass * settings.lever ** 2
    k_r = settings.k_p * settings.lever ** 2
    return Gains(settings.k_p, k_v, k_r, np.sqrt(2.0 * inertia * k_r))


def rotation_log(R) -> np.ndarray:
    """The rotation vector r with exp([r]x) = R (angle in [0, pi])."""
    c = np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0)
    angle = np.arccos(c)
    axis_sin = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # = sin(angle) k
    if angle < 1e-6:
        return axis_sin
    if np.pi - angle < 1e-6:                                    # R = 2 k k^T - 1 near pi
        i = int(np.argmax(np.diag(R)))
        k = (R[:, i] + np.eye(3)[i]) / np.sqrt(2.0 * (R[i, i] + 1.0))   # (R + 1) e_i = 2 k k_i
        return angle * k / np.linalg.norm(k)
    return angle / np.sin(angle) * axis_sin


def coupling_wrench(gains: Gains, R_target, x_d, v_d, w_d, body: BodyFeedback) -> np.ndarray:
    """Wrench (f, tau) (6,) on the body at its grasped point, world frame (seed 000 eq. 3.63, 6D)."""
    f = gains.k_p * (x_d - body.point) + gains.k_v * (v_d - body.v)
    tau = gains.k_r * rotation_log(R_target @ body.R.T) + gains.k_w * (w_d - body.w)
    return np.concatenate([f, tau])


def smoothstep(u: float) -> float:
    """s = 3 u^2 - 2 u^3 on [0, 1], 0 before, 1 after."""
    u = min(max(u, 0.0), 1.0)
    return u * u * (3.0 - 2.0 * u)


def clamp_norm(x, limit: float) -> np.ndarray:
    """x scaled down to |x| <= limit, direction kept."""
    n = np.linalg.norm(x)
    return x * (limit / n) if n > limit else x


class ForceGuard:
    """Ramp, passivity observer/controller and clamp, applied to every force before the device gets it."""

    def __init__(self, settings: SafetySettings, max_force: float, max_torque: float):
        self.settings, self.max_force, self.max_torque = settings, float(max_force), float(max_torque)
        self.energy = 0.0
        self._start: float | None = None

    @property
    def engaged(self) -> bool:
        return self._start is not None

    def restart(self, now: float) -> None:
        """A new grasp, contact session or recovery: the ramp starts again from 0 and the observer from 0 J."""
        self._start, self.energy = now, 0.0

    def disengage(self) -> None:
        self._start = None

    def __call__(self, now, dt, force, torque, v, w):
        """(force, torque) to send (device frame) and the ramp factor s to apply to the body wrench too."""
        if self._start is None:
            return np.zeros(3), np.zeros(3), 0.0
        T = self.settings.ramp_time
        s = smoothstep((now - self._start) / T) if T > 0 else 1.0
        f, tau = s * np.asarray(force, float), s * np.asarray(torque, float)
        if self.settings.passivity:
            f, tau = self._passivity_control(f, tau, v, w, dt)
        f = clamp_norm(f, self.max_force)
        tau = clamp_norm(tau, self.max_torque)
        self.energy -= (f @ v + tau @ w) * dt                       # E_n = sum -(f.v + tau.w) dt
        return f, tau, s

    def _passivity_control(self, f, tau, v, w, dt):
        """Add the damping a that keeps E_n >= -E_budget (Hannaford & Ryu 2002)."""
        predicted = self.energy - (f @ v + tau @ w) * dt
        speed2 = v @ v + w @ w
        if predicted >= -self.settings.energy_budget or speed2 * dt <= 0.0:
            return f, tau
        a = (-self.settings.energy_budget - predicted) / (dt * speed2)
        return f - a * v, tau - a * w

