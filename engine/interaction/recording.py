"""Per-session recording of a haptic device: trajectory, buttons and forces (issue 7 item 5).

``ChunkedLog`` appends fixed-width rows into preallocated blocks (a new block every ``chunk`` rows, never a copy
of what is stored), so the haptic thread records at 1 kHz without reallocating.  ``SessionRecording`` names the
columns; its ``.npz`` holds ``t, position, quaternion, buttons`` (device frame, what ``ScriptedDevice`` replays)
and ``force, torque`` (sent to the device, device frame) and ``wrench`` (coupling wrench on the body, world).
"""
from __future__ import annotations

import os
import threading

import numpy as np

from engine.spatial import rotation_to_quaternion


class ChunkedLog:
    """Rows of ``width`` floats, appended by one thread and read by any."""

    def __init__(self, width: int, chunk: int = 8192):
        self.width, self.chunk = int(width), int(chunk)
        self._blocks = [np.empty((self.chunk, self.width))]
        self._n = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    def row(self) -> np.ndarray:
        """The next row to fill (a view); call ``commit`` once it is filled."""
        i = self._n % self.chunk
        if i == 0 and self._n // self.chunk == len(self._blocks):
            self._blocks.append(np.empty((self.chunk, self.width)))
        return self._blocks[self._n // self.chunk][i]

    def commit(self) -> None:
        with self._lock:
            self._n += 1

    def append(self, values) -> None:
        self.row()[:] = values
        self.commit()

    def array(self) -> np.ndarray:
        """A (n, width) copy of everything committed so far."""
        with self._lock:
            n = self._n
            blocks = list(self._blocks)
        full, rest = divmod(n, self.chunk)
        parts = blocks[:full] + ([blocks[full][:rest]] if rest else [])
        return np.concatenate(parts) if parts else np.empty((0, self.width))


class SessionRecording:
    """What one haptic session did, one row per haptic tick."""

    COLUMNS = {"t": 1, "position": 3, "quaternion": 4, "buttons": 1, "force": 3, "torque": 3, "wrench": 6}

    def __init__(self, chunk: int = 8192):
        self._slices, start = {}, 0
        for name, width in self.COLUMNS.items():
            self._slices[name] = slice(start, start + width)
            start += width
        self._log = ChunkedLog(start, chunk)

    def __len__(self) -> int:
        return len(self._log)

    def append(self, state, force, torque, wrench) -> None:
        """Record a ``DeviceState`` (device frame), the force/torque sent to the device and the body wrench."""
        row, s = self._log.row(), self._slices
        row[s["t"]] = state.t
        row[s["position"]] = state.p
        row[s["quaternion"]] = rotation_to_quaternion(state.R)
        row[s["buttons"]] = state.buttons
        row[s["force"]] = force
        row[s["torque"]] = torque
        row[s["wrench"]] = wrench
        self._log.commit()

    def arrays(self) -> dict[str, np.ndarray]:
        """Columns by name; ``t`` starts at 0, ``buttons`` are integers."""
        a = self._log.array()
        out = {name: a[:, s] for name, s in self._slices.items()}
        out["t"] = out["t"][:, 0] - (out["t"][0, 0] if len(a) else 0.0)
        out["buttons"] = out["buttons"][:, 0].astype(np.int64)
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write the ``.npz`` that ``ScriptedDevice.from_file`` replays."""
        np.savez(path, **self.arrays())
