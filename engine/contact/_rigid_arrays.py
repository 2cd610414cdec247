"""The arrays and settings ``_rigid_kernels.rigid_contacts`` takes that are the same every step (the contact tables,
the bodies', groups' and the free bodies' batch's arrays, the solver's settings), in one numba structure
(``RigidArrays``, a StructRef; built by ``_rigid_kernels.rigid_arrays``), as ``_tree_arrays.TreeArrays`` for one
articulated multibody. The free bodies' one-call step holds it in its own structure (``StepArrays.rigid``), so the
call that reads it is one level down from the step instead of a second hand-over of its 29 fields. The type lives
in a module of its own: numba caches the functions that use a StructRef type only when it is defined apart from
them."""
from __future__ import annotations

from numba.experimental import structref

from engine._structs import Struct


@structref.register
class RigidArraysType(Struct):
    """The type of ``RigidArrays``."""


class RigidArrays(structref.StructRefProxy):
    """The fields ``FIELDS``: the arrays and settings ``rigid_contacts`` reads from its structure, by name."""


FIELDS = ("pair_object", "object_multibody", "object_body", "pair_mu", "pair_restitution", "offset", "body_R",
          "body_p", "V", "V_free", "wrench", "body_inverse_factor", "parent", "group_of", "member_start", "members",
          "contact_start", "row_start", "batch_row", "batch_mb", "f_body", "in_contact", "erp", "slop", "radius",
          "solver", "tol", "max_iter", "stats")
structref.define_proxy(RigidArrays, RigidArraysType, FIELDS)
