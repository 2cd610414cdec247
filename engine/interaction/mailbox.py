"""A lock-protected latest-value slot: the one way threads hand data to each other here.

A writer ``put``s a value, a reader ``get``s the newest one with its sequence number and stamp; older values are
dropped, so nothing grows however the rates of the two threads differ (MuJoCo's passive viewer, SOFA's haptic
avatar).  Values must be immutable (tuples, frozen dataclasses, read-only arrays): the slot hands out the very
object that was put, so a reader can never see it half-written.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Generic, NamedTuple, TypeVar

T = TypeVar("T")


class Letter(NamedTuple):
    """The newest value, how many values were put so far (0: none yet) and when (``clock`` time, None if never)."""
    value: Any
    seq: int
    stamp: float | None


class Mailbox(Generic[T]):
    """Latest-value slot; ``clock`` stamps each ``put`` (``time.monotonic`` by default)."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._letter = Letter(None, 0, None)

    def put(self, value: T) -> None:
        stamp = self._clock()
        with self._lock:
            self._letter = Letter(value, self._letter.seq + 1, stamp)

    def get(self) -> Letter:
        with self._lock:
            return self._letter

    def age(self) -> float:
        """Seconds since the last ``put`` (infinite if nothing was ever put)."""
        stamp = self.get().stamp
        return float("inf") if stamp is None else self._clock() - stamp
