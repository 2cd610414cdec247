"""The result of one collision detection: flat arrays indexed by contact (``nc`` rows), world frame, SI units.

Conventions (fixed for the whole engine):

* ``normal[i]`` is a unit vector **from body B to body A**: the direction in which B pushes A.
* ``depth[i]`` > 0 is a penetration; < 0 is a gap (proximity contact, reported when the gap is within the
  detection margin, so the contact solver sees it one step early: thesis "proximity distance" mode).
* ``point[i]`` is midway between the two surfaces: the surface point of A is ``point - depth/2 normal``,
  the surface point of B is ``point + depth/2 normal``.
* ``object_a/object_b`` index ``CollisionWorld.objects`` (a body of a multibody, its base, or a static body);
  ``multibody_*`` is the multibody index (-1 for a static body) and ``body_*`` the body index (-1 = the
  multibody's base frame; for a static body, its index in the statics list).
* ``geometry_a/geometry_b`` index ``CollisionWorld.geometries``; ``pair`` indexes ``CollisionWorld.pairs``
  (the tracked shape pairs); contacts come sorted by pair, at most N per pair: the order is deterministic.
* ``mu``, ``restitution``: the pair's combined material (materials.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class ContactTables:
    """Per-pair and per-object lookup tables of a CollisionWorld (read-only), shared by its Contacts."""

    pair_object: np.ndarray       # (P, 2) objects (A, B) of each tracked pair
    pair_geometry: np.ndarray     # (P, 2) geometries (A, B)
    pair_mu: np.ndarray           # (P,)
    pair_restitution: np.ndarray  # (P,)
    object_multibody: np.ndarray  # (O,)
    object_body: np.ndarray       # (O,)


class Contacts:
    """The contacts of one detection (arrays owned by it; treat them as read-only); the per-contact object,
    body, geometry and material arrays are looked up from ``pair`` on access.

    point (nc, 3) m, world · normal (nc, 3) unit, world, from B to A · depth (nc,) m, > 0 penetration,
    < 0 gap · pair (nc,) int, index of the tracked pair · tables: the world's ContactTables.
    """

    __slots__ = ("depth", "normal", "pair", "point", "tables")

    def __init__(self, point, normal, depth, pair, tables: ContactTables):
        self.point, self.normal, self.depth, self.pair, self.tables = point, normal, depth, pair, tables

    def __len__(self) -> int:
        return self.depth.shape[0]

    @property
    def object_a(self):
        return self.tables.pair_object[self.pair, 0]

    @property
    def object_b(self):
        return self.tables.pair_object[self.pair, 1]

    @property
    def multibody_a(self):
        return self.tables.object_multibody[self.object_a]

    @property
    def multibody_b(self):
        return self.tables.object_multibody[self.object_b]

    @property
    def body_a(self):
        return self.tables.object_body[self.object_a]

    @property
    def body_b(self):
        return self.tables.object_body[self.object_b]

    @property
    def geometry_a(self):
        return self.tables.pair_geometry[self.pair, 0]

    @property
    def geometry_b(self):
        return self.tables.pair_geometry[self.pair, 1]

    @property
    def mu(self):
        return self.tables.pair_mu[self.pair]

    @property
    def restitution(self):
        return self.tables.pair_restitution[self.pair]
