"""The ``walk`` controller: footstep plan, CoM pattern by ZMP preview control, task-space inverse-dynamics QP."""
from engine.control.walking.controller import Walk
from engine.control.walking.plan import FootstepPlan
from engine.control.walking.preview import preview_gains, preview_pattern

__all__ = ["FootstepPlan", "Walk", "preview_gains", "preview_pattern"]
