"""Wheels rolling without slipping on a plane: the ideal rolling-disk contact as a kinematic constraint (seed 001
§2.4–2.6, Mauny 2018; the bicycle benchmark of Meijaard et al. 2007 rides on it).

A wheel is a thin disk of radius h, its centre the origin of its body, its spin axis ``axis`` (body frame). On the
ground plane (unit normal ``up``, through ``origin``) its contact point is the lowest rim point along −up, the
closed forms (2.20)/(2.22) of the thesis written without its angles:

    a = R axis,   u = up − (up·a) a,   C = p − h u / |u|                      (C defined while the disk is not flat)

Rolling without slipping (no-slip, no-skid) and keeping contact (normal) is the velocity of the material point of
the wheel at C being zero: J_k v = 0 with J_k the point Jacobian at C (3 rows per wheel, eq. 2.28). The two altitudes
Φ_k = (C − origin)·up = 0 are holonomic (2.18); the normal rows are their time derivatives (the lowest point's
height moves with the material point there), so J v = 0 keeps them and ``project`` removes the drift.

The constrained dynamics, two ways on the same model (checklist item 3 of the digest's §5.1):

    KKT (Lagrange multipliers, 3.20/3.21):   [M  Jᵀ; J  0] [a; −λ] = [τ − h(q, v); −J̇v]
    null space (projection, 2.9–2.12):       a = a_p + N z,  J N = 0,  a_p = −J⁺ J̇v,  (NᵀMN) z = Nᵀ(τ − h − M a_p)

λ (3 per wheel, N, world axes) is the ground's force on each wheel. J̇v, the rate of J along the motion with the
contact point moving on the rim, is in closed form (``RollingDisks.jacobian_rate``).

``rolling_dynamics`` (KKT), ``project`` and ``step_rolling`` (RK4 then the projection) run as numba kernels next to
this file's readable numpy (``_kernels/rolling.py``: the KKT system by its Schur complement on M's Cholesky factor,
the whole step in one call, no allocation); ``null_space_dynamics``, ``jacobian`` and ``jacobian_rate`` stay in
numpy, the independent references the kernels are tested against.
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from engine.dynamics import crba, forward_kinematics, rnea
from engine.dynamics._kernels import rolling as _k
from engine.dynamics.integrators import STEPPERS, _dexp_inv, _topology, difference, integrate
from engine.dynamics.jacobians import point_classical_acceleration, point_jacobian
from engine.dynamics.inputs import BAD, GRAVITY, _conform, gravity_array, pack_of, report
from engine.dynamics._kernels.kinematics import WARN, check_q, check_vector

PROJECTION_TOL = 1e-13  # m: altitudes after ``project``
PROJECTION_ITERATIONS = 10


@dataclass(frozen=True)
class RollingDisks:
    """Wheels of a multibody on a plane: ``bodies`` (body indices), ``radii`` (m), ``axes`` (spin axes, body
    frames); the plane through ``origin`` with unit normal ``up`` (world = the multibody's base frame)."""

    bodies: tuple
    radii: tuple
    axes: tuple
    up: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    ground: str = "ground"    # the name of the body the wheels roll on (for contact reports)

    @cached_property
    def rows(self):
        """The wheels as the kernels take them: ``wi`` (k,) bodies, ``wf`` (k, WF_SIZE) radius, axis, up, origin."""
        return wheel_rows(self.bodies, self.radii, self.axes, [self.up] * len(self.bodies),
                          [self.origin] * len(self.bodies))

    def contact_points(self, model, data):
        """World contact points (k, 3) and their coordinates in the wheels' body frames, at the placements of the
        last forward kinematics."""
        world, local = [], []
        for b, h, axis in zip(self.bodies, self.radii, self.axes):
            R, p = data.oMi_R[b], data.oMi_p[b]
            a = R @ np.asarray(axis, float)
            u = self.up - (self.up @ a) * a
            C = p - h * u / math.sqrt(u @ u)
            world.append(C)
            local.append(R.T @ (C - p))
        return np.array(world), np.array(local)

    def normals(self):
        """(k, 3): the ground normal under each wheel."""
        return np.tile(self.up, (len(self.bodies), 1))

    def altitudes(self, model, data, q):
        """Φ (k,): the height of each contact point above the plane."""
        forward_kinematics(model, data, q)
        C, _ = self.contact_points(model, data)
        return (C - self.origin) @ self.up

    def jacobian(self, model, data, q):
        """J (3k, nv): the velocity of the material point of each wheel at its contact point."""
        forward_kinematics(model, data, q)
        _, local = self.contact_points(model, data)
        return np.vstack([point_jacobian(model, data, b, x) for b, x in zip(self.bodies, local)])

    def jacobian_rate(self, model, data, q, v):
        """J̇v (3k,), the rate of J v along the motion at constant v, in closed form. J v = v_o + ω × (C − p) with
        C the contact point moving over the rim, so

            J̇v = a_C + ω × (Ċ − v_C),   Ċ = v_o − h d(u/|u|)/dt,   u̇ = −(n·ȧ) a − (n·a) ȧ,   ȧ = ω × a

        with a_C the classical acceleration of the material point at C when q̈ = 0, v_C = J v its velocity, and
        v_o, ω the wheel's origin velocity and angular velocity (world)."""
        forward_kinematics(model, data, q, v)
        _, local = self.contact_points(model, data)
        rates = []
        for b, h, axis, x in zip(self.bodies, self.radii, self.axes, local):
            R = data.oMi_R[b]
            v_o, w = R @ data.v[b, :3], R @ data.v[b, 3:]
            a = R @ np.asarray(axis, float)
            u = self.up - (self.up @ a) * a
            norm = math.sqrt(u @ u)
            a_dot = _cross(w, a)
            u_dot = -(self.up @ a_dot) * a - (self.up @ a) * a_dot
            C_dot = v_o - h * (u_dot - u * (u @ u_dot) / norm ** 2) / norm
            v_C = v_o + _cross(w, R @ x)
            rates.append(point_classical_acceleration(model, data, b, x) + _cross(w, C_dot - v_C))
        return np.concatenate(rates)


def _cross(a, b):
    """a × b for two 3-vectors (numpy's ``cross`` costs ten times more on these)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def wheel_rows(bodies, radii, axes, ups, origins):
    """(wi, wf): wheels as the rolling kernels take them (each on its own plane: ``ups``, ``origins``)."""
    wf = np.zeros((len(bodies), _k.WF_SIZE))
    for w, row in enumerate(zip(radii, axes, ups, origins)):
        wf[w] = np.concatenate([[row[0]], *row[1:]])
    return np.array(bodies, np.int64), wf


class _Work:
    """The arrays the rolling kernels write, for one Data and k wheels (allocated once)."""

    def __init__(self, model, k):
        n, m = model.nv, 3 * k
        self.M, self.J, self.Y, self.S = np.zeros((n, n)), np.zeros((m, n)), np.zeros((n, m)), np.zeros((m, m))
        self.vec = np.zeros((_k.V_SIZE, max(model.nq, n, m, 8)))
        self.topo = np.array(_topology(model), np.int64)
        self.q, self.v, self.a = np.zeros(model.nq), np.zeros(n), np.zeros(n)


_WORK = weakref.WeakKeyDictionary()


def _work(model, data, k) -> _Work:
    works = _WORK.get(data)
    if works is None:
        works = _WORK[data] = {}
    work = works.get(k)
    if work is None:
        work = works[k] = _Work(model, k)
    return work


def _arrays(*xs):
    """Each input as a C-contiguous float64 array (itself when it is one: the kernels' fast path)."""
    return [x if type(x) is np.ndarray and x.dtype == np.float64 and x.flags.c_contiguous
            else np.ascontiguousarray(x, dtype=np.float64) for x in xs]


def _verdict(model, disks, status, inputs):
    """Raise for the kernel's status: bad ``inputs`` ({name: array}) named by ``engine.dynamics.inputs`` (a
    wrong shape, a non-finite value, a quaternion off unit), a renormalised quaternion warned, a singular
    constraint a LinAlgError."""
    if status == BAD:
        inputs = {name: _conform(model, name, x) for name, x in inputs.items()}
    if status:
        report(BAD if status == BAD else min(status, WARN), model, stacklevel=4, **inputs)
    if status == _k.NOT_DEFINITE:
        raise np.linalg.LinAlgError(f"{model.name}: the rolling constraints of wheels {disks.bodies} are singular "
                                    f"(a wheel lying flat, or rows that depend on each other)")


def rolling_dynamics(model, data, q, v, tau, disks, gravity=GRAVITY, f_ext=None):
    """(a, λ) by the KKT system (module docstring; kernel ``rolling_acceleration``); ``f_ext`` (nbodies, 6):
    wrenches on the bodies (body frames, at their origins), as ``aba`` takes them."""
    pack, (wi, wf) = pack_of(model, data), disks.rows
    work = _work(model, data, len(wi))
    q, v, tau, f_ext = _arrays(q, v, tau, data.fext_zero if f_ext is None else f_ext)
    g = gravity_array(gravity)
    status = _k.checked_acceleration(pack.mi, pack.mf, data.ws, data.wd, q, v, tau, f_ext, g, wi, wf, work.M,
                                     work.J, work.Y, work.S, work.vec, work.a)
    _verdict(model, disks, status, dict(q=q, v=v, tau=tau, f_ext=f_ext, gravity=g))
    return work.a.copy(), work.vec[_k.V_LAM, :3 * len(wi)].copy()


def _terms(model, data, q, v, disks, gravity, f_ext=None):
    """M, J and the bias h(q, v) = rnea(q, v, 0) (gravity, Coriolis, passive joint forces, f_ext)."""
    M, J = crba(model, data, q), disks.jacobian(model, data, q)
    return M, J, rnea(model, data, q, v, np.zeros(model.nv), f_ext, gravity=gravity)


def null_space_dynamics(model, data, q, v, tau, disks, gravity=GRAVITY):
    """(a, λ) by the null-space projection (module docstring); λ from M a + h − τ = Jᵀ λ."""
    M, J, bias = _terms(model, data, q, v, disks, gravity)
    _, s, Vt = np.linalg.svd(J)
    N = Vt[np.count_nonzero(s > 1e-12 * s[0]):].T                      # an orthonormal basis of ker J
    a_p = -np.linalg.pinv(J) @ disks.jacobian_rate(model, data, q, v)
    z = np.linalg.solve(N.T @ M @ N, N.T @ (tau - bias - M @ a_p))
    a = a_p + N @ z
    return a, np.linalg.lstsq(J.T, M @ a + bias - tau, rcond=None)[0]


def project(model, data, q, v, disks, iterations=PROJECTION_ITERATIONS):
    """(q, v) back on the constraints (kernel ``project``): the altitudes to zero by Gauss–Newton on the normal
    rows (the least change of the configuration), then v to the nearest velocity, in the kinetic-energy metric,
    with J v = 0. Returns new arrays."""
    pack, (wi, wf) = pack_of(model, data), disks.rows
    work = _work(model, data, len(wi))
    q, v = (_conform(model, name, x) for name, x in (("q", q), ("v", v)))      # copies: projected in place
    status = max(check_q(pack.mi[:model.nbodies], q), check_vector(v, model.nv))
    if status != BAD:
        status = max(status, _k.project(pack.mi, pack.mf, data.ws, data.wd, work.topo, q, v, wi, wf, work.M,
                                        work.J, work.Y, work.S, work.vec, iterations, PROJECTION_TOL))
    _verdict(model, disks, status, dict(q=q, v=v))
    return q, v


def step_rolling(model, data, q, v, tau, dt, disks, gravity=GRAVITY, f_ext=None, integrator="rk4"):
    """One step of the rolling dynamics, then ``project``; τ and ``f_ext`` held over the step. RK4 on the group
    by default: one call of the kernel ``rolling_step``. Returns new arrays."""
    if integrator != "rk4":
        def acceleration(model, data, q, v, tau, f_ext, gravity):
            return rolling_dynamics(model, data, q, v, tau, disks, gravity, f_ext)[0]
        q, v = STEPPERS[integrator](model, data, q, v, tau, dt, f_ext=f_ext, gravity=gravity,
                                    acceleration=acceleration)
        return project(model, data, q, v, disks)
    if not (np.isfinite(dt) and dt > 0.0):
        raise ValueError(f"time step dt must be finite and > 0, got {dt!r}")
    pack, (wi, wf) = pack_of(model, data), disks.rows
    work = _work(model, data, len(wi))
    q, v, tau, f_ext = _arrays(q, v, tau, data.fext_zero if f_ext is None else f_ext)
    g = gravity_array(gravity)
    status = _k.rolling_step(pack.mi, pack.mf, data.ws, data.wd, work.topo, q, v, tau, f_ext, g, float(dt), wi, wf,
                             work.M, work.J, work.Y, work.S, work.vec, work.q, work.v, PROJECTION_ITERATIONS,
                             PROJECTION_TOL)
    _verdict(model, disks, status, dict(q=q, v=v, tau=tau, f_ext=f_ext, gravity=g))
    return work.q.copy(), work.v.copy()


class AdamsBashforthMoulton4:
    """Adams–Bashforth–Moulton of order 4 in PECE mode for the rolling dynamics (the thesis's integrator for Table
    2.2, seed 001 §2.6): two evaluations of the KKT dynamics a step where RK4 takes four, at the same order.
    It is started by RK4 steps (``step_rolling``) until it has four points, and ``restart()`` forgets them (after
    an event, a change of the contact configuration or of the inputs, which breaks the smoothness the
    multistep formulas assume).

    On the group the past points are seen in the chart at the current one, q_j = q_n ⊕ ξ_j (ξ_j = q_j ⊖ q_n),
    their configuration slopes K_j = dexp⁻¹(ξ_j, v_j) (a multistep method in a moving chart; Faltinsen, Marthinsen
    & Munthe-Kaas 2001), with h = δt and a_j the accelerations:

        predict  ξ_p = h/24 (55 K_n − 59 K_{n−1} + 37 K_{n−2} − 9 K_{n−3}),  v_p likewise with a_j   (AB4)
        evaluate a_p = a(q_n ⊕ ξ_p, v_p),  K_p = dexp⁻¹(ξ_p, v_p)
        correct  ξ = h/24 (9 K_p + 19 K_n − 5 K_{n−1} + K_{n−2}),  v likewise with a_j          (AM, order 4)
        q_{n+1} = q_n ⊕ ξ, then ``project``; evaluate a_{n+1} there (the next step's a_n)
    """

    ORDER = 4

    def __init__(self):
        self.points = []          # (q_j, v_j, a_j), oldest first, at most 4; δt of the steps that made them
        self.dt = None

    def restart(self):
        self.points, self.dt = [], None

    def step(self, model, data, q, v, tau, dt, disks, gravity=GRAVITY, f_ext=None):
        """(q, v) after δt (new arrays); τ and f_ext held as in ``step_rolling``."""
        if self.dt is not None and dt != self.dt:
            self.restart()                     # the formulas assume a constant step
        if not self.points:
            self.points.append((q.copy(), v.copy(), rolling_dynamics(model, data, q, v, tau, disks, gravity, f_ext)[0]))
        if len(self.points) < self.ORDER:
            q1, v1 = step_rolling(model, data, q, v, tau, dt, disks, gravity, f_ext)
        else:
            q1, v1 = self._pece(model, data, tau, dt, disks, gravity, f_ext)
        self.points = self.points[-(self.ORDER - 1):] + [
            (q1, v1, rolling_dynamics(model, data, q1, v1, tau, disks, gravity, f_ext)[0])]
        self.dt = dt
        return q1, v1

    def _pece(self, model, data, tau, dt, disks, gravity, f_ext):
        (q3, v3, a3), (q2, v2, a2), (q1, v1, a1), (q0, v0, a0) = self.points           # q0 = q_n
        K3, K2, K1 = (_dexp_inv(model, difference(model, q0, qj), vj) for qj, vj in ((q3, v3), (q2, v2), (q1, v1)))
        h = dt / 24.0
        xi_p = h * (55.0 * v0 - 59.0 * K1 + 37.0 * K2 - 9.0 * K3)
        v_p = v0 + h * (55.0 * a0 - 59.0 * a1 + 37.0 * a2 - 9.0 * a3)
        a_p = rolling_dynamics(model, data, integrate(model, q0, xi_p), v_p, tau, disks, gravity, f_ext)[0]
        K_p = _dexp_inv(model, xi_p, v_p)
        xi = h * (9.0 * K_p + 19.0 * v0 - 5.0 * K1 + K2)
        v = v0 + h * (9.0 * a_p + 19.0 * a0 - 5.0 * a1 + a2)
        return project(model, data, integrate(model, q0, xi), v, disks)


def consistent_velocity(model, data, q, disks, independent: dict):
    """The velocity with J v = 0 whose coordinates ``independent`` ({dof index: value}; for the bicycle the roll
    rate, steer rate and rear-wheel rate, eq. 2.35) are given: the others solve the constraints."""
    J = disks.jacobian(model, data, q)
    known = np.array(sorted(independent))
    unknown = np.setdiff1d(np.arange(model.nv), known)
    v = np.zeros(model.nv)
    v[known] = [independent[k] for k in known]
    v[unknown] = np.linalg.solve(J[:, unknown], -J[:, known] @ v[known])
    return v
