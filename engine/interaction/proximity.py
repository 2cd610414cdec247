"""Closest-point queries for touch mode: the signed distance to a scene and the nearest surface point.

A query is any callable ``query(x) -> Proximity`` (x (3,) world point); FCL's distance queries can provide one
for meshes.  Here: analytic ``Sphere``, ``Box`` and ``Plane`` (exact signed distance fields) and their ``union``.
Signed distance d < 0 inside; ``normal`` is the outward unit normal of the surface at ``point``, so that
x = point + d n for the exact fields below; ``body`` tells which body was touched (None for a static one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Hashable

import numpy as np


@dataclass(frozen=True)
class Proximity:
    distance: float
    point: np.ndarray
    normal: np.ndarray
    body: Hashable | None = None


ProximityQuery = Callable[[np.ndarray], Proximity]


@dataclass(frozen=True)
class Sphere:
    center: np.ndarray
    radius: float
    body: Hashable | None = None

    def __call__(self, x) -> Proximity:
        c = np.asarray(self.center, float)
        r = np.asarray(x, float) - c
        n = np.linalg.norm(r)
        normal = r / n if n > 1e-12 else np.array([0.0, 0.0, 1.0])
        return Proximity(float(n - self.radius), c + self.radius * normal, normal, self.body)


@dataclass(frozen=True)
class Plane:
    """The half-space n . x <= offset is solid."""
    normal: np.ndarray
    offset: float = 0.0
    body: Hashable | None = None

    def __call__(self, x) -> Proximity:
        n = np.asarray(self.normal, float) / np.linalg.norm(self.normal)
        x = np.asarray(x, float)
        d = float(n @ x - self.offset)
        return Proximity(d, x - d * n, n, self.body)


@dataclass(frozen=True)
class Box:
    """Box of ``half_extents`` (3,) placed at (R, p) in the world."""
    half_extents: np.ndarray
    R: np.ndarray = field(default_factory=lambda: np.eye(3))
    p: np.ndarray = field(default_factory=lambda: np.zeros(3))
    body: Hashable | None = None

    def __call__(self, x) -> Proximity:
        h = np.asarray(self.half_extents, float)
        y = self.R.T @ (np.asarray(x, float) - self.p)          # x in the box frame
        q = np.abs(y) - h
        if np.any(q > 0.0):                                       # outside: clamp onto the box
            c = np.clip(y, -h, h)
            d = np.linalg.norm(y - c)
            n_local = (y - c) / d
        else:                                                     # inside: the nearest face
            k = int(np.argmax(q))
            d = q[k]
            n_local = np.zeros(3)
            n_local[k] = 1.0 if y[k] >= 0.0 else -1.0
            c = y.copy()
            c[k] = n_local[k] * h[k]
        return Proximity(float(d), self.R @ c + self.p, self.R @ n_local, self.body)


def union(*shapes: ProximityQuery) -> ProximityQuery:
    """The nearest surface of several queries: d(x) = min_i d_i(x) (exact outside the solids)."""
    if not shapes:
        raise ValueError("union() needs at least one shape")

    def query(x) -> Proximity:
        return min((shape(x) for shape in shapes), key=lambda pr: pr.distance)

    return query
