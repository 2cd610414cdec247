"""A device that replays a pose trajectory from a file and records the forces it receives (issue 7 item 1).

Files: ``.npz`` with arrays ``t`` (n,), ``position`` (n, 3) and optionally ``quaternion`` (n, 4, x y z w) and
``buttons`` (n,) — what ``SessionRecording.save`` writes, or a device of a GUI simulation recording — or ``.csv``
with a header naming the columns ``t, x, y, z`` and optionally ``qx, qy, qz, qw`` and ``buttons``. Times are
seconds from the start of the replay, increasing; positions are metres in the device frame. Between samples the
position is interpolated linearly, the orientation by normalised lerp, the buttons hold their last sampled value;
after the end the last pose holds.
"""
from __future__ import annotations

import os
import time

import numpy as np

from engine.interaction.device import DeviceState, Workspace
from engine.interaction.recording import ChunkedLog
from engine.spatial import quaternion_to_rotation


def _check(path, name, a, shape):
    a = np.asarray(a, dtype=float)
    if a.shape != shape:
        raise ValueError(f"{path}: '{name}' must have shape {shape} (got {a.shape})")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{path}: '{name}' has non-finite values (first at row {np.argwhere(~np.isfinite(a))[0][0]})")
    return a


def load_trajectory(path: str | os.PathLike, device: str | None = None) -> dict[str, np.ndarray]:
    """Read a ``.npz`` or ``.csv`` trajectory into checked ``t, position, quaternion, buttons`` arrays.  A
    simulation recording of the GUI (``device_names``, ``device<k>_<column>`` arrays) gives the trajectory of
    its ``device`` (its first one by default)."""
    path = os.fspath(path)
    if path.endswith(".npz"):
        with np.load(path) as f:
            if "device_names" not in f.files:
                return check_trajectory({k: f[k] for k in f.files}, path)
            names = [str(n) for n in f["device_names"]]
            if not names or (device is not None and device not in names):
                raise ValueError(f"{path}: no recorded device {device or ''!r} (recorded: {names})")
            prefix = f"device{names.index(device) if device is not None else 0}_"
            return check_trajectory({k[len(prefix):]: f[k] for k in f.files if k.startswith(prefix)}, path)
    if not path.endswith(".csv"):
        raise ValueError(f"{path}: a trajectory is a .npz or a .csv file")
    table = np.atleast_1d(np.genfromtxt(path, delimiter=",", names=True))
    names = set(table.dtype.names or ())
    raw = {k: table[k] for k in ("t", "buttons") if k in names}
    for key, cols in (("position", ("x", "y", "z")), ("quaternion", ("qx", "qy", "qz", "qw"))):
        if set(cols) <= names:
            raw[key] = np.stack([table[c] for c in cols], axis=1)
    return check_trajectory(raw, path)


def check_trajectory(raw: dict, source: str) -> dict[str, np.ndarray]:
    """Shapes, finiteness, increasing times, unit quaternions; missing quaternions/buttons default to
    identity/0.  Errors name ``source`` and the offending array."""
    for key in ("t", "position"):
        if raw.get(key) is None:
            raise ValueError(f"{source}: missing '{key}' (needs t and position, or t,x,y,z columns)")
    t = np.atleast_1d(np.asarray(raw["t"], dtype=float))
    n = len(t)
    _check(source, "t", t, (n,))
    if n == 0:
        raise ValueError(f"{source}: 't' is empty")
    if np.any(np.diff(t) <= 0):
        i = int(np.argmax(np.diff(t) <= 0)) + 1
        raise ValueError(f"{source}: 't' must be strictly increasing (row {i}: {t[i]} after {t[i - 1]})")
    quat = raw.get("quaternion")
    quat = _check(source, "quaternion", np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)) if quat is None else quat, (n, 4))
    norms = np.linalg.norm(quat, axis=1)
    if np.any(norms < 1e-9):
        raise ValueError(f"{source}: 'quaternion' row {int(np.argmin(norms))} is zero")
    buttons = raw.get("buttons")
    return {"t": t, "position": _check(source, "position", raw["position"], (n, 3)),
            "quaternion": quat / norms[:, None],
            "buttons": _check(source, "buttons", np.zeros(n) if buttons is None else buttons, (n,)).astype(np.int64)}


