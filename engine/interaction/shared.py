"""Latest-value slots in shared memory: how the haptic process and the physics hand data to each other.

``SharedSlot`` is a fixed row of floats in a ``multiprocessing`` ``RawArray`` guarded by a *seqlock*: one writer
bumps the sequence word to odd, writes the stamp and the values, bumps it back to even; a reader copies the row
and keeps the copy only if the word was even and unchanged around the copy, retrying otherwise.  Neither side
ever waits on the other (a writer preempted mid-write makes readers return the last consistent copy), and
nothing grows: a newer value overwrites the older one.  The row is [2 seq, stamp, values...].

``SharedMailbox`` gives a slot the ``Mailbox`` interface (``put``, ``get -> Letter(value, seq, stamp)``,
``age``) through a codec to fixed-width rows: ``COMMAND`` for ``HapticCommand`` (haptic -> physics) and
``FEEDBACK`` for ``PhysicsFeedback`` (physics -> haptic).  Stamps are ``time.monotonic``, one clock for every
process of the machine, so the watchdog compares ages across processes.  Both pickle to a child process at its
start (``multiprocessing`` passes the memory, not a copy).
"""
from __future__ import annotations

import time
from multiprocessing.sharedctypes import RawArray
from typing import Callable, NamedTuple

import numpy as np

from engine.interaction.coupling import BodyFeedback
from engine.interaction.mailbox import Letter
from engine.interaction.port import HapticCommand, PhysicsFeedback

RETRIES = 64


class SharedSlot:
    """``width`` floats, one writer, any readers in any process; ``shared=False`` keeps them in this process."""

    def __init__(self, width: int, shared: bool = True):
        self.width, self.shared = int(width), shared
        self._raw = RawArray("d", self.width + 2) if shared else np.zeros(self.width + 2)
        self._a = np.frombuffer(self._raw, dtype=float)
        self._last = (0, None, np.zeros(self.width))

    def __getstate__(self):
        if not self.shared:
            raise ValueError("a SharedSlot(shared=False) cannot be sent to another process")
        return {"width": self.width, "raw": self._raw}

    def __setstate__(self, state):
        self.width, self.shared, self._raw = state["width"], True, state["raw"]
        self._a = np.frombuffer(self._raw, dtype=float)
        self._last = (0, None, np.zeros(self.width))

    def write(self, values, stamp: float) -> None:
        a = self._a
        a[0] += 1.0                                   # odd: writing
        a[1] = stamp
        a[2:] = values
        a[0] += 1.0                                   # even: consistent

    def read(self):
        """(number of writes, stamp or None, values copy): the newest consistent row."""
        a = self._a
        for _ in range(RETRIES):
            seq = a[0]
            row = a[1:].copy()
            if seq % 2.0 == 0.0 and a[0] == seq:
                self._last = (int(seq) // 2, None if seq == 0.0 else float(row[0]), row[1:])
                break
        return self._last


class Codec(NamedTuple):
    width: int
    encode: Callable            # value -> (width,) floats
    decode: Callable            # (width,) floats -> value


def _encode_command(c: HapticCommand) -> np.ndarray:
    """[has proxy, R (9), p (3), grasp, wrench (6), point (3), body key kind (0 none, 1 int, 2 pair), key (2)]."""
    out = np.zeros(26)
    if c.proxy_p is not None:
        out[0], out[1:10], out[10:13] = 1.0, np.ravel(c.proxy_R), c.proxy_p
    out[13], out[14:20], out[20:23] = float(c.grasp), c.wrench, c.point
    if c.body is not None:
        key = (c.body,) if np.isscalar(c.body) else tuple(c.body)
        if len(key) > 2 or not all(float(k).is_integer() for k in key):
            raise ValueError(f"a haptic process sends body keys of one or two integers (got {c.body!r})")
        out[23], out[24:24 + len(key)] = len(key), key
    return out


def _decode_command(a) -> HapticCommand:
    proxy = a[0] == 1.0
    kind = int(a[23])
    body = None if kind == 0 else int(a[24]) if kind == 1 else (int(a[24]), int(a[25]))
    return HapticCommand(a[1:10].reshape(3, 3) if proxy else None, a[10:13].copy() if proxy else None,
                         bool(a[13]), a[14:20].copy(), a[20:23].copy(), body)


def _encode_feedback(f: PhysicsFeedback) -> np.ndarray:
    """[t, has body, grasp id, R (9), point (3), v (3), w (3), mass]."""
    out = np.zeros(22)
    out[0] = f.t
    b = f.body
    if b is not None:
        out[1], out[2], out[3:12], out[12:15], out[15:18], out[18:21], out[21] = \
            1.0, b.grasp, np.ravel(b.R), b.point, b.v, b.w, b.mass
    return out


def _decode_feedback(a) -> PhysicsFeedback:
    body = None if a[1] == 0.0 else BodyFeedback(int(a[2]), a[3:12].reshape(3, 3), a[12:15].copy(),
                                                 a[15:18].copy(), a[18:21].copy(), float(a[21]))
    return PhysicsFeedback(float(a[0]), body)


COMMAND = Codec(26, _encode_command, _decode_command)
FEEDBACK = Codec(22, _encode_feedback, _decode_feedback)


class SharedMailbox:
    """``Mailbox`` of values a ``codec`` turns into rows of a ``SharedSlot`` (one writing process)."""

    def __init__(self, codec: Codec, clock=time.monotonic):
        self.codec, self._clock = codec, clock
        self.slot = SharedSlot(codec.width)
        self._letter = Letter(None, 0, None)

    def put(self, value) -> None:
        self.slot.write(self.codec.encode(value), self._clock())

    def get(self) -> Letter:
        seq, stamp, values = self.slot.read()
        if seq != self._letter.seq:
            self._letter = Letter(self.codec.decode(values), seq, stamp)
        return self._letter

    def age(self) -> float:
        stamp = self.get().stamp
        return float("inf") if stamp is None else self._clock() - stamp


class SharedPlacements:
    """World placements of every body of a universe's multibodies in a ``SharedSlot``: the physics ``write``s a
    snapshot's ``(body_R, body_p)`` (per multibody, (n, 3, 3) and (n, 3)); calling it returns the newest ones in
    the same form.  It is the ``placements`` of a touch-mode ``SceneProximity`` run by a haptic process."""

    def __init__(self, counts):
        self.counts = [int(n) for n in counts]
        self.n = sum(self.counts)
        self.slot = SharedSlot(12 * self.n)

    @classmethod
    def of(cls, universe) -> "SharedPlacements":
        return cls([mb.model.nbodies for mb in universe.multibodies])

    def write(self, body_R, body_p) -> None:
        R = [np.asarray(r, float).reshape(-1, 9) for r in body_R]
        p = [np.asarray(q, float).reshape(-1, 3) for q in body_p]
        if [len(r) for r in R] != self.counts or [len(q) for q in p] != self.counts:
            raise ValueError(f"placements for {self.counts} bodies per multibody expected "
                             f"(got {[len(r) for r in R]} rotations, {[len(q) for q in p]} positions)")
        if self.n == 0:
            return
        self.slot.write(np.concatenate([np.concatenate(R).ravel(), np.concatenate(p).ravel()]), time.monotonic())

    def __call__(self):
        if self.n == 0:
            return [], []
        values = self.slot.read()[2]
        splits = np.cumsum(self.counts)[:-1]
        R = np.split(values[:9 * self.n].reshape(-1, 3, 3), splits)
        p = np.split(values[9 * self.n:].reshape(-1, 3), splits)
        return R, p
