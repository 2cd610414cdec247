"""Gravity compensation: tau = g(q), the generalized gravity force (rnea with v = 0, a = 0)."""
from __future__ import annotations

import numpy as np

from engine.model.model import JointType
from engine.plugins import register


def actuated_mask(model, spherical: bool = False) -> np.ndarray:
    """True for velocity coordinates driven by a motor: 1-DOF joints, and with ``spherical`` the three axes of
    every spherical joint (a human's shoulders, hips: muscles drive them); free-flyer and planar joints, and
    otherwise spherical ones, are passive, and so are the joints declared passive (``model.dof_passive``: the
    flexible bushes of ``<Flexibility>``)."""
    mask = model.joint_nv[model.dof_joint] == 1
    if spherical:
        mask |= model.joint_type[model.dof_joint] == JointType.SPHERICAL
    return mask & ~model.dof_passive


@register("gravity-compensation")
class GravityCompensation:
    kind = "controller"
    stage = "control"

    def __init__(self, model, gravity, spherical=0.0):
        from engine.dynamics import rnea
        self.model, self.gravity, self._rnea = model, np.asarray(gravity, float), rnea
        self.data = model.create_data()
        self.mask = actuated_mask(model, bool(spherical))
        self.zero = np.zeros(model.nv)

    def reset(self, q, v):
        pass

    def control(self, t, q, v):
        tau = self._rnea(self.model, self.data, q, self.zero, self.zero, gravity=self.gravity)
        return np.where(self.mask, tau, 0.0)
