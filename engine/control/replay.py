"""``replay``: plays an optimiser's trajectory (``articula optimise``, engine/optimise/trajectory.py) in the
simulator, which computes the contact forces itself (seed 003 §5.F: "the optimal trajectory, which the playback
plugin then simulates").

The torques are the optimiser's, fed forward, plus a PD on the named (actuated) joints that only corrects the
drift of the integration:

    τ(t) = τ*(t) + S_aᵀ [K_p (q*(t) − q) + K_d (q̇*(t) − q̇)]

with q*, q̇*, τ* the transcription's own interpolation between its nodes t_k = k h (trapezoidal collocation:
q̇* and τ* linear, q* the integral of q̇*, quadratic, Betts 2010 §4.5).  After the last node the last torques
and positions are held (q̇* = 0).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.errors import did_you_mean
from engine.optimise.trajectory import load_trajectory
from engine.plugins import register


@register("replay")
class TrajectoryReplay:
    kind = "controller"
    stage = "control"

    def __init__(self, model, base_dir=".", trajectory=None, joints=None, kp=400.0, kd=40.0):
        if trajectory is None or joints is None:
            raise ValueError('needs trajectory="file.npz|csv" (articula optimise) and joints="j1 j2 ..." '
                             "(the actuated joints the feedback corrects)")
        if not (np.isfinite(kp) and np.isfinite(kd) and kp >= 0 and kd >= 0):
            raise ValueError(f"gains must be finite and >= 0 (kp={kp}, kd={kd})")
        table = load_trajectory(Path(base_dir) / trajectory)
        if table["q"].shape[1] != model.nq or table["v"].shape[1] != model.nv:
            raise ValueError(f"the trajectory {trajectory} is for nq = {table['q'].shape[1]}, '{model.name}' has "
                             f"nq = {model.nq}")
        self.t, self.q, self.v, self.tau = table["t"], table["q"], table["v"], table["tau"]
        names = [j.name for j in model.joints]
        for name in str(joints).split():
            if name not in names:
                raise ValueError(f"joints: '{name}' is not a joint of '{model.name}'{did_you_mean(name, names)}")
        self.actuated = np.array([model.joint(name).idx_v for name in str(joints).split()])
        self.kp, self.kd = kp, kd

    def reset(self, q, v):
        pass

    def reference(self, t):
        """(q*, q̇*, τ*) at time t: the trapezoid's interpolation on [t_k, t_k+1]; the last node held after."""
        if t >= self.t[-1]:
            return self.q[-1].copy(), np.zeros_like(self.v[-1]), self.tau[-1].copy()
        k = int(np.clip(np.searchsorted(self.t, t, side="right") - 1, 0, len(self.t) - 2))
        h = self.t[k + 1] - self.t[k]
        s = t - self.t[k]
        dv, dtau = (self.v[k + 1] - self.v[k]) / h, (self.tau[k + 1] - self.tau[k]) / h
        return self.q[k] + self.v[k] * s + 0.5 * dv * s * s, self.v[k] + dv * s, self.tau[k] + dtau * s

    def control(self, t, q, v):
        q_ref, v_ref, tau = self.reference(t)
        a = self.actuated
        tau[a] += self.kp * (q_ref[a] - q[a]) + self.kd * (v_ref[a] - v[a])
        return tau
