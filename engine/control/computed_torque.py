"""Computed torque (inverse-dynamics control) along a smooth joint trajectory, with or without the motors' rotors
in the controller's model (seed 002: geared manipulators):

    τ = M̂(q) (q̈_d + K_p e + K_d ė) + ĥ(q, q̇),      e = q_d − q,  ė = q̇_d − q̇,

ĥ(q, q̇) = rnea(q, q̇, 0) (Coriolis, gravity, joint friction) and M̂(q) = crba(q), computed on the robot's own model
with ``rotors="1"`` (rotor-aware: M̂ = M, ĥ = h, and the closed loop is ë + K_d ė + K_p e = 0) or, with
``rotors="0"``, on the same model with every rotor removed (j_m = i_m = 0): the rotor-blind controller of a user
who knows the links' inertias only, missing α² j_m on M's diagonal and the rotors' couplings (seed 002 §4.1).

The trajectory is q_d(t) = q0 + A (1 − cos 2πt/T) (``amplitude`` A: one value or one per velocity coordinate,
rad; ``period`` T, s), so that q̇_d(0) = 0 from rest; ``tracking_error`` keeps max |e| over the run.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.control.gravity import actuated_mask
from engine.plugins import register


@register("computed-torque")
class ComputedTorque:
    kind = "controller"
    stage = "control"

    def __init__(self, model, q0, gravity, kp=100.0, kd=20.0, amplitude=0.0, period=1.0, rotors=1.0):
        if np.any(np.asarray(kp) < 0) or np.any(np.asarray(kd) < 0):
            raise ValueError(f"gains must be >= 0 (kp={kp}, kd={kd})")
        if not (np.isfinite(period) and period > 0):
            raise ValueError(f"the period must be finite and > 0 (got {period!r})")
        if model.nq != model.nv:
            raise ValueError("computed-torque drives fixed-base robots of 1-DOF joints (nq == nv)")
        nv = model.nv
        self.kp, self.kd = (np.broadcast_to(np.asarray(x, float), (nv,)).copy() for x in (kp, kd))
        self.amplitude = np.broadcast_to(np.asarray(amplitude, float), (nv,)).copy()
        self.omega, self.q0 = 2.0 * np.pi / period, np.array(q0, float)
        self.model = model if rotors else replace(model, dof_rotor_inertia=np.zeros(nv),
                                                  dof_rotor_transverse=np.zeros(nv))
        self.data, self.gravity = self.model.create_data(), np.asarray(gravity, float)
        self.mask, self.zero = actuated_mask(model), np.zeros(nv)
        self.tracking_error = 0.0

    def reference(self, t):
        """(q_d, q̇_d, q̈_d) at time t."""
        A, w = self.amplitude, self.omega
        return self.q0 + A * (1.0 - np.cos(w * t)), A * w * np.sin(w * t), A * w * w * np.cos(w * t)

    def reset(self, q, v):
        self.tracking_error = 0.0

    def control(self, t, q, v):
        from engine.dynamics import crba, rnea
        q_d, qd_d, qdd_d = self.reference(t)
        e = q_d - q
        self.tracking_error = max(self.tracking_error, float(np.abs(e).max()))
        a = qdd_d + self.kp * e + self.kd * (qd_d - v)
        M = crba(self.model, self.data, q)
        h = rnea(self.model, self.data, q, v, self.zero, gravity=self.gravity)
        return (M @ a + h) * self.mask
