"""Linearisation about a steady motion: ẏ ≈ A (y − y₀) + B (u − u₀), the reduced first-order dynamics of a
multibody, by central differences (issue 12 part 5; seed 001 §2.3 for the reduced state of a wheeled one).

The reduced state y = (y_P, y_V) names some position coordinates P and some velocities V of the model:

    q = q₀ ⊕ δ,  δ_P = y_P                 the positions in the chart of the tangent space at q₀ (δ ∈ R^nv)
    v_V = y_V                              the chosen velocities
    ẏ_P = [dexp⁻¹(δ) v]_P,  ẏ_V = a_V(q, v, τ)

A multibody on wheels (``engine.dynamics.rolling``) has its other coordinates fixed by the constraints: δ of the
positions outside P solves the altitudes Φ(q₀ ⊕ δ) = 0 (least change, Gauss–Newton), the velocities outside V
solve J v = 0 (2.35: for the bicycle V = roll rate, steer rate, rear-wheel rate), and a is the constrained
acceleration (KKT, 3.20/3.21). Positions left out of P must not enter the dynamics (cyclic: the bicycle's place
on the ground, its heading, its wheels' angles); without wheels the velocities left out of V keep their value.
Central differences of step h, Richardson-extrapolated: D = (4 D(h/2) − D(h))/3, error O(h⁴).

``bicycle_lean_steer`` gives the 4×4 state matrix of the Whipple bicycle's lean and steer at forward speed v in
Meijaard et al. (2007)'s coordinates (φ, δ, φ̇, δ̇): φ the lean, positive to the right, is the frame's rotation
about its forward axis n0 (the thesis's roll, Ω2 = φ̇ at first order); δ = −r1, the thesis's steer r1 turning
left about the upward steering axis a1 where Meijaard's δ turns right about the downward one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.dynamics import aba
from engine.dynamics.inputs import GRAVITY
from engine.dynamics.integrators import _dexp_inv, integrate
from engine.dynamics.rolling import consistent_velocity, project, rolling_dynamics
from engine.model import neutral
from engine.model.model import JointType
from engine.spatial import rotation_to_quaternion

FREE_AXES = ("vx", "vy", "vz", "wx", "wy", "wz")      # a free flyer's body-frame (linear, angular) tangent axes


@dataclass(frozen=True)
class Linearization:
    """ẏ = A (y − y₀) + B (u − u₀): ``A`` (n, n), ``B`` (n, m), ``states`` (n names: ``q:<dof>`` a position,
    ``v:<dof>`` a velocity), ``inputs`` (m names: ``tau:<dof>``), ``rate`` = ẏ at the reference (zero for a
    steady motion in these coordinates)."""

    A: np.ndarray
    B: np.ndarray
    states: tuple
    inputs: tuple
    rate: np.ndarray

    def block(self, states) -> np.ndarray:
        """The rows and columns of A for the named states, in that order."""
        k = [self.states.index(s) for s in states]
        return self.A[np.ix_(k, k)]


def dof_names(model) -> tuple:
    """A name per velocity coordinate: the joint's name, ``<joint>.vx … .wz`` for a free flyer's six."""
    names = [""] * model.nv
    for j in model.joints:
        if j.type == JointType.FREE:
            names[j.idx_v:j.idx_v + 6] = [f"{j.name}.{a}" for a in FREE_AXES]
        elif j.nv == 1:
            names[j.idx_v] = j.name
        else:
            names[j.idx_v:j.idx_v + j.nv] = [f"{j.name}.{k}" for k in range(j.nv)]
    return tuple(names)


def linearize(sim, multibody=0, positions=None, velocities=None, inputs=(), step=1e-3) -> Linearization:
    """(A, B) about the current state and torques of ``sim``'s multibody (a name or an index): ``positions``,
    ``velocities``, ``inputs`` are dof names (``dof_names``); by default every position and velocity of a
    multibody without wheels. Its wheels, if any, constrain the rest (module docstring)."""
    m = multibody if isinstance(multibody, int) else [r.name for r in sim.runs].index(multibody)
    run = sim.runs[m]
    disks = getattr(sim.engine, "rolling", {}).get(m)
    return linearize_model(run.model, run.q, run.v, run.tau, positions, velocities, inputs, disks=disks,
                           gravity=run.gravity, f_ext=run.f_ext + run.f_contact, step=step)


def linearize_model(model, q0, v0, tau0, positions=None, velocities=None, inputs=(), disks=None, gravity=GRAVITY,
                    f_ext=None, step=1e-3) -> Linearization:
    """``linearize`` on a model and a reference state (q₀, v₀, τ₀) directly."""
    names = dof_names(model)
    if disks is None and (positions is None or velocities is None):
        positions = names if positions is None else positions
        velocities = names if velocities is None else velocities
    if positions is None or velocities is None:
        raise ValueError("a multibody on wheels needs its independent positions and velocities named")
    P, V, U = (np.array([_index(names, n) for n in group], dtype=int) for group in (positions, velocities, inputs))
    data = model.create_data()
    y0 = np.concatenate([np.zeros(len(P)), np.asarray(v0, float)[V]])
    tau0 = np.asarray(tau0, float)

    def rate(y, tau):
        delta = np.zeros(model.nv)
        delta[P] = y[:len(P)]
        q, delta = _configuration(model, data, q0, delta, P, disks)
        v = _velocity(model, data, q, v0, V, y[len(P):], disks)
        if disks is None:
            a = aba(model, data, q, v, tau, f_ext, gravity=gravity)
        else:
            a = rolling_dynamics(model, data, q, v, tau, disks, gravity, f_ext)[0]
        return np.concatenate([_dexp_inv(model, delta, v)[P], a[V]])

    def with_tau(u):
        tau = tau0.copy()
        tau[U] += u
        return tau

    A = _jacobian(lambda y: rate(y, tau0), y0, step)
    B = _jacobian(lambda u: rate(y0, with_tau(u)), np.zeros(len(U)), step)
    return Linearization(A, B, tuple(f"q:{names[k]}" for k in P) + tuple(f"v:{names[k]}" for k in V),
                         tuple(f"tau:{names[k]}" for k in U), rate(y0, tau0))


def bicycle_lean_steer(model, disks, speed, gravity=GRAVITY, frame="root_joint", steer="steer",
                       rear="rear_spin", step=1e-3) -> np.ndarray:
    """The 4×4 state matrix of (φ, δ, φ̇, δ̇) (Meijaard et al. 2007, eq. 5.3: ẋ = [[0, I], [−M⁻¹(g K0 + v² K2),
    −v M⁻¹ C1]] x) of a bicycle model in the thesis's frames (the frame's axes up, forward, left; the steering
    axis pointing up) rolling upright on ``disks`` at ``speed`` (m/s, the rear hub's)."""
    names = dof_names(model)
    lean = f"{frame}.wy"                                        # about n0, the frame's forward axis
    up = np.asarray(disks.up, float)
    forward = np.cross([0.0, 1.0, 0.0] if abs(up[1]) < 0.9 else [1.0, 0.0, 0.0], up)
    forward /= np.linalg.norm(forward)
    q, base = neutral(model), next(j.idx_q for j in model.joints if j.name == frame)
    q[base:base + 7] = (*(disks.origin + up),                   # a metre up: ``project`` drops it on the ground
                        *rotation_to_quaternion(np.column_stack([up, forward, np.cross(up, forward)])))
    data = model.create_data()
    q, _ = project(model, data, q, np.zeros(model.nv), disks)
    body = next(j.body for j in model.joints if j.name == rear)
    radius = disks.radii[disks.bodies.index(body)]
    k = {n: names.index(n) for n in (lean, steer, rear)}
    v = consistent_velocity(model, data, q, disks, {k[lean]: 0.0, k[steer]: 0.0, k[rear]: speed / radius})
    lin = linearize_model(model, q, v, np.zeros(model.nv), (lean, steer), (lean, steer, rear),
                          disks=disks, gravity=gravity, step=step)
    A = lin.block((f"q:{lean}", f"q:{steer}", f"v:{lean}", f"v:{steer}"))
    T = np.diag([1.0, -1.0, 1.0, -1.0])                         # δ = −r1 (module docstring)
    return T @ A @ T


def self_stable_speeds(model, disks, speeds=np.arange(0.0, 10.05, 0.1), gravity=GRAVITY, **names):
    """The speeds in ``speeds``' range where the largest real part of ``bicycle_lean_steer``'s eigenvalues
    changes sign, refined by Brent's method: for the benchmark, the weave speed (it falls below zero: stable
    from there) and the capsize speed (it rises above)."""
    from scipy.optimize import brentq

    def abscissa(v):
        return np.linalg.eigvals(bicycle_lean_steer(model, disks, v, gravity, **names)).real.max()

    s = np.array([abscissa(v) for v in speeds])
    return [brentq(abscissa, speeds[i], speeds[i + 1], xtol=1e-12) for i in np.flatnonzero(s[:-1] * s[1:] < 0)]


def _index(names, name) -> int:
    if name not in names:
        raise ValueError(f"no coordinate '{name}' (the model's: {', '.join(names)})")
    return names.index(name)


def _configuration(model, data, q0, delta, P, disks, iterations=20):
    """q = q₀ ⊕ δ with δ outside P moved, the least, to put the wheels on the ground (Gauss–Newton)."""
    q = integrate(model, q0, delta)
    if disks is None:
        return q, delta
    free = np.setdiff1d(np.arange(model.nv), P)
    for _ in range(iterations):
        phi = disks.altitudes(model, data, q)
        if np.max(np.abs(phi)) <= 1e-14:
            break
        G = disks.jacobian(model, data, q).reshape(len(phi), 3, -1).transpose(0, 2, 1) @ disks.up   # ∂Φ/∂δ
        delta[free] -= np.linalg.pinv(G[:, free]) @ phi
        q = integrate(model, q0, delta)
    return q, delta


def _velocity(model, data, q, v0, V, yV, disks):
    """v with v_V = y_V: the rest from J v = 0 on wheels, else v₀'s."""
    if disks is None:
        v = np.asarray(v0, float).copy()
        v[V] = yV
        return v
    return consistent_velocity(model, data, q, disks, dict(zip(V.tolist(), yV)))


def _jacobian(f, x0, h):
    """∂f/∂x at x0: central differences of steps h and h/2, Richardson-extrapolated."""
    columns = []
    for i in range(len(x0)):
        e = np.zeros(len(x0))
        e[i] = 1.0
        d1, d2 = ((f(x0 + s * e) - f(x0 - s * e)) / (2.0 * s) for s in (h, h / 2.0))
        columns.append((4.0 * d2 - d1) / 3.0)
    return np.array(columns).T if columns else np.zeros((len(f(x0)), 0))
