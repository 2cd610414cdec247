"""Joint-space PD: tau = Kp (q_ref - q) - Kd v on the actuated joints, holding the initial posture or following a
trajectory file, optionally plus gravity compensation; torques clamped to the joints' effort limits.

``kp``, ``kd``: one gain, or one per velocity coordinate (nv).  ``spherical="1"`` also drives spherical joints,
axis by axis: their error q_ref ⊖ q is the rotation vector in the joint's child frame, their velocity the
angular velocity in that frame (a human avatar's shoulders, hips, wrists and ankles)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.control.gravity import GravityCompensation, actuated_mask
from engine.control.trajectory import JointTrajectory
from engine.plugins import register


@register("pd")
class JointPD:
    kind = "controller"
    stage = "control"

    def __init__(self, model, q0, gravity, base_dir=".", kp=100.0, kd=10.0, trajectory=None,
                 gravity_compensation=0.0, spherical=0.0):
        if np.any(np.asarray(kp) < 0) or np.any(np.asarray(kd) < 0):
            raise ValueError(f"gains must be >= 0 (kp={kp}, kd={kd})")
        self.model = model
        self.mask = actuated_mask(model, bool(spherical))
        self.kp = np.broadcast_to(np.asarray(kp, float), (model.nv,)) * self.mask
        self.kd = np.broadcast_to(np.asarray(kd, float), (model.nv,)) * self.mask
        self.q0 = np.array(q0, float)
        self.q_ref = self.q0.copy()
        self.trajectory = JointTrajectory(model, Path(base_dir) / trajectory) if trajectory else None
        self.gravity = GravityCompensation(model, gravity, spherical) if gravity_compensation else None
        self.limit = model.dof_effort_limit

    def reset(self, q, v):
        self.q_ref[:] = self.q0

    def control(self, t, q, v):
        from engine.dynamics.integrators import difference
        if self.trajectory is not None:
            self.trajectory(t, self.q_ref)
        tau = self.kp * difference(self.model, q, self.q_ref) - self.kd * v
        if self.gravity is not None:
            tau += self.gravity.control(t, q, v)
        return np.clip(tau, -self.limit, self.limit) * self.mask
