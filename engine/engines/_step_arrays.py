"""The arrays a world of free bodies hands to ``_free_body_kernels.free_step`` every step, the same arrays every
step, in one numba structure (``StepArrays``, a StructRef; built by ``_free_body_kernels.step_arrays``): the
one-call step unboxes it as one argument (≈ 0.1 µs) instead of 106 arrays one by one (≈ 3 µs of a 1-cube step of
≈ 22 µs). Likewise the arrays of a tree's dynamics and integration stages (``MotionArrays``, built by
``_tree_kernels.motion_arrays``: one structure of 32 fields instead of 19 + 30 arguments, which took 1.0 + 3.2 µs
to pass to a no-op kernel on a standing Talos). The types live in a module of their own: numba caches the
functions that use a StructRef type only when it is defined apart from them."""
from __future__ import annotations

from numba.experimental import structref

from engine._structs import Struct


@structref.register
class StepArraysType(Struct):
    """The type of ``StepArrays``."""


class StepArrays(structref.StructRefProxy):
    """The fields ``FIELDS``: the arrays and settings ``free_step`` reads from its structure, by name."""


FIELDS = ("I", "I_inv", "gravity", "base_R", "base_p", "q", "v", "tau", "f_ext", "f_contact", "in_contact",
          "a_free", "a", "speed", "kinetic_good", "energy_floor", "energy_jump", "kinetic", "row", "V_last", "work",
          "body_R", "body_p", "V", "V_free", "shapes", "pairs", "ws", "cache", "margin", "n_max", "reduction_tol",
          "reuse_distance", "rigid", "out_point", "out_normal", "out_depth", "out_pair", "f_local", "forces", "q_good",
          "v_good", "tau_good", "prev_pair", "prev_point", "prev_force", "keep")
structref.define_proxy(StepArrays, StepArraysType, FIELDS)


@structref.register
class MotionArraysType(Struct):
    """The type of ``MotionArrays``."""


class MotionArrays(structref.StructRefProxy):
    """The fields ``MOTION_FIELDS``: the arrays of ``_tree_kernels.free_motion`` and ``constrained_motion``."""


MOTION_FIELDS = ("mi", "mf", "ws", "wd", "ws_free", "q", "v", "tau", "f_ext", "f_contact", "f_total", "g", "ddq",
                 "a_free", "g0", "zero", "joint_type", "idx_q", "idx_v", "xi", "q_next", "scratch", "speed", "a",
                 "R_m", "p_m", "lo", "body_R", "body_p", "V", "V_free", "V_last")
structref.define_proxy(MotionArrays, MotionArraysType, MOTION_FIELDS)
