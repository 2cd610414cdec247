"""The joint servo of seed 000 eq. 5.8 (HRP-2's actuators, §5.1.2.3):

    Γ = R (K_p (q_d − q) + K_v (q̇_d − q̇)) + μ_v q̇ + μ_d sign(q̇)

a PD on the motor side through the reduction ratio R, plus the compensation of the joint's viscous (μ_v) and dry
(μ_d) friction. By default R is each joint's gear ratio (``<rotor gear_ratio>``, seed 002) and μ_v, μ_d the
friction the robot file declares (``<friction viscous dry>`` / ``<dynamics damping friction>``), which the
dynamics applies against the motion: a moving joint then feels no friction. q_d holds the initial posture or
follows a trajectory file (as ``pd``), with q̇_d = 0. The torques then pass through the universe's effort limits
(``<Limits effort_limits="envelope">``: the motors' torque–speed envelope, eqs. 5.25–5.26).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.control.gravity import actuated_mask
from engine.control.trajectory import JointTrajectory
from engine.plugins import register


@register("servo")
class JointServo:
    kind = "controller"
    stage = "control"

    def __init__(self, model, q0, base_dir=".", kp=10.0, kv=1.0, gear=None, viscous=None, dry=None,
                 trajectory=None):
        nv = model.nv

        def per_dof(name, value, default):
            x = np.broadcast_to(np.asarray(default if value is None else value, float), (nv,)).copy()
            if not np.all(np.isfinite(x)) or np.any(x < 0):
                raise ValueError(f"{name} must be finite and >= 0, one value or one per velocity coordinate "
                                 f"(got {np.ravel(value).tolist()})")
            return x

        self.model, self.mask = model, actuated_mask(model, False)
        self.kp, self.kv = per_dof("kp", kp, 0.0), per_dof("kv", kv, 0.0)
        self.gear = per_dof("gear", gear, model.dof_gear_ratio)
        self.viscous = per_dof("viscous", viscous, model.dof_damping)
        self.dry = per_dof("dry", dry, model.dof_friction)
        self.q0 = np.array(q0, float)
        self.q_ref = self.q0.copy()
        self.trajectory = JointTrajectory(model, Path(base_dir) / trajectory) if trajectory else None

    def reset(self, q, v):
        self.q_ref[:] = self.q0

    def control(self, t, q, v):
        from engine.dynamics.integrators import difference
        if self.trajectory is not None:
            self.trajectory(t, self.q_ref)
        pd = self.kp * difference(self.model, q, self.q_ref) - self.kv * v
        return (self.gear * pd + self.viscous * v + self.dry * np.sign(v)) * self.mask
