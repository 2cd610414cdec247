"""Collision detection (seed 000 §2): FCL-backed shapes, filtered pairs, contacts with reduced manifolds.

    world = CollisionWorld(multibodies, statics, materials, CollisionSettings(margin=0.002))
    world.update(placements)      # one (R (nb, 3, 3), p (nb, 3)) world placement array pair per multibody
    contacts = world.detect()     # Contacts: point, normal (from B to A), depth (> 0 penetration), ...
"""
from engine.collision.contacts import Contacts
from engine.collision.filters import CollisionObject, PairFilter
from engine.collision.geometry import GeometryWarning
from engine.collision.materials import DEFAULT_MATERIAL, combine, pair_material
from engine.collision.world import CollisionSettings, CollisionWorld, placements_at, world_placements

__all__ = ["DEFAULT_MATERIAL", "CollisionObject", "CollisionSettings", "CollisionWorld", "Contacts",
           "GeometryWarning", "PairFilter", "combine", "pair_material", "placements_at", "world_placements"]
