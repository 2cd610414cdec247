"""The object constraints of seed 000 §5.2.1 (thesis eqs. 5.19–5.22) as a sensor: a box held by hands and
resting on the ground must not slip, tip backward, tip forward or leave the ground,

    (5.19)  f_hx < μ_o (m_o g − f_hz)                              (here |f_hx|: both directions)
    (5.20)  τ_e1 = τ_h − m_o g x_o + f_hz x_h − f_hx z_h < 0          moment about the rear bottom edge
    (5.21)  τ_e2 = τ_h + m_o g (d_o − x_o) − f_hz (d_o − x_h) − f_hx z_h > 0   about the front bottom edge
    (5.22)  m_o g − f_hz > 0                                          the ground still carries the box

with f_h the resultant of the hands' contact forces on the box and τ_h their moment about the hand point
(x_h, z_h), coordinates from the rear bottom edge in the sagittal plane (x, z) of the world, moments taken as
x f_z − z f_x. The hand point is the box's CoM (x_h = x_o = d_o/2, z_h = z_o): then the sum τ_h + f_hz x_h −
f_hx z_h is the hands' moment about the edge. The robot-side constraints 5.23–5.24 (a foot's Coulomb cone and
unilaterality) become, for hands that carry the box, each hand's cone: ``hand_cone`` = μ N − |T| ≥ 0 (N, T the
normal and tangential parts of its contact resultant, μ its contacts' friction coefficient).

Declared on the object: ``<Sensor plugin="object-constraints" target="box" body="box" hand="lifter"
mu="0.4" depth="0.3" com_height="0.15"/>`` (``hand``: the multibody whose contacts are the hands; μ_o, d_o, z_o).
Besides the constraints it gives ``hand_force``, ``ground_force`` (every other contact on the box) and
``newton_residual`` = f_h + f_ground + m_o g⃗ − m_o a, Newton's law for the box (a its CoM's acceleration over
the step): zero up to the integrator's rotation terms, a check of the contact forces.
"""
from __future__ import annotations

import numpy as np

from engine.errors import did_you_mean
from engine.plugins import register
from engine.sensors import _BodySensor


@register("object-constraints")
class ObjectConstraints(_BodySensor):
    signals = {"hand_force": ("N", 3), "hand_moment": ("N m", 1), "slip_margin": ("N", 1), "tau_e1": ("N m", 1),
               "tau_e2": ("N m", 1), "ground_load": ("N", 1), "hand_cone": ("N", 2), "ground_force": ("N", 3),
               "newton_residual": ("N", 3)}

    def __init__(self, model, multibody: int, target: str, body: str, gravity, hand: str, name: str | None = None,
                 mu=0.4, depth=0.3, com_height=0.15):
        super().__init__(model, multibody, target, body, name)
        if not all(np.isfinite(x) and x > 0 for x in (mu, depth, com_height)):
            raise ValueError(f"mu, depth and com_height must be finite and > 0 (got {mu}, {depth}, {com_height})")
        self.gravity, self.hand, self.mu = np.asarray(gravity, float), str(hand), float(mu)
        self.depth, self.com_height = float(depth), float(com_height)
        self.mass = float(model.body_mass[self.body])
        self.key = f"{target}/{model.body_name[self.body]}"

    def measure(self, sim) -> dict:
        names = [run.name for run in sim.runs]
        if self.hand not in names:
            raise ValueError(f"hand='{self.hand}' is not a multibody of the universe{did_you_mean(self.hand, names)}")
        c = sim.contacts
        _, p = sim.body_placement(self.multibody, self.body)
        a, _ = sim.body_acceleration(self.multibody, self.body)
        m, g = self.mass, -self.gravity[2]
        f_hand, f_ground, moment_edge, cones = np.zeros(3), np.zeros(3), 0.0, {}
        edge = p - np.array([self.depth / 2, 0.0, self.com_height])           # rear bottom edge (x, ·, z)
        for k in range(len(c)):
            if self.key not in (c.body_a[k], c.body_b[k]):
                continue
            sign, other = (1.0, c.body_b[k]) if c.body_a[k] == self.key else (-1.0, c.body_a[k])
            f = sign * c.force[k]                                                # force on the box
            if other.split("/")[0] != self.hand:
                f_ground += f
                continue
            f_hand += f
            r = c.point[k] - edge
            moment_edge += r[0] * f[2] - r[2] * f[0]
            n = sign * c.normal[k]                                               # into the box
            N, T, mu = cones.get(other, (0.0, np.zeros(3), c.mu[k]))
            cones[other] = (N + f @ n, T + f - (f @ n) * n, mu)
        x_o = self.depth / 2
        tau_h = moment_edge - (x_o * f_hand[2] - self.com_height * f_hand[0])   # about the hand point (CoM)
        tau_e1 = moment_edge - m * g * x_o                                       # 5.20
        tau_e2 = moment_edge - self.depth * f_hand[2] + m * g * (self.depth - x_o)   # 5.21, about x = d_o
        cone = [mu * N - np.linalg.norm(T) for _, (N, T, mu) in sorted(cones.items())] + [0.0, 0.0]
        return {"hand_force": f_hand, "hand_moment": np.array([tau_h]),
                "slip_margin": np.array([self.mu * (m * g - f_hand[2]) - abs(f_hand[0])]),
                "tau_e1": np.array([tau_e1]), "tau_e2": np.array([tau_e2]),
                "ground_load": np.array([m * g - f_hand[2]]), "hand_cone": np.array(cone[:2]),
                "ground_force": f_ground, "newton_residual": f_hand + f_ground + m * self.gravity - m * a}
