"""Per-session recording of a haptic device: trajectory, buttons and forces (issue 7 item 5).

``ChunkedLog`` appends fixed-width rows into preallocated blocks (a new block every ``chunk`` rows, never a copy
of what is stored), so the haptic thread records at 1 kHz without reallocating.  ``SessionRecording`` names the
columns; its ``.npz`` holds ``t, position, quaternion, buttons`` (device frame, what ``ScriptedDevice`` replays),
``force, torque`` (sent to the device, device frame), ``wrench`` (coupling wrench on the body, world) and
``sim_t`` (the simulation time of the physics feedback the tick used, NaN before the first: it aligns the
session with the simulation's recording, ``app.recording.Recorder``).
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


class RingLog:
    """Rows of ``width`` floats in a ring of ``capacity`` rows: one thread appends, another ``take``s what is new
    (how a haptic process streams its recording to the parent without keeping it)."""

    def __init__(self, width: int, capacity: int = 8192):
        self.width, self.capacity = int(width), int(capacity)
        self._ring = np.empty((self.capacity, self.width))
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def row(self) -> np.ndarray:
        return self._ring[self._n % self.capacity]

    def commit(self) -> None:
        self._n += 1

    def take(self, start: int):
        """(rows committed from ``start`` on, a copy; the index to take from next; rows lost to the ring)."""
        n = self._n
        lost = max(0, n - start - self.capacity)
        idx = np.arange(start + lost, n) % self.capacity
        return self._ring[idx], n, lost


class SessionRecording:
    """What one haptic session did, one row per haptic tick (``log``: where the rows go, a ``ChunkedLog`` of all
    of them by default)."""

    COLUMNS = {"t": 1, "position": 3, "quaternion": 4, "buttons": 1, "force": 3, "torque": 3, "wrench": 6, "sim_t": 1}
    WIDTH = sum(COLUMNS.values())

    def __init__(self, chunk: int = 8192, log=None):
        self._slices, start = {}, 0
        for name, width in self.COLUMNS.items():
            self._slices[name] = slice(start, start + width)
            start += width
        self._log = ChunkedLog(start, chunk) if log is None else log

    def __len__(self) -> int:
        return len(self._log)

    def append(self, state, force, torque, wrench, sim_t: float = np.nan) -> None:
        """Record a ``DeviceState`` (device frame), the force/torque sent to the device, the body wrench and the
        simulation time the physics last reported."""
        row, s = self._log.row(), self._slices
        row[s["t"]] = state.t
        row[s["position"]] = state.p
        row[s["quaternion"]] = rotation_to_quaternion(state.R)
        row[s["buttons"]] = state.buttons
        row[s["force"]] = force
        row[s["torque"]] = torque
        row[s["wrench"]] = wrench
        row[s["sim_t"]] = sim_t
        self._log.commit()

    def extend(self, rows) -> None:
        """Append raw (n, WIDTH) rows (streamed from a haptic process)."""
        for values in rows:
            self._log.append(values)

    def take(self, start: int):
        """Raw rows from ``start`` on, the next start and the rows lost (a ``RingLog``'s ``take``)."""
        return self._log.take(start)

    def arrays_since(self, start: int) -> dict[str, np.ndarray]:
        """Like ``arrays`` for the rows from ``start`` on (``t`` from 0 at that row)."""
        a = self._log.array()[start:]
        out = {name: a[:, s] for name, s in self._slices.items()}
        for name in ("t", "sim_t", "buttons"):
            out[name] = out[name][:, 0]
        out["t"] = out["t"] - (out["t"][0] if len(a) else 0.0)
        out["buttons"] = out["buttons"].astype(np.int64)
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """Columns by name; ``t`` starts at 0, ``t``, ``sim_t`` and ``buttons`` (integers) are (n,)."""
        return self.arrays_since(0)

    def save(self, path: str | os.PathLike) -> None:
        """Write the ``.npz`` that ``ScriptedDevice.from_file`` replays."""
        np.savez(path, **self.arrays())
