"""Time integration on the configuration Lie group: q ⊕ v·dt, q1 ⊖ q0, random configurations, and the
steppers of the free dynamics (seed 004 §2.7 integrator menu; seed 000 §3.6 quaternions).

The state is ``(q, v)``: ``q`` (nq,) on the product of the joints' groups (see ``engine.dynamics.lie``),
``v`` (nv,) joint velocities, body-frame for spherical, free-flyer and planar joints (Pinocchio).  Each
stepper advances ``(q, v)`` by ``dt`` seconds under the joint forces ``tau`` (nv,), optional external
wrenches ``f_ext`` and ``gravity`` (m/s², base frame), with accelerations from ``aba`` (or from
``acceleration``, a function with ``aba``'s signature: a closed chain passes its constrained dynamics,
``engine.dynamics.closures``); it returns new arrays ``(q_next, v_next)`` and leaves its inputs untouched.

* ``step_semi_implicit_euler``: v⁺ = v + dt·a(q, v); q⁺ = q ⊕ dt·v⁺ (symplectic; the time-stepping base).
* ``step_rk2``: explicit midpoint.  ``step_rk4``: classical Runge–Kutta, as Runge–Kutta–Munthe-Kaas on the
  group (stage velocities are corrected by dexp⁻¹ so the order stays 4 for rotating bodies).
* ``step_explicit_euler``: q⁺ = q ⊕ dt·v; v⁺ = v + dt·a(q, v).  **A bad example, kept to show why**: it
  pumps energy into every oscillation (seed 004 eq. 10: the 1 m pendulum released at 90° drifts by
  0.35 rad in 10 s at dt = 1 ms, where semi-implicit Euler stays within 2.2e-3 rad).

Configurations are checked on entry (``check_configuration``): wrong size, non-finite values or a
quaternion (or planar (cos θ, sin θ) pair) off unit norm by more than 1e-3 raise ``ValueError``, one off by
more than 1e-6 is renormalised with a warning; every output is re-normalised.
"""
from __future__ import annotations

import weakref

import warnings

import numpy as np

from engine import dynamics
from engine.dynamics.inputs import GRAVITY, UNIT_SILENT, UNIT_WARN
from engine.dynamics.lie import dexp_inv_kernel, difference_kernel, integrate_kernel
from engine.model.model import JointType

_UNIT_BLOCKS = {JointType.SPHERICAL: (0, 4), JointType.FREE: (3, 4), JointType.PLANAR: (2, 2)}  # (start, size)


def _vector(x, n, name):
    x = np.asarray(x, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} has non-finite entries at {np.flatnonzero(~np.isfinite(x)).tolist()}")
    return x


def check_configuration(model, q, name="q"):
    """``q`` as a float array with exactly unit quaternions.  Wrong size, non-finite entries, or a quaternion
    (or planar (cos, sin) pair) whose norm is off 1 by more than ``UNIT_WARN`` raise ValueError; any other
    is used normalised (a copy), with a RuntimeWarning beyond ``UNIT_SILENT`` — the dynamics kernels' policy."""
    q, copied = _vector(q, model.nq, name), False
    for j in model.joints:
        if j.type in _UNIT_BLOCKS:
            start, size = _UNIT_BLOCKS[j.type]
            block = slice(j.idx_q + start, j.idx_q + start + size)
            n = np.linalg.norm(q[block])
            if n == 1.0:
                continue
            what = "(cos, sin) pair" if j.type == JointType.PLANAR else "quaternion"
            if abs(n - 1.0) > UNIT_WARN:
                raise ValueError(f"{name}: joint '{j.name}' needs a unit {what}, got norm {n!r}")
            if abs(n - 1.0) > UNIT_SILENT:
                warnings.warn(f"{name}: joint '{j.name}': {what} of norm {n!r} renormalised", RuntimeWarning,
                              stacklevel=3)
            if not copied:
                q, copied = q.copy(), True
            q[block] /= n
    return q


_TOPOLOGY = weakref.WeakKeyDictionary()


def _topology(model):
    """Writable copies of the model's joint arrays for the kernels: numba types the Model's read-only arrays
    on its slow path (~50 µs a call), writable ones on its fast path."""
    arrays = _TOPOLOGY.get(model)
    if arrays is None:
        arrays = _TOPOLOGY[model] = tuple(np.array(a) for a in (model.joint_type, model.joint_idx_q,
                                                                model.joint_idx_v, model.joint_nv))
    return arrays


def integrate(model, q, v_dt):
    """q ⊕ v·dt: the configuration reached from ``q`` moving with the constant body velocity ``v_dt``
    (nv,) for unit time (quaternion / SE(3) / SE(2) exponential, Pinocchio's ``integrate``)."""
    q = check_configuration(model, q)
    out = np.empty(model.nq)
    joint_type, idx_q, idx_v, _ = _topology(model)
    integrate_kernel(joint_type, idx_q, idx_v, q, _vector(v_dt, model.nv, "v_dt"), out, np.empty(8))
    return out


def difference(model, q0, q1):
    """q1 ⊖ q0 (nv,): the velocity ξ with ``integrate(model, q0, ξ) == q1``, shortest rotations
    (Pinocchio's ``difference``)."""
    q0, q1 = check_configuration(model, q0, "q0"), check_configuration(model, q1, "q1")
    out = np.empty(model.nv)
    joint_type, idx_q, idx_v, _ = _topology(model)
    difference_kernel(joint_type, idx_q, idx_v, q0, q1, out, np.empty(8))
    return out


