"""``gait``: plays a periodic biped gait with single/double-support phases (seed 003 §5.E, §5.D).

The gait file (``gaitfile.GaitFile``) holds one step, period T: double support for ``double_support`` s, the
feet ``feet[0]`` (rear, on the ``left`` leg) and ``feet[1]`` (front) down, then single support on ``feet[1]``
while ``feet[0]`` swings ahead.  Step k plays the file re-indexed k times (``reindex.LegSwap``: left and right
exchanged), so the legs alternate; the ``progress`` coordinate (the base's forward position) is taken relative
to the supporting foot — the rear foot in double support, the stance foot in single support — so the steps
chain wherever the feet actually are.  The phases (Chessé's DS → SS → DS with re-indexing, L3488-3520):

* double support, while the gait's clock θ (below) is under ``double_support``: both feet held, J_c q̈ =
  −J̇_c v; the base coordinates but the progression (those that are not left/right joints: RABBIT's boom z and
  pitch) on q_ref(θ), and the progression at the gait's speed, ẍ* = x_ref''(θ) + kd (x_ref'(θ) − ẋ): that
  fixes every acceleration (the closed chain has as many degrees of freedom as base coordinates).  The
  actuators outnumber them: (τ, f) is the minimum weighted-norm distribution ``distribution.distribute``
  (ξ γ² on τ, ``force_weight`` on f, unilateral in the cone μ).  When no force in the cones produces q̈ (after
  a landing the progression arrives faster or slower than the gait, and ẍ*'s kd term asks a braking the feet
  cannot give without pulling on the ground), the progression's acceleration is relaxed: ẍ* + s, at the cost
  ½ ``relax_weight`` s² in the same QP (counted in ``relaxed``); if even that fails, the weighted least-norm
  solution of the dynamics alone is applied and counted in ``qp_failures``;
* single support: a point foot leaves one degree of freedom unactuated (Chessé's RABBIT: 4 motors, 5 DoF), the
  progression x.  It is left free; it is the gait's clock in both phases: θ is the time at which the gait's x
  (relative to the supporting foot) equals the robot's, and the other base coordinates and the swing leg's joints follow
  q_ref(θ) — the gait as virtual constraints of x, the hybrid zero dynamics of Westervelt & Grizzle's RABBIT
  controllers.  With θ̇ = ẋ / x_ref'(θ), the rows y = q − q_ref(θ) → ÿ = −kp y − kd ẏ read
      q̈_i − (q_ref,i' / x_ref') ẍ = (q_ref,i'' − q_ref,i' x_ref'' / x_ref') θ̇² − kp y_i − kd ẏ_i,
  solved with the stance contact by ``distribution.hybrid_contact``.  The step ends, and the next begins in
  double support with the legs re-indexed, when θ reaches T (the swing foot is then where the gait lands it,
  θ held at T until it is) and the swing foot is down: no higher than ``landing`` (m) above the height of the
  gait's feet.

Impactless touchdown (seed 003 §5.E; Chessé's switches keep velocities continuous, L4490-4502): when a step
starts, the foot that lands has its speed measured; above ``touchdown_tolerance`` (m/s) it is reported
(a warning, and in ``touchdowns``: (t, foot, speed), every landing).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from engine.control.gait.distribution import distribute, hybrid_contact
from engine.control.gait.gaitfile import GaitFile
from engine.control.gait.reindex import LegSwap
from engine.dynamics import crba, forward_kinematics, frame_jacobian, frame_jacobian_dot_v, frame_placement, rnea
from engine.errors import UniverseError, did_you_mean
from engine.plugins import register

PERIODIC = 1e-6          # the gait's end state, re-indexed, must be its start state to this (rad, m, and per s)


class TouchdownWarning(UserWarning):
    """A swing foot landed faster than the gait's touchdown tolerance: the touchdown is not impactless."""


