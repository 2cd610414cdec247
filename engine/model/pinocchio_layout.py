"""Our configuration vectors in Pinocchio's layout, for comparing with Pinocchio (tests and benchmarks).

The joint order is the same (description.py); only a continuous joint differs: one angle here, (cos θ, sin θ)
in Pinocchio. Velocities have the same layout in both.
"""
from __future__ import annotations

import numpy as np


def pinocchio_q(model, pin_model, q) -> np.ndarray:
    """``q`` of ``model`` as a configuration of the Pinocchio model ``pin_model`` built from the same file."""
    parts = []
    for j in model.joints:
        block = q[j.idx_q:j.idx_q + j.nq]
        if pin_model.joints[j.body + 1].nq == 2 and j.nq == 1:
            block = np.array([np.cos(block[0]), np.sin(block[0])])
        parts.append(block)
    out = np.concatenate(parts) if parts else np.zeros(0)
    if out.shape != (pin_model.nq,):
        raise ValueError(f"the models differ: q maps to {out.shape[0]} Pinocchio coordinates, "
                         f"Pinocchio's model has nq = {pin_model.nq}")
    return out