def random_configuration(model, rng=None):
    """A random q: revolute and prismatic joints uniform within their limits (unbounded: [-π, π] rad,
    [-1, 1] m), uniformly distributed unit quaternions, free-flyer and planar positions in [-1, 1] m."""
    rng = np.random.default_rng(rng)
    q = np.empty(model.nq)
    for j in model.joints:
        k = j.idx_q
        if j.type in (JointType.REVOLUTE, JointType.PRISMATIC):
            bound = np.pi if j.type == JointType.REVOLUTE else 1.0
            lo, hi = model.q_lower[k], model.q_upper[k]
            q[k] = rng.uniform(lo if np.isfinite(lo) else -bound, hi if np.isfinite(hi) else bound)
        elif j.type == JointType.PLANAR:
            angle = rng.uniform(-np.pi, np.pi)
            q[k:k + 4] = (*rng.uniform(-1.0, 1.0, 2), np.cos(angle), np.sin(angle))
        else:
            t = 3 if j.type == JointType.FREE else 0
            q[k:k + t] = rng.uniform(-1.0, 1.0, t)
            quat = rng.normal(size=4)  # a normalised 4D Gaussian is uniform on SO(3)
            q[k + t:k + t + 4] = quat / np.linalg.norm(quat)
    return q


def _acceleration(model, data, q, v, tau, f_ext, gravity):
    return np.array(dynamics.aba(model, data, q, v, tau, f_ext=f_ext, gravity=gravity), dtype=float)


def _stage(model, data, q, xi, vi, tau, f_ext, gravity, acceleration=_acceleration):
    """Slopes of a Runge–Kutta stage at (q ⊕ ξ, vi): the acceleration, and the configuration rate
    dexp⁻¹(ξ, vi) in q's chart (vi itself when ξ = 0)."""
    return acceleration(model, data, _advance(model, q, xi), vi, tau, f_ext, gravity), _dexp_inv(model, xi, vi)


def _advance(model, q, xi):
    out = np.empty(model.nq)
    joint_type, idx_q, idx_v, _ = _topology(model)
    integrate_kernel(joint_type, idx_q, idx_v, q, xi, out, np.empty(8))
    return out


def _dexp_inv(model, xi, w):
    out = np.empty(model.nv)
    joint_type, _, idx_v, joint_nv = _topology(model)
    dexp_inv_kernel(joint_type, idx_v, joint_nv, xi, w, out, np.empty(model.nv))
    return out


def _checked(model, q, v, tau, dt):
    if not (np.isfinite(dt) and dt > 0.0):
        raise ValueError(f"time step dt must be finite and > 0, got {dt!r}")
    return check_configuration(model, q), _vector(v, model.nv, "v"), _vector(tau, model.nv, "tau")


def step_explicit_euler(model, data, q, v, tau, dt, f_ext=None, gravity=GRAVITY, acceleration=None):
    """Explicit Euler, seed 004 eq. 10: q⁺ = q ⊕ dt·v, v⁺ = v + dt·a(q, v).  Not for use: it gains energy
    every oscillation (documented as the bad example; see the module docstring)."""
    q, v, tau = _checked(model, q, v, tau, dt)
    a = (acceleration or _acceleration)(model, data, q, v, tau, f_ext, gravity)
    return _advance(model, q, dt * v), v + dt * a


def step_semi_implicit_euler(model, data, q, v, tau, dt, f_ext=None, gravity=GRAVITY, acceleration=None):
    """Semi-implicit (symplectic) Euler, seed 004 eq. 11: v⁺ = v + dt·a(q, v), q⁺ = q ⊕ dt·v⁺."""
    q, v, tau = _checked(model, q, v, tau, dt)
    v_next = v + dt * (acceleration or _acceleration)(model, data, q, v, tau, f_ext, gravity)
    return _advance(model, q, dt * v_next), v_next


def step_rk2(model, data, q, v, tau, dt, f_ext=None, gravity=GRAVITY, acceleration=None):
    """Explicit midpoint, seed 004 eq. 24: the slopes at (q ⊕ dt/2·v, v + dt/2·a(q, v)) advance the step."""
    q, v, tau = _checked(model, q, v, tau, dt)
    accel = acceleration or _acceleration
    args = (tau, f_ext, gravity, accel)
    A1 = accel(model, data, q, v, tau, f_ext, gravity)
    A2, K2 = _stage(model, data, q, 0.5 * dt * v, v + 0.5 * dt * A1, *args)
    return _advance(model, q, dt * K2), v + dt * A2


def step_rk4(model, data, q, v, tau, dt, f_ext=None, gravity=GRAVITY, acceleration=None):
    """Classical RK4 (seed 004 eq. 25-33) on the group, in Runge–Kutta–Munthe-Kaas form: stage i sits at
    (q ⊕ ξᵢ, v + cᵢ dt Aᵢ₋₁) with ξᵢ = cᵢ dt Kᵢ₋₁, and its configuration slope is Kᵢ = dexp⁻¹(ξᵢ, vᵢ)."""
    q, v, tau = _checked(model, q, v, tau, dt)
    accel = acceleration or _acceleration
    args = (tau, f_ext, gravity, accel)
    A1, K1 = accel(model, data, q, v, tau, f_ext, gravity), v
    A2, K2 = _stage(model, data, q, 0.5 * dt * K1, v + 0.5 * dt * A1, *args)
    A3, K3 = _stage(model, data, q, 0.5 * dt * K2, v + 0.5 * dt * A2, *args)
    A4, K4 = _stage(model, data, q, dt * K3, v + dt * A3, *args)
    return (_advance(model, q, dt / 6.0 * (K1 + 2.0 * K2 + 2.0 * K3 + K4)),
            v + dt / 6.0 * (A1 + 2.0 * A2 + 2.0 * A3 + A4))


STEPPERS = {"explicit_euler": step_explicit_euler, "semi_implicit_euler": step_semi_implicit_euler,
            "rk2": step_rk2, "rk4": step_rk4}
