"""``walk``: Talos-style walking by preview control of the ZMP and task-space inverse dynamics.

At construction the plan (``plan.FootstepPlan``) gives the ZMP reference, and preview control on the cart-table
model (``preview``, Kajita 2003) turns it into the CoM pattern (x, y; z held at its initial height), sampled every
5 ms.  Each control step then solves the QP of ``qp.TaskQP`` for the current contact mode:

    CoM        c̈* = c̈_ref + k_p (c_ref − c) + k_d (ċ_ref − ċ)
    swing sole a* = a_ref + k_p (p_ref − p) + k_d (v_ref − v),  α* = k_p log(R₀ Rᵀ) − k_d ω
    torso      α* = k_p log(R₀ Rᵀ) − k_d ω
    posture    q̈* = k_p (q₀ ⊖ q) − k_d q̇ (every actuated joint; those named ``hold`` — the grippers — weigh more)

The QP's h is rnea's bias without the joints' dry friction μ_d sign(q̇): compensating a discontinuous term from
the measured q̇ chatters at 1 kHz (Talos's grippers have μ_d equal to their 1 N·m effort limit); the posture
task rejects it instead.

A fall (torso tilt above ``fall_tilt`` rad or CoM below ``fall_height`` × its initial height) stops the
controller: it warns once, sets ``fallen`` to the time, and from then on holds the joints where they were with
a clamped joint PD (``_hold``).  A QP the solver does not solve warns once, counts in ``qp_failures`` and
returns the last solved torques.
"""
from __future__ import annotations

import math
import time
import warnings

from pathlib import Path

import numpy as np

from engine.control.gravity import actuated_mask
from engine.control.walking.plan import FootstepPlan
from engine.control.walking.preview import preview_pattern
from engine.control.walking.qp import TaskQP, corner_jacobians
from engine.dynamics import (com, com_jacobian, crba, forward_kinematics, frame_jacobian, frame_jacobian_dot_v,
                             frame_placement, rnea)
from engine.dynamics.lie import difference_kernel
from engine.plugins import register
from engine.spatial import skew

PATTERN_DT = 0.005   # s, the preview controller's sampling period (Kajita 2003 uses 5 ms)


def com_drift(model, data, q, v, R_base, mass):
    """J̇_c v (3,), world axes: with q̈ = 0 and no gravity, rnea's base rows are the rate of the total momentum in
    the base frame, whose linear part is m c̈ (Newton's law for the whole system), so J̇_c v = R_base f_b / m."""
    f = rnea(model, data, q, v, np.zeros(model.nv), gravity=np.zeros(3))
    return R_base @ f[:3] / mass


def rotation_error(R_goal, R):
    """log(R_goal Rᵀ) (3,), world axes: θ u with E = R_goal Rᵀ, sin θ u = vee(E − Eᵀ)/2, cos θ = (tr E − 1)/2
    (θ < π)."""
    E = R_goal @ R.T
    w = 0.5 * np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])
    s = math.hypot(w[0], w[1], w[2])
    theta = math.atan2(s, (E[0, 0] + E[1, 1] + E[2, 2] - 1.0) / 2)
    return w * (theta / s) if s > 1e-12 else w


def _positive(name, value, allow_zero=False):
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return value


def _frame(model, name):
    if name not in model.frame_name:
        raise ValueError(f"no frame named {name!r} in {model.name!r}")
    return model.frame_index(name)


