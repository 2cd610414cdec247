"""Driven joints (seed 004 §2.5, ``LiaisonsPilotees``): some joints follow a trajectory exactly — motion
capture, a planned gait — while the others stay free (τ = 0), the hybrid dynamics of ``engine.dynamics.hybrid``.

Each step the controller asks for the driven accelerations q̈_d = q̈_ref + kp (q_ref − q) + kd (q̇_ref − q̇)
(q_ref a cubic spline through the trajectory file's samples, its derivatives q̇_ref, q̈_ref; the feedback only
corrects the integration's drift) and returns the joint forces τ_d that produce them while every free joint
receives none: in free motion the driven joints then follow the trajectory and the free ones move as the
dynamics make them. ``det_A`` and ``hadamard`` of the last step are kept (``hybrid_dynamics``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.interpolate import CubicSpline

from engine.control.trajectory import JointTrajectory
from engine.dynamics.hybrid import hybrid_dynamics
from engine.plugins import register


@register("driven")
class DrivenJoints:
    kind = "controller"
    stage = "control"

    def __init__(self, model, gravity, base_dir=".", trajectory=None, kp=400.0, kd=40.0):
        if trajectory is None:
            raise ValueError("needs trajectory=\"file.csv\" (a header 't, joint, ...' and one row per sample)")
        if not (np.isfinite(kp) and np.isfinite(kd) and kp >= 0 and kd >= 0):
            raise ValueError(f"gains must be finite and >= 0 (kp={kp}, kd={kd})")
        table = JointTrajectory(model, Path(base_dir) / trajectory)
        if len(table.t) < 2:
            raise ValueError(f"the trajectory {trajectory} needs at least two samples")
        self.model, self.gravity, self.kp, self.kd = model, np.asarray(gravity, float), kp, kd
        self.data = model.create_data()
        self.idx_q, self.idx_v = np.array(table.idx_q), np.array(table.idx_v)
        self.driven = np.zeros(model.nv, dtype=bool)
        self.driven[self.idx_v] = True
        self.spline = CubicSpline(table.t, table.values, axis=0)
        self.t_end = table.t[-1]
        self.det_A = self.hadamard = 1.0

    def reset(self, q, v):
        self.det_A = self.hadamard = 1.0

    def control(self, t, q, v):
        s = min(t, self.t_end)
        q_ref, qd_ref = self.spline(s), self.spline(s, 1)
        qdd_ref = self.spline(s, 2) if t < self.t_end else np.zeros_like(q_ref)
        qdd = qdd_ref + self.kp * (q_ref - q[self.idx_q]) + self.kd * (qd_ref - v[self.idx_v])
        result = hybrid_dynamics(self.model, self.data, q, v, self.driven, qdd, gravity=self.gravity)
        self.det_A, self.hadamard = result.det_A, result.hadamard
        tau = np.zeros(self.model.nv)
        tau[self.driven] = result.tau[self.driven]
        return tau
