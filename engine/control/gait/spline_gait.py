"""A closed-form periodic gait for a planar biped with two-segment legs on a planarizer base (RABBIT, seed 003
§3.2), for playback before an optimiser's output exists: one step of period T = double support (both feet
down) then single support (the rear leg swings to the front), from Cartesian splines and the legs' inverse
kinematics.

* hip: height constant, trunk upright; its forward position a cubic Hermite spline per phase through the
  thesis' boundary states (L3077-3100: hip 15.32 cm ahead of the rear foot at the start of double support,
  25.56 cm at its end, 0.99 then 1.0 m/s), so that it is C¹ across the switches;
* stance feet fixed; the swing foot from the rear foot to one step ahead of the front foot,
  x = x0 + 2L (10 s³ − 15 s⁴ + 6 s⁵), z = 16 h s² (1 − s)², s = (t − T_ds)/T_ss: its velocity vanishes at
  lift-off and at touchdown (impactless touchdown, seed 003 §5.E);
* legs (thigh and tibia of length r, absolute angles a1, a2 from the downward vertical, forward positive):
  foot − hip = r (u(a1) + u(a2)), u(a) = (sin a, −cos a); with d = ‖foot − hip‖ and φ its angle,
  a1 = φ + β, a2 = φ − β, cos β = d / 2r (knees forward: the knee angle a2 − a1 = −2β ≤ 0).

``python -m engine.control.gait.spline_gait -o gait.csv`` writes the gait file (docs/plugins.md, ``gait``) of
RABBIT's coordinates (boom_x, boom_z, boom_pitch, left_hip, left_knee, right_hip, right_knee).
"""
from __future__ import annotations

import argparse

import numpy as np
from scipy.interpolate import CubicHermiteSpline

LEG = 0.4                      # r: thigh = tibia (Table III-2)
ROLLER = 0.01                  # the roller's radius: the foot points (roller centres) ride this high


def leg_angles(d, d_dot, r=LEG):
    """Absolute thigh and tibia angles (a1, a2) and their rates for the foot at d (2,) from the hip, moving at
    d_dot: the closed form of the module docstring; the rates from r (u'(a1) ȧ1 + u'(a2) ȧ2) = ḋ."""
    dist = np.hypot(*d)
    if dist >= 2 * r:
        raise ValueError(f"the foot is {dist:.4f} m from the hip, beyond the leg's reach {2 * r} m")
    phi, beta = np.arctan2(d[0], -d[1]), np.arccos(dist / (2 * r))
    a = np.array([phi + beta, phi - beta])
    du = r * np.array([[np.cos(a[0]), np.cos(a[1])], [np.sin(a[0]), np.sin(a[1])]])
    return a, np.linalg.solve(du, d_dot)


def rabbit_step(step=0.45, height=0.70, double=0.103, single=0.425, clearance=0.05, dt=0.001,
                hip=(0.1532, 0.2556), speed=(0.99, 1.0)):
    """(t, q, v) of one step sampled every dt: the left leg is the rear one, then swings (module docstring)."""
    period = double + single
    x0 = hip[0]
    hip_x = CubicHermiteSpline([0.0, double, period], [x0, hip[1], x0 + step], [speed[0], speed[1], speed[0]])
    t = np.linspace(0.0, period, int(round(period / dt)) + 1)
    q, v = np.zeros((len(t), 7)), np.zeros((len(t), 7))
    for i, ti in enumerate(t):
        s = np.clip((ti - double) / single, 0.0, 1.0)
        swing = np.array([2 * step * (10 * s**3 - 15 * s**4 + 6 * s**5), 16 * clearance * s**2 * (1 - s) ** 2])
        ds = 1.0 / single if ti > double else 0.0
        swing_dot = ds * np.array([2 * step * (30 * s**2 - 60 * s**3 + 30 * s**4),
                                   16 * clearance * (2 * s - 6 * s**2 + 4 * s**3)])
        h, h_dot = np.array([hip_x(ti), height]), np.array([hip_x(ti, 1), 0.0])
        q[i, :3], v[i, :3] = (h[0], height + ROLLER, 0.0), (h_dot[0], 0.0, 0.0)
        for k, (foot, foot_dot) in enumerate(((swing, swing_dot), (np.array([step, 0.0]), np.zeros(2)))):
            a, a_dot = leg_angles(foot - h, foot_dot - h_dot)
            q[i, 3 + 2 * k: 5 + 2 * k] = a[0], a[1] - a[0]               # hip (trunk upright), knee
            v[i, 3 + 2 * k: 5 + 2 * k] = a_dot[0], a_dot[1] - a_dot[0]
    return t, q, v


def write_csv(path, t, q, v):
    n = q.shape[1]
    header = ", ".join(["t"] + [f"q_{i}" for i in range(1, n + 1)] + [f"v_{i}" for i in range(1, n + 1)])
    np.savetxt(path, np.column_stack([t, q, v]), delimiter=", ", header=header, comments="", fmt="%.12g")


def main(argv=None):
    parser = argparse.ArgumentParser(description="write RABBIT's closed-form gait file")
    parser.add_argument("-o", "--output", required=True)
    write_csv(parser.parse_args(argv).output, *rabbit_step())


if __name__ == "__main__":
    main()
