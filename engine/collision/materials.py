"""Contact materials: friction coefficient mu and restitution e per named material, combined per pair.

``materials`` maps a name (``Geometry.material``) to ``(mu, e)`` or to an object with ``.mu`` and
``.restitution`` (the universe's Material).  A key that is a pair of names ``(name_a, name_b)`` sets the
pair's values directly (in either order), as a friction table would.  Otherwise the **combination rule** is

    mu = sqrt(mu_a mu_b)          (geometric mean: equal materials keep their mu; mu = 0 on either side
                                   makes the pair frictionless, e.g. ice)
    e  = max(e_a, e_b)            (a bouncy ball bounces on any floor)

The thesis uses a single mu per scene (mu = 0.4 in its HRP-2 example, seed 000 §3.4) and gives no e.  The
name ``default`` (every URDF geometry's material) is ``DEFAULT_MATERIAL`` unless the table overrides it.
"""
from __future__ import annotations

import math

DEFAULT_MATERIAL = (0.5, 0.0)  # pybullet's default lateral friction, no bounce


def material_table(materials) -> dict:
    """Normalise ``materials`` to {name or (name_a, name_b): (mu, e)}, checking 0 <= mu and 0 <= e <= 1."""
    table = {"default": DEFAULT_MATERIAL}
    for name, value in (materials or {}).items():
        mu, e = (value.mu, value.restitution) if hasattr(value, "mu") else value
        mu, e = float(mu), float(e)
        if not (math.isfinite(mu) and mu >= 0.0):
            raise ValueError(f"material {name!r}: friction mu must be finite and >= 0, got {mu}")
        if not (0.0 <= e <= 1.0):
            raise ValueError(f"material {name!r}: restitution must be in [0, 1], got {e}")
        table[tuple(name) if isinstance(name, (tuple, list)) else name] = (mu, e)
    return table


def combine(a, b) -> tuple:
    """(mu, e) of a pair from the (mu, e) of its two materials (the rule in the module docstring)."""
    return math.sqrt(a[0] * b[0]), max(a[1], b[1])


def pair_material(table, name_a: str, name_b: str) -> tuple:
    """(mu, e) of the pair of materials ``name_a``, ``name_b``: the table's pair entry, else ``combine``."""
    for key in ((name_a, name_b), (name_b, name_a)):
        if key in table:
            return table[key]
    for name in (name_a, name_b):
        if name not in table:
            known = sorted(k for k in table if isinstance(k, str))
            raise ValueError(f"unknown contact material {name!r} (known: {', '.join(known)})")
    return combine(table[name_a], table[name_b])
