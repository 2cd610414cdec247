"""Frame conventions a robot file may use besides URDF's ``xyz``/``rpy`` (seed 004 §2.3, MDA v1.85 L882-1052).

* **Modified Denavit–Hartenberg** of Khalil & Kleinfinger (1986; Khalil & Dombre, *Modeling, Identification and
  Control of Robots*, 2002, §3.2, and ch. 7 for trees). Frame j is placed in frame i (its antecedent) by::

      iTj = Rot(z, γ) Trans(z, b) Rot(x, α) Trans(x, d) Rot(z, θ) Trans(z, r)

  α about x_i from z_i to z_j, d along x_i from z_i to z_j (the thesis calls it ``a``), θ about z_j from x_i to
  x_j, r along z_j from x_i to x_j.  γ and b are the two extra parameters of tree structures (a frame whose x
  axis is not the common normal to its antecedent's x); 0 in serial chains, and absent from the thesis' MDA,
  which uses the 4-parameter form only.  With γ = b = 0 (Khalil & Dombre §3.2)::

      iTj = [[ cθ,     -sθ,     0,    d     ],
             [ cα sθ,   cα cθ, -sα,  -r sα  ],
             [ sα sθ,   sα cθ,  cα,   r cα  ],
             [ 0,       0,      0,    1     ]]

  Joint j moves about (revolute: q adds to θ) or along (prismatic: q adds to r) z_j, so iTj(q) = iTj(0) Rot(z, q)
  or iTj(0) Trans(z, q): the placement is ``dh_transform`` at the table's θ and r, and the joint axis is z.

* **Euler / Tait–Bryan angles** in any of the 12 orders: the six Tait–Bryan orders (three distinct axes: xyz,
  xzy, yxz, yzx, zxy, zyx) and the six proper-Euler orders (first axis repeated: xyx, xzx, yxy, yzy, zxz, zyz).
  *Intrinsic* (the thesis' convention, L925-935: first about the parent's axis, then about the intermediate
  frame's, last about the child's): R = R_a1(β) R_a2(ρ) R_a3(φ).  *Extrinsic* (every rotation about the parent's
  fixed axes): R = R_a3(φ) R_a2(ρ) R_a1(β).  URDF's rpy is extrinsic xyz = intrinsic zyx with the angles reversed.
  scipy.spatial.transform.Rotation does the conversions (``from_euler``/``as_euler``).

All angles in radians; placements follow ``engine.spatial`` (R maps child vectors to the parent, p is the child
origin in the parent).
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.spatial.transform import Rotation

from engine import spatial

TAIT_BRYAN_ORDERS = ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx")
PROPER_EULER_ORDERS = ("xyx", "xzx", "yxy", "yzy", "zxz", "zyz")
EULER_ORDERS = TAIT_BRYAN_ORDERS + PROPER_EULER_ORDERS


def dh_transform(alpha, d, theta, r, gamma=0.0, b=0.0):
    """(R, p) of Khalil–Kleinfinger's iTj = Rot(z, γ) Trans(z, b) Rot(x, α) Trans(x, d) Rot(z, θ) Trans(z, r)."""
    ca, sa, ct, st = np.cos(alpha), np.sin(alpha), np.cos(theta), np.sin(theta)
    R = np.array([[ct, -st, 0.0], [ca * st, ca * ct, -sa], [sa * st, sa * ct, ca]])
    p = np.array([d, -r * sa, r * ca])
    if gamma == 0.0 and b == 0.0:
        return R, p
    Rz = spatial.rotation_axis_angle([0.0, 0.0, 1.0], gamma)
    return Rz @ R, Rz @ p + np.array([0.0, 0.0, b])


def _sequence(order, intrinsic):
    if order not in EULER_ORDERS:
        raise ValueError(f"unknown rotation order {order!r}: one of {', '.join(EULER_ORDERS)}")
    return order.upper() if intrinsic else order  # scipy: upper case intrinsic, lower case extrinsic


def euler_matrix(angles, order, intrinsic=True):
    """Rotation matrix of three angles (β, ρ, φ) about the axes of ``order`` (one of ``EULER_ORDERS``):
    intrinsic R = R_a1(β) R_a2(ρ) R_a3(φ), extrinsic R = R_a3(φ) R_a2(ρ) R_a1(β)."""
    return Rotation.from_euler(_sequence(order, intrinsic), np.asarray(angles, dtype=float)).as_matrix()


def euler_angles(R, order, intrinsic=True):
    """The three angles (β, ρ, φ) with ``euler_matrix(angles, order, intrinsic) == R``.

    Ranges: β, φ in (-π, π]; ρ in [-π/2, π/2] (Tait–Bryan) or [0, π] (proper Euler).  Gimbal lock, where ρ is
    at an end of its range (Tait–Bryan ρ = ±π/2, proper Euler ρ = 0 or π): the first and third axes are then
    aligned and only β ± φ is determined; φ is set to 0 and β carries the whole rotation about that axis (scipy's
    choice, whose warning is silenced here since the matrix is still reproduced exactly).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Gimbal lock detected")
        return Rotation.from_matrix(np.asarray(R, dtype=float)).as_euler(_sequence(order, intrinsic))
