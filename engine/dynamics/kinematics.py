"""Forward kinematics: body placements in the base frame (reference implementation; see _kernels)."""
from __future__ import annotations

import numpy as np

from engine import spatial
from engine.model.model import JointType


def joint_transform(model, i, q):
    """(R, p) of body i's joint frame motion for configuration q (joint frame after motion, in joint frame)."""
    t, k, axis = model.joint_type[i], model.joint_idx_q[i], model.joint_axis[i]
    if t == JointType.REVOLUTE:
        return spatial.rotation_axis_angle(axis, q[k]), np.zeros(3)
    if t == JointType.PRISMATIC:
        return np.eye(3), axis * q[k]
    if t == JointType.SPHERICAL:
        return spatial.quaternion_to_rotation(q[k:k + 4]), np.zeros(3)
    if t == JointType.FREE:
        return spatial.quaternion_to_rotation(q[k + 3:k + 7]), q[k:k + 3].copy()
    c, s = q[k + 2], q[k + 3]  # planar
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), np.array([q[k], q[k + 1], 0.0])


def forward_kinematics(model, data, q):
    """Fill data.liMi_* and data.oMi_* (body frames in the parent body and base frames)."""
    for i in range(model.nbodies):
        jR, jp = joint_transform(model, i, q)
        R, p = spatial.compose(model.joint_placement_R[i], model.joint_placement_p[i], jR, jp)
        data.liMi_R[i], data.liMi_p[i] = R, p
        parent = model.body_parent[i]
        if parent < 0:
            data.oMi_R[i], data.oMi_p[i] = R, p
        else:
            data.oMi_R[i], data.oMi_p[i] = spatial.compose(data.oMi_R[parent], data.oMi_p[parent], R, p)
