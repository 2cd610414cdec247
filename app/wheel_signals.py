"""Signals of a multibody on wheels (<Wheel>, issue 12 part 6; seed 001 Figs 2.12-2.16): per wheel its lean, its
heading, its forward speed and the ground's force λ on it in ground axes; per multibody its steer angle on the
ground. Energy is the catalogue's (group "energy"); the joint angles (the bicycle's steer r1) are joint signals.

With a the wheel's spin axis and n the ground's normal (world axes), the rolling direction is d = a × n / |a × n|:

    lean     asin(a · n)            positive when the axis tilts up: the wheel leans to its right (Meijaard's φ
                                    for a bicycle's rear wheel, whose axis points left)
    heading  atan2(d · y_g, d · x_g) in the ground's axes (x_g, y_g, n)
    speed    d · v_hub              the hub's velocity along d (for a rolling disk h ω·a)
    steer    heading(first wheel) − heading(last wheel), wrapped to (−π, π] (front against rear; left > 0)
    λ        R_gᵀ f                 the wheel's contact force (N) in the ground's axes (x_g, y_g, n)
"""
from __future__ import annotations

import math

import numpy as np

import engine


def wheel_signals(m, mb, universe, signal) -> list:
    """``signal(group, name, unit, value)`` builds each one; nothing for a multibody without wheels or ground."""
    planes = [g for st in universe.statics for g in st.geometries if g.kind == "plane"]
    if not mb.wheels or not planes:
        return []
    ground = np.asarray(planes[0].R, float)                    # columns: x_g, y_g, n (world)
    geometry = WheelGeometry(m, mb, ground)
    out = []
    for k, wheel in enumerate(mb.wheels):
        link = mb.model.body_name[wheel.body]
        group = f"{mb.name}/wheel {link}"
        out += [signal(group, "lean", "deg", lambda s, k=k: math.degrees(geometry.lean(s, k))),
                signal(group, "heading", "deg", lambda s, k=k: math.degrees(geometry.heading(s, k))),
                signal(group, "forward speed", "m/s", lambda s, k=k: geometry.speed(s, k))]
        out += [signal(group, f"λ {axis} (ground axes)", "N",
                       lambda s, i=i, name=f"{mb.name}/{link}": wheel_force(s, name, ground)[i])
                for i, axis in enumerate(("x", "y", "normal"))]
    if len(mb.wheels) > 1:
        first, last = (mb.model.body_name[w.body] for w in (mb.wheels[0], mb.wheels[-1]))
        out.append(signal(f"{mb.name}/wheels", f"steer ({first} against {last})", "deg",
                          lambda s: math.degrees(geometry.steer(s))))
    return out


def wheel_force(snapshot, name, ground) -> np.ndarray:
    """The summed contact force on body ``name`` in the ground's axes (zero when it touches nothing)."""
    c = snapshot.contacts
    f = sum((c.force[i] for i, body in enumerate(c.body_a) if body == name), np.zeros(3))
    f = f - sum((c.force[i] for i, body in enumerate(c.body_b) if body == name), np.zeros(3))
    return ground.T @ f


class WheelGeometry:
    """Spin axes, rolling directions and hub velocities of one multibody's wheels from a snapshot (world axes)."""

    def __init__(self, m, mb, ground):
        self.m, self.mb, self.ground = m, mb, ground
        self.data = mb.model.create_data()

    def axis(self, s, k):
        wheel = self.mb.wheels[k]
        return s.body_R[self.m][wheel.body] @ np.asarray(wheel.axis, float)

    def direction(self, s, k):
        d = np.cross(self.axis(s, k), self.ground[:, 2])
        return d / np.linalg.norm(d)

    def lean(self, s, k):
        return math.asin(float(np.clip(self.axis(s, k) @ self.ground[:, 2], -1.0, 1.0)))

    def heading(self, s, k):
        d = self.direction(s, k)
        return math.atan2(float(d @ self.ground[:, 1]), float(d @ self.ground[:, 0]))

    def speed(self, s, k):
        model, body = self.mb.model, self.mb.wheels[k].body
        engine.forward_kinematics(model, self.data, s.q[self.m])
        hub = s.base_R[self.m] @ (engine.point_jacobian(model, self.data, body, np.zeros(3)) @ s.v[self.m])
        return float(self.direction(s, k) @ hub)

    def steer(self, s):
        angle = self.heading(s, 0) - self.heading(s, len(self.mb.wheels) - 1)
        return (angle + math.pi) % (2.0 * math.pi) - math.pi
