"""The arrays ``_kernels.detect_native`` takes every step — the shapes, the pairs, the workspace and the kept
results, four named tuples of 48 arrays — in one numba structure (``WorldArrays``, a StructRef; built by
``_kernels.world_arrays``): the call unboxes it as one argument instead of 48 arrays one by one (≈ 2 µs, measured on
Talos standing's 53 shapes and 1173 pairs). The type lives in a module of its own: numba caches the functions
that use a StructRef type only when it is defined apart from them (as ``engines/_step_arrays.py``)."""
from __future__ import annotations

from numba.experimental import structref

from engine._structs import Struct


@structref.register
class WorldArraysType(Struct):
    """The type of ``WorldArrays``."""


class WorldArrays(structref.StructRefProxy):
    """The fields ``FIELDS``: a CollisionWorld's ``shapes``, ``pair_arrays``, ``workspace`` and ``cache``, and
    the two slots its kept results are packed into (``kept_pair`` (2, n), ``kept_rows`` (2, n, 14 + 9 N),
    ``kept_margin`` (2, 1): ``_reuse.pack``'s outputs; ``packed`` (4,): the cache version last packed, the slot
    written, its pair count and the slot ``CollisionWorld.kept`` last handed out)."""


FIELDS = ("sh", "pairs", "ws", "cache", "kept_pair", "kept_rows", "kept_margin", "packed")
structref.define_proxy(WorldArrays, WorldArraysType, FIELDS)
