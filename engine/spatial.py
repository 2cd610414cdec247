"""Spatial algebra conventions, fixed once for the whole engine.

Conventions (Pinocchio's, so results compare directly with the robotics ecosystem):

* A **placement** (rigid transform) ``aMb`` is a pair ``(R, p)``: ``R`` (3, 3) rotates vectors from frame b
  to frame a, ``p`` (3,) is the origin of b expressed in a. A point ``x_b`` maps to ``x_a = R x_b + p``.
* A **spatial motion** vector (twist) is ``(v, w)``: linear part first, angular part second, (6,), taken at
  the origin of the frame it is expressed in. Body velocities are expressed in the body (local) frame.
* A **spatial force** (wrench) is ``(f, tau)``: force first, moment about the frame origin second.
* A **spatial inertia** about a frame origin, for mass ``m``, centre of mass ``c`` and rotational inertia
  ``I_c`` about the centre of mass (all in that frame) is::

      I = [[ m 1,        -m [c]x              ],
           [ m [c]x,      I_c - m [c]x [c]x   ]]

  so that the momentum is ``h = I (v, w)``.
* Motion transform of ``aMb`` (maps a twist in b to a twist in a)::

      X = [[ R, [p]x R ],
           [ 0,      R ]]

  and the force transform is ``X^-T``.  ``act`` maps b -> a, ``act_inv`` maps a -> b.
* Quaternions are stored ``(x, y, z, w)`` (Pinocchio / Eigen coefficient order), unit norm.
* Free-flyer joint: ``q = (x, y, z, qx, qy, qz, qw)``, ``v = (linear, angular)`` in the body frame.

Helpers here are plain numpy for loaders, tests and drivers; the hot loops use the numba versions in
``engine/dynamics/_kernels.py`` which follow exactly the same conventions.
"""
from __future__ import annotations

import numpy as np


def skew(w):
    """[w]x, the (3, 3) matrix with ``skew(w) @ u == cross(w, u)``."""
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def rotation_axis_angle(axis, angle):
    """Rodrigues: R = 1 + sin(t) [k]x + (1 - cos(t)) [k]x^2 for unit axis k and angle t (radians)."""
    k = np.asarray(axis, dtype=float)
    n = np.linalg.norm(k)
    if n == 0.0:
        return np.eye(3)
    K = skew(k / n)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def rotation_rpy(roll, pitch, yaw):
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def quaternion_to_rotation(quat):
    """Unit quaternion (x, y, z, w) -> rotation matrix."""
    x, y, z, w = quat
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def rotation_to_quaternion(R):
    """Rotation matrix -> unit quaternion (x, y, z, w) with w >= 0 (Shepperd's method)."""
    t = np.trace(R)
    if t > 0.0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        q = np.empty(4)
        q[i] = 0.25 * s
        q[j] = (R[j, i] + R[i, j]) / s
        q[k] = (R[k, i] + R[i, k]) / s
        q[3] = (R[k, j] - R[j, k]) / s
    return q if q[3] >= 0.0 else -q


def spatial_inertia(mass, com, inertia_com):
    """Spatial inertia (6, 6) about the frame origin, from mass, CoM and rotational inertia at the CoM."""
    C = skew(com)
    I = np.zeros((6, 6))
    I[:3, :3] = mass * np.eye(3)
    I[:3, 3:] = -mass * C
    I[3:, :3] = mass * C
    I[3:, 3:] = inertia_com - mass * C @ C
    return I


def compose(R1, p1, R2, p2):
    """aMc = aMb * bMc for aMb = (R1, p1), bMc = (R2, p2)."""
    return R1 @ R2, R1 @ p2 + p1


def motion_transform(R, p):
    """The (6, 6) matrix X of aMb acting on twists expressed in b."""
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[:3, 3:] = skew(p) @ R
    X[3:, 3:] = R
    return X


def transform_inertia(R, p, mass, com, inertia_com):
    """Express a body's (mass, com, inertia at com) given in frame b in frame a, for aMb = (R, p)."""
    return mass, R @ com + p, R @ inertia_com @ R.T


def combine_inertias(m1, c1, I1, m2, c2, I2):
    """Sum of two rigid bodies expressed in the same frame -> (mass, com, inertia at the new com)."""
    m = m1 + m2
    if m == 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    c = (m1 * c1 + m2 * c2) / m

    def shifted(mi, ci, Ii):  # parallel-axis theorem: I_c = I_ci + m (|d|^2 1 - d d^T), d = ci - c
        d = ci - c
        return Ii + mi * (d @ d * np.eye(3) - np.outer(d, d))

    return m, c, shifted(m1, c1, I1) + shifted(m2, c2, I2)
