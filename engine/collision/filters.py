"""Which pairs of collision objects are tracked (thesis §3.1: the user chooses the pairs; all mobile objects
by default).

An object is a body of a multibody, a multibody's base frame, or a static body, named
``"<multibody>/<link>"`` or ``"<static>"``.  A pair of objects is tracked when

1. at least one of them moves (a static body or a base frame never touches another fixed object), and
2. it is **not** a parent-child pair of the same multibody (``exclude_parent_child``), and
3. the group/mask bits agree: ``(group_a & mask_b) != 0 and (group_b & mask_a) != 0`` (as Bullet and MuJoCo
   do; by default every object is in group 1 and collides with every group), and
4. no ``exclude`` rule matches it, and
5. (self-collision filter, computed once at load by ``CollisionWorld``) the two bodies of the same
   multibody are not already in contact, within ``neutral_margin``, in the multibody's neutral pose;

or an ``include`` rule matches it (this overrides 2-5).  Rules are pairs of shell patterns on object names
(``fnmatch``: ``"talos/*"``, ``"*gripper*"``, ``"ground"``) and match the pair in either order.
``groups`` maps a pattern to ``(group, mask)``; the last matching pattern wins.  To track only chosen
pairs: ``exclude=[("*", "*")]`` and list them in ``include``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase

ALL_GROUPS = 0xFFFFFFFF


@dataclass(frozen=True)
class CollisionObject:
    """A rigid carrier of collision shapes: body ``body`` of multibody ``multibody`` (-1: a static body,
    whose ``body`` is its index among the statics; body -1: the multibody's base frame)."""

    name: str
    multibody: int
    body: int
    mobile: bool
    parent: int = -2     # body index of the parent body in the same multibody (-1 = base), -2 = none


@dataclass(frozen=True)
class PairFilter:
    exclude_parent_child: bool = True
    exclude_neutral: bool = True
    neutral_margin: float = 0.005                    # m
    groups: dict = field(default_factory=dict)       # {pattern: (group bits, mask bits)}
    include: tuple = ()                              # ((pattern_a, pattern_b), ...)
    exclude: tuple = ()                              # ((pattern_a, pattern_b), ...)

    def __post_init__(self):
        for name in ("include", "exclude"):
            for rule in getattr(self, name):
                if len(rule) != 2 or not all(isinstance(x, str) for x in rule):
                    raise ValueError(f"collision filter {name} rule must be a pair of name patterns, got {rule!r}")
        for pattern, bits in self.groups.items():
            if len(bits) != 2 or not all(isinstance(b, int) and b >= 0 for b in bits):
                raise ValueError(f"collision group of {pattern!r} must be (group, mask) integers >= 0, got {bits!r}")


def _matches(rules, a: str, b: str) -> bool:
    return any((fnmatchcase(a, pa) and fnmatchcase(b, pb)) or (fnmatchcase(a, pb) and fnmatchcase(b, pa))
               for pa, pb in rules)


def _bits(groups, name: str) -> tuple:
    bits = (1, ALL_GROUPS)
    for pattern, value in groups.items():
        if fnmatchcase(name, pattern):
            bits = value
    return bits


def candidate_pairs(objects, flt: PairFilter) -> tuple:
    """(pairs, forced): object pairs (i < j) passing rules 1-4 or an include rule, and those that an include
    rule forces (the neutral-pose filter must not drop them)."""
    bits = [_bits(flt.groups, o.name) for o in objects]
    pairs, forced = [], set()
    for i, a in enumerate(objects):
        for j in range(i + 1, len(objects)):
            b = objects[j]
            if not (a.mobile or b.mobile):
                continue
            if flt.include and _matches(flt.include, a.name, b.name):
                pairs.append((i, j))
                forced.add((i, j))
                continue
            same = a.multibody == b.multibody and a.multibody >= 0
            if flt.exclude_parent_child and same and (a.parent == b.body or b.parent == a.body):
                continue
            if not (bits[i][0] & bits[j][1] and bits[j][0] & bits[i][1]):
                continue
            if flt.exclude and _matches(flt.exclude, a.name, b.name):
                continue
            pairs.append((i, j))
    return pairs, forced