@register("walk")
class Walk:
    kind = "controller"
    stage = "control"

    def __init__(self, model, q0, gravity, *, steps=None, length=None, period=0.7, ds=0.2, width=None,
                 height=0.05, start=1.2, end=0.6, mu=0.7, sole=(0.16, 0.1),
                 feet="left_sole_link right_sole_link", torso="torso_2_link", hold="gripper", fall_tilt=0.5,
                 fall_height=0.7, plan=None, base_dir="."):
        if plan is None and (steps is None or length is None):
            raise ValueError("needs steps= and length= (or plan=\"steps.csv\", a footstep file)")
        if plan is None and (float(steps) != int(steps) or int(steps) < 1):
            raise ValueError(f"steps must be a whole number >= 1, got {steps}")
        length = None if plan is not None else _positive("length", length, allow_zero=True)
        period = _positive("period", period)
        ds, height = _positive("ds", ds), _positive("height", height, allow_zero=True)
        if ds >= 1:
            raise ValueError(f"ds (the double-support ratio) must be < 1, got {ds}")
        start, end, mu = _positive("start", start), _positive("end", end), _positive("mu", mu)
        if model.joint_nv[0] != 6:
            raise ValueError("walk needs a floating base (<FloatingBase>true</FloatingBase>)")
        self.model, self.data, self.q0 = model, model.create_data(), np.array(q0, float)
        self.gravity = np.asarray(gravity, float)
        self.mask = actuated_mask(model)
        self.feet, self.torso = [_frame(model, n) for n in str(feet).split()], _frame(model, str(torso))
        if len(self.feet) != 2:
            raise ValueError(f"feet must name two frames (left right), got {feet!r}")
        half = np.asarray(sole, float).reshape(2) / 2
        self.corners = np.array([[x, y, 0.0] for x in (-half[0], half[0]) for y in (-half[1], half[1])])
        self.fall_tilt, self.fall_height = _positive("fall_tilt", fall_tilt), _positive("fall_height", fall_height)

        forward_kinematics(model, self.data, self.q0)
        placements = [frame_placement(model, self.data, f) for f in self.feet]
        self.feet_R0 = [R for R, _ in placements]
        self.torso_R0 = frame_placement(model, self.data, self.torso)[0]
        feet0 = np.array([p for _, p in placements])
        if width is not None:
            mid = feet0.mean(axis=0)
            feet0[0, 1], feet0[1, 1] = mid[1] + _positive("width", width) / 2, mid[1] - width / 2
        self.c0 = com(model, self.data, self.q0)
        if plan is None:
            self.plan = FootstepPlan(feet0, int(steps), length, period, ds, start, end, height)
        else:
            self.plan = FootstepPlan.from_csv(Path(base_dir) / str(plan), feet0, end, height)
        self._check_reach(feet0)
        self._make_pattern(feet0[:, 2].mean())
        self._check_friction(mu)

        self.gains = dict(com=(100.0, 20.0), foot=(400.0, 40.0), torso=(100.0, 20.0), posture=(50.0, 14.0),
                          bush=(1e4, 200.0))
        self.weights = dict(com=10.0, foot=10.0, torso=1.0, posture=1e-2, hold=1.0, bush=10.0,
                            stance_slack=1e6)
        self.hold_gains = (100.0, 20.0)   # 1/s², 1/s: the joint PD after a fall (ω = 10 rad/s, critical)
        self.stance_damping = 10.0        # 1/s: the stance soles' acceleration is −k v_s (drift correction)
        self.posture_w = np.where(self.mask, self.weights["posture"], 0.0)
        for j, name in enumerate(model.joint_name):      # joints with no other task (Talos's grippers) weigh more
            if hold and str(hold) in name:
                self.posture_w[model.joint_idx_v[j]:model.joint_idx_v[j] + model.joint_nv[j]] = self.weights["hold"]
        self.bush = [self._bush_dofs(f) for f in self.feet]
        self.flexible = any(len(b) for b in self.bush)
        self.qps = {}
        self.mu, self.tau_max = mu, np.where(np.isfinite(model.dof_effort_limit), model.dof_effort_limit, 1e6)
        self.joints = (model.joint_type.copy(), model.joint_idx_q.copy(), model.joint_idx_v.copy())
        self.error, self.scratch, self.zero = np.zeros(model.nv), np.zeros(8), np.zeros(model.nv)
        self.H_posture, self.g_norm = np.diag(self.posture_w + 1e-6), float(np.linalg.norm(self.gravity))
        self.mass = model.total_mass
        self.reset(self.q0, np.zeros(model.nv))

    def _make_pattern(self, ground):
        """The CoM pattern (x, y) by preview control along the plan's ZMP reference, every PATTERN_DT up to 1 s
        after the plan's end: ``pattern`` (n, 3 derivatives, 2 axes), its cart-table ZMP ``pattern_zmp`` and the
        reference ``zmp_ref`` (n, 2)."""
        self.pattern_t = np.arange(0.0, self.plan.duration + 1.0, PATTERN_DT)
        self.zmp_ref = self.plan.zmp(self.pattern_t, self.c0[:2])
        g, zc = float(np.linalg.norm(self.gravity)), self.c0[2] - ground
        axes = [preview_pattern(self.zmp_ref[:, i], PATTERN_DT, zc, (self.c0[i], 0.0, 0.0), g) for i in range(2)]
        self.pattern = np.stack([X for X, _ in axes], axis=2)
        self.pattern_zmp = np.stack([p for _, p in axes], axis=1)

    def _check_reach(self, feet0):
        """A plan the legs cannot span is refused: when a step lands, the feet are some distance d apart and the
        hips midway, so each leg must reach (d/2, h), h the hips' height above the soles at q0, within its length
        stretched straight (the sum of its links from the hip joint to the sole)."""
        feet, spread = np.array(feet0, float), 0.0
        for s in self.plan.steps:
            feet[s.swing] = s.target
            spread = max(spread, float(np.linalg.norm(feet[0, :2] - feet[1, :2])))
        for foot, sole in zip(self.feet, feet0):
            chain, b = [], int(self.model.frame_body[foot])
            while b >= 0 and self.model.joint_nv[b] != 6:       # up to the floating base: the leg's bodies
                chain.append(b)
                b = int(self.model.body_parent[b])
            origins = [self.data.oMi_p[b] for b in reversed(chain)] + [sole]
            reach = sum(np.linalg.norm(b - a) for a, b in zip(origins, origins[1:]))
            h = origins[0][2] - sole[2]
            needed = np.hypot(spread / 2, h)
            if needed > reach:
                raise ValueError(f"the plan is out of the legs' reach: feet {spread:.3f} m apart when a step "
                                 f"lands are {needed:.3f} m from the hips, beyond the {reach:.3f} m of a straight "
                                 f"leg (at most {2 * np.sqrt(max(reach ** 2 - h ** 2, 0.0)):.3f} m apart)")

    def _check_friction(self, mu):
        """A plan whose centre of mass would need more friction than ``mu`` is refused: the cart-table's
        horizontal force is M c̈, so the ground must hold |c̈_xy| ≤ μ g (Kajita 2003's model)."""
        g = float(np.linalg.norm(self.gravity))
        need = np.linalg.norm(self.pattern[:, 2, :], axis=1) / g
        k = int(np.argmax(need))
        if need[k] > mu:
            raise ValueError(f"the plan leaves the friction cone: at t = {self.pattern_t[k]:.2f} s its centre of "
                             f"mass accelerates at {need[k] * g:.2f} m/s², which needs a friction coefficient of "
                             f"{need[k]:.3f} (mu={mu:g})")

    def reset(self, q, v):
        self.fallen, self.qp_failures, self.tau_last = None, 0, np.zeros(self.model.nv)
        self.last = None                  # (q̈, f, τ, stance feet, M, h, J_c) of the last solved QP
        self.calls, self.seconds = 0, 0.0

    def com_reference(self, t):
        """(c, ċ, c̈) (3 each) of the pattern at t (linear interpolation of the 5 ms samples)."""
        k = min(max(t / PATTERN_DT, 0.0), len(self.pattern_t) - 1.001)
        i, s = int(k), k - int(k)
        xyz = (1 - s) * self.pattern[i] + s * self.pattern[i + 1]      # (3, 2)
        out = np.zeros((3, 3))
        out[:, :2] = xyz
        out[0, 2] = self.c0[2]
        return out

    def control(self, t, q, v):
        if self.fallen is not None:
            return self._hold(q, v)
        start = time.perf_counter()
        # writable copies: the dynamics kernels take read-only arrays only on their slow path (~10x the cost)
        tau = self._control(t, np.array(q, dtype=float), np.array(v, dtype=float))
        self.calls += 1
        self.seconds += time.perf_counter() - start
        return tau

    def _control(self, t, q, v):
        model, data = self.model, self.data
        c = com(model, data, q)
        R_torso = frame_placement(model, data, self.torso)[0]
        tilt = math.acos(min(max(R_torso[2, 2], -1.0), 1.0))
        if tilt > self.fall_tilt or c[2] < self.fall_height * self.c0[2]:
            self.fallen, self.q_fall = t, q.copy()
            self.M_fall = np.diag(crba(model, data, q)).copy()
            warnings.warn(f"walk: the robot fell at t = {t:.3f} s (torso tilt {tilt:.2f} rad, CoM height "
                          f"{c[2]:.3f} m); the controller stops and holds the joints where they are", stacklevel=3)
            return self._hold(q, v)
        M = crba(model, data, q)
        h = rnea(model, data, q, v, self.zero, gravity=self.gravity) - model.dof_friction * np.sign(v)
        step = self.plan.step_at(t)
        stance = [i for i in range(2) if step is None or i != step.swing]
        J_com, a_com = self._com_goal(t, q, v, c)
        com_task = (J_com, a_com - com_drift(model, data, q, v, data.oMi_R[0].copy(), self.mass),
                    self.weights["com"])
        Jc, Js, dJs, tasks = [], [], [], [com_task, self._torso_task(q, v, R_torso)]
        soles = [frame_placement(model, data, f) for f in self.feet]
        wrenches = self._sole_wrenches(c, a_com, stance, soles)
        for i, f in enumerate(self.feet):
            J = frame_jacobian(model, data, q, f, "local_world_aligned")
            dJv = frame_jacobian_dot_v(model, data, q, v, f, "local_world_aligned")
            R, p = soles[i]
            if i in stance:
                Jc.append(corner_jacobians(J, R, self.corners))
                Js.append(J), dJs.append(dJv)
            else:
                tasks.append(self._swing_task(t, v, step, *self._rigid_sole(q, v, i, J, dJv, R, p)))
            if i in stance and len(self.bush[i]):
                tasks.append(self._bush_task(q, v, h, self.bush[i], J, wrenches[i]))
        # cost Σ w ‖J q̈ − a‖² (a already net of J̇v) plus the posture's w ‖q̈ − a_q‖² per joint
        difference_kernel(*self.joints, q, self.q0, self.error, self.scratch)
        kp, kd = self.gains["posture"]
        H = self.H_posture.copy()
        g = -self.posture_w * (kp * self.error - kd * v)
        for J, a, w in tasks:
            H += w * J.T @ J
            g -= w * J.T @ a
        if len(stance) not in self.qps:
            self.qps[len(stance)] = TaskQP(model.nv, len(stance), self.mask, self.tau_max, self.mu,
                                           slack=self.weights["stance_slack"] if self.flexible else 0.0)
        Jc, Js, dJs = np.vstack(Jc), np.vstack(Js), np.concatenate(dJs)
        out = self.qps[len(stance)].solve(M, h, Jc, Js, dJs, self.stance_damping * (Js @ v), H, g)
        if out is None:
            self.qp_failures += 1
            if self.qp_failures == 1:
                warnings.warn(f"walk: the QP was not solved at t = {t:.3f} s; the last solved torques are "
                              "applied (counted in qp_failures)", stacklevel=3)
            return self.tau_last.copy()
        self.last = (*out, tuple(stance), M.copy(), h, Jc)     # crba returns its workspace: the next call reuses it
        self.tau_last = out[2]
        return out[2].copy()

    def _rigid_sole(self, q, v, i, J, dJv, R, p):
        """(J, J̇v, R, p) of swing sole i as if its bush were rigid (the bush's columns of J and its velocities
        taken out: the point of the foot above the bush where the sole is), or the sole's own on a rigid foot.
        The swing sole is steered through it, so that the leg does not chase the plate's fast vibration on the
        bush (≈ 80 Hz with half of Talos's foot on k_z = 2e5 N/m), which the bush task damps."""
        dofs = self.bush[i]
        if not len(dofs):
            return J, dJv, R, p
        J, v = J.copy(), v.copy()
        J[:, dofs], v[dofs] = 0.0, 0.0
        return J, frame_jacobian_dot_v(self.model, self.data, q, v, self.feet[i], "local_world_aligned"), R, p

    def _bush_dofs(self, frame):
        """The passive dofs (a flexible ankle's bush, <Flexibility>) between a sole frame and the first actuated
        joint above it, from the sole up; empty for a rigid foot."""
        model, dofs, b = self.model, [], int(self.model.frame_body[frame])
        while b >= 0 and model.joint_nv[b] == 1 and model.dof_passive[model.joint_idx_v[b]]:
            dofs.append(int(model.joint_idx_v[b]))
            b = int(model.body_parent[b])
        return np.array(dofs, dtype=np.int64)

    def _sole_wrenches(self, c, a_com, stance, soles):
        """The wrench (force, moment about the sole frame's origin; world axes) each stance sole should carry for
        the CoM to accelerate at c̈* (the CoM task's): the ground reaction F = m (c̈* − g) with its ZMP where the
        linear inverted pendulum puts it, p = c_xy − (c_z − z_ground) c̈*_xy / (c̈*_z + |g|) (Kajita 2003 eq. 3;
        the CoM task's feedback thus moves the ZMP, as a stabiliser does), shared between the stance soles by
        where p lies between them (α = p's projection on the segment from one sole to the other, clipped to
        [0, 1]), each with its centre of pressure off the sole's origin by p's distance to that segment (on one
        foot, to the sole's origin), kept inside 80 % of the controller's sole rectangle."""
        F = self.mass * (a_com - self.gravity)
        ground = sum(soles[i][1][2] for i in stance) / len(stance)
        p = c[:2] - (c[2] - ground) * a_com[:2] / (a_com[2] + self.g_norm)
        out = [np.zeros(6), np.zeros(6)]
        if len(stance) == 2:
            a, b = soles[0][1][:2], soles[1][1][:2]
            alpha = min(max(float((p - b) @ (a - b) / ((a - b) @ (a - b))), 0.0), 1.0)
            share, offset = (alpha, 1.0 - alpha), p - (b + alpha * (a - b))
        else:
            share, offset = (1.0, 1.0), p - soles[stance[0]][1][:2]
        half = 0.8 * self.corners[-1, :2]
        for i in stance:
            R = soles[i][0]
            d = R[:2, :2] @ np.minimum(np.maximum(R[:2, :2].T @ offset, -half), half)
            f = share[i] * F
            out[i] = np.concatenate([f, skew(np.array([d[0], d[1], 0.0])) @ f])
        return out

    def _bush_task(self, q, v, h, dofs, J, W):
        """(S_b, q̈_b* , w) for the passive dofs b of a flexible ankle: the bush is driven to the deflection that
        carries the sole's planned wrench W statically, k q_b = J_bᵀ W − h̃_b (h̃_b: h's rows without the spring and
        damper, i.e. gravity on the plate), with q̈_b* = k_p (q_b,W − q_b) − k_d q̇_b. The controller can move the
        sole's force only through the bush: the contact wrench's components along the bush's axes are its spring and
        damper forces, fixed by the state (the plate is light), so the plan's wrench is reached by deflecting the
        bush in time — with the QP's ankle torques."""
        model, (kp, kd) = self.model, self.gains["bush"]
        k, c = model.dof_stiffness[dofs], model.dof_damping[dofs]
        qb, vb = q[model.joint_idx_q[model.dof_joint[dofs]]], v[dofs]
        goal = np.where(k > 0, (J[:, dofs].T @ W - (h[dofs] - k * qb - c * vb)) / np.where(k > 0, k, 1.0), qb)
        S = np.zeros((len(dofs), model.nv))
        S[np.arange(len(dofs)), dofs] = 1.0
        return S, kp * (goal - qb) - kd * vb, self.weights["bush"]

    def _hold(self, q, v):
        """After a fall: a joint PD about the posture at the fall scaled by each joint's own inertia M_ii (taken
        at the fall), M_ii (k_p (q_fall ⊖ q) − k_d q̇), clamped: every joint, heavy leg or light wrist, settles
        with the same ω = √k_p at critical damping (a fixed gain would be unstable at 1 kHz on the light ones)."""
        difference_kernel(*self.joints, np.array(q, float), self.q_fall, self.error, self.scratch)
        kp, kd = self.hold_gains
        tau = self.M_fall * (kp * self.error - kd * np.asarray(v, float)) * self.mask
        return np.clip(tau, -self.tau_max, self.tau_max)

    def _com_goal(self, t, q, v, c):
        """(J_c, c̈*): the CoM's Jacobian and the acceleration that follows the pattern."""
        model, data, (kp, kd) = self.model, self.data, self.gains["com"]
        J = com_jacobian(model, data, q)
        ref = self.com_reference(t)
        return J, ref[2] + kp * (ref[0] - c) + kd * (ref[1] - J @ v)

    def _torso_task(self, q, v, R):
        """(J_ω, α* − J̇_ω v, w): the torso keeps its initial orientation."""
        model, data, (kp, kd) = self.model, self.data, self.gains["torso"]
        J = frame_jacobian(model, data, q, self.torso, "local_world_aligned")[3:]
        dJv = frame_jacobian_dot_v(model, data, q, v, self.torso, "local_world_aligned")[3:]
        return J, kp * rotation_error(self.torso_R0, R) - kd * (J @ v) - dJv, self.weights["torso"]

    def _swing_task(self, t, v, step, J, dJv, R, p):
        """(J, a* − J̇v, w): the swing sole follows the plan's trajectory, flat at its initial orientation."""
        p_ref, v_ref, a_ref = self.plan.swing_target(step, t)
        kp, kd = self.gains["foot"]
        a = np.concatenate([a_ref + kp * (p_ref - p) - kd * (J[:3] @ v - v_ref),
                            kp * rotation_error(self.feet_R0[step.swing], R) - kd * (J[3:] @ v)])
        return J, a - dJv, self.weights["foot"]
