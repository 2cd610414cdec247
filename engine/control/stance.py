"""Standing posture control: joint PD about q0 plus the static torques of standing on the soles.

``pd`` with ``gravity_compensation`` adds g(q), the torques that hold the robot hung by its base: standing,
the legs carry the body instead, and a floating-base humanoid sags and falls unless its gains are very high.
``stance-pd`` adds instead the joint torques of the standing equilibrium at q0,

    tau_s = g(q0) − J_cᵀ f,     f = argmin ‖f‖ subject to (g(q0) − J_cᵀ f)_base = 0,

with f the forces at the corners of the soles (``feet`` frames, ``sole`` = length width in m, z up) and J_c
their point Jacobians: the unactuated base rows balance, so q0 is an equilibrium with the weight spread over
the corners. Torques are clamped to the joints' effort limits, as ``pd`` does. With ``trajectory`` (a CSV, as
``pd``'s) the PD follows q_ref(t) on the joints it names, the others held at q0; tau_s stays that of q0, a
scripted motion's static torques left to the PD (scenes/talos_knocks_box.xml: Talos leans and sweeps an arm).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.control.gravity import actuated_mask
from engine.control.trajectory import JointTrajectory
from engine.control._kernels import stance_torque
from engine.plugins import register


@register("stance-pd")
class StancePD:
    kind = "controller"
    stage = "control"

    def __init__(self, model, q0, gravity, base_dir=".", kp=400.0, kd=8.0, feet="left_sole_link right_sole_link",
                 sole=(0.2, 0.1), trajectory=None):
        from engine.dynamics import frame_jacobian, rnea
        if np.any(np.asarray(kp) < 0) or np.any(np.asarray(kd) < 0):
            raise ValueError(f"gains must be >= 0 (kp={kp}, kd={kd})")
        self.model, self.q0, self.mask = model, np.array(q0, float), actuated_mask(model)
        self.kp = np.broadcast_to(np.asarray(kp, float), (model.nv,)) * self.mask
        self.kd = np.broadcast_to(np.asarray(kd, float), (model.nv,)) * self.mask
        self.limit = model.dof_effort_limit
        data, zero = model.create_data(), np.zeros(model.nv)
        g = rnea(model, data, self.q0, zero, zero, gravity=np.asarray(gravity, float))
        half = np.asarray(sole, float).reshape(2) / 2
        rows = []
        for name in str(feet).split():
            f = model.frame_index(name)
            J = frame_jacobian(model, data, self.q0, f, "local_world_aligned")   # (v of the frame origin, w)
            R = data.oMi_R[model.frame_body[f]] @ model.frame_R[f]
            for x in (-half[0], half[0]):
                for y in (-half[1], half[1]):
                    r = R @ np.array([x, y, 0.0])
                    rows.append(J[:3] + np.cross(J[3:].T, r).T)               # v(p + r) = v + w × r
        Jc, base = np.vstack(rows), ~self.mask
        f = np.linalg.lstsq(Jc[:, base].T, g[base], rcond=None)[0]
        self.tau_s = (g - Jc.T @ f) * self.mask
        self.error, self.scratch, self.tau = np.zeros(model.nv), np.zeros(8), np.zeros(model.nv)
        self.q_ref = self.q0.copy()
        self.trajectory = JointTrajectory(model, Path(base_dir) / trajectory) if trajectory else None
        self.joints = (model.joint_type.copy(), model.joint_idx_q.copy(), model.joint_idx_v.copy())

    def reset(self, q, v):
        pass

    def control(self, t, q, v):
        """tau_s + kp (q_ref ⊖ q) − kd v, clamped (q is the simulation's, already a valid configuration); the
        array is the controller's own, rewritten by the next call."""
        if self.trajectory is not None:
            self.trajectory(t, self.q_ref)
        stance_torque(*self.joints, q, v, self.q_ref, self.tau_s, self.kp, self.kd, self.limit, self.mask, self.error,
                      self.scratch, self.tau)
        return self.tau
