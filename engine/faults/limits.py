"""Effort limits and divergence bounds of one multibody, from its model and the universe's ``LimitSettings``.

* Effort: |τ_i| ≤ τ̄_i, the joint's declared effort limit (URDF ``<limit effort>``; none: no bound), and an
  external force |f| ≤ f̄ = ``wrench_factor`` m g (m the multibody's mass), its moment |n| ≤ f̄ · 1 m; clamped,
  refused or ignored as ``effort_limits`` says. ``envelope`` clamps τ to the motor's torque–speed envelope
  instead (seed 000 eqs. 5.25–5.26): |q̇_i/q̇̄_i + τ_i/τ̄_i| ≤ 1 and |τ_i| ≤ τ̄_i, with q̇̄_i the joint's declared
  velocity limit taken as the no-load speed — a motor gives its full torque at rest, none at that speed.
* Velocity: |v_i| ≤ v̄_i = ``velocity_factor`` × the joint's velocity limit, or ``max_speed`` where none is
  declared (free-flyer and unlimited joints), checked on the free velocity v + δt a_free (stage "dynamics") and on
  v⁺ (stage "integration").
* Energy: T⁺ ≤ ``energy_jump`` (T + m g · 1 m), T = ½ vᵀ M v, on every step — the floor m g · 1 m lets a body
  at rest start moving.
"""
from __future__ import annotations

import numpy as np

from engine.faults._kernels import clamp_envelope, first_beyond

LEVER = 1.0          # m: the lever arm that turns a force bound into a moment bound, and a weight into an energy
STANDARD_GRAVITY = 9.81


class RunLimits:
    """The bounds of one multibody (``model``, ``gravity`` (3,) m/s²) under ``settings`` (LimitSettings)."""

    def __init__(self, model, settings, gravity):
        self.policy = settings.effort_limits
        self.effort = np.array(model.dof_effort_limit, dtype=float)             # (nv,) N·m or N, inf: none
        limited = bool(np.isfinite(self.effort).any())
        self.clamp = limited and self.policy in ("clamp", "envelope")
        self.refuse = limited and self.policy == "refuse"
        velocity = np.asarray(model.dof_velocity_limit, dtype=float)
        self.no_load_speed = velocity if self.policy == "envelope" else np.full(len(velocity), np.inf)
        self.speed = np.where(np.isfinite(velocity), settings.velocity_factor * velocity, settings.max_speed)
        g = float(np.linalg.norm(gravity)) or STANDARD_GRAVITY
        weight = float(model.total_mass) * g
        self.energy_floor, self.energy_jump = weight * LEVER, float(settings.energy_jump)
        self.max_force = settings.wrench_factor * weight
        self.max_moment = self.max_force * LEVER

    def beyond_speed(self, v) -> int:
        """The first dof whose velocity is beyond its bound (or not finite), else −1."""
        return first_beyond(v, self.speed)

    def beyond_effort(self, tau) -> int:
        """The first dof whose torque is beyond its effort limit, else −1."""
        return first_beyond(tau, self.effort)

    def clamp_effort(self, tau, v) -> int:
        """Clamp τ to the effort limits (and the torque–speed envelope at the velocities v) in place; the number
        of dofs clamped."""
        return clamp_envelope(tau, v, self.effort, self.no_load_speed)

    def energy_bound(self, kinetic) -> float:
        """The largest kinetic energy (J) a step may reach from ``kinetic``."""
        return self.energy_jump * (kinetic + self.energy_floor)

    def wrench_excess(self, wrench) -> float:
        """max(|f| / f̄, |n| / n̄) of a (force, moment) wrench: above 1, it is beyond the bound."""
        return max(np.linalg.norm(wrench[:3]) / self.max_force, np.linalg.norm(wrench[3:]) / self.max_moment)
