"""The base of the project's numba structures (StructRef types: ``collision/_world_arrays.py``,
``engines/_step_arrays.py``, ``contact/_rigid_arrays.py``, ``contact/_tree_arrays.py``), which hand a kernel its
arrays and settings as one argument. Each structure's type, proxy and fields live in a module of their own: numba
caches the functions that use a StructRef type only when it is defined apart from them."""
from __future__ import annotations

from numba import types


class Struct(types.StructRef):
    """A StructRef type whose fields have their values' types without literals (an integer setting is an int64
    field, not ``Literal[int](100)``): one compiled kernel serves every value."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)
