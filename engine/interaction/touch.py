"""Touch mode: a god-object that stays on the surface of bodies (seed 000 §2, mode (ii) "the pointer does not
penetrate").

The thesis scaled the pointer force by an arbitrary coefficient and left constraint-based rendering as future
work (seed 000 L1946, L1952).  Here the god-object of Zilles & Salisbury (1995), in the form Salisbury & Tarr
(1997) gave it for surfaces known by a distance function, runs on any ``ProximityQuery``:

* free motion: the god-object g follows the device point x_d along the segment g -> x_d, advanced by sphere
  tracing (each step is the distance to the nearest surface, so no surface is crossed);
* on a surface it slides: g <- closest_surface_point(g + P_t (x_d - g)), P_t = 1 - n n^T, and leaves the surface
  when x_d is on the free side of the tangent plane, n . (x_d - g) > 0;
* the hand feels a spring to the god-object with normal damping, never pulling into the surface:
  f = k_c (g - x_d) + f_n n,  f_n = max(0, k_c depth - b_c n . v_d) - k_c depth,  depth = n . (g - x_d);
* the touched body receives the reaction -f at g.

The god-object never moves through a surface, so it keeps the side it touched (a thin plate is not crossed); its
signed distance stays >= -``tolerance``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

import numpy as np

from engine.interaction.proximity import Proximity, ProximityQuery


@dataclass(frozen=True)
class TouchSettings:
    """``stiffness`` k_c (N/m), ``damping`` b_c (N s/m) along the normal, ``tolerance`` (m) of penetration and
    contact detection, ``iterations`` of surface sliding per tick, ``march_steps`` of sphere tracing."""
    stiffness: float = 800.0
    damping: float = 2.0
    tolerance: float = 1e-6
    iterations: int = 4
    march_steps: int = 64

    def __post_init__(self):
        for name in ("stiffness", "damping", "tolerance"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0.0):
                raise ValueError(f"TouchSettings.{name} must be finite and >= 0 (got {value!r})")


@dataclass(frozen=True)
class TouchContact:
    """Result of one tick: god-object position (world), whether it rests on a surface, the surface normal, the
    touched body key and the force on the hand (world, N)."""
    god: np.ndarray
    in_contact: bool
    normal: np.ndarray
    body: Hashable | None
    force: np.ndarray


class GodObject:
    """The proxy of the device point that stays outside the solids of ``query``."""

    def __init__(self, query: ProximityQuery, settings: TouchSettings = TouchSettings()):
        self.query, self.settings = query, settings
        self.position: np.ndarray | None = None

    def reset(self, position=None) -> None:
        """Forget the history; the next update starts from ``position`` (or from the device point), pushed out."""
        self.position = None if position is None else self._outside(np.asarray(position, float))

    def update(self, x_d, v_d) -> TouchContact:
        x_d, v_d = np.asarray(x_d, float), np.asarray(v_d, float)
        if self.position is None:
            self.position = self._outside(x_d)
        hit = self._march(self.position, x_d)
        if hit is None:
            self.position = x_d
            return TouchContact(x_d, False, np.zeros(3), None, np.zeros(3))
        g, contact = hit.point, hit
        for _ in range(self.settings.iterations):
            contact = self.query(g)
            n, e = contact.normal, x_d - g
            if n @ e > 0.0:                                       # free side of the tangent plane: leave
                hit = self._march(g + self.settings.tolerance * n, x_d)
                if hit is None:
                    self.position = x_d
                    return TouchContact(x_d, False, np.zeros(3), None, np.zeros(3))
                g = hit.point
                continue
            g = self._slide(g, e - (n @ e) * n)
        contact = self.query(g)
        self.position = g = self._outside(g)
        return TouchContact(g, True, contact.normal, contact.body, self._force(g, x_d, v_d, contact.normal))

    def _force(self, g, x_d, v_d, n):
        """f = k_c (g - x_d) with the normal part max(0, k_c depth - b_c n.v_d) (seed: Zilles & Salisbury)."""
        k, b = self.settings.stiffness, self.settings.damping
        depth = n @ (g - x_d)
        f = k * (g - x_d)
        return f + (max(0.0, k * depth - b * (n @ v_d)) - k * depth) * n

    def _slide(self, g, t):
        """Tangent step t then back onto the surface; a step whose projection jumps farther than |t| entered
        another solid and is halved."""
        for _ in range(4):
            length = np.linalg.norm(t)
            if length < self.settings.tolerance:
                return g
            moved = self.query(g + t).point
            if np.linalg.norm(moved - (g + t)) <= length:
                return moved
            t = 0.5 * t
        return g

    def _march(self, a, b) -> Proximity | None:
        """Sphere tracing from a towards b: the first surface contact, or None if b is reached freely."""
        u = b - a
        length = np.linalg.norm(u)
        if length < self.settings.tolerance:
            pr = self.query(b)
            return pr if pr.distance <= self.settings.tolerance else None
        u = u / length
        s, pr = 0.0, None
        for _ in range(self.settings.march_steps):
            pr = self.query(a + s * u)
            if pr.distance <= self.settings.tolerance:
                return pr
            s += pr.distance
            if s >= length:
                return None
        return Proximity(0.0, a + s * u, pr.normal, pr.body)

    def _outside(self, x):
        pr = self.query(x)
        return x if pr.distance >= 0.0 else pr.point