class ScriptedDevice:
    """Replays ``t, position, quaternion, buttons``; ``forces()`` gives the (t, fx, fy, fz, tx, ty, tz) received.

    ``clock`` drives the replay (``time.monotonic``; tests pass a manual clock).  ``max_force`` defaults to no
    limit: a replay records what the coupling would send.
    """

    def __init__(self, t, position, quaternion=None, buttons=None, *, name: str = "scripted",
                 max_force: float = np.inf, max_torque: float = 0.0, rate: float = 1000.0, clock=time.monotonic):
        self._traj = check_trajectory({"t": t, "position": position, "quaternion": quaternion, "buttons": buttons},
                                      name)
        self.name, self.max_force, self.max_torque, self.rate = name, float(max_force), float(max_torque), rate
        self.workspace = Workspace(self._traj["position"].min(axis=0), self._traj["position"].max(axis=0))
        self._clock, self._t0 = clock, None
        self._forces = ChunkedLog(7)

    @classmethod
    def from_file(cls, path: str | os.PathLike, device: str | None = None, **kwargs) -> "ScriptedDevice":
        traj = load_trajectory(path, device)
        return cls(traj["t"], traj["position"], traj["quaternion"], traj["buttons"],
                   **{"name": os.path.basename(os.fspath(path)), **kwargs})

    def start(self) -> None:
        self._t0 = self._clock()

    def stop(self) -> None:
        self._t0 = None

    def sample(self, tau: float) -> DeviceState:
        """The pose ``tau`` seconds into the replay (stamped ``tau``)."""
        t, P, Q, B = (self._traj[k] for k in ("t", "position", "quaternion", "buttons"))
        i = int(np.clip(np.searchsorted(t, tau, side="right") - 1, 0, len(t) - 1))
        j = min(i + 1, len(t) - 1)
        dt = t[j] - t[i]
        s = float(np.clip((tau - t[i]) / dt, 0.0, 1.0)) if dt > 0 else 0.0
        qj = Q[j] if Q[i] @ Q[j] >= 0.0 else -Q[j]
        q = (1.0 - s) * Q[i] + s * qj
        moving = dt > 0 and t[0] <= tau < t[j]
        v = (P[j] - P[i]) / dt if moving else np.zeros(3)
        w = _angular_velocity(Q[i], qj, dt) if moving else np.zeros(3)
        return DeviceState(tau, quaternion_to_rotation(q / np.linalg.norm(q)), P[i] + s * (P[j] - P[i]), v, w,
                           int(B[i]))

    def read(self) -> DeviceState:
        if self._t0 is None:
            raise RuntimeError(f"device '{self.name}' read before start()")
        now = self._clock()
        state = self.sample(now - self._t0)
        return DeviceState(now, state.R, state.p, state.v, state.w, state.buttons)

    def write(self, force, torque=None) -> None:
        row = self._forces.row()
        row[0] = self._clock()
        row[1:4] = force
        row[4:7] = 0.0 if torque is None else torque
        self._forces.commit()

    def forces(self) -> np.ndarray:
        """(n, 7): clock time, force (3,) and torque (3,) of every ``write``, device frame."""
        return self._forces.array()


def _angular_velocity(qa, qb, dt):
    """w = 2 log(qb qa^-1) / dt, world frame, quaternions (x, y, z, w)."""
    va, wa, vb, wb = -qa[:3], qa[3], qb[:3], qb[3]
    r_v = wb * va + wa * vb + np.array([vb[1] * va[2] - vb[2] * va[1], vb[2] * va[0] - vb[0] * va[2],
                                        vb[0] * va[1] - vb[1] * va[0]])          # + vb x va
    r_w = wb * wa - vb @ va
    n = np.linalg.norm(r_v)
    return np.zeros(3) if n < 1e-12 else r_v / n * (2.0 * np.arctan2(n, r_w) / dt)