@register("gait")
class GaitPlayback:
    kind = "controller"
    stage = "control"

    def __init__(self, model, gravity, base_dir=".", gait=None, double_support=None, feet="left_foot right_foot",
                 left="left", right="right", progress=None, kp=400.0, kd=40.0, mu=0.8, xi=1.0, gamma=1.0,
                 force_weight=1e-4, relax_weight=1e4, touchdown_tolerance=0.1, landing=5e-4):
        if gait is None or double_support is None or progress is None:
            raise ValueError('needs gait="file.csv|npz", double_support (s) and progress (the joint that advances)')
        self.file = GaitFile(model, Path(base_dir) / gait)
        if not 0.0 <= double_support < self.file.period:
            raise ValueError(f"double_support must be in [0, {self.file.period:g}) s, the gait's period "
                             f"(got {double_support})")
        self.swap = LegSwap(model, left, right, progress)
        self.feet = [_frame(model, name) for name in str(feet).split()]
        if len(self.feet) != 2:
            raise ValueError(f"feet names the rear then the front foot frame, got {feet!r}")
        self.model, self.data, self.gravity = model, model.create_data(), np.asarray(gravity, float)
        self.T, self.T_ds = self.file.period, float(double_support)
        self.L = float(self.file.q[-1, self.swap.progress] - self.file.q[0, self.swap.progress])
        self._check_periodic()
        paired = {model.joint(name).idx_v for name in self.swap.swapped}
        self.actuated = np.array(sorted(paired))
        self.base = np.array([i for i in range(model.nv) if i not in paired])
        self.S = np.eye(model.nv)[self.actuated]
        self.kp, self.kd, self.mu, self.tolerance = kp, kd, mu, touchdown_tolerance
        self.weights_tau = np.broadcast_to(np.asarray(xi, float) * np.asarray(gamma, float) ** 2,
                                           (len(self.actuated),)).copy()
        self.force_weight, self.relax_weight = float(force_weight), float(relax_weight)
        self.progress_v = model.joint(progress).idx_v
        self.legs = [[model.joint(pair[k]).idx_v for pair in self.swap.pairs] for k in (0, 1)]   # left, right
        forward_kinematics(model, self.data, self.file(0.0))
        self.rear_x, self.front_x = (self._foot_x(f) for f in self.feet)      # the gait's feet at its start
        self.land_z, self.landing = float(self._foot_placement(self.feet[1])[2]), float(landing)
        self.t_table = self.file.t - self.file.t[0]
        self.x_table = self.file.q[:, self.swap.progress]
        if np.any(np.diff(self.x_table) <= 0.0):
            raise UniverseError(f"the gait's '{progress}' must increase: it is the gait's clock", self.file.path,
                                value=progress)
        self.reset(None, None)

    def _check_periodic(self):
        f = self.file
        end_q, end_v = self.swap.q(f(f.period), -self.L), self.swap.v(f(f.period, 1))
        gap = max(np.abs(end_q - f(0.0)).max(), np.abs(end_v - f(0.0, 1)).max())
        if gap > PERIODIC:
            raise UniverseError(f"the gait is not periodic: its last sample with the legs exchanged and moved back "
                                f"by the step length {self.L:g} differs from its first by {gap:.3g}", f.path,
                                value=gap)

    def reset(self, q, v):
        self.step, self.phase, self.theta, self.touchdowns, self.last = 0, "double", 0.0, [], {}
        self.qp_failures = self.relaxed = 0

    def reference(self, s, order=0, offset=0.0):
        """q_ref (order 0), q̇_ref or q̈_ref at time s of the period, re-indexed for the current step, the
        progression moved by ``offset``."""
        value = self.file(s, order)
        if self.step % 2:
            value = self.swap.q(value) if order == 0 else self.swap.v(value)
        if order == 0:
            value[self.swap.progress] += offset
        return value

    def control(self, t, q, v):
        forward_kinematics(self.model, self.data, q)
        rear, front = self.feet if self.step % 2 == 0 else self.feet[::-1]
        anchor = rear if self.phase == "double" else front             # the foot the gait's x is measured from
        self.theta = self._clock(q[self.swap.progress] - self._offset(anchor))
        if self.phase == "double" and self.theta >= self.T_ds:
            self.phase = "single"
        elif self.phase == "single" and self.theta >= self.T and self._foot_placement(rear)[2] <= self.land_z \
                + self.landing:
            self.step, self.phase = self.step + 1, "double"
            self._touchdown(t, rear, q, v)                     # the swing foot has landed: it is the new front
            rear, front = front, rear
            self.theta = self._clock(q[self.swap.progress] - self._offset(rear))
        M = crba(self.model, self.data, q)
        h = np.asarray(rnea(self.model, self.data, q, v, np.zeros(self.model.nv), gravity=self.gravity), float)
        if self.phase == "double":
            qdd, tau_a, f, residual, solved = self._double(q, v, M, h, rear, front)
        else:
            qdd, tau_a, f, residual, solved = self._single(q, v, M, h, rear, front)
        self.last = {"phase": self.phase, "qdd": qdd, "f": f, "tau": tau_a, "residual": residual, "solved": solved}
        tau = np.zeros(self.model.nv)
        tau[self.actuated] = tau_a
        return tau

    def _virtual_constraints(self, q, v, driven, offset):
        """Rows E q̈ = e of the coordinates ``driven`` on q_ref(θ) (module docstring), θ the gait's clock."""
        x, theta = self.swap.progress, min(self.theta, self.T)
        r0, r1, r2 = self.reference(theta, 0, offset=offset), self.reference(theta, 1), self.reference(theta, 2)
        theta_dot = v[self.progress_v] / r1[x]
        E = np.eye(self.model.nv)[driven]
        E[:, self.progress_v] = -r1[driven] / r1[x]
        e = ((r2[driven] - r1[driven] * r2[x] / r1[x]) * theta_dot**2 + self.kp * (r0[driven] - q[driven])
             + self.kd * (r1[driven] * theta_dot - v[driven]))
        return E, e, r1[x], r2[x]

    def _double(self, q, v, M, h, rear, front):
        """The base on q_ref(θ), its progression at the gait's speed, both feet held; (τ, f) by the minimum
        weighted-norm QP."""
        others = [i for i in self.base if i != self.progress_v]
        E, e, speed, acceleration = self._virtual_constraints(q, v, others, self._offset(rear))
        E = np.vstack([E, np.eye(self.model.nv)[self.progress_v]])
        e = np.append(e, acceleration + self.kd * (speed - v[self.progress_v]))
        J, dJv, k = self._contacts(q, v, [rear, front])
        K = np.vstack([J, E])
        qdd = np.linalg.solve(K, np.concatenate([-dJv, e]))
        weights = np.concatenate([self.weights_tau, np.full(J.shape[0], self.force_weight)])
        tau_a, f, residual, solved, _ = distribute(M, h, qdd, self.S, J, weights, self.mu, k)
        if not solved:               # no force in the cones for ẍ*: the ẍ nearest to it that has one
            along = np.linalg.solve(K, np.eye(K.shape[0])[-1])                    # ∂q̈/∂ẍ
            tau_a, f, residual, solved, s = distribute(M, h, qdd, self.S, J, weights, self.mu, k,
                                                       relax=(along, self.relax_weight))
            qdd = qdd + s * along
            self.relaxed += solved
        self.qp_failures += not solved
        return qdd, tau_a, f, residual, solved

    def _single(self, q, v, M, h, swing_foot, stance):
        """The swing leg and the base but the progression on q_ref(θ), the stance foot held."""
        swing = self.legs[0] if swing_foot == self.feet[0] else self.legs[1]
        driven = [i for i in self.base if i != self.progress_v] + list(swing)
        E, e, _, _ = self._virtual_constraints(q, v, driven, self._offset(stance))
        J, dJv, _ = self._contacts(q, v, [stance])
        qdd, tau_a, f = hybrid_contact(M, h, self.S, J, dJv, E, e)
        residual = float(np.abs(M @ qdd + h - self.S.T @ tau_a - J.T @ f).max())
        return qdd, tau_a, f, residual, True

    def _offset(self, foot):
        """How far ahead of where the gait puts it ``foot`` is (m, along x): the progression's offset."""
        return self._foot_x(foot) - (self.rear_x if foot == self._rear_foot() else self.front_x)

    def _rear_foot(self):
        return self.feet[0] if self.step % 2 == 0 else self.feet[1]

    def _clock(self, x):
        """θ ∈ [0, T] with x_ref(θ) = x (relative to the supporting foot): a table look-up refined by Newton;
        beyond the last sample, T."""
        if x >= self.x_table[-1]:
            return self.T
        theta = float(np.interp(x, self.x_table, self.t_table))
        for _ in range(2):
            theta -= (self.file(theta)[self.swap.progress] - x) / self.file(theta, 1)[self.swap.progress]
        return min(max(theta, 0.0), self.T)

    def _foot_placement(self, frame):
        return frame_placement(self.model, self.data, frame)[1]

    def _foot_x(self, frame):
        return float(self._foot_placement(frame)[0])

    def _contacts(self, q, v, frames):
        """Contact rows (normal z, then tangent x, and y if the model moves sideways) of the foot frames: J
        (n_c k, nv) and J̇v, the classical acceleration of the foot points at q̈ = 0; k."""
        Js = [frame_jacobian(self.model, self.data, q, f, "local_world_aligned")[:3] for f in frames]
        dJv = [frame_jacobian_dot_v(self.model, self.data, q, v, f, "local_world_aligned")[:3] for f in frames]
        axes = [2, 0] if all(not np.any(np.abs(J[1]) > 1e-12) for J in Js) else [2, 0, 1]
        return (np.vstack([J[axes] for J in Js]), np.concatenate([a[axes] for a in dJv]), len(axes))

    def _touchdown(self, t, foot, q, v):
        """A step begins: ``foot`` has just landed; measure its speed."""
        J = frame_jacobian(self.model, self.data, q, foot, "local_world_aligned")[:3]
        speed = float(np.linalg.norm(J @ v))
        name = self.model.frame_name[foot]
        self.touchdowns.append((t, name, speed))
        if speed > self.tolerance:
            warnings.warn(f"gait: '{name}' landed at t = {t:.4f} s at {speed:.3g} m/s, above the impactless "
                          f"touchdown tolerance {self.tolerance:g} m/s", TouchdownWarning, stacklevel=2)


def _frame(model, name):
    if name not in model.frame_name:
        raise ValueError(f"no frame '{name}'{did_you_mean(name, list(model.frame_name))}")
    return model.frame_index(name)
