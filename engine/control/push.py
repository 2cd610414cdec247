"""``push``: a wrench on the floating base for a while, the scripted form of a user's push (seed 001's lateral
push of the benchmark bicycle: 50 N m about the frame's forward axis for 0.02 s).

The free flyer's velocity is the base's twist in its own axes, so a wrench (f, m) on the base, in the base's
axes at its origin, is the generalized force τ[0:6] = (f, m) (the base's columns of Jᵀ are the identity).
It acts from ``start`` for ``duration`` seconds of simulated time, every other torque zero.
"""
from __future__ import annotations

import numpy as np

from engine.plugins import register

TIME_TOL = 1e-9     # s: a step at t = start − 1e-12 (accumulated δt) is in the push


@register("push")
class Push:
    kind = "controller"
    stage = "control"

    def __init__(self, model, force="0 0 0", torque="0 0 0", start=0.0, duration=0.02):
        if model.joint_nv[0] != 6:
            raise ValueError("push needs a floating base (<FloatingBase>true</FloatingBase>)")
        self.wrench = np.concatenate([_vector("force", force), _vector("torque", torque)])
        self.start, self.duration = float(start), float(duration)
        if not (np.isfinite(self.start) and self.start >= 0):
            raise ValueError(f"start must be >= 0 s, got {start}")
        if not (np.isfinite(self.duration) and self.duration > 0):
            raise ValueError(f"duration must be > 0 s, got {duration}")
        self.tau = np.zeros(model.nv)

    def reset(self, q, v):
        pass

    def control(self, t, q, v):
        pushing = self.start - TIME_TOL <= t < self.start + self.duration - TIME_TOL
        self.tau[:6] = self.wrench if pushing else 0.0
        return self.tau.copy()


def _vector(name, value):
    try:
        x = np.array(str(value).split() if isinstance(value, str) else value, dtype=float).reshape(-1)
    except ValueError:
        x = np.full(1, np.nan)
    if x.shape != (3,) or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be three finite numbers (base axes), got {value!r}")
    return x
