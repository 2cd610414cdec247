"""The arrays and settings ``_tree_kernels.tree_contacts`` takes that are the same every step (the contact tables,
the bodies', groups', closures' and the multibody's arrays, the solver's settings), in one numba structure
(``TreeArrays``, a StructRef; built by ``_tree_kernels.tree_arrays``): the call unboxes it as one argument instead
of 53 one by one (≈ 0.1 µs each, measured: ≈ 5 µs of the step of a standing Talos). The type lives in a module of
its own: numba caches the functions that use a StructRef type only when it is defined apart from them (as
``engines/_step_arrays.py``)."""
from __future__ import annotations

from numba.experimental import structref

from engine._structs import Struct


@structref.register
class TreeArraysType(Struct):
    """The type of ``TreeArrays``."""


class TreeArrays(structref.StructRefProxy):
    """The fields ``FIELDS``: the arrays and settings ``tree_contacts`` reads from its structure, by name."""


FIELDS = ("pair_object", "object_multibody", "object_body", "pair_mu", "pair_restitution", "offset", "body_R",
          "body_p", "V", "V_free", "wrench", "parent", "group_of", "member_start", "members", "contact_start",
          "row_start", "closure_mb", "closure_start", "joint_start", "limit_start", "closure_nrows", "closure_kind",
          "closure_bound", "closure_side", "closure_X", "closure_u", "closure_f", "R_m", "bi", "df", "ws", "wd", "Sw",
          "Uw", "y", "F", "A", "Od", "S6", "path", "mark", "union", "f_body", "in_contact", "erp", "slop", "radius",
          "method", "solver", "tol", "max_iter", "stats")
structref.define_proxy(TreeArrays, TreeArraysType, FIELDS)
