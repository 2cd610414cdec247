"""Gravity compensation: tau = g(q), the generalized gravity force (rnea with v = 0, a = 0)."""
from __future__ import annotations

import numpy as np

from engine.plugins import register


def actuated_mask(model) -> np.ndarray:
    """True for velocity coordinates driven by a motor: 1-DOF joints (free-flyer, spherical and planar joints
    are passive)."""
    return model.joint_nv[model.dof_joint] == 1


@register("gravity-compensation")
class GravityCompensation:
    kind = "controller"
    stage = "control"

    def __init__(self, model, gravity):
        from engine.dynamics import rnea
        self.model, self.gravity, self._rnea = model, np.asarray(gravity, float), rnea
        self.data = model.create_data()
        self.mask = actuated_mask(model)
        self.zero = np.zeros(model.nv)

    def reset(self, q, v):
        pass

    def control(self, t, q, v):
        tau = self._rnea(self.model, self.data, q, self.zero, self.zero, gravity=self.gravity)
        return np.where(self.mask, tau, 0.0)
